#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs every host test test/host/t-*.sh (as TAP) against $THAW; exit 77 from a test means skipped.
set -u

here=$(cd "$(dirname "$0")" && pwd)
THAW=${THAW:-build/thaw}
case $THAW in
/*) ;;
*) THAW=$PWD/$THAW ;;
esac
export THAW

# A hung test must not hang `make check`.
limit=""
if command -v timeout >/dev/null 2>&1; then
    limit="timeout 300"
fi

# report N NAME RC OUT: the test's TAP line, its output as comments.
report() {
    [ -n "$4" ] && printf '%s\n' "$4" | sed 's/^/# /'
    case $3 in
    0) passed=$((passed + 1)); echo "ok $1 - $2" ;;
    77) skipped=$((skipped + 1)); echo "ok $1 - $2 # SKIP" ;;
    *) failed=$((failed + 1)); echo "not ok $1 - $2 (exit $3)" ;;
    esac
}

# t-harness, the QEMU harness's hang watcher against a fake QEMU, mostly waits (a minute of
# silences and timeouts, one core at most) and shares nothing with the others (no port; its swtpm
# on a socket of its own): it runs beside them from the start and is reported last.
beside=$here/t-harness.sh
out_beside=$(mktemp) || exit 1
trap 'rm -f "$out_beside"' EXIT
set --
for t in "$here"/t-*.sh; do
    [ -e "$t" ] && [ "$t" != "$beside" ] && set -- "$@" "$t"
done
total=$#
[ -e "$beside" ] && total=$((total + 1))
echo "1..$total"
passed=0 failed=0 skipped=0 n=0
if [ -e "$beside" ]; then
    ($limit sh "$beside" > "$out_beside" 2>&1; echo "rc=$?" >> "$out_beside") &
    pid_beside=$!
fi
for t in "$@"; do
    n=$((n + 1))
    out=$($limit sh "$t" 2>&1)
    rc=$?
    report "$n" "$(basename "$t" .sh)" "$rc" "$out"
done
if [ -e "$beside" ]; then
    wait "$pid_beside"
    rc=$(sed -n 's/^rc=//p' "$out_beside" | tail -n 1)
    report "$total" "$(basename "$beside" .sh)" "${rc:-1}" "$(grep -v '^rc=' "$out_beside")"
fi

[ "$skipped" -gt 0 ] && echo "# $skipped skipped"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

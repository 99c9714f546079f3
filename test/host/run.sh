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

set -- "$here"/t-*.sh
[ -e "$1" ] || set --
echo "1..$#"
passed=0 failed=0 skipped=0 n=0
for t in "$@"; do
    n=$((n + 1))
    name=$(basename "$t" .sh)
    out=$($limit sh "$t" 2>&1)
    rc=$?
    [ -n "$out" ] && printf '%s\n' "$out" | sed 's/^/# /'
    case $rc in
    0) passed=$((passed + 1)); echo "ok $n - $name" ;;
    77) skipped=$((skipped + 1)); echo "ok $n - $name # SKIP" ;;
    *) failed=$((failed + 1)); echo "not ok $n - $name (exit $rc)" ;;
    esac
done

[ "$skipped" -gt 0 ] && echo "# $skipped skipped"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs each unit test binary given as argument and sums them up; exit 77 from a binary means skipped.
set -u

passed=0 failed=0 skipped=0 n=0
log=$(mktemp) || exit 1
trap 'rm -f "$log"' EXIT
echo "1..$#"
for bin in "$@"; do
    n=$((n + 1))
    echo "# $bin"
    if [ ! -x "$bin" ]; then
        echo "# $bin: not built or not executable"
        rc=127
    else
        "$bin" >"$log" 2>&1
        rc=$?
        sed 's/^/# /' "$log" # TAP: a test's own output is diagnostics
    fi
    case $rc in
    0) passed=$((passed + 1)); echo "ok $n - $bin" ;;
    77) skipped=$((skipped + 1)); echo "ok $n - $bin # SKIP" ;;
    *) failed=$((failed + 1)); echo "not ok $n - $bin (exit $rc)" ;;
    esac
done

if [ "$skipped" -gt 0 ]; then
    echo "$passed passed, $failed failed, $skipped skipped"
else
    echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]

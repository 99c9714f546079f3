#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs each libFuzzer harness given on a seed corpus made by make-corpus.sh, for FUZZ_SECONDS each
# (or FUZZ_RUNS executions, if set). Crashes land in $FUZZ_OUT (default build/fuzz/out). TAP output.
# Usage: test/fuzz/run.sh HARNESS...
set -u

here=$(cd "$(dirname "$0")" && pwd)
out=${FUZZ_OUT:-build/fuzz/out}
seeds=$out/seeds
mkdir -p "$out"
rm -rf "$seeds"
"$here/make-corpus.sh" "$seeds" || exit 1
echo "1..$#"
n=0 failed=0
for bin in "$@"; do
    n=$((n + 1))
    name=$(basename "$bin")
    case $name in
    fuzz_image) kind=image max=65536 ;;
    *) kind=args max=20000 ;;
    esac
    corpus=$out/corpus-$name
    mkdir -p "$corpus"
    if [ -n "${FUZZ_RUNS:-}" ]; then limit=-runs=$FUZZ_RUNS; else limit=-max_total_time=${FUZZ_SECONDS:-60}; fi
    "$bin" "$limit" -max_len=$max -artifact_prefix="$out/$name-" -print_final_stats=1 \
        "$corpus" "$seeds/$kind" > "$out/$name.log" 2>&1
    rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$name.log")
    if [ "$rc" -eq 0 ]; then
        echo "ok $n - $name: ${runs:-?} executions, no crash"
    else
        echo "not ok $n - $name: exit $rc after ${runs:-?} executions (log: $out/$name.log)"
        grep -E 'ERROR|SUMMARY|Test unit written' "$out/$name.log" | sed 's/^/# /'
        failed=$((failed + 1))
    fi
done
[ "$failed" -eq 0 ]

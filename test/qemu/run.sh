#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs the QEMU scenarios (all, or those named) and reports TAP; the last line is "N passed, N failed".
# Usage: test/qemu/run.sh [SCENARIO...]      (make check-qemu [ONLY=name])
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=test/qemu/lib.sh
. "$here/lib.sh"

all=$(find "$here" -mindepth 2 -maxdepth 2 -name run.sh -printf '%h\n' | xargs -n1 basename | sort)
if (($# > 0)); then
    names=("$@")
else
    read -r -d '' -a names <<< "$all"
fi
for n in "${names[@]}"; do
    [[ -x $here/$n/run.sh ]] || { echo "check-qemu: no scenario '$n' (have: ${all//$'\n'/ })" >&2; exit 2; }
done

# Every line a scenario prints becomes a TAP comment.
tap_comment() {
    local line
    while IFS= read -r line; do
        case $line in '#'*) printf '%s\n' "$line" ;; *) printf '# %s\n' "$line" ;; esac
    done
}

echo "TAP version 13"
echo "1..${#names[@]}"
t0=$EPOCHREALTIME
# Downloads and image builds happen once, before the clock of the first scenario starts.
(tq_prepare) 2>&1 | tap_comment
prep=${PIPESTATUS[0]}
if ((prep == TQ_SKIP)); then
    for i in "${!names[@]}"; do echo "ok $((i + 1)) - ${names[$i]} # SKIP QEMU not available"; done
    tq_log "${#names[@]} skipped"
    echo "0 passed, 0 failed"
    exit 0
fi
if ((prep != 0)); then
    echo "Bail out! preparing the QEMU guest failed"
    echo "0 passed, ${#names[@]} failed"
    exit 1
fi
tq_log "prepared in $(tq_since "$t0") s"
kernel_line=$(tq_kernel_report)
tq_log "$kernel_line"

passed=0 failed=0 skipped=0 i=0 retries=0 retried=()
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for n in "${names[@]}"; do
    i=$((i + 1))
    s0=$EPOCHREALTIME
    "$here/$n/run.sh" 2>&1 | tee "$out" | tap_comment
    rc=${PIPESTATUS[0]}
    secs=$(tq_since "$s0")
    # Every boot retried after a hang is said in the scenario's result, with what it showed.
    hung=$(grep -F 'RETRY: boot ' "$out" | sed 's/.*RETRY: boot \([^ ]*\) hung: \(.*\); its log is.*/\1: \2/')
    note=""
    if [[ -n $hung ]]; then
        k=$(grep -c . <<< "$hung")
        retries=$((retries + k))
        retried+=("$n")
        note="; $k boot(s) hung and were retried: $(paste -sd';' <<< "$hung" | tr -d "#")"
    fi
    if ((rc == 0)); then
        echo "ok $i - $n (${secs} s${note})"
        passed=$((passed + 1))
    elif ((rc == TQ_SKIP)); then
        echo "ok $i - $n # SKIP"
        skipped=$((skipped + 1))
    else
        echo "not ok $i - $n (${secs} s, exit $rc${note})"
        failed=$((failed + 1))
    fi
done
tq_log "total $(tq_since "$t0") s, $skipped skipped, $retries hung boot(s) retried${retried[*]:+ (in ${retried[*]})}; $kernel_line"
echo "$passed passed, $failed failed"
((failed == 0))

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs the QEMU scenarios (all, or those named) and reports TAP; the last line is "N passed, N failed".
# A scenario is a folder with a run.sh, in test/qemu or in test/cloud (a cloud image's).
# Usage: test/qemu/run.sh [SCENARIO...]      (make check-qemu [ONLY=name], make check-cloud)
set -u
here=$(cd "$(dirname "$0")" && pwd)
cloud=$(cd "$here/../cloud" && pwd)
# shellcheck source=test/qemu/lib.sh
. "$here/lib.sh"

# All of them run in this order: the scenario that makes the state others share first (test/cloud's
# first boots, lib.sh's tc_state, made by provision-first-boot), with chain-loop, the longest of
# test/qemu, beside it while it builds the cloud image's root; then provision-resize, the longest of
# all (its own swap-file image, made in a guest, and three dracut runs under TCG: about 11
# minutes), which needs that root; then half of the rest by name; then the scenarios that go on
# from that state, which find it made by then, and are not left to the end, as they are long; then
# the other half.
first=(provision-first-boot chain-loop provision-resize)
later=(provision-idempotent hibernate-request-refused provision-resize-partition)
all=$(find "$here" "$cloud" -mindepth 2 -maxdepth 2 -name run.sh -printf '%h\n' | xargs -n1 basename | sort)
mapfile -t rest < <(grep -vxF -f <(printf '%s\n' "${first[@]}" "${later[@]}") <<< "$all")
half=$((${#rest[@]} / 2))
names=()
for n in "${first[@]}" "${rest[@]:0:half}" "${later[@]}" "${rest[@]:half}"; do
    grep -qxF -- "$n" <<< "$all" || continue
    # Those named (make check-qemu ONLY=, make check-cloud) run in the same order.
    if (($# == 0)) || printf '%s\n' "$@" | grep -qxF -- "$n"; then
        names+=("$n")
    fi
done
# path NAME: the scenario's run.sh.
path() { if [[ -x $here/$1/run.sh ]]; then echo "$here/$1/run.sh"; else echo "$cloud/$1/run.sh"; fi; }
for n in "$@"; do
    grep -qxF -- "$n" <<< "$all" || { echo "check-qemu: no scenario '$n' (have: ${all//$'\n'/ })" >&2; exit 2; }
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

# TQ_JOBS: scenarios at a time; by default one per host core, as far as memory allows two guests'
# worth (2 x TQ_MEM + 1 GiB) each.
if [[ -z ${TQ_JOBS:-} ]]; then
    TQ_JOBS=$(nproc)
    avail=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo)
    ((avail / (2 * TQ_MEM + 1024) < TQ_JOBS)) && TQ_JOBS=$((avail / (2 * TQ_MEM + 1024)))
    ((TQ_JOBS >= 1)) || TQ_JOBS=1
fi

passed=0 failed=0 skipped=0 retries=0 retried=()
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# report I NAME RC SECS: the scenario's TAP line from its exit status and its output ($out/I).
# Every boot retried after a hang is said in the scenario's result, with what it showed.
report() {
    local i=$1 n=$2 rc=$3 secs=$4 hung note="" k
    hung=$(grep -F 'RETRY: boot ' "$out/$i" | sed 's/.*RETRY: boot \([^ ]*\) hung: \(.*\); its log is.*/\1: \2/')
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
}

# run_one I NAME: runs the scenario, its output to $out/I, then "RC SECS" to $out/I.rc.
run_one() {
    local s0=$EPOCHREALTIME rc
    "$(path "$2")" < /dev/null > "$out/$1" 2>&1
    rc=$?
    echo "$rc $(tq_since "$s0")" > "$out/$1.rc"
}

njobs=$TQ_JOBS
((njobs > ${#names[@]})) && njobs=${#names[@]}
tq_log "$njobs scenario(s) at a time (TQ_JOBS), $TQ_SMP vCPU(s) each (TQ_SMP)"
if ((njobs <= 1)); then
    # One at a time: each scenario's lines as they come.
    i=0
    for n in "${names[@]}"; do
        i=$((i + 1))
        s0=$EPOCHREALTIME
        "$(path "$n")" < /dev/null 2>&1 | tee "$out/$i" | tap_comment
        rc=${PIPESTATUS[0]}
        report "$i" "$n" "$rc" "$(tq_since "$s0")"
    done
else
    # Several at a time, each on its own disks, TPM state, sockets and namespace (all named by its
    # process or its scenario); the crafted images they share are built once, under a lock
    # (crafted.sh). Each scenario's lines are shown whole, in the listed order, once it and all
    # before it have finished.
    trap 'kill $(jobs -p) 2> /dev/null; rm -rf "$out"' EXIT
    next=0 shown=0 running=0
    while ((shown < ${#names[@]})); do
        while ((running < njobs && next < ${#names[@]})); do
            run_one "$((next + 1))" "${names[$next]}" &
            next=$((next + 1)) running=$((running + 1))
        done
        wait -n
        running=$((running - 1))
        while ((shown < ${#names[@]})) && [[ -e $out/$((shown + 1)).rc ]]; do
            shown=$((shown + 1))
            tap_comment < "$out/$shown"
            read -r rc secs < "$out/$shown.rc"
            # No status recorded (a full disk leaves the file empty) is a failure, never a pass.
            [[ ${rc:-} =~ ^[0-9]+$ ]] || { rc=1; secs="${secs:-?}; no exit status recorded"; }
            report "$shown" "${names[$((shown - 1))]}" "$rc" "$secs"
        done
    done
fi
tq_log "total $(tq_since "$t0") s, $skipped skipped, $retries hung boot(s) retried${retried[*]:+ (in ${retried[*]})}; $kernel_line"
echo "$passed passed, $failed failed"
((failed == 0))

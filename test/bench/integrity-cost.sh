#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What thaw setup --integrity costs, and what thaw's own image writer costs: the same VM and
# workload hibernated and resumed in pairs, one after the other (COST_PARALLEL=1: at the same time),
# with the times side by side and their ratio (seconds, host clock at each
# serial line; and the writer's and the kernel's own figures for writing and reading the image).
#   pair "writer":    plain LUKS2, the kernel writes the image  vs  plain LUKS2, thaw writes it
#   pair "integrity": plain LUKS2, thaw writes it               vs  LUKS2 with integrity, thaw writes it
# (an --integrity container is always written by thaw: Linux 6.1 would lose the end of the image in
# dm-integrity's journal, thaw(8)). Not part of make check-qemu: a measurement, run by hand
# (COST_ROUNDS=1 round of both pairs by default, about 4 minutes a pair under TCG).
set -u
here=$(cd "$(dirname "$0")" && pwd)
# Guest work silent for longer than the harness's 30 s silence limit (swapoff, large images): only
# a silence at the kernel's hibernation or resume steps is a hang here.
export TQ_SILENCE_SECONDS=${TQ_SILENCE_SECONDS:-0}
# Two vCPUs, as the figures in README.md were taken (the test scenarios run with one).
export TQ_SMP=${TQ_SMP:-2}
# shellcheck source=test/qemu/lib.sh
. "$here/../qemu/lib.sh"

tq_prepare
tq_workdir integrity-cost
base=$TQ_WORK
# t NAME TEXT: seconds of the first line with TEXT in boot NAME's log; d A B: B - A.
t() { tq_time "$1" "$2"; }
d() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "") print "-"; else printf "%.1f", b - a }'; }
kernel() { grep -F -m1 "$2" "$TQ_WORK/$1.log" | sed 's/.*PM: hibernation: //; s/.*thaw: //'; }

# measure DIR [ARG]: one hibernate and one resume boot in $base/DIR; figures into $base/DIR/figures.
measure() {
    TQ_WORK=$base/$1
    mkdir -p "$TQ_WORK"
    cp --sparse=always "$base/root.img" "$base/swap.img" "$base/key" "$TQ_WORK/"
    tq_hibernate_boot hibernate "${@:2}"
    tq_resume_boot resume
    {
        echo "setup=$(d "$(t hibernate 'THAW-TEST: setup starts')" "$(t hibernate 'THAW-TEST: setup exit')")"
        echo "hib=$(d "$(t hibernate 'THAW-TEST: hibernating')" "$(t hibernate 'reboot: Power down')")"
        echo "resume=$(d "$(t resume 'thaw: resuming from')" "$(t resume 'THAW-TEST: hibernate exit')")"
        echo "boot=$(d "$(t resume 'Linux version')" "$(t resume 'THAW-TEST: hibernate exit')")"
        echo "write=$(kernel hibernate 'PM: hibernation: Wrote')$(kernel hibernate 'thaw: wrote the image')"
        echo "read=$(kernel resume 'PM: hibernation: Read')"
    } > "$TQ_WORK/figures"
    exit "$TQ_FAILS"
}

# v DIR KEY: one figure; ratio A B: B / A.
v() { sed -n "s/^$2=//p" "$base/$1/figures" 2> /dev/null; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 <= 0 || b + 0 <= 0) print "-"; else printf "%.2f", b / a }'; }
# row A B LABEL KEY
row() {
    local x y
    x=$(v "$1" "$4")
    y=$(v "$2" "$4")
    printf '  %-42s %9s %9s %6s\n' "$3" "$x" "$y" "$(ratio "$x" "$y")"
}

# pair NAME A B ARGS-A ARGS-B: one after the other (COST_PARALLEL=1: both at once, which only
# compares like with like when their phases line up; integrity's setup is 10x longer, so they do
# not: the plain VM hibernated and resumed beside the other's setup, the integrity VM alone).
pair() {
    local p1 p2
    if [[ ${COST_PARALLEL:-0} == 1 ]]; then
        measure "$2" "$4" > "$base/$2.out" 2>&1 &
        p1=$!
        measure "$3" "$5" > "$base/$3.out" 2>&1 &
        p2=$!
        wait "$p1" || TQ_FAILS=$((TQ_FAILS + 1))
        wait "$p2" || TQ_FAILS=$((TQ_FAILS + 1))
    else
        (measure "$2" "$4") > "$base/$2.out" 2>&1 || TQ_FAILS=$((TQ_FAILS + 1))
        (measure "$3" "$5") > "$base/$3.out" 2>&1 || TQ_FAILS=$((TQ_FAILS + 1))
    fi
    cat "$base/$2.out" "$base/$3.out" >&2
    tq_log "load after pair $1: $(uptime)"
}

tq_log "load before: $(uptime)"
for ((n = 1; n <= ${COST_ROUNDS:-1}; n++)); do
    pair writer "kernel$n" "thaw$n" "thaw.hibargs=--writer,kernel" "thaw.hibargs=--writer,thaw"
    pair integrity "plain$n" "integrity$n" "thaw.hibargs=--writer,thaw" "thaw.integrity=1"
done
for ((n = 1; n <= ${COST_ROUNDS:-1}; n++)); do
    printf 'round %d, writer %-31s %9s %9s %6s\n' "$n" "(seconds)" kernel thaw ratio
    row "kernel$n" "thaw$n" "thaw hibernate to power-off" hib
    row "kernel$n" "thaw$n" "handoff to the workload running again" resume
    echo "  kernel writes: $(v "kernel$n" write); $(v "kernel$n" read)"
    echo "  thaw writes:   $(v "thaw$n" write); $(v "thaw$n" read)"
    printf 'round %d, integrity %-28s %9s %9s %6s\n' "$n" "(seconds)" plain integrity ratio
    row "plain$n" "integrity$n" "thaw setup" setup
    row "plain$n" "integrity$n" "thaw hibernate to power-off" hib
    row "plain$n" "integrity$n" "handoff to the workload running again" resume
    row "plain$n" "integrity$n" "kernel start to the workload running" boot
    echo "  plain:     $(v "plain$n" write); $(v "plain$n" read)"
    echo "  integrity: $(v "integrity$n" write); $(v "integrity$n" read)"
done | tee "$TQ_REPO/build/integrity-cost.txt"
TQ_WORK=$base
tq_finish

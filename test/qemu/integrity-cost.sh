#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What thaw setup --integrity costs: the same VM and workload hibernated and resumed on plain LUKS2
# and on LUKS2 with dm-integrity, in pairs: the two of a pair run at the same time so that both see
# the same load on the host, and the times side by side with their ratio (seconds, host clock at
# each serial line; and the kernel's own figures for writing and reading the image). The
# integrity side commits dm-integrity's journal 1 ms after a write (thaw.commitms=1, as in
# tamper-integrity), or Linux 6.1 loses the image's last writes at power-off (thaw(8)). Not part
# of make check-qemu: a measurement, run by hand (COST_PAIRS=2 pairs by default, about 4 minutes
# each under TCG on a quiet machine).
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=test/qemu/lib.sh
. "$here/lib.sh"

tq_prepare
tq_workdir integrity-cost
base=$TQ_WORK
# t NAME TEXT: seconds of the first line with TEXT in boot NAME's log; d A B: B - A.
t() { tq_time "$1" "$2"; }
d() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "") print "-"; else printf "%.1f", b - a }'; }
kernel() { grep -F -m1 "$2" "$TQ_WORK/$1.log" | sed 's/.*PM: hibernation: //'; }

# measure DIR [ARG]: one hibernate and one resume boot in $base/DIR; figures into $base/DIR/figures.
measure() {
    TQ_WORK=$base/$1
    mkdir -p "$TQ_WORK"
    cp --sparse=always "$base/root.img" "$base/swap.img" "$base/key" "$TQ_WORK/"
    [[ $# -gt 1 ]] && tq_root_add "$(command -v dmsetup)" "$(tq_kmoddir)/kernel/drivers/md/md-mod.ko"
    tq_hibernate_boot hibernate "${@:2}"
    tq_resume_boot resume
    {
        echo "setup=$(d "$(t hibernate 'THAW-TEST: setup starts')" "$(t hibernate 'THAW-TEST: setup exit')")"
        echo "hib=$(d "$(t hibernate 'THAW-TEST: hibernating')" "$(t hibernate 'reboot: Power down')")"
        echo "resume=$(d "$(t resume 'thaw: resuming from')" "$(t resume 'THAW-TEST: hibernate exit')")"
        echo "boot=$(d "$(t resume 'Linux version')" "$(t resume 'THAW-TEST: hibernate exit')")"
        echo "write=$(kernel hibernate 'PM: hibernation: Wrote')"
        echo "read=$(kernel resume 'PM: hibernation: Read')"
    } > "$TQ_WORK/figures"
    exit "$TQ_FAILS"
}

# v DIR KEY: one figure; ratio A B: B / A.
v() { sed -n "s/^$2=//p" "$base/$1/figures" 2> /dev/null; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 <= 0 || b + 0 <= 0) print "-"; else printf "%.2f", b / a }'; }
row() {
    local p i
    p=$(v "plain$1" "$3")
    i=$(v "integrity$1" "$3")
    printf '%-8s %-42s %9s %9s %6s\n' "pair $1" "$2" "$p" "$i" "$(ratio "$p" "$i")"
}

tq_log "load before: $(uptime)"
for ((n = 1; n <= ${COST_PAIRS:-2}; n++)); do
    measure "plain$n" > "$base/plain$n.out" 2>&1 &
    p1=$!
    measure "integrity$n" thaw.integrity=1 thaw.commitms=1 > "$base/integrity$n.out" 2>&1 &
    p2=$!
    wait "$p1" || TQ_FAILS=$((TQ_FAILS + 1))
    wait "$p2" || TQ_FAILS=$((TQ_FAILS + 1))
    cat "$base/plain$n.out" "$base/integrity$n.out" >&2
    tq_log "load after pair $n: $(uptime)"
done
printf '%-51s %9s %9s %6s\n' "seconds" plain integrity ratio
for ((n = 1; n <= ${COST_PAIRS:-2}; n++)); do
    row "$n" "thaw setup" setup
    row "$n" "thaw hibernate to power-off" hib
    row "$n" "handoff to the workload running again" resume
    row "$n" "kernel start to the workload running" boot
    echo "pair $n kernel, plain:     $(v "plain$n" write); $(v "plain$n" read)"
    echo "pair $n kernel, integrity: $(v "integrity$n" write); $(v "integrity$n" read)"
done
TQ_WORK=$base
tq_finish

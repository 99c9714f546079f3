#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What thaw setup --integrity costs: the same VM and workload hibernated and resumed on plain LUKS2
# and on LUKS2 with dm-integrity, the two run at the same time so that both see the same load on
# the host, and the times side by side (seconds, host clock at each serial line; and the kernel's
# own figures for writing and reading the image). Not part of make check-qemu: a measurement, run
# by hand (about 4 minutes under TCG on a quiet machine).
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

# measure MODE [ARG]: one hibernate and one resume boot in $base/MODE; figures into $base/MODE/figures.
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
        echo "write=$(kernel hibernate 'PM: hibernation: Wrote')"
        echo "read=$(kernel resume 'PM: hibernation: Read')"
    } > "$TQ_WORK/figures"
    exit "$TQ_FAILS"
}

measure plain > "$base/plain.out" 2>&1 &
p1=$!
measure integrity thaw.integrity=1 > "$base/integrity.out" 2>&1 &
p2=$!
wait "$p1" || TQ_FAILS=$((TQ_FAILS + 1))
wait "$p2" || TQ_FAILS=$((TQ_FAILS + 1))
cat "$base/plain.out" "$base/integrity.out" >&2
# v MODE KEY: one figure.
v() { sed -n "s/^$2=//p" "$base/$1/figures" 2> /dev/null; }
printf '%-44s %10s %10s\n' "" plain integrity
printf '%-44s %10s %10s\n' "thaw setup (s)" "$(v plain setup)" "$(v integrity setup)"
printf '%-44s %10s %10s\n' "thaw hibernate to power-off (s)" "$(v plain hib)" "$(v integrity hib)"
printf '%-44s %10s %10s\n' "handoff to the workload running again (s)" "$(v plain resume)" "$(v integrity resume)"
printf '%-44s %10s %10s\n' "kernel start to the workload running (s)" "$(v plain boot)" "$(v integrity boot)"
echo "kernel, plain:     $(v plain write); $(v plain read)"
echo "kernel, integrity: $(v integrity write); $(v integrity read)"
TQ_WORK=$base
tq_finish

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# swapin-tight: after the resume (no automatic swap-in), a second workload takes all but ~140 MiB of
# the available memory, so more is swapped than fits. thaw swapin --strategy swapoff refuses;
# prefetch brings back what fits, stops at the floor with available memory above it, the VM keeps
# answering (a heartbeat every second); once the second workload is gone, prefetch brings the rest
# back; neither workload lost anything.
set -u
# Enough to see the swap-in work, small enough to keep the scenario short under TCG.
export TQ_WORKLOAD_MIB=${TQ_WORKLOAD_MIB:-128}
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"

tq_prepare
tq_workdir swapin-tight
tq_hibernate_boot hibernate thaw.hibargs=--image-size,0,--reclaim,--no-swapin thaw.after=tight no_console_suspend
tq_resume_boot resume

log=$TQ_WORK/resume.log
tq_check "no automatic swap-in with --no-swapin" tq_lacks resume "started thaw swapin"
tq_check "swapoff strategy refused: more is swapped than fits" tq_has resume "thaw: swapoff refused:"
tq_check "swapoff strategy exits 1" tq_has resume "THAW-TEST: swapoff strategy exit 1"
tq_check "the swap stayed on" tq_has resume "swap on: 1"
tq_check "prefetch stopped at the floor" tq_has resume "thaw: swap-in stopped at the memory floor:"
tq_check "prefetch exits 0 at the floor" tq_has resume "THAW-TEST: prefetch exit 0"
# "... N MiB still only in swap, A MiB available (floor F MiB)"
read -r left avail floor < <(sed -n 's/.*thaw: swap-in stopped.* \([0-9]*\) MiB still only in swap, \([0-9]*\) MiB available (floor \([0-9]*\) MiB).*/\1 \2 \3/p' "$log")
tq_log "at the floor: ${left:-?} MiB still in swap, ${avail:-?} MiB available, floor ${floor:-?} MiB"
tq_check "it says how much is still in swap (${left:-?} MiB, more than none)" test "${left:-0}" -gt 0
tq_check "available memory stayed above the floor (${avail:-?} >= ${floor:-?} MiB)" \
    test -n "$avail" -a "${avail:-0}" -ge "${floor:-1}"
gap=$(sed -n 's/.*THAW-TEST: heartbeat: longest gap \([0-9]*\) s.*/\1/p' "$log")
tq_check "the VM stayed responsive during the swap-in (longest heartbeat gap ${gap:-?} s, under 60)" \
    test -n "$gap" -a "${gap:-99}" -lt 60
tq_check "the second workload lost nothing" tq_has resume "THAW-TEST: second workload exit 0"
tq_check "with room again, prefetch brought the rest back" tq_has resume "THAW-TEST: prefetch with room exit 0"
tq_check "... and said so" tq_has resume "thaw: swap-in done:"
grep -E "thaw: swap|THAW-TEST: (tight|after prefetch)" "$log" | sed 's/^/# /' >&2
tq_finish

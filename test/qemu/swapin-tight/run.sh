#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# swapin-tight: after the resume (no automatic swap-in), a second workload takes all but ~140 MiB of
# the available memory, so more is swapped than fits. thaw swapin --strategy swapoff refuses;
# prefetch brings back what fits, stops at the floor with available memory above it, the VM keeps
# answering (a heartbeat every second). Once the second workload is gone, all is pushed out again
# with a third small workload: thaw swapin --first THIRD on a terminal (a pty through util-linux
# script) brings the third back while the first is still in swap, draws its bar, and stops on
# SIGTERM with exit 1, saying how much is still in swap, swap still on; a plain (no terminal)
# prefetch brings the rest back with one summary line; --strategy swapoff, with room now, turns the
# swap on again with its priority; no workload lost anything.
set -u
# Enough to see the swap-in work, small enough to keep the scenario short under TCG.
export TQ_WORKLOAD_MIB=${TQ_WORKLOAD_MIB:-128}
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"

tq_prepare
tq_workdir swapin-tight
# script runs thaw swapin on a pty; util-linux swapon (as ul-swapon) sets a swap priority.
cp "$(command -v swapon)" "$TQ_WORK/ul-swapon"
tq_root_add "$(command -v script)" "$TQ_WORK/ul-swapon"
tq_hibernate_boot hibernate thaw.hibargs=--image-size,0,--reclaim,--no-swapin no_console_suspend
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

# --first, on a terminal, then SIGTERM.
read -r wl3 third3 < <(sed -n 's/.*THAW-TEST: reclaimed: workload VmSwap \([0-9]*\) kB, third VmSwap \([0-9]*\) kB.*/\1 \2/p' "$log")
read -r thirdf wlf < <(sed -n 's/.*THAW-TEST: first: third VmSwap \([0-9]*\) kB while workload VmSwap \([0-9]*\) kB.*/\1 \2/p' "$log")
tq_log "pushed out again: workload ${wl3:-?} kB, third ${third3:-?} kB; when the third was back: third ${thirdf:-?} kB, workload ${wlf:-?} kB"
tq_check "both workloads were in swap again (${wl3:-?} kB >= 64 MiB, ${third3:-?} kB >= 8 MiB)" \
    test "${wl3:-0}" -ge 65536 -a "${third3:-0}" -ge 8192
tq_check "--first: the third's swap fell to at most 64 kB (${thirdf:-?} kB) ..." test -n "$thirdf" -a "${thirdf:-99}" -le 64
tq_check "... while the first workload still had ${wlf:-?} kB in swap (>= 16 MiB)" test "${wlf:-0}" -ge 16384
tq_check "SIGTERM reached a running thaw swapin" grep -qE 'THAW-TEST: sent SIGTERM to thaw swapin [0-9]+$' "$log"
tq_check "interrupted: exit 1 (as thaw swapin --help says), swap still on" \
    tq_has resume "THAW-TEST: interrupted swap-in exit 1: "
tq_check "... swap still on" grep -qE 'THAW-TEST: interrupted swap-in exit [0-9]+: .*swap on: 1' "$log"
# "thaw: swap-in interrupted: A of T MiB from ...; L MiB still only in swap, ..."
read -r itotal ileft < <(sed -n 's/.*THAW-TEST: pty: thaw: swap-in interrupted: [0-9]* of \([0-9]*\) MiB.*; \([0-9]*\) MiB still only in swap.*/\1 \2/p' "$log")
tq_check "the interrupted run says how much is still in swap (${ileft:-?} MiB, more than none)" test "${ileft:-0}" -gt 0
# The bar on the pty: "[###...] D / T MiB  R MiB/s  N s left", with the summary's total.
bar='THAW-TEST: pty: \[[#.]{30}\] +[0-9]+ / [0-9]+ MiB +[0-9]+\.[0-9] MiB/s'
tq_check "a progress bar was drawn on the terminal, with time left" grep -qE "$bar +[0-9]+ (s|min) left" "$log"
btotal=$(grep -oE "$bar" "$log" | tail -n 1 | sed 's/.* \([0-9]*\) MiB .*/\1/')
tq_check "the bar's total (${btotal:-?} MiB) is the summary's (${itotal:-?} MiB)" test -n "$itotal" -a "${btotal:-x}" = "$itotal"
tq_check "the third workload lost nothing" tq_has resume "THAW-TEST: third workload exit 0"
tq_check "with room again, prefetch brought the rest back" tq_has resume "THAW-TEST: prefetch with room exit 0"
tq_check "not on a terminal: one line, no bar" tq_has resume "THAW-TEST: plain: 1 lines, 0 carriage returns"
tq_check "... the summary" tq_has resume "THAW-TEST: plain: thaw: swap-in done:"
tq_check "util-linux swapon gave the swap priority 7" tq_has resume "THAW-TEST: priority before: 7"
tq_check "swapoff strategy with room: the swap is on again with its priority (7)" \
    tq_has resume "THAW-TEST: swapoff strategy with room exit 0: priority after: 7"
grep -E "thaw: swap|THAW-TEST: (tight|after prefetch|reclaimed|first|sent|interrupted|plain|priority|swapoff)" "$log" |
    sed 's/^/# /' >&2
tq_finish

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# swapin-auto: thaw hibernate with image_size 0 and --reclaim, so most of the workload goes to swap
# (before the hibernation: when the kernel itself shrank memory that much inside the hibernation,
# the TCG guest hung at "Disabling non-boot CPUs" on a loaded host, 2 runs of 3); after the resume
# the swap-in that thaw hibernate starts by itself brings it back: the workload's swap use falls to
# near zero, and nothing is lost. The workload's memory was in transparent huge pages before the
# hibernation (Debian's 6.1: enabled=always) and comes back from swap in 4 KiB pages: the swap-in
# makes them huge pages again (MADV_COLLAPSE), so AnonHugePages is back near what it was.
set -u
# Enough to see the swap-in work, small enough to keep the scenario short under TCG.
export TQ_WORKLOAD_MIB=${TQ_WORKLOAD_MIB:-128}
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"

tq_prepare
tq_workdir swapin-auto
tq_hibernate_boot hibernate thaw.hibargs=--image-size,0,--reclaim no_console_suspend
tq_resume_boot resume

# "after resume: workload VmSwap N kB, ..." and "swap-in over after S s: workload VmSwap N kB, ..."
before=$(sed -n 's/.*THAW-TEST: after resume: workload VmSwap \([0-9]*\) kB.*/\1/p' "$TQ_WORK/resume.log")
after=$(sed -n 's/.*THAW-TEST: swap-in over after .* workload VmSwap \([0-9]*\) kB.*/\1/p' "$TQ_WORK/resume.log")
tq_log "workload in swap: ${before:-?} kB after the resume, ${after:-?} kB after the swap-in"
tq_check "most of the workload was in swap after the resume (${before:-?} kB)" \
    test "${before:-0}" -ge $((TQ_WORKLOAD_MIB * 1024 / 2))
tq_check "--reclaim pushed memory out before hibernating" tq_has hibernate "before hibernating"
tq_check "thaw hibernate started the swap-in" tq_has resume "started thaw swapin --strategy prefetch"
tq_check "the swap-in finished by itself" tq_has resume "thaw: swap-in done:"
tq_check "the workload's swap use fell to near zero (${after:-?} kB, at most 1%)" \
    test -n "$after" -a "${after:-1}" -le $((TQ_WORKLOAD_MIB * 1024 / 100))

# AnonHugePages of the workload (smaps_rollup): before hibernating, after the resume, after the swap-in.
hbefore=$(sed -n 's/.*THAW-TEST: workload AnonHugePages before hibernating: \([0-9]*\) kB.*/\1/p' "$TQ_WORK/hibernate.log")
hresume=$(sed -n 's/.*THAW-TEST: after resume: workload .*AnonHugePages \([0-9]*\) kB.*/\1/p' "$TQ_WORK/resume.log")
hafter=$(sed -n 's/.*THAW-TEST: swap-in over after .*AnonHugePages \([0-9]*\) kB.*/\1/p' "$TQ_WORK/resume.log")
tq_log "workload in huge pages: ${hbefore:-?} kB before hibernating, ${hresume:-?} kB after the resume," \
    "${hafter:-?} kB after the swap-in"
tq_check "the workload was mostly in huge pages before hibernating (${hbefore:-?} kB, at least half)" \
    test "${hbefore:-0}" -ge $((TQ_WORKLOAD_MIB * 1024 / 2))
tq_check "they came back from swap as small pages (${hresume:-?} kB after the resume, under half of ${hbefore:-?})" \
    test -n "$hresume" -a "${hresume:-0}" -lt $((${hbefore:-0} / 2))
tq_check "the swap-in made them huge pages again (${hafter:-?} kB, at least 3/4 of ${hbefore:-?} kB)" \
    test -n "$hafter" -a "${hafter:-0}" -ge $((${hbefore:-0} * 3 / 4)) -a "${hbefore:-0}" -gt 0
tq_check "its summary says how much (N MiB back in huge pages, N > 0)" \
    grep -qE 'thaw: swap-in done: .*; [1-9][0-9]* MiB back in huge pages' "$TQ_WORK/resume.log"
grep -F "thaw: swap-in" "$TQ_WORK/resume.log" | sed 's/^/# /' >&2
tq_finish

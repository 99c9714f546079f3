#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# swapin-auto: thaw hibernate with image_size 0 and --reclaim, so most of the workload goes to swap
# (before the hibernation: when the kernel itself shrank memory that much inside the hibernation,
# the TCG guest hung at "Disabling non-boot CPUs" on a loaded host, 2 runs of 3); after the resume
# the swap-in that thaw hibernate starts by itself brings it back: the workload's swap use falls to
# near zero, and nothing is lost.
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
grep -F "thaw: swap-in" "$TQ_WORK/resume.log" | sed 's/^/# /' >&2
tq_finish

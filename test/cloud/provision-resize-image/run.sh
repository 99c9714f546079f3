#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# provision-resize-image: the part of a resize that meets an image. The image of
# provision-first-boot sets itself up (size=ram for TQ_MEM MiB) and hibernates at the sleep
# button (lib.sh's tc_state hibernated: that first boot, shared with provision-first-boot).
# Started again with 256 MiB more memory, as an instance whose type changed while it was stopped,
# its image cannot be resumed there (README: "Fresh images only"); under
# rd.thaw.mismatch=poweroff, the default, thaw powers the VM off in the initramfs thaw provision
# built, before anything is mounted: thaw provision never runs, nothing is resized, neither disk
# changes and the ticket stays fresh. Started again with TQ_MEM MiB, the VM resumes it, nothing
# lost.
set -u
# shellcheck source=test/cloud/lib.sh
. "$(dirname "$0")/../lib.sh"

tc_prepare
tq_workdir provision-resize-image
export TQ_THAW_ARGS=""
mem=$TQ_MEM
big=$((TQ_MEM + 256))

tc_state hibernated
tc_report_checks first
tq_check "first: thaw provision planned the first setup" tq_has first "first setup: format /dev/vdb as LUKS2 swap"
tq_check "first: thaw provision rebuilt the initramfs" tq_has first "rebuilt the running kernel's initramfs"
tq_check "first: the image was written" tq_image_written first
tq_check "first: powered off inside the hibernation (the request did not return)" \
    tc_lacks_after first "thaw: hibernating to /dev/mapper/thaw-swap" "THAW-TEST: hibernate request:"

tc_initramfs resume
TQ_MEM=$big tq_poweroff_boot bigger "image was made with $mem MiB of memory, this machine has $big MiB"
tq_check "bigger: the advice names the memory size that resumes it, and the way to drop it" \
    tq_has bigger "image kept: start the VM again with $mem MiB to resume it, or boot with rd.thaw.mismatch=discard to drop it"
tq_check "bigger: thaw provision never ran" \
    tc_lacks_after bigger "thaw: not resuming the image on /dev/mapper/thaw-swap" "thaw-provision"

TQ_MEM=$mem tq_sleep_boot_checked resume resume "$TQ_WORK/key"
tc_resumed_checks
tq_finish

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# mem-mismatch: hibernate with TQ_MEM MiB; a boot with 256 MiB more must not hand the image to the
# kernel (which would consume it and then refuse it), must say why and keep the image; a boot with
# the original memory then resumes it, nothing lost.
# Also proves the e820 checksum rebuilt from /sys/firmware/memmap: it differs from the image's on
# the bigger VM (thaw inspect) and equals it, and so the kernel's, on the original one (thaw resume).
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"

tq_prepare
tq_workdir mem-mismatch
mem=$TQ_MEM
big=$((TQ_MEM + 256))
tq_hibernate_boot hibernate

TQ_MEM=$big tq_boot_checked bigger inspect "$TQ_WORK/key"
tq_check "bigger: thaw refused before handoff, naming both memory sizes" \
    tq_has bigger "thaw: not resuming the image on /dev/mapper/thaw-swap: image was made with $mem MiB of memory, this machine has $big MiB"
tq_check "bigger: no handoff" tq_lacks bigger "thaw: resuming from"
tq_check "bigger: the kernel never saw the image" tq_lacks bigger "PM: hibernation: resume from hibernation"
tq_check "bigger: the boot went on to the real init" tq_has bigger "THAW-TEST: fresh boot step=inspect"
tq_check "bigger: the mapping is not open" tq_has bigger "THAW-TEST: mapping absent"
tq_check "bigger: the image is still on disk (S1SUSPEND)" tq_has bigger "THAW-TEST: image signature: S1SUSPEND"
# thaw status in the real system reads /run/thaw/state, which thaw resume wrote in the initramfs.
tq_check "bigger: thaw status says the image was kept" \
    tq_has bigger "THAW-TEST: status: At boot, thaw resume: an image this machine cannot resume was kept; the swap is not in use."
tq_check "bigger: thaw status names the failed check" tq_has bigger "THAW-TEST: status: Failed check: memory"
tq_check "bigger: thaw status gives the reason, with both memory sizes" \
    tq_has bigger "THAW-TEST: status: Details: not resuming the image on /dev/mapper/thaw-swap: image was made with $mem MiB of memory, this machine has $big MiB"
tq_check "bigger: thaw inspect says why not" \
    tq_has bigger "THAW-TEST: inspect:   resumable here: no: image was made with $mem MiB"
e820=$(sed -n 's/.*THAW-TEST: inspect:   e820 checksum:  image \([0-9a-f]*\), this machine \([0-9a-f]*\).*/\1 \2/p' \
    "$TQ_WORK/bigger.log" | head -n1)
read -r e820_image e820_big <<< "${e820:-? ?}"
tq_log "e820 checksum: image ${e820_image}, rebuilt on the ${big} MiB VM ${e820_big}"
tq_check "bigger: the rebuilt e820 checksum differs from the image's" \
    test "$e820_image" != "?" -a "$e820_big" != "?" -a "$e820_image" != "$e820_big"

TQ_MEM=$mem tq_resume_boot resume
tq_check "resume: thaw's checks passed, e820 checksum $e820_image rebuilt as the kernel wrote it" \
    tq_has resume "e820 checksum $e820_image (as here)"
checks=$(sed -n 's/.*thaw: image checks passed in \([0-9]*\) ms.*/\1/p' "$TQ_WORK/resume.log" | head -n1)
tq_log "pre-handoff checks took ${checks:-?} ms at boot"
tq_finish

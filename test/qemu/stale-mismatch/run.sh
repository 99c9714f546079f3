#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# stale-mismatch: an image made with TQ_MEM MiB meets a VM with 256 MiB more. thaw must not hand it
# to the kernel (which would consume it and then refuse it), and must not let the boot go on either:
# that boot would mount the root the hibernated system still has mounted, and the image could never
# be resumed safely again. Under rd.thaw.mismatch=poweroff (the default) thaw says why and what to
# do, and powers the VM off before anything is mounted: the root is never mounted, nothing is
# written to either disk, the ticket stays fresh. Started again with TQ_MEM MiB, the VM resumes it,
# nothing lost (and the resumed system writes files, as a real one does).
# The e820 checksum rebuilt from /sys/firmware/memmap equals the image's (as the crafting boot's thaw
# inspect read it), and so the kernel's, on the original VM (thaw resume). mem-mismatch also saw it
# differ on the bigger VM, through thaw inspect in that boot's init: that boot now powers off first.
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=test/qemu/crafted.sh
. "$(dirname "$0")/../crafted.sh"

tq_prepare
tq_workdir stale-mismatch
mem=$TQ_MEM
big=$((TQ_MEM + 256))
tq_crafted_image pristine

TQ_MEM=$big tq_poweroff_boot bigger "image was made with $mem MiB of memory, this machine has $big MiB"
tq_check "bigger: the advice names the memory size that resumes it, and the way to drop it" \
    tq_has bigger "image kept: start the VM again with $mem MiB to resume it, or boot with rd.thaw.mismatch=discard to drop it"

# The image's e820 checksum, as the crafting boot's thaw inspect read it (that VM, with its extra
# disks, is not the image's shape: its own checksum differs).
e820_image=$(sed -n 's/.*THAW-TEST: inspect:   e820 checksum:  image \([0-9a-f]*\),.*/\1/p' "$TQ_CRAFTED/craft.log" |
    head -n1)
tq_check "craft: thaw inspect read the image's e820 checksum (${e820_image:-none})" test -n "$e820_image"

# rd.thaw.verify=1 as well (verify's resume, in the same boot): the image as written verifies, its
# CRC32 and its MAC, and resumes with nothing lost.
TQ_MEM=$mem tq_resume_boot resume rd.thaw.verify=1
tq_check "resume: the verification names a matching CRC32 and the image's MAC matching its ticket" \
    grep -qE 'thaw: image verified in [0-9]+ ms: CRC32 [0-9a-f]{8} matches .*; the MAC of the whole image matches its ticket' \
    "$TQ_WORK/resume.log"
tq_log "boot verification: $(sed -n 's/.*thaw: \(image verified in [0-9]* ms: .*\)/\1/p' "$TQ_WORK/resume.log" | head -n1)"
tq_check "resume: thaw's checks passed, e820 checksum $e820_image rebuilt as the kernel wrote it" \
    tq_has resume "e820 checksum $e820_image (as here)"
tq_check "resume: the resumed system wrote files to its root" tq_has resume "THAW-TEST: wrote files: "
checks=$(sed -n 's/.*thaw: image checks passed in \([0-9]*\) ms.*/\1/p' "$TQ_WORK/resume.log" | head -n1)
ticket=$(sed -n 's/.*thaw: image ticket verified in \([0-9]*\) ms.*/\1/p' "$TQ_WORK/resume.log" | head -n1)
tq_log "at boot: pre-handoff checks ${checks:-?} ms, ticket ${ticket:-?} ms"
tq_finish

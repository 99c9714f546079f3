#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# tamper-integrity: thaw setup --integrity, hibernate; the host keeps a copy of both disks. Then one
# byte of the ciphertext of the image's first data page is flipped on the raw disk (what someone
# with the disk but not the key can do): dm-integrity turns the changed sector into an I/O error,
# the kernel does not restore a corrupted image, thaw does not crash, the boot goes on. Last, the
# untouched copy resumes through dm-integrity with nothing lost. A smaller workload and swap disk
# keep the integrity wipe and the hibernation short; the costs are measured by
# test/bench/integrity-cost.sh.
#
# Linux 6.1 writes its image without a single flush, and dm-integrity keeps the last writes in its
# journal in memory for up to 10 s: an image the kernel wrote would lose its end at power-off
# (thaw(8), --integrity). So thaw hibernate (--writer auto) writes the image itself for a container
# with integrity: the kernel freezes and snapshots through /dev/snapshot, thaw writes the image in
# the kernel's format, flushes, marks the header, flushes, powers off; the kernel resumes it.
set -u
TQ_WORKLOAD_MIB=${TQ_WORKLOAD_MIB:-64}
TQ_SWAP_MIB=${TQ_SWAP_MIB:-300}
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"

tq_prepare
tq_workdir tamper-integrity
tq_root_add "$(command -v dmsetup)"
tq_hibernate_boot hibernate thaw.integrity=1
tq_log "$(grep -F 'THAW-TEST: live table' "$TQ_WORK/hibernate.log" | sed 's/.*THAW-TEST: //' | tr -d '\r')"
tq_check "hibernate: the container has integrity" tq_has hibernate "with integrity (hmac(sha256))"
tq_check "hibernate: thaw chose to write the image itself" tq_has hibernate "thaw writes the image"
tq_check "hibernate: thaw wrote the image and flushed it before the power-off" \
    grep -qE 'thaw: wrote the image to /dev/mapper/thaw-swap: .* flushed; powering off' "$TQ_WORK/hibernate.log"
tq_check "hibernate: the kernel did not write it" tq_lacks hibernate "PM: hibernation: Wrote"
tq_log "thaw's write: $(grep -F 'thaw: wrote the image' "$TQ_WORK/hibernate.log" | sed 's/.*thaw: //' | head -n1)"
cp --sparse=always "$TQ_WORK/root.img" "$TQ_WORK/root.hib"
cp --sparse=always "$TQ_WORK/swap.img" "$TQ_WORK/swap.hib"

# The tampering boot goes on (noresume), so it supersedes the image on its /dev/vdb: it tampers a
# copy attached as /dev/vdc, whose ticket stays fresh, and that copy is the next boot's swap disk.
cp --sparse=always "$TQ_WORK/swap.img" "$TQ_WORK/swap-tamper.img"
TQ_QEMU_EXTRA=(-drive "file=$TQ_WORK/swap-tamper.img,if=virtio,format=raw")
tq_boot_checked tamper inspect "$TQ_WORK/key" noresume thaw.tamper=vdc
TQ_QEMU_EXTRA=()
tq_check "tamper: one byte of the image's ciphertext changed" tq_has tamper "THAW-TEST: tampered: byte"
tq_check "tamper: dm-integrity refuses the changed sector" \
    tq_has tamper "THAW-TEST: tampered block reads: "
tq_check "tamper: the boot superseded the image on its own /dev/vdb" \
    tq_has tamper "superseded by this boot (noresume): it will never be resumed"
mv "$TQ_WORK/swap-tamper.img" "$TQ_WORK/swap.img"

tq_boot_checked refused resume "$TQ_WORK/key"
tq_check "refused: thaw did not crash" tq_lacks refused "thaw resume exited with status"
# dm-integrity's own "Checksum failed" line is rate-limited; the kernel's loader names the failed read.
tq_check "refused: the kernel's read of the changed sector failed" \
    tq_has refused "PM: Read-error on swap-device"
tq_check "refused: the kernel did not restore the image" \
    tq_has refused "PM: hibernation: Failed to load image, recovering."
tq_check "refused: thaw said what happened, in one line" \
    tq_has refused "thaw: kernel did not resume the image on /dev/mapper/thaw-swap"
tq_check "refused: the hibernated system did not come back" tq_lacks refused "THAW-TEST: hibernate exit"
tq_check "refused: the boot went on to the real init" tq_has refused "THAW-TEST: fresh boot step=resume"
tq_check "refused: thaw status in the real system says so" \
    tq_has refused "THAW-TEST: status: At boot, thaw resume: the kernel took the image but did not restore it"
tq_log "tamper: $(grep -F 'THAW-TEST: tampered' "$TQ_WORK/tamper.log" | sed 's/.*THAW-TEST: //' | tr '\n' ' ')"

# The untouched copy: a resume through dm-integrity, nothing lost.
mv "$TQ_WORK/root.hib" "$TQ_WORK/root.img"
mv "$TQ_WORK/swap.hib" "$TQ_WORK/swap.img"
tq_resume_boot resume
tq_log "the kernel's load through dm-integrity: $(grep -F 'PM: hibernation: Read' "$TQ_WORK/resume.log" |
    sed 's/.*PM: hibernation: //' | head -n1)"
tq_finish

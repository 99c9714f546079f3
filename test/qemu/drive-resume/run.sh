#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# drive-resume: the key reaches the guest only as a file on a vfat config drive labelled CIDATA
# (a third, read-only virtio disk; fw_cfg holds a wrong key); thaw setup enrolls
# drive:CIDATA:/thaw/key, the boot after the hibernation mounts the drive read-only, reads the key,
# unmounts it again and resumes with nothing lost. An ISO 9660 drive labelled config-2 (OpenStack's
# config drive, Rock Ridge) holds the wrong key and comes first in the resume boot's chain: thaw
# must mount it, read that key, find it wrong, and go on to the vfat drive.
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"

for tool in mkfs.vfat mmd mcopy genisoimage; do
    command -v "$tool" > /dev/null || tq_skip "$tool missing (make deps)"
done
tq_prepare
tq_workdir drive-resume
drive=$TQ_WORK/cidata.img
mkfs.vfat -C -n CIDATA "$drive" 1440 > /dev/null || tq_die "mkfs.vfat failed"
mmd -i "$drive" ::/thaw || tq_die "mmd failed"
mcopy -i "$drive" "$TQ_WORK/key" ::/thaw/key || tq_die "mcopy failed"
mkdir -p "$TQ_WORK/iso/thaw"
cp "$TQ_WORK/wrong-key" "$TQ_WORK/iso/thaw/key"
iso=$TQ_WORK/config-2.iso
genisoimage -quiet -V config-2 -r -J -o "$iso" "$TQ_WORK/iso" || tq_die "genisoimage failed"
rm -rf "$TQ_WORK/iso"
TQ_QEMU_EXTRA=(-drive "file=$drive,if=virtio,format=raw,readonly=on"
    -drive "file=$iso,if=virtio,format=raw,readonly=on")
TQ_FWCFG_KEY=$TQ_WORK/wrong-key
src=drive:CIDATA:/thaw/key
isosrc=drive:config-2:/thaw/key

tq_hibernate_boot hibernate "thaw.setupkey=$src" "rd.thaw.key=$src"
tq_check "hibernate: setup enrolled $src" tq_lacks hibernate "cannot read the key from"
tq_resume_boot resume "rd.thaw.key=$isosrc,$src"
tq_check "resume: the ISO 9660 drive was read, its key refused" \
    tq_has resume "cannot get the key from $isosrc (wrong key): trying $src"
tq_check "resume: unlocked with $src" tq_has resume "with $src"
tq_finish

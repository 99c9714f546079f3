#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# swapfile-resume: a swap file on an encrypted root. Boot 1 (plain root) makes /dev/vdb a LUKS2
# container with an installer key, ext4 in it with a copy of the guest root, and runs
# `thaw setup --swapfile` in a chroot of it, which enrolls the fw_cfg key and prints the kernel
# arguments. Boots 2 and 3 use exactly those arguments with root=/dev/mapper/luks-UUID and an
# initramfs without dracut's crypt module: thaw unlocks the root itself. Boot 2 (no image) must
# come up on that root, swap to the file and hibernate with thaw writing the image
# (--writer thaw: the blocks the kernel allocates in the swap file, through the root's device);
# boot 3 must resume it, nothing lost. hostonly and systemd-swapfile hibernate to a swap file with
# the kernel writing.
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"

TQ_SWAP_MIB=1024 # the encrypted root: the guest tree and the 600 MiB swap file
tq_prepare
tq_workdir swapfile-resume
(umask 077; head -c 32 /dev/urandom > "$TQ_WORK/rootkey")
uuid=$(cat /proc/sys/kernel/random/uuid)
TQ_QEMU_EXTRA=(-fw_cfg "name=opt/test/rootkey,file=$TQ_WORK/rootkey")

TQ_THAW_ARGS="" tq_boot_checked mkroot mkroot "$TQ_WORK/key" thaw.rootuuid="$uuid" thaw.swapmib=600
tq_check "mkroot: thaw setup --swapfile succeeded" tq_has mkroot "THAW-TEST: setup exit 0"
args=$(sed -n 's/.*THAW-TEST: setup-cmdline: //p' "$TQ_WORK/mkroot.log" | head -n1)
offset=$(printf '%s\n' "$args" | sed -n 's/.*resume_offset=\([0-9]*\).*/\1/p')
tq_log "printed: $args"
tq_check "mkroot: it printed the root container, the key, the root's mapping name, the header pin and resume_offset" \
    grep -qxE "rd\.thaw\.device=UUID=$uuid rd\.thaw\.key=fwcfg:opt/thaw/key rd\.thaw\.name=luks-$uuid rd\.thaw\.header=sha256:[0-9a-f]{64} resume_offset=[1-9][0-9]*" \
    <<< "$args"
tq_check "mkroot: thaw config prints the same from thaw.conf" tq_has mkroot "THAW-TEST: config: $args"

export TQ_ROOT_ARGS="root=/dev/mapper/luks-$uuid" TQ_THAW_ARGS="$args"
tq_sleep_boot_checked hibernate hibernate-file "$TQ_WORK/key" thaw.hibargs=--writer,thaw
tq_check "hibernate: thaw unlocked the root's container (no image yet)" \
    tq_has hibernate "thaw: no hibernation image on /dev/mapper/luks-$uuid: boot continues"
tq_check "hibernate: the root came up from the mapping thaw opened" \
    tq_has hibernate "THAW-TEST: root: /dev/mapper/luks-$uuid / ext4 rw"
tq_check "hibernate: the swap file is active" tq_has hibernate "THAW-TEST: swap on: /swapfile file"
tq_check "hibernate: workload holds ${TQ_WORKLOAD_MIB} MiB" tq_has hibernate "THAW-TEST: workload ready"
tq_check "hibernate: thaw hibernate chose the swap file at resume_offset=$offset" \
    tq_has hibernate "swap file /swapfile, offset $offset, mode shutdown"
tq_check "hibernate: thaw wrote the image into the swap file's blocks and flushed it" \
    grep -qE "thaw: wrote the image to /dev/mapper/luks-$uuid: .* flushed; powering off" "$TQ_WORK/hibernate.log"
tq_check "hibernate: the kernel did not write it (--writer thaw)" tq_lacks hibernate "PM: hibernation: Wrote"
tq_check "hibernate: powered off inside the hibernation" tq_lacks hibernate "THAW-TEST: hibernate exit"

tq_sleep_boot_checked resume resume "$TQ_WORK/key"
tq_check "resume: thaw handed the image at the swap file's offset to the kernel" \
    grep -qE "thaw: resuming from /dev/mapper/luks-$uuid \([0-9]+:[0-9]+, offset $offset\)" "$TQ_WORK/resume.log"
tq_check "resume: the kernel loaded the image" tq_has resume "PM: Image loading done"
tq_check "resume: the fresh init never ran" tq_lacks resume "THAW-TEST: fresh boot"
tq_check "resume: thaw hibernate returned 0 in the resumed system" tq_has resume "THAW-TEST: hibernate exit 0"
tq_check "resume: workload: nothing lost" tq_has resume "workload: nothing lost (${TQ_WORKLOAD_MIB} MiB verified"
tq_finish

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# hostonly: the README's path for a swap file on an encrypted root with a host-only initramfs, on
# a root that has thaw installed from the Debian package. The root tree is the guest's, with the
# .deb unpacked into it (dpkg -x, no copied thaw) and the tools a Debian root has for dracut (udev,
# dmsetup, blkid). Boot 1 copies that root into a LUKS2 container on /dev/vdb and runs
# `thaw setup --swapfile` there (as swapfile-resume does); the thaw.conf it wrote goes into the
# tree, and dracut --hostonly --sysroot builds the initramfs from it. Boots 2 and 3 have no
# rd.thaw.* argument, only root=: the initramfs must carry them, unlock the root, and resume.
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"

TQ_SWAP_MIB=1024 # the encrypted root: the guest tree and the 600 MiB swap file
tq_prepare
tq_build_deb
tq_workdir hostonly
tree=$TQ_WORK/tree
# The package's thaw, where the package puts it: no copy from build/.
tq_tree_with_deb "$tree"
for b in dmsetup udevadm blkid bash flock; do
    tq_install_bin "$(command -v "$b")" "$tree" "/bin/$b"
done
tq_install_bin /lib/systemd/systemd-udevd "$tree" /lib/systemd/systemd-udevd
mkdir -p "$tree/lib/udev" "$tree/etc/udev"
cp -a /lib/udev/. "$tree/lib/udev/"
cp /etc/udev/udev.conf "$tree/etc/udev/"
mke2fs -q -F -t ext4 -L root -d "$tree" "$TQ_WORK/root.img" 256M || tq_die "mke2fs failed"

(umask 077; head -c 32 /dev/urandom > "$TQ_WORK/rootkey")
uuid=$(cat /proc/sys/kernel/random/uuid)
TQ_QEMU_EXTRA=(-fw_cfg "name=opt/test/rootkey,file=$TQ_WORK/rootkey")
TQ_THAW_ARGS="" tq_boot_checked mkroot mkroot "$TQ_WORK/key" thaw.rootuuid="$uuid" thaw.swapmib=600
tq_check "mkroot: thaw setup --swapfile succeeded" tq_has mkroot "THAW-TEST: setup exit 0"
# The root is configured: its thaw.conf, as thaw setup wrote it, is the tree's.
sed -n 's/.*THAW-TEST: thaw\.conf: //p' "$TQ_WORK/mkroot.log" > "$tree/etc/thaw/thaw.conf"
tq_check "mkroot: thaw.conf names the root's container and resume_offset" \
    grep -qE "^offset=[1-9]" "$tree/etc/thaw/thaw.conf"

# dracut as the root has it: Debian's dracut-core modules under /usr/lib/dracut beside the package's
# 90thaw (with --sysroot, dracut installs its module files from the sysroot too). dracut 059 with
# --sysroot needs the systemd and udev paths spelt out (it would take "" as found).
mkdir -p "$TQ_WORK/dracut.conf.d" "$TQ_WORK/dracut-tmp"
printf 'systemdutildir=/lib/systemd\nudevdir=/lib/udev\n' > "$TQ_WORK/dracut.conf.d/sysroot.conf"
cp -a -n "$TQ_CACHE/dracut/root/usr/lib/dracut/." "$tree/usr/lib/dracut/"
base=$tree/usr/lib/dracut
TQ_INITRD=$TQ_WORK/initramfs-hostonly.img
tq_log "building a host-only initramfs with dracut --hostonly --sysroot"
dracutbasedir=$base bash "$TQ_CACHE/dracut/root/usr/bin/dracut" --force --quiet --hostonly --hostonly-cmdline \
    --sysroot "$tree" --kver "$TQ_KVER" --conf /dev/null --confdir "$TQ_WORK/dracut.conf.d" \
    --tmpdir "$TQ_WORK/dracut-tmp" --modules "bash base dm kernel-modules rootfs-block thaw" \
    --drivers "dm_mod dm_crypt virtio_blk virtio_pci virtio_rng ext4" --no-compress --no-early-microcode \
    --nofscks "$TQ_INITRD" > "$TQ_WORK/dracut.log" 2>&1 \
    || { tail -n 20 "$TQ_WORK/dracut.log" >&2; tq_die "dracut failed"; }
rm -rf "$TQ_WORK/dracut-tmp"
mkdir "$TQ_WORK/initramfs"
(cd "$TQ_WORK/initramfs" && cpio -id --quiet < "$TQ_INITRD") || tq_die "cannot unpack the initramfs"
args=$("$tree/usr/sbin/thaw" config --root "$tree")
tq_log "stored: $(cat "$TQ_WORK/initramfs/etc/cmdline.d/90thaw.conf" 2> /dev/null)"
# The root's header as thaw setup --swapfile pinned it (header= in thaw.conf) rides along.
pin=$(sed -n 's/^header=//p' "$tree/etc/thaw/thaw.conf")
tq_check "initramfs: the rd.thaw.* arguments are stored in etc/cmdline.d/90thaw.conf, the header pin with them" \
    grep -qxE " rd\.thaw\.device=UUID=$uuid rd\.thaw\.key=fwcfg:opt/thaw/key rd\.thaw\.name=luks-$uuid rd\.thaw\.header=${pin:-none} resume_offset=[1-9][0-9]*" \
    "$TQ_WORK/initramfs/etc/cmdline.d/90thaw.conf"
tq_check "initramfs: thaw.conf is the root's" cmp "$tree/etc/thaw/thaw.conf" "$TQ_WORK/initramfs/etc/thaw/thaw.conf"
tq_check "initramfs: thaw is the package's" cmp "$tree/usr/sbin/thaw" "$TQ_WORK/initramfs/usr/sbin/thaw"
tq_check "initramfs: dracut installed every file (no dracut-install error)" \
    bash -c "! grep -q 'dracut-install: ERROR' '$TQ_WORK/dracut.log'"
tq_check "initramfs: thaw's hooks are in (initqueue job, pre-mount)" \
    test -e "$TQ_WORK/initramfs/lib/dracut/hooks/cmdline/90-thaw-queue.sh" \
    -a -e "$TQ_WORK/initramfs/lib/dracut/hooks/pre-mount/10-thaw-resume.sh"
tq_check "initramfs: the fw_cfg driver for key=fwcfg: is in" \
    test -n "$(find "$TQ_WORK/initramfs/lib/modules" -name 'qemu_fw_cfg.ko*')"
tq_check "initramfs: no config drive file systems (no drive: source configured)" \
    test -z "$(find "$TQ_WORK/initramfs/lib/modules" -name 'isofs.ko*' -o -name 'vfat.ko*')"
rm -rf "$TQ_WORK/initramfs"

# Both boots: the host-only initramfs, root= only.
export TQ_ROOT_ARGS="root=/dev/mapper/luks-$uuid" TQ_THAW_ARGS=""
offset=${args##*resume_offset=}
tq_sleep_boot_checked hibernate hibernate-file "$TQ_WORK/key"
tq_check "hibernate: no rd.thaw.* argument on the kernel command line" \
    bash -c "! grep -F 'Kernel command line:' '$TQ_WORK/hibernate.log' | grep -q 'rd\.thaw'"
tq_check "hibernate: the root came up from the mapping thaw opened" \
    tq_has hibernate "THAW-TEST: root: /dev/mapper/luks-$uuid / ext4 rw"
tq_check "hibernate: the image was written into the swap file" tq_image_written hibernate
tq_sleep_boot_checked resume resume "$TQ_WORK/key"
tq_check "resume: thaw handed the image at resume_offset=$offset to the kernel" \
    grep -qE "thaw: resuming from /dev/mapper/luks-$uuid \([0-9]+:[0-9]+, offset $offset\)" "$TQ_WORK/resume.log"
tq_check "resume: the fresh init never ran" tq_lacks resume "THAW-TEST: fresh boot"
tq_check "resume: workload: nothing lost" tq_has resume "workload: nothing lost (${TQ_WORKLOAD_MIB} MiB verified"
tq_finish

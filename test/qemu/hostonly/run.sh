#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# hostonly: a host-only initramfs for a root that has thaw installed from the Debian package and
# configured. The root tree is the guest's, with the .deb unpacked into it (dpkg -x, no copied thaw),
# the tools a Debian root has for dracut (udev, dmsetup, blkid) and /etc/thaw/thaw.conf written;
# dracut --hostonly --sysroot builds the initramfs from that tree. The kernel command line has no
# rd.thaw.* argument: the initramfs must carry them (etc/cmdline.d, thaw.conf) and resume the image
# the guest made with thaw setup and thaw hibernate.
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"

tq_prepare
tq_build_deb
tq_workdir hostonly
tree=$TQ_WORK/tree
rm -rf "$tree"
cp -a "$TQ_CACHE/rootfs" "$tree"
# The package's thaw, where the package puts it: no copy from build/.
rm -f "$tree/bin/thaw" "$tree/usr/sbin"
mkdir -p "$tree/usr/sbin"
dpkg -x "$TQ_DEB" "$tree" || tq_die "dpkg -x $TQ_DEB failed"
for b in dmsetup udevadm blkid bash flock; do
    tq_install_bin "$(command -v "$b")" "$tree" "/bin/$b"
done
tq_install_bin /lib/systemd/systemd-udevd "$tree" /lib/systemd/systemd-udevd
mkdir -p "$tree/lib/udev" "$tree/etc/udev"
cp -a /lib/udev/. "$tree/lib/udev/"
cp /etc/udev/udev.conf "$tree/etc/udev/"
# Configured as an administrator would before the first boot (thaw setup rewrites it in the guest).
printf 'device=/dev/vdb\nkey=fwcfg:opt/thaw/key\n' > "$tree/etc/thaw/thaw.conf"
mke2fs -q -F -t ext4 -L root -d "$tree" "$TQ_WORK/root.img" 256M || tq_die "mke2fs failed"

# dracut 059 with --sysroot needs the systemd and udev paths spelt out (it would take "" as found).
mkdir -p "$TQ_WORK/dracut.conf.d" "$TQ_WORK/dracut-tmp"
printf 'systemdutildir=/lib/systemd\nudevdir=/lib/udev\n' > "$TQ_WORK/dracut.conf.d/sysroot.conf"
base=$TQ_WORK/dracut-base
cp -a "$TQ_CACHE/dracut/root/usr/lib/dracut" "$base"
cp -a "$tree/usr/lib/dracut/modules.d/90thaw" "$base/modules.d/90thaw"
TQ_INITRD=$TQ_WORK/initramfs-hostonly.img
tq_log "building a host-only initramfs with dracut --hostonly --sysroot"
dracutbasedir=$base bash "$TQ_CACHE/dracut/root/usr/bin/dracut" --force --quiet --hostonly --hostonly-cmdline \
    --sysroot "$tree" --kver "$TQ_KVER" --conf /dev/null --confdir "$TQ_WORK/dracut.conf.d" \
    --tmpdir "$TQ_WORK/dracut-tmp" --modules "bash base dm kernel-modules rootfs-block thaw" \
    --drivers "dm_mod dm_crypt virtio_blk virtio_pci virtio_rng ext4" --no-compress --no-early-microcode --nofscks \
    "$TQ_INITRD" > "$TQ_WORK/dracut.log" 2>&1 || { tail -n 20 "$TQ_WORK/dracut.log" >&2; tq_die "dracut failed"; }
rm -rf "$base" "$TQ_WORK/dracut-tmp"
mkdir "$TQ_WORK/initramfs"
(cd "$TQ_WORK/initramfs" && cpio -id --quiet < "$TQ_INITRD") || tq_die "cannot unpack the initramfs"
want="rd.thaw.device=/dev/vdb rd.thaw.key=fwcfg:opt/thaw/key"
tq_check "initramfs: the rd.thaw.* arguments are stored in etc/cmdline.d/90thaw.conf" \
    grep -qx " $want" "$TQ_WORK/initramfs/etc/cmdline.d/90thaw.conf"
tq_check "initramfs: thaw.conf is the root's" cmp "$tree/etc/thaw/thaw.conf" "$TQ_WORK/initramfs/etc/thaw/thaw.conf"
tq_check "initramfs: thaw is the package's" cmp "$tree/usr/sbin/thaw" "$TQ_WORK/initramfs/usr/sbin/thaw"
tq_check "initramfs: the fw_cfg driver for key=fwcfg: is in" \
    test -n "$(find "$TQ_WORK/initramfs/lib/modules" -name 'qemu_fw_cfg.ko*')"
tq_check "initramfs: no config drive file systems (no drive: source configured)" \
    test -z "$(find "$TQ_WORK/initramfs/lib/modules" -name 'isofs.ko*' -o -name 'vfat.ko*')"
rm -rf "$TQ_WORK/initramfs"

# Both boots use the host-only initramfs and no rd.thaw.* argument.
export TQ_THAW_ARGS=""
tq_hibernate_boot hibernate
tq_check "hibernate: the guest ran the package's thaw" tq_has hibernate "THAW-TEST: setup exit 0"
tq_resume_boot resume
tq_check "resume: no rd.thaw.* argument on the kernel command line" \
    bash -c "! grep -F 'Kernel command line:' '$TQ_WORK/resume.log' | grep -q 'rd\.thaw'"
tq_finish

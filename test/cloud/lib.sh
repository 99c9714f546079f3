# SPDX-License-Identifier: LGPL-2.1-or-later
# test/cloud's scenarios: a Debian 12 root with systemd and thaw from its own Debian package, set
# up by thaw provision at its first boot, as a cloud image is. Not in make test (make check-cloud).
# shellcheck shell=bash
#
# Sourced by test/cloud/*/run.sh and test/cloud/run.sh; it sources the QEMU harness
# (test/qemu/lib.sh) and boots through it. The root is built once with mmdebstrap (from the apt
# sources of this machine) into $TQ_CACHE/cloud-root-KEY.img, KEY a hash of the package, this file,
# image/ and the guest kernel; the guest kernel's modules are copied in, as its own package would
# put them, for dracut and udev.

# The harness's defaults that differ here (set before it is sourced, which keeps what is set).
# A first boot under TCG: systemd, thaw provision's setup and dracut, the workload, the hibernation.
TQ_BOOT_TIMEOUT=${TQ_BOOT_TIMEOUT:-900}
# dracut works silently for up to a minute at a step (resolving the executables' libraries).
TQ_SILENCE_SECONDS=${TQ_SILENCE_SECONDS:-120}
# The swap holds the RAM (size=ram) and thaw's LUKS2 header.
TQ_SWAP_MIB=${TQ_SWAP_MIB:-1024}

# shellcheck source=test/qemu/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../qemu/lib.sh"

TC_DIR=$TQ_REPO/test/cloud
TC_PACKAGES=systemd-sysv,udev,kmod,dracut-core,e2fsprogs,procps,acpid

# tc_build_root: the image, with /etc/thaw/provision.conf and what an image builder adds (the
# package's sleep-button trigger copied into /etc, thaw-provision.service enabled, a lean dracut
# configuration) and the test's own step (image/thaw-test.sh, its unit, the workload). Sets
# TQ_ROOT_BASE, which tq_workdir copies.
tc_build_root() {
    local key out tree kdir
    command -v mmdebstrap > /dev/null || tq_skip "mmdebstrap missing (run make deps)"
    key=$(tq_hash "$TQ_DEB" "${BASH_SOURCE[0]}" "$TC_DIR"/image/* "$TQ_CACHE/workload" <(echo "$TQ_KVER $TC_PACKAGES"))
    out=$TQ_CACHE/cloud-root-$key.img
    # shellcheck disable=SC2034 # read by harness.sh's tq_workdir
    TQ_ROOT_BASE=$out
    [[ -s $out ]] && return 0
    tq_log "building the cloud image's root with mmdebstrap (bookworm, $TC_PACKAGES, the thaw package)"
    rm -f "$TQ_CACHE"/cloud-root-*.img
    tree=$TQ_CACHE/cloud-tree
    rm -rf "$tree"
    # The hook bind-mounts the local thaw package into the chroot for apt.
    mmdebstrap --quiet --variant=minbase --hook-dir=/usr/share/mmdebstrap/hooks/file-mirror-automount \
        --include="$TC_PACKAGES,$TQ_DEB" bookworm "$tree" > "$TQ_CACHE/cloud-mmdebstrap.log" 2>&1 \
        || { tail -n 20 "$TQ_CACHE/cloud-mmdebstrap.log" >&2; tq_die "mmdebstrap failed"; }
    kdir=$tree/usr/lib/modules/$TQ_KVER
    mkdir -p "$kdir"
    cp -a "$(tq_kmoddir)"/. "$kdir/"
    # The image builder's part (README: In a cloud image).
    install -D -m 0644 /dev/stdin "$tree/etc/thaw/provision.conf" <<< $'device=/dev/vdb\nkey=fwcfg:opt/thaw/key\nsize=ram'
    install -D -m 0644 "$tree/usr/share/thaw/cloud/thaw-sleep-button" "$tree/etc/acpi/events/thaw-sleep-button"
    install -D -m 0644 "$tree/usr/share/thaw/cloud/thaw-sleep-button.conf" \
        "$tree/etc/systemd/logind.conf.d/thaw-sleep-button.conf"
    install -D -m 0644 "$TC_DIR/image/lean.conf" "$tree/etc/dracut.conf.d/50-lean.conf"
    mkdir -p "$tree/etc/systemd/system/sysinit.target.wants" "$tree/etc/systemd/system/multi-user.target.wants"
    ln -sf /usr/lib/systemd/system/thaw-provision.service "$tree/etc/systemd/system/sysinit.target.wants/"
    echo "thaw-cloud" > "$tree/etc/hostname"
    # The test's part.
    install -m 0755 "$TQ_CACHE/workload" "$tree/usr/local/bin/workload"
    install -m 0755 "$TC_DIR/image/thaw-test.sh" "$tree/usr/local/sbin/thaw-test"
    install -m 0644 "$TC_DIR/image/thaw-test.service" "$tree/etc/systemd/system/thaw-test.service"
    ln -sf /etc/systemd/system/thaw-test.service "$tree/etc/systemd/system/multi-user.target.wants/"
    # The serial console carries the step's lines; a getty there would hang up (vhangup) the
    # step's open terminal when it starts, and its writes would be lost.
    ln -sf /dev/null "$tree/etc/systemd/system/serial-getty@ttyS0.service"
    mke2fs -q -F -t ext4 -L root -d "$tree" "$out.tmp" 1536M > /dev/null || tq_die "mke2fs failed"
    rm -rf "$tree"
    mv "$out.tmp" "$out"
}

# tc_prepare: the kernel, dracut, the workload, the package, the first boot's initramfs and the
# root. The first boot's initramfs stands for the one the image was built with: thaw's part finds
# no thaw.conf and does nothing (the image's own is made by thaw provision). It is the harness's
# systemd flavour as systemd-resume boots it, so make check-qemu and make check-cloud share it.
tc_prepare() {
    command -v "$TQ_QEMU" > /dev/null || tq_skip "$TQ_QEMU missing (run make deps)"
    [[ -x $TQ_THAW ]] || tq_die "$TQ_THAW missing (run make)"
    mkdir -p "$TQ_CACHE"
    tq_fetch_kernel
    tq_fetch_dracut
    tq_build_workload
    tq_build_deb
    tq_build_initramfs_systemd
    tc_build_root
}

# tc_initramfs NAME: the initramfs thaw provision built in this run's root, copied out as
# $TQ_WORK/NAME-initrd.img; sets TQ_INITRD to it.
tc_initramfs() {
    local img=$TQ_WORK/$1-initrd.img
    rm -f "$img"
    debugfs -R "dump /boot/initrd.img-$TQ_KVER $img" "$TQ_WORK/root.img" > /dev/null 2>&1
    [[ -s $img ]] || tq_die "no /boot/initrd.img-$TQ_KVER in $TQ_WORK/root.img"
    # shellcheck disable=SC2034 # read by harness.sh's tq_boot
    TQ_INITRD=$img
}

# tc_monitor: the boots' QEMU monitor on a UNIX socket (TC_MONITOR), for the sleep button.
tc_monitor() {
    # A socket path must fit 108 bytes: not under the (maybe long) work directory.
    TC_MONITOR=${TMPDIR:-/tmp}/tc-monitor.$$.sock
    TQ_QEMU_EXTRA+=(-monitor "unix:$TC_MONITOR,server=on,wait=off")
}

# tc_press_when NAME TEXT: in the background until killed, presses the sleep button (HMP sendkey
# sleep: the PS/2 Sleep key, KEY_SLEEP in the guest) once in each boot NAME whose serial log shows
# TEXT; a boot tried again is a new log (tq_boot_retried). Sets TC_PRESSER to its process.
tc_press_when() {
    local log=$TQ_WORK/$1.log
    (
        local done="" inode
        while sleep 1; do
            inode=$(stat -c %i "$log" 2> /dev/null) || continue
            [[ $inode == "$done" ]] && continue
            grep -qF -- "$2" "$log" || continue
            python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"sendkey sleep\n")
time.sleep(0.5)' "$TC_MONITOR" || tq_log "boot $1: could not press the sleep button"
            tq_log "boot $1: pressed the sleep button (sendkey sleep)"
            done=$inode
        done
    ) &
    # shellcheck disable=SC2034 # read by the scenario, which stops it
    TC_PRESSER=$!
}

# tc_report_checks NAME: thaw-provision.service succeeded at boot NAME, and what it cost.
tc_report_checks() {
    tq_check "$1: the guest's step ran" tq_has "$1" "THAW-TEST: fresh boot step="
    tq_check "$1: thaw-provision.service succeeded" tq_has "$1" "THAW-TEST: provision: result=success status=0"
    tq_log "$1: thaw-provision.service $(grep -ao -m1 'THAW-TEST: provision took [0-9]* ms' "$TQ_WORK/$1.log" |
        sed 's/.*provision //'); $(grep -ao -m1 'THAW-TEST: provision: dracut .*' "$TQ_WORK/$1.log" | sed 's/.*provision: //')"
}

# tc_resumed_checks: the boot "resume" handed the image over and the kernel loaded it; the
# resumed system is the same boot as the one the sleep-button request came in, whose thaw
# hibernate returned 0, and the workload lost nothing.
tc_resumed_checks() {
    tq_check "resume: thaw handed the image to the kernel" tq_has resume "thaw: resuming from /dev/mapper/thaw-swap"
    tq_check "resume: the kernel loaded the image" tq_has resume "PM: Image loading done"
    tq_check "resume: no fresh boot" tq_lacks resume "THAW-TEST: fresh boot"
    tq_check "resume: the request's thaw hibernate returned 0 in the resumed system" \
            tq_has resume "THAW-TEST: hibernate request: result=success status=0"
    tq_check "resume: the same boot as before the request" tq_has resume "THAW-TEST: same boot after the request (resumed)"
    tq_check "resume: workload: nothing lost" tq_has resume "workload: nothing lost (${TQ_WORKLOAD_MIB} MiB verified"
}

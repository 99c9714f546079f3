# SPDX-License-Identifier: LGPL-2.1-or-later
# test/cloud's image: a Debian 12 root built with mmdebstrap, with thaw from its own package and
# what an image builder adds. Sourced by lib.sh; the root is named by a hash of its inputs, this
# file among them (not lib.sh: a change to how the scenarios boot or check builds no root again).
# shellcheck shell=bash

TC_PACKAGES=systemd-sysv,udev,kmod,dracut-core,e2fsprogs,procps,acpid

# tc_build_root: the image, with /etc/thaw/provision.conf and what an image builder adds (the
# package's sleep-button trigger copied into /etc, thaw-provision.service enabled, a lean dracut
# configuration) and the test's own step (image/thaw-test.sh, its unit, the workload). Sets
# TQ_ROOT_BASE, which tq_workdir copies.
tc_build_root() {
    local key out tree kdir
    command -v mmdebstrap > /dev/null || tq_skip "mmdebstrap missing (run make deps)"
    key=$(tq_hash "$TQ_DEB" "${BASH_SOURCE[0]}" "$TC_DIR"/image/* "$TQ_CACHE/workload" \
        <(echo "$TQ_KVER $(tq_kernel_package) $TC_PACKAGES"))
    out=$TQ_CACHE/cloud-root-$key.img
    # shellcheck disable=SC2034 # read by harness.sh's tq_workdir
    TQ_ROOT_BASE=$out
    [[ -s $out ]] && return 0
    tq_build_lock
    if [[ -s $out ]]; then tq_build_unlock; return 0; fi
    tq_log "building the cloud image's root with mmdebstrap (bookworm, $TC_PACKAGES, the thaw package)"
    rm -f "$TQ_CACHE"/cloud-root-*.img
    tree=$TQ_CACHE/cloud-tree
    rm -rf "$tree"
    # The hook bind-mounts the local thaw package into the chroot for apt.
    # A stalled mirror fails the build (every build waits on the lock this one holds) rather than
    # stalling the run.
    timeout 1200 mmdebstrap --quiet --variant=minbase --hook-dir=/usr/share/mmdebstrap/hooks/file-mirror-automount \
        --include="$TC_PACKAGES,$TQ_DEB" bookworm "$tree" > "$TQ_CACHE/cloud-mmdebstrap.log" 2>&1 \
        || { tail -n 20 "$TQ_CACHE/cloud-mmdebstrap.log" >&2; tq_die "mmdebstrap failed (or took over 20 minutes)"; }
    kdir=$tree/usr/lib/modules/$TQ_KVER
    mkdir -p "$kdir"
    cp -a "$(tq_kmoddir)"/. "$kdir/"
    # The image builder's part (README: In a cloud image). The image is for instance types with
    # and without a TPM2; its VM here has none, so tpm2 is left out of its first setup.
    install -D -m 0644 /dev/stdin "$tree/etc/thaw/provision.conf" <<< $'device=/dev/vdb\nkey=tpm2,fwcfg:opt/thaw/key\nsize=ram'
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
    tq_build_unlock
}

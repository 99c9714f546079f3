# SPDX-License-Identifier: LGPL-2.1-or-later
# The harness's cache: Debian's kernel and dracut, the workload, the guests' images, the package.
# shellcheck shell=bash
#
# Sourced by lib.sh (source that, not this file). Everything is downloaded or built once into
# $TQ_CACHE and used again while its inputs are the same. The initramfs and root images are named
# by a hash of their inputs, this file among them, as it is their recipe (${BASH_SOURCE[0]} in its
# functions); harness.sh is not among them, so a change to how guests are booted or checked builds
# no image again. Nothing here installs a kernel or dracut or touches the host's boot.

# ---------------------------------------------------------------------------------------------
# Downloads: Debian's current kernel and dracut-core, unpacked into the cache.

# Downloads package $1 into $TQ_CACHE/debs and prints the .deb path.
tq_apt_download() {
    local pkg=$1 deb
    mkdir -p "$TQ_CACHE/debs"
    # The cache belongs to root, so apt's _apt sandbox user could not write there.
    if ! (cd "$TQ_CACHE/debs" && apt-get download -q -o APT::Sandbox::User=root "$pkg" >&2); then
        # A machine whose package lists were never fetched: fetch them once and retry.
        tq_log "apt-get download $pkg failed; running apt-get update once"
        apt-get update -q >&2 || return 1
        (cd "$TQ_CACHE/debs" && apt-get download -q -o APT::Sandbox::User=root "$pkg" >&2) || return 1
    fi
    deb=$(find "$TQ_CACHE/debs" -name "${pkg}_*.deb" -printf '%T@ %p\n' | sort -rn | head -n1 | cut -d' ' -f2-)
    [[ -n $deb ]] || return 1
    echo "$deb"
}

tq_fetch_kernel() {
    local meta real deb
    if [[ -e $TQ_CACHE/kernel/.done ]]; then
        TQ_KVER=$(cat "$TQ_CACHE/kernel/.done")
        return 0
    fi
    # TQ_KERNEL_PKG: one versioned package instead (linux-image-6.1.0-50-amd64), to compare guest
    # kernels; use a TQ_CACHE of its own, as the kernel is cached by the first one unpacked.
    if [[ -n ${TQ_KERNEL_PKG:-} ]]; then
        real=$TQ_KERNEL_PKG
        tq_log "downloading Debian's $real (TQ_KERNEL_PKG; not installing it)"
    else
        tq_log "downloading Debian's linux-image-amd64 (not installing it)"
        meta=$(tq_apt_download linux-image-amd64) || tq_die "apt-get download linux-image-amd64 failed"
        # The meta package depends on the real, versioned image package.
        real=$(dpkg-deb -f "$meta" Depends | tr ',|' '\n' | awk '{print $1}' | grep -m1 '^linux-image-[0-9]')
        [[ -n $real ]] || tq_die "cannot find the kernel package in $(basename "$meta")'s Depends"
    fi
    deb=$(tq_apt_download "$real") || tq_die "apt-get download $real failed"
    rm -rf "$TQ_CACHE/kernel"
    mkdir -p "$TQ_CACHE/kernel"
    dpkg-deb -x "$deb" "$TQ_CACHE/kernel/root" || tq_die "cannot unpack $deb"
    TQ_KVER=$(find "$TQ_CACHE/kernel/root/lib/modules" -mindepth 1 -maxdepth 1 -printf '%f\n' | head -n1)
    [[ -f $TQ_CACHE/kernel/root/boot/vmlinuz-$TQ_KVER ]] || tq_die "no vmlinuz-$TQ_KVER in $deb"
    # The package ships no modules.dep; its postinst would run depmod.
    depmod -b "$TQ_CACHE/kernel/root" "$TQ_KVER" || tq_die "depmod failed on the unpacked kernel"
    dpkg-deb -f "$deb" Package Version | awk '{ printf "%s%s", (NR > 1 ? " " : ""), $2 } END { print "" }' \
        > "$TQ_CACHE/kernel/.package"
    echo "$TQ_KVER" > "$TQ_CACHE/kernel/.done"
}

# The guest kernel's package and version ("linux-image-6.1.0-57-amd64 6.1.192-3"), after tq_fetch_kernel.
tq_kernel_package() {
    local deb
    if [[ ! -s $TQ_CACHE/kernel/.package ]]; then
        # A cache from before .package was written: the newest matching download says it.
        deb=$(find "$TQ_CACHE/debs" -name "linux-image-$(cat "$TQ_CACHE/kernel/.done")_*.deb" | sort | tail -n1)
        [[ -n $deb ]] || { echo "unknown"; return; }
        dpkg-deb -f "$deb" Package Version | awk '{ printf "%s%s", (NR > 1 ? " " : ""), $2 } END { print "" }' \
            > "$TQ_CACHE/kernel/.package"
    fi
    cat "$TQ_CACHE/kernel/.package"
}

# One line on the guest kernel: verified (listed in test/qemu/verified-kernels) or, loudly, not.
tq_kernel_report() {
    local pkg
    pkg=$(tq_kernel_package)
    if grep -qxF -- "$pkg" "$TQ_REPO/test/qemu/verified-kernels"; then
        echo "guest kernel: $pkg (verified with this suite)"
    else
        echo "WARNING: guest kernel: $pkg is NOT one this suite was verified with ($(grep -v '^#' \
            "$TQ_REPO/test/qemu/verified-kernels" | paste -sd, -)) (it is what this machine's apt sources offer): results may differ"
    fi
}

tq_fetch_dracut() {
    local deb
    [[ -e $TQ_CACHE/dracut/.done ]] && return 0
    tq_log "downloading Debian's dracut-core (not installing it)"
    deb=$(tq_apt_download dracut-core) || tq_die "apt-get download dracut-core failed"
    rm -rf "$TQ_CACHE/dracut"
    mkdir -p "$TQ_CACHE/dracut"
    dpkg-deb -x "$deb" "$TQ_CACHE/dracut/root" || tq_die "cannot unpack $deb"
    basename "$deb" > "$TQ_CACHE/dracut/.done"
}

tq_kdir() { echo "$TQ_CACHE/kernel/root"; }
tq_vmlinuz() { echo "$TQ_CACHE/kernel/root/boot/vmlinuz-$TQ_KVER"; }
tq_kmoddir() { echo "$TQ_CACHE/kernel/root/lib/modules/$TQ_KVER"; }

# ---------------------------------------------------------------------------------------------
# Builds: workload, initramfs, root file system. Each is rebuilt when its inputs change: the
# images' keys hash them, ${BASH_SOURCE[0]} (in these functions this file, cache.sh) included.

tq_hash() { cat "$@" | sha256sum | cut -c1-16; }

# tq_build_lock, tq_build_unlock: one build into the cache at a time. Scenarios run side by side
# (test/qemu/run.sh) and several build what they need when they first need it (the package, the
# systemd initramfs, test/cloud's root); two builds of one image, or of two that share a
# directory (dracut-conf.d), would spoil each other. A builder looks for its image, takes the lock,
# looks again, and builds only if it is still missing; an exit (tq_die) lets the lock go.
# A builder never calls another while it holds the lock (a second flock would wait for itself).
tq_build_lock() {
    [[ -z ${TQ_BUILD_FD:-} ]] || tq_die "tq_build_lock: the build lock is held already"
    mkdir -p "$TQ_CACHE"
    exec {TQ_BUILD_FD}> "$TQ_CACHE/.build.lock"
    flock "$TQ_BUILD_FD"
}
tq_build_unlock() { exec {TQ_BUILD_FD}>&-; TQ_BUILD_FD=; }

tq_build_workload() {
    local out=$TQ_CACHE/workload src=$TQ_REPO/test/workload.c
    if [[ ! -x $out || $src -nt $out ]]; then
        ${CC:-cc} -static -O2 -std=c11 -Wall -Wextra -o "$out" "$src" || tq_die "cannot build the workload"
    fi
}

# Kernel modules the guest needs beyond the initramfs' own: dm-crypt, its ciphers, fw_cfg, virtio-rng
# (without it the guest's random pool is not ready for a long time under TCG, and thaw setup's
# first read of /dev/urandom, through libcryptsetup, can wait minutes), and the
# file systems (with their code pages) of a config drive, and dm-integrity with authenc (thaw setup
# --integrity), and crypto_null: the cipher a forged header asks for, so that the tests meet the
# mapping it makes as a real system would (resume-basic maps one with dmsetup).
TQ_MODULES="dm_mod dm_crypt xts ecb cbc aesni_intel af_alg algif_skcipher algif_hash qemu_fw_cfg
virtio_blk virtio_pci virtio_rng ext4 isofs vfat nls_cp437 nls_ascii nls_utf8 dm_integrity authenc crypto_null"

# TQ_EXTRA_DRACUT_MODULES: directories of further dracut modules (tests of the harness itself).
# TQ_INITRAMFS_NET=1: the variant for imds: sources (thaw_network=yes: udhcpc, libcurl, NIC drivers),
# cached beside the plain one so the scenarios without network do not carry it.
tq_build_initramfs() {
    local key base out mods extra=() d variant=initramfs
    [[ ${TQ_INITRAMFS_NET:-0} == 1 ]] && variant=initramfs+net
    key=$(tq_hash "$TQ_THAW" "$TQ_REPO"/dracut-module/90thaw/* "$TQ_REPO"/test/qemu/dracut/*/* \
        "${BASH_SOURCE[0]}" <(echo "$TQ_KVER ${TQ_EXTRA_DRACUT_MODULES:-}"))
    out=$TQ_CACHE/$variant-$key.img
    # shellcheck disable=SC2034 # read by harness.sh's tq_boot (and crafted.sh's key)
    TQ_INITRD=$out
    [[ -s $out ]] && return 0
    tq_build_lock
    if [[ -s $out ]]; then tq_build_unlock; return 0; fi
    tq_log "building the $variant with dracut (unpacked copy, thaw module from dracut-module/90thaw)"
    base=$TQ_CACHE/dracut-base
    rm -rf "$base" "$TQ_CACHE/$variant"-*.img "$TQ_CACHE/dracut-tmp" "$TQ_CACHE/dracut-conf.d"
    cp -a "$TQ_CACHE/dracut/root/usr/lib/dracut" "$base"
    cp -a "$TQ_REPO/dracut-module/90thaw" "$base/modules.d/90thaw"
    cp -a "$TQ_REPO/test/qemu/dracut/06switchroot" "$base/modules.d/06switchroot"
    mods="busybox switchroot base dm kernel-modules rootfs-block thaw"
    for d in ${TQ_EXTRA_DRACUT_MODULES:-}; do
        cp -a "$d" "$base/modules.d/"
        extra+=("$(basename "$d" | sed 's/^[0-9][0-9]//')")
    done
    mods="$mods ${extra[*]}"
    # The net variant's dracut.conf setting; the directory is emptied above for every build, and
    # the file removed again below so that no other build (tq_build_initramfs_systemd) sees it.
    mkdir -p "$TQ_CACHE/dracut-conf.d"
    [[ $variant == initramfs+net ]] && echo 'thaw_network=yes' > "$TQ_CACHE/dracut-conf.d/thaw.conf"
    tq_dracut "$base" "$TQ_CACHE/dracut-tmp" "$mods" "$out"
    rm -f "$TQ_CACHE/dracut-conf.d/thaw.conf"
    tq_build_unlock
}

# tq_dracut BASE TMPDIR MODULES OUT [DRACUT-ARG...]: runs the unpacked dracut on module tree BASE.
tq_dracut() {
    local base=$1 tmp=$2 mods=$3 out=$4
    shift 4
    mkdir -p "$tmp" "$TQ_CACHE/dracut-conf.d"
    # --drivers (not --add-drivers) keeps the initramfs to what a virtio VM needs: kernel-modules
    # would otherwise copy every storage driver, and TCG pays for each byte unpacked.
    dracutbasedir=$base THAW_BINARY=$TQ_THAW \
        bash "$TQ_CACHE/dracut/root/usr/bin/dracut" --force --quiet --no-hostonly --no-hostonly-cmdline \
        --kver "$TQ_KVER" --kmoddir "$(tq_kmoddir)" --conf /dev/null --confdir "$TQ_CACHE/dracut-conf.d" \
        --tmpdir "$tmp" --modules "$mods" --drivers "${TQ_MODULES//$'\n'/ }" \
        --no-compress --no-early-microcode --nofscks "$@" "$out.tmp" \
        || tq_die "dracut failed"
    mv "$out.tmp" "$out"
}

# The systemd flavour of the initramfs (dracut's systemd, systemd-initrd and dracut-systemd modules,
# from the host's systemd), with resume, so that systemd-hibernate-resume and its generator sit
# beside thaw-resume.service as in a distribution's image. Sets TQ_INITRD; built once per input.
# TQ_SYSTEMD_MODULES: further dracut modules (systemd-swapfile: crypt, for systemd-cryptsetup);
# TQ_INITRAMFS_NET=1: thaw_network=yes; TQ_THAW_MODULE: the 90thaw to install (default the tree's;
# systemd-swapfile: the package's). Each combination of the first two is cached under its own name.
tq_build_initramfs_systemd() {
    local key base out sdver variant=systemd-initramfs more=${TQ_SYSTEMD_MODULES:-}
    local mod=${TQ_THAW_MODULE:-$TQ_REPO/dracut-module/90thaw}
    [[ -n $more ]] && variant+="+${more// /+}"
    [[ ${TQ_INITRAMFS_NET:-0} == 1 ]] && variant+=+net
    sdver=$(dpkg-query -W -f '${Version}' systemd 2> /dev/null)
    [[ -n $sdver && -x /lib/systemd/systemd ]] || tq_skip "systemd is not installed (run make deps)"
    key=$(tq_hash "$TQ_THAW" "$mod"/* "${BASH_SOURCE[0]}" <(echo "$TQ_KVER systemd $sdver"))
    out=$TQ_CACHE/$variant-$key.img
    # shellcheck disable=SC2034 # read by harness.sh's tq_boot (and crafted.sh's key)
    TQ_INITRD=$out
    [[ -s $out ]] && return 0
    tq_build_lock
    if [[ -s $out ]]; then tq_build_unlock; return 0; fi
    tq_log "building the $variant with dracut (host's systemd $sdver)"
    base=$TQ_CACHE/dracut-base-$variant
    rm -rf "$base" "$TQ_CACHE/$variant"-*.img "$TQ_CACHE/dracut-tmp-$variant"
    cp -a "$TQ_CACHE/dracut/root/usr/lib/dracut" "$base"
    cp -a "$mod" "$base/modules.d/90thaw"
    # As in tq_build_initramfs: the setting only for this build.
    mkdir -p "$TQ_CACHE/dracut-conf.d"
    [[ $variant == *+net ]] && echo 'thaw_network=yes' > "$TQ_CACHE/dracut-conf.d/thaw.conf"
    tq_dracut "$base" "$TQ_CACHE/dracut-tmp-$variant" \
        "bash systemd systemd-initrd dracut-systemd base dm kernel-modules rootfs-block resume thaw $more" "$out"
    rm -f "$TQ_CACHE/dracut-conf.d/thaw.conf"
    tq_build_unlock
}

# The stock initramfs of make bench-roundtrip: what Debian 12's dracut makes where systemd is
# installed, with crypt and resume and no thaw, and the swap's key file KEYFILE installed as
# /etc/bench-swap.key (rd.luks.key=). Sets TQ_INITRD; built once per input, KEYFILE's bytes included.
tq_build_initramfs_stock() {
    local keyfile=$1 key base out sdver variant=stock-initramfs
    sdver=$(dpkg-query -W -f '${Version}' systemd 2> /dev/null)
    [[ -n $sdver && -x /lib/systemd/systemd ]] || tq_skip "systemd is not installed (run make deps)"
    key=$(tq_hash "$keyfile" "${BASH_SOURCE[0]}" <(echo "$TQ_KVER systemd $sdver"))
    out=$TQ_CACHE/$variant-$key.img
    # shellcheck disable=SC2034 # read by harness.sh's tq_boot
    TQ_INITRD=$out
    [[ -s $out ]] && return 0
    tq_build_lock
    if [[ -s $out ]]; then tq_build_unlock; return 0; fi
    tq_log "building the $variant with dracut (host's systemd $sdver, crypt and resume, no thaw)"
    base=$TQ_CACHE/dracut-base-$variant
    rm -rf "$base" "$TQ_CACHE/$variant"-*.img "$TQ_CACHE/dracut-tmp-$variant"
    cp -a "$TQ_CACHE/dracut/root/usr/lib/dracut" "$base"
    tq_dracut "$base" "$TQ_CACHE/dracut-tmp-$variant" \
        "bash systemd systemd-initrd dracut-systemd base dm kernel-modules rootfs-block crypt resume" "$out" \
        --include "$keyfile" /etc/bench-swap.key
    tq_build_unlock
}

# Copies an executable and the shared libraries ldd reports into root tree $2.
tq_install_bin() {
    local bin=$1 root=$2 dest=$3 lib
    install -D -m 0755 "$bin" "$root$dest"
    for lib in $(ldd "$bin" 2>/dev/null | grep -o '/[^ ]*'); do
        [[ -e $root$lib ]] || install -D -m 0755 "$(readlink -f "$lib")" "$root$lib"
    done
}

tq_build_rootfs() {
    local key out tree m a kmods
    key=$(tq_hash "$TQ_THAW" "$TQ_CACHE/workload" "$TQ_REPO/test/qemu/guest-init.sh" "${BASH_SOURCE[0]}" \
        <(echo "$TQ_KVER"))
    out=$TQ_CACHE/root-$key.img
    # shellcheck disable=SC2034 # read by harness.sh's tq_workdir (and crafted.sh's key)
    TQ_ROOT_BASE=$out
    [[ -s $out ]] && return 0
    tq_build_lock
    if [[ -s $out ]]; then tq_build_unlock; return 0; fi
    tq_log "building the guest root file system"
    rm -f "$TQ_CACHE"/root-*.img
    tree=$TQ_CACHE/rootfs
    rm -rf "$tree"
    mkdir -p "$tree"/{bin,dev,proc,sys,run,tmp,mnt,etc/thaw,usr,var}
    ln -s bin "$tree/sbin"
    ln -s ../bin "$tree/usr/bin"
    ln -s ../bin "$tree/usr/sbin"
    install -m 0755 /bin/busybox "$tree/bin/busybox"
    for a in $(/bin/busybox --list); do
        [[ $a == busybox || -e $tree/bin/$a ]] || ln -s busybox "$tree/bin/$a"
    done
    rm -f "$tree/bin/init"
    install -m 0755 "$TQ_REPO/test/qemu/guest-init.sh" "$tree/bin/init"
    install -m 0755 "$TQ_CACHE/workload" "$tree/bin/workload"
    tq_install_bin "$TQ_THAW" "$tree" /bin/thaw
    # tpm2-tss's TCTI loader dlopen()s the device TCTI: ldd does not see it.
    tq_install_bin "$(tq_tcti_device)" "$tree" "$(tq_tcti_device)"
    # cryptsetup only lets the tests look at the image header read-only; thaw never calls it.
    tq_install_bin "$(command -v cryptsetup)" "$tree" /bin/cryptsetup
    # mke2fs makes the encrypted root of swapfile-resume inside the guest.
    tq_install_bin "$(command -v mke2fs)" "$tree" /bin/mke2fs
    install -D -m 0644 /etc/mke2fs.conf "$tree/etc/mke2fs.conf"
    # The modules the real system may load (the initramfs loads most before switch_root).
    kmods=$(for m in $TQ_MODULES; do
        modprobe -d "$(tq_kdir)" -S "$TQ_KVER" --show-depends "$m" 2>/dev/null | awk '$1 == "insmod" {print $2}'
    done | sort -u)
    for m in $kmods; do
        install -D -m 0644 "$m" "$tree/lib/modules/$TQ_KVER/${m#"$(tq_kmoddir)"/}"
    done
    cp "$(tq_kmoddir)"/modules.{order,builtin,builtin.modinfo} "$tree/lib/modules/$TQ_KVER/" 2>/dev/null
    # Where Debian keeps the config (it has no /proc/config.gz): thaw doctor reads it.
    install -D -m 0644 "$(tq_kdir)/boot/config-$TQ_KVER" "$tree/boot/config-$TQ_KVER"
    depmod -b "$tree" "$TQ_KVER" || tq_die "depmod failed on the guest root"
    echo "thaw-guest" > "$tree/etc/hostname"
    # systemd's switch-root (the systemd-flavour initramfs) only enters a root with an os-release.
    printf 'ID=thaw-guest\nNAME="thaw test guest"\n' > "$tree/etc/os-release"
    mke2fs -q -F -t ext4 -L root -d "$tree" "$out.tmp" 256M || tq_die "mke2fs failed"
    mv "$out.tmp" "$out"
    tq_build_unlock
}

tq_tcti_device() { readlink -f /usr/lib/x86_64-linux-gnu/libtss2-tcti-device.so.0 | sed 's/\.so\.0\..*/.so.0/'; }

# The Debian package, built with dpkg-buildpackage from a copy of the tracked tree (never in the
# tree itself); cached by the tree's content. Sets TQ_DEB.
tq_build_deb() {
    local key dir src
    command -v dpkg-buildpackage > /dev/null || tq_skip "dpkg-buildpackage missing (run make deps)"
    key=$(cd "$TQ_REPO" && git ls-files -co --exclude-standard -z -- Makefile debian resume crypto \
        dracut-module man kernel cloud README.md | xargs -0 cat | sha256sum | cut -c1-16)
    dir=$TQ_CACHE/deb-$key
    TQ_DEB=$(find "$dir" -maxdepth 1 -name 'thaw_*.deb' 2> /dev/null | head -n1)
    [[ -n $TQ_DEB ]] && return 0
    tq_build_lock
    TQ_DEB=$(find "$dir" -maxdepth 1 -name 'thaw_*.deb' 2> /dev/null | head -n1)
    if [[ -n $TQ_DEB ]]; then tq_build_unlock; return 0; fi
    tq_log "building the Debian package (dpkg-buildpackage -us -uc -b)"
    rm -rf "$TQ_CACHE"/deb-*
    # Built in DIR.tmp, renamed once complete: a look without the lock never sees half a package.
    src=$dir.tmp/src
    mkdir -p "$src"
    (cd "$TQ_REPO" && git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$src") \
        || tq_die "cannot copy the tree"
    (cd "$src" && timeout 1200 dpkg-buildpackage -us -uc -b > "$dir.tmp/build.log" 2>&1) \
        || { tail -n 20 "$dir.tmp/build.log" >&2; tq_die "dpkg-buildpackage failed"; }
    rm -rf "$src"
    mv "$dir.tmp" "$dir"
    TQ_DEB=$(find "$dir" -maxdepth 1 -name 'thaw_*.deb' | head -n1)
    [[ -n $TQ_DEB ]] || tq_die "dpkg-buildpackage made no thaw_*.deb"
    tq_build_unlock
}

# tq_tree_with_deb TREE: a copy of the guest root tree in TREE with the Debian package unpacked into
# it (dpkg -x; thaw in /usr/sbin, the dracut module in /usr/lib/dracut/modules.d/90thaw) instead of
# the copied build/thaw. Needs tq_build_deb.
tq_tree_with_deb() {
    local tree=$1
    rm -rf "$tree"
    cp -a "$TQ_CACHE/rootfs" "$tree"
    rm -f "$tree/bin/thaw" "$tree/usr/sbin"
    mkdir -p "$tree/usr/sbin"
    dpkg -x "$TQ_DEB" "$tree" || tq_die "dpkg -x $TQ_DEB failed"
}

# Everything a scenario needs before its first boot.
tq_prepare() {
    command -v "$TQ_QEMU" > /dev/null || tq_skip "$TQ_QEMU missing (run make deps)"
    [[ -x $TQ_THAW ]] || tq_die "$TQ_THAW missing (run make)"
    mkdir -p "$TQ_CACHE"
    tq_fetch_kernel
    tq_fetch_dracut
    tq_build_workload
    tq_build_initramfs
    tq_build_rootfs
}

# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared QEMU harness: Debian kernel + dracut (unpacked, never installed), root and swap disks, boots.
# shellcheck shell=bash
#
# Sourced by test/qemu/*/run.sh, test/qemu/run.sh, test/bench/ (the benchmarks, the soak, the demo)
# and kernel/bench/run.sh. Everything it downloads or builds lives in $TQ_CACHE (default .cache/qemu
# in the repository, git-ignored). Nothing here installs a kernel or dracut or touches the host's
# boot.

TQ_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TQ_CACHE=${TQ_CACHE:-$TQ_REPO/.cache/qemu}
TQ_THAW=${TQ_THAW:-$TQ_REPO/build/thaw}
TQ_MEM=${TQ_MEM:-768}              # MiB; the same on every boot (the image records the RAM size)
# One vCPU per guest, and as many guests side by side as the host has cores (TQ_JOBS, run.sh). With
# two vCPUs Debian's 6.1 guest under TCG now and then hung inside its hibernation while taking the
# second CPU offline, or in its resume after thaw's handoff (HACKING.md "Guest hangs"); with one
# there is no second CPU to take offline. One vCPU makes a boot 10-40% longer, but two one-vCPU
# guests at a time on two cores ran six scenarios (resume-basic smbios-resume drive-resume
# tpm-migrated tpm-new-host cold-boot) in 0.68x the time of one two-vCPU guest at a time (267 s
# against 393 s, two rounds each, interleaved, 2026-12-04, load 1.8-3.9). The benchmarks keep two
# vCPUs (their figures were taken so).
TQ_SMP=${TQ_SMP:-1}
TQ_QEMU=${TQ_QEMU:-qemu-system-x86_64}
TQ_ACCEL=${TQ_ACCEL:-tcg}    # tcg,thread=single: all vCPUs on one host thread (test/bench/soak.sh)
# +rdrand: the guest's random pool is ready at once (Debian's RANDOM_TRUST_CPU=y credits RDRAND,
# which TCG emulates). With plain qemu64 it was ready only after udev had loaded virtio_rng, seconds
# into the boot, and systemd-udevd's getrandom() waited for it: with Debian's 6.1.176 guest kernel
# that wait hung both vCPUs in soft lockups (issue "A test suite that does not flake").
# max emulates AES-NI, but was not faster overall.
TQ_CPU=${TQ_CPU:-qemu64,+rdrand}
TQ_SWAP_MIB=${TQ_SWAP_MIB:-600}
TQ_WORKLOAD_MIB=${TQ_WORKLOAD_MIB:-256}
TQ_BOOT_TIMEOUT=${TQ_BOOT_TIMEOUT:-300}   # seconds, hard limit per QEMU process
TQ_LOGLEVEL=${TQ_LOGLEVEL:-7}
TQ_SKIP=77

tq_log() { printf '# %s\n' "$*" >&2; }
tq_die() { printf '# error: %s\n' "$*" >&2; exit 1; }
tq_skip() { printf '# skip: %s\n' "$*" >&2; exit "$TQ_SKIP"; }

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
# Builds: workload, initramfs, root file system. Each is rebuilt when its inputs change.

tq_hash() { cat "$@" | sha256sum | cut -c1-16; }

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
    TQ_INITRD=$out
    [[ -s $out ]] && return 0
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
}

# tq_dracut BASE TMPDIR MODULES OUT: runs the unpacked dracut on module tree BASE.
tq_dracut() {
    local base=$1 tmp=$2 mods=$3 out=$4
    mkdir -p "$tmp" "$TQ_CACHE/dracut-conf.d"
    # --drivers (not --add-drivers) keeps the initramfs to what a virtio VM needs: kernel-modules
    # would otherwise copy every storage driver, and TCG pays for each byte unpacked.
    dracutbasedir=$base THAW_BINARY=$TQ_THAW \
        bash "$TQ_CACHE/dracut/root/usr/bin/dracut" --force --quiet --no-hostonly --no-hostonly-cmdline \
        --kver "$TQ_KVER" --kmoddir "$(tq_kmoddir)" --conf /dev/null --confdir "$TQ_CACHE/dracut-conf.d" \
        --tmpdir "$tmp" --modules "$mods" --drivers "${TQ_MODULES//$'\n'/ }" \
        --no-compress --no-early-microcode --nofscks "$out.tmp" \
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
    TQ_INITRD=$out
    [[ -s $out ]] && return 0
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
    TQ_ROOT_BASE=$out
    [[ -s $out ]] && return 0
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
}

tq_tcti_device() { readlink -f /usr/lib/x86_64-linux-gnu/libtss2-tcti-device.so.0 | sed 's/\.so\.0\..*/.so.0/'; }

# tq_root_add FILE...: copies each executable to /bin and each library (*.so*) to its host path,
# with the libraries ldd reports, into this run's root disk, $TQ_WORK/root.img; the shared root
# image is not changed, so only the scenario that needs a tool pays for it. Files already there
# are kept. (debugfs follows no symbolic link, so nothing goes under the guest's /usr/bin link.)
tq_root_add() {
    local tree=$TQ_WORK/root-add cmds=$TQ_WORK/root-add.debugfs f d
    rm -rf "$tree"
    mkdir -p "$tree"
    for f in "$@"; do
        case $f in
        *.so*) tq_install_bin "$f" "$tree" "$f" ;;
        *) tq_install_bin "$f" "$tree" "/bin/$(basename "$f")" ;;
        esac
    done
    : > "$cmds"
    # Parents first; debugfs says "exists" for what the root already has, and goes on.
    while IFS= read -r d; do
        echo "mkdir ${d#"$tree"}" >> "$cmds"
    done < <(find "$tree" -mindepth 1 -type d | sort)
    while IFS= read -r f; do
        echo "write $f ${f#"$tree"}" >> "$cmds"
    done < <(find "$tree" -type f | sort)
    debugfs -w -f "$cmds" "$TQ_WORK/root.img" > "$TQ_WORK/root-add.log" 2>&1 \
        || tq_die "debugfs could not add files to $TQ_WORK/root.img"
    # debugfs writes files without their modes: make them executable (libraries too, as installed).
    while IFS= read -r f; do
        echo "sif ${f#"$tree"} mode 0100755"
    done < <(find "$tree" -type f | sort) > "$cmds"
    debugfs -w -f "$cmds" "$TQ_WORK/root.img" >> "$TQ_WORK/root-add.log" 2>&1 \
        || tq_die "debugfs could not set modes in $TQ_WORK/root.img"
}

# The Debian package, built with dpkg-buildpackage from a copy of the tracked tree (never in the
# tree itself); cached by the tree's content. Sets TQ_DEB.
tq_build_deb() {
    local key dir src
    command -v dpkg-buildpackage > /dev/null || tq_skip "dpkg-buildpackage missing (run make deps)"
    key=$(cd "$TQ_REPO" && git ls-files -co --exclude-standard -z -- Makefile debian resume crypto \
        dracut-module man kernel README.md | xargs -0 cat | sha256sum | cut -c1-16)
    dir=$TQ_CACHE/deb-$key
    TQ_DEB=$(find "$dir" -maxdepth 1 -name 'thaw_*.deb' 2> /dev/null | head -n1)
    [[ -n $TQ_DEB ]] && return 0
    tq_log "building the Debian package (dpkg-buildpackage -us -uc -b)"
    rm -rf "$TQ_CACHE"/deb-*
    src=$dir/src
    mkdir -p "$src"
    (cd "$TQ_REPO" && git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$src") \
        || tq_die "cannot copy the tree"
    (cd "$src" && dpkg-buildpackage -us -uc -b > "$dir/build.log" 2>&1) \
        || { tail -n 20 "$dir/build.log" >&2; tq_die "dpkg-buildpackage failed"; }
    rm -rf "$src"
    TQ_DEB=$(find "$dir" -maxdepth 1 -name 'thaw_*.deb' | head -n1)
    [[ -n $TQ_DEB ]] || tq_die "dpkg-buildpackage made no thaw_*.deb"
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

# ---------------------------------------------------------------------------------------------
# Per-run work directory: disks and keys (generated here, never committed).

# tq_workdir NAME: fresh $TQ_WORK with a root disk, an empty swap disk and two random keys.
tq_workdir() {
    TQ_WORK=$TQ_CACHE/run/$1
    rm -rf "$TQ_WORK"
    mkdir -p "$TQ_WORK"
    cp --sparse=always "$TQ_ROOT_BASE" "$TQ_WORK/root.img"
    truncate -s "${TQ_SWAP_MIB}M" "$TQ_WORK/swap.img"
    (umask 077; head -c 32 /dev/urandom > "$TQ_WORK/key"; head -c 32 /dev/urandom > "$TQ_WORK/wrong-key")
    TQ_SEED=$(od -An -tu4 -N4 /dev/urandom | tr -d ' ')
}

# TQ_TPM_STATE: when set, each boot gets a TPM2 (QEMU tpm-tis) backed by a new swtpm process on this
# state directory, as a cloud's vTPM follows its VM: copying the directory moves the TPM to the next
# boot, a new empty directory is a fresh TPM.
TQ_TPM_STATE=${TQ_TPM_STATE:-}
TQ_SWTPM_PID=

# tq_swtpm_start NAME: swtpm on $TQ_TPM_STATE; sets TQ_TPM_ARGS (QEMU arguments) and TQ_SWTPM_PID.
tq_swtpm_start() {
    local sock i
    command -v swtpm > /dev/null || tq_skip "swtpm missing (run make deps)"
    mkdir -p "$TQ_TPM_STATE"
    # A UNIX socket path must fit 108 bytes: not under the (maybe long) work directory.
    sock=${TMPDIR:-/tmp}/tq-swtpm.$$.sock
    rm -f "$sock"
    # --terminate: it exits when QEMU closes the control channel.
    swtpm socket --tpm2 --tpmstate "dir=$TQ_TPM_STATE" --ctrl "type=unixio,path=$sock" --terminate \
        --log "file=$TQ_WORK/$1.swtpm.log,level=1" &
    TQ_SWTPM_PID=$!
    for ((i = 0; i < 100; i++)); do
        [[ -S $sock ]] && break
        sleep 0.1
    done
    [[ -S $sock ]] || tq_die "swtpm did not create $sock"
    TQ_TPM_ARGS=(-chardev "socket,id=chrtpm,path=$sock" -tpmdev "emulator,id=tpm0,chardev=chrtpm"
        -device "tpm-tis,tpmdev=tpm0")
}

tq_swtpm_stop() {
    [[ -n $TQ_SWTPM_PID ]] || return 0
    kill "$TQ_SWTPM_PID" 2> /dev/null
    wait "$TQ_SWTPM_PID" 2> /dev/null
    TQ_SWTPM_PID=
    rm -f "${TMPDIR:-/tmp}/tq-swtpm.$$.sock"
}

# tq_boot NAME STEP KEYFILE [EXTRA-CMDLINE...]
# Boots once with a hard timeout. Serial output goes to $TQ_WORK/NAME.log, each line prefixed by
# the seconds since QEMU started (host clock). Returns QEMU's status (124 = timed out).
# TQ_QEMU_EXTRA (array) adds QEMU arguments, TQ_QEMU_WRAP (array) a command QEMU runs under (such
# as ip netns exec NS); the real key is always also given to the guest as
# opt/test/realkey so it can inspect the image header read-only.
tq_boot() {
    local name=$1 step=$2 key=$3 log rc start
    shift 3
    log=$TQ_WORK/$name.log
    # A boot that is not to resume must not touch the root file system the hibernated system
    # still has mounted: read-only, and no ext4 journal replay.
    local rootmode=rw
    [[ $step == inspect ]] && rootmode="ro rootflags=noload"
    # TQ_ROOT_ARGS and TQ_THAW_ARGS replace the root and thaw arguments (swapfile-resume boots from
    # the LUKS2 root that thaw unlocks, with the arguments thaw setup printed).
    local append="console=ttyS0 ${TQ_ROOT_ARGS:-root=/dev/vda} $rootmode"
    append+=" ${TQ_THAW_ARGS-rd.thaw.device=/dev/vdb rd.thaw.key=fwcfg:opt/thaw/key}"
    # no_timer_check: on a loaded host a TCG guest can fail the IO-APIC timer check and panic at
    # boot ("IO-APIC + timer doesn't work"), as seen during development; the check is for real hardware.
    append+=" no_timer_check loglevel=$TQ_LOGLEVEL panic=-1 thaw.step=$step thaw.seed=$TQ_SEED thaw.mib=$TQ_WORKLOAD_MIB $*"
    # TQ_KERNEL: another kernel (make bench-kernel's); an empty TQ_INITRD boots without initramfs.
    local boot=(-kernel "${TQ_KERNEL:-$(tq_vmlinuz)}")
    [[ -n ${TQ_INITRD:-} ]] && boot+=(-initrd "$TQ_INITRD")
    tq_log "boot $name: step=$step ${*:-}"
    TQ_TPM_ARGS=()
    [[ -n $TQ_TPM_STATE ]] && tq_swtpm_start "$name"
    start=$EPOCHREALTIME
    local tag=thaw-test-$$-$RANDOM watch
    rm -f "$TQ_WORK/$name.hung"
    tq_watch_hang "$log" "$tag" "$TQ_WORK/$name.hung" &
    watch=$!
    "${TQ_QEMU_WRAP[@]}" timeout -k 10 "$TQ_BOOT_TIMEOUT" "$TQ_QEMU" -name "$tag" -accel "$TQ_ACCEL" -cpu "$TQ_CPU" -m "$TQ_MEM" -smp "$TQ_SMP" \
        -nodefaults -display none -no-reboot -serial stdio \
        "${boot[@]}" -append "$append" \
        -drive "file=$TQ_WORK/root.img,if=virtio,format=raw" \
        -drive "file=$TQ_WORK/swap.img,if=virtio,format=raw" \
        -fw_cfg "name=opt/thaw/key,file=$key" -fw_cfg "name=opt/test/realkey,file=$TQ_WORK/key" \
        -object rng-random,id=rng0,filename=/dev/urandom -device virtio-rng-pci,rng=rng0 \
        "${TQ_TPM_ARGS[@]}" "${TQ_QEMU_EXTRA[@]}" < /dev/null 2>&1 | tee "$log.raw" | tq_stamp "$start" > "$log"
    rc=${PIPESTATUS[0]}
    kill "$watch" 2> /dev/null
    wait "$watch" 2> /dev/null
    rm -f "$log.raw"
    if [[ -e $TQ_WORK/$name.hung ]]; then
        tq_log "boot $name: stopped as hung $(cat "$TQ_WORK/$name.hung"): $(tq_hang_signature "$name")"
        rc=124
    fi
    tq_swtpm_stop
    TQ_BOOT_SECONDS=$(tq_since "$start")
    tq_log "boot $name: QEMU exited with status $rc after ${TQ_BOOT_SECONDS} s"
    return "$rc"
}

# tq_watch_hang LOG TAG MARK: a hung guest, seen early, so a hang costs seconds rather than
# TQ_BOOT_TIMEOUT. It is hung when the kernel reports a soft lockup, or when the guest has sent no
# byte to its serial console (LOG.raw, the console's output as it comes, progress bars included;
# an empty log counts from QEMU's start) for
# - TQ_HANG_SECONDS (30) at the kernel's own hibernation steps (the last line the console suspend
#   or taking CPUs offline) or inside a resume the kernel started and did not finish: in a
#   clean-clone run of all scenarios the longest silence there in a boot that went on was 0.5 s
#   (hibernating) and 2.5 s (resuming);
# - TQ_PREALLOC_SECONDS (60) at the kernel's "Preallocating image memory", the one step that works
#   long without a word and cannot be made to say more: 15 s on a quiet host with one vCPU, 29.3 s
#   with another guest beside it (systemd-swapfile, 2026-12-04);
# - TQ_SILENCE_SECONDS (30) anywhere else. What works long there says how far it has got every few
#   seconds (the workload's fill and check, thaw setup's integrity tags, thaw hibernate's reclaim,
#   thaw swapin's progress bar). 0 turns it and the preallocation's limit off: the benchmarks,
#   whose guests work silently for long (bench-swapin's swapoff of 700 MiB took 28 s on a quiet
#   host, and grows with its sizes and the host's load), watch only the kernel's steps.
# Then MARK gets what was seen and the boot's timeout is fired at once (SIGALRM: it stops QEMU and
# exits 124, as at the full timeout).
TQ_HANG_SECONDS=${TQ_HANG_SECONDS:-30}
TQ_PREALLOC_SECONDS=${TQ_PREALLOC_SECONDS:-60}
TQ_SILENCE_SECONDS=${TQ_SILENCE_SECONDS:-30}
TQ_HANG_POLL=${TQ_HANG_POLL:-5}   # seconds between looks (test/host/t-harness.sh: 1)
tq_watch_hang() {
    local log=$1 tag=$2 mark=$3 age limit mtime last
    while sleep "$TQ_HANG_POLL"; do
        [[ -e $log ]] || continue
        # A soft lockup (seen at boot under TCG, both vCPUs spinning in getrandom(), long before
        # thaw runs; issue "A test suite that does not flake") never ended in any boot seen: its
        # reports keep the log growing, so no silence would show it. Stopped at once.
        if tq_soft_lockup_in "$log"; then
            tq_stop_hung "$tag" "$mark" "at once" && return 0
            continue
        fi
        last=$(tq_last_line "$log")
        # A resume the kernel started and never finished: it prints its image loading progress
        # every 10%, and restarts tasks once the restored system runs.
        if grep -qE 'Suspending console\(s\)|Disabling non-boot CPUs' <<< "$last" ||
            { grep -qF 'PM: hibernation: resume from hibernation' "$log" &&
                ! grep -qF 'Restarting tasks' "$log"; }; then
            limit=$TQ_HANG_SECONDS
        elif ((TQ_SILENCE_SECONDS <= 0)); then
            continue
        elif [[ $last == *'PM: hibernation: Preallocating image memory'* ]]; then
            limit=$TQ_PREALLOC_SECONDS
        else
            limit=$TQ_SILENCE_SECONDS
        fi
        mtime=$(stat -c %Y "$log" "$log.raw" 2> /dev/null | sort -n | tail -n 1)
        [[ -n $mtime ]] || continue
        age=$(($(date +%s) - mtime))
        ((age >= limit)) || continue
        tq_stop_hung "$tag" "$mark" "after $limit s with no serial output" && return 0
    done
}

# tq_stop_hung TAG MARK WHY: writes WHY to MARK and fires the timeout of the QEMU named TAG; if no
# such timeout was found, MARK is removed again (a boot whose QEMU could not be signalled is not said
# to be hung). MARK comes first: tq_boot stops this watcher as soon as QEMU has exited.
tq_stop_hung() {
    echo "$3" > "$2"
    pkill -ALRM -f -- "^timeout -k 10 [0-9]+ [^ ]+ -name $1 " 2> /dev/null && return 0
    rm -f "$2"
    return 1
}

tq_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }

# Prefixes each line with seconds since $1, e.g. " 12.34| text".
tq_stamp() {
    local a=$1 line now n
    while IFS= read -r line || [[ -n $line ]]; do
        line=${line//$'\r'/}
        now=$EPOCHREALTIME
        # Integer microseconds: no subprocess per line.
        n=$(( ${now%.*} * 1000000 + 10#${now#*.} - ${a%.*} * 1000000 - 10#${a#*.} ))
        printf '%4d.%02d| %s\n' $((n / 1000000)) $(( (n % 1000000) / 10000 )) "$line"
    done
}

# ---------------------------------------------------------------------------------------------
# Reading results from the serial logs.

# tq_has NAME TEXT: the boot's log contains TEXT (fixed string).
tq_has() { grep -qF -- "$2" "$TQ_WORK/$1.log"; }

# tq_time NAME TEXT: seconds (from QEMU start) of the first line containing TEXT, or empty.
tq_time() { grep -F -m1 -- "$2" "$TQ_WORK/$1.log" | sed 's/|.*//; s/ //g'; }

# tq_show NAME: the lines a reader needs when something fails (test markers and thaw lines).
tq_show() {
    grep -E 'THAW-TEST|thaw:|workload:|PM: |Kernel panic|BUG|Oops|reboot: |EXT4-fs \(vda\)' "$TQ_WORK/$1.log" |
        sed 's/^/#   /' >&2
}

# Assertions used by scenarios: count failures, print what was checked.
TQ_FAILS=0
tq_check() {
    local what=$1
    shift
    if "$@"; then
        tq_log "ok: $what"
    else
        tq_log "FAILED: $what"
        TQ_FAILS=$((TQ_FAILS + 1))
    fi
}

# tq_image_written NAME: the kernel (thaw hibernate --writer kernel) or thaw (--writer thaw) wrote an image.
tq_image_written() { tq_has "$1" "PM: hibernation: Wrote" || tq_has "$1" "thaw: wrote the image to "; }

# tq_lacks NAME TEXT: the boot's log does not contain TEXT.
tq_lacks() { ! tq_has "$1" "$2"; }

# tq_state_save, tq_state_restore, tq_state_drop: what a boot can change, kept before it and put
# back for a retry: the root and swap disks, and the TPM's state when the boot has one (a resume
# increments the TPM2 counter before thaw's handoff, so a retry on the disks alone would meet a
# counter one ahead of its image; replay-tpm, seen in a clean-clone run). Further drives of
# TQ_QEMU_EXTRA are not kept.
tq_state_save() {
    local disk
    for disk in root swap; do
        cp --sparse=always "$TQ_WORK/$disk.img" "$TQ_WORK/$disk.img.pre"
    done
    rm -rf "$TQ_WORK/tpm.pre"
    if [[ -n $TQ_TPM_STATE && -d $TQ_TPM_STATE ]]; then
        cp -a "$TQ_TPM_STATE" "$TQ_WORK/tpm.pre"
    fi
}
tq_state_restore() {
    local disk
    for disk in root swap; do
        cp --sparse=always "$TQ_WORK/$disk.img.pre" "$TQ_WORK/$disk.img"
    done
    if [[ -n $TQ_TPM_STATE ]]; then
        # No copy: there was no state before the boot, a fresh TPM.
        rm -rf "$TQ_TPM_STATE"
        [[ ! -d $TQ_WORK/tpm.pre ]] || cp -a "$TQ_WORK/tpm.pre" "$TQ_TPM_STATE"
    fi
}
tq_state_drop() { rm -rf "$TQ_WORK/root.img.pre" "$TQ_WORK/swap.img.pre" "$TQ_WORK/tpm.pre"; }

# tq_boot_checked NAME STEP KEYFILE [EXTRA-CMDLINE...]: tq_boot, and count a timeout or crash; only a
# soft lockup is retried.
tq_boot_checked() { tq_boot_retried tq_soft_lockup_of "$@"; }

# tq_boot_retried HUNG NAME STEP KEYFILE [EXTRA-CMDLINE...]: tq_boot; a boot stopped as hung for
# which HUNG NAME holds is tried again (up to TQ_HANG_RETRIES times) on its disks and TPM state as
# they were before it (tq_state_restore), and said; then the power-off is checked.
tq_boot_retried() {
    local hung=$1 rc=0 try=0
    shift
    tq_state_save
    tq_boot "$@" || rc=$?
    while ((rc == 124 && try < TQ_HANG_RETRIES)) && "$hung" "$1"; do
        try=$((try + 1))
        tq_log "RETRY: boot $1 hung: $(tq_hang_signature "$1"); its log is $1.hung$try.log; disks${TQ_TPM_STATE:+ and TPM} put back as before it, once more"
        mv "$TQ_WORK/$1.log" "$TQ_WORK/$1.hung$try.log"
        tq_state_restore
        rc=0
        tq_boot "$@" || rc=$?
    done
    tq_state_drop
    tq_check "boot $1 powered off by itself (QEMU status $rc, ${TQ_BOOT_SECONDS} s)" test "$rc" -eq 0
    TQ_TIMES+=("$1=${TQ_BOOT_SECONDS}s")
}
TQ_TIMES=()

# The file given to the guest as fw_cfg opt/thaw/key by the two boots below; a scenario whose key
# comes from elsewhere sets it to $TQ_WORK/wrong-key, so fw_cfg cannot be what unlocked the device.
TQ_FWCFG_KEY=${TQ_FWCFG_KEY:-}

# tq_sleep_boot_checked NAME STEP KEYFILE [EXTRA-CMDLINE...]: tq_boot_checked for a boot that
# hibernates or resumes. Under TCG with 2 vCPUs Debian's 6.1 guest kernel hangs now and then, idle
# until stopped, inside its hibernation (after "hibernation entry", before any image was written;
# the last line "Disabling non-boot CPUs" or the console suspend before it) or inside its resume
# after thaw's handoff (CI: verify's resume boot, silent after "resume from hibernation";
# test/bench/integrity-cost.sh: at "Suspending console(s)" after the image was loaded), with no
# thaw code running. tq_watch_hang stops such a boot after TQ_HANG_SECONDS of silence. Nothing of
# thaw's was judged there, so it is said loudly and the boot tried again (up to TQ_HANG_RETRIES
# times: systemd-swapfile's hung twice in a row once) on the disks as they were before it, copied
# first (a resume's kernel had erased the image's signature); every check still applies.
TQ_HANG_RETRIES=${TQ_HANG_RETRIES:-3}

# tq_kernel_hung NAME: the boot stopped inside the kernel's hibernation before an image was
# written, or inside its resume before the restored system restarted its tasks.
# tq_soft_lockup_in LOG: the kernel reported a soft lockup.
tq_soft_lockup_in() { grep -qF 'watchdog: BUG: soft lockup' "$1"; }
tq_soft_lockup_of() { tq_soft_lockup_in "$TQ_WORK/$1.log"; }

# tq_last_line LOG: the guest's last line, not QEMU's own note of the signal that stopped it
# ("qemu-system-x86_64: terminating on signal 15 from pid …", named after whichever QEMU ran).
tq_last_line() { grep -vE '^ *[0-9.]+\| [^ ]+: terminating on signal [0-9]+' "$1" | tail -n 1; }

# With thaw's writer (/dev/snapshot) there is no "hibernation entry": a boot silent at the kernel's
# own steps of the snapshot (preallocating its memory, console suspend, CPUs offline) before thaw
# wrote anything. A silence anywhere else in thaw's write is not the kernel's, and is not retried.
tq_kernel_hung() {
    tq_soft_lockup_of "$1" ||
    { tq_has "$1" "PM: hibernation: hibernation entry" && ! tq_image_written "$1"; } ||
    { tq_has "$1" "thaw: hibernating to" && ! tq_image_written "$1" &&
        tq_last_line "$TQ_WORK/$1.log" |
            grep -qE 'Preallocating image memory|Suspending console\(s\)|Disabling non-boot CPUs'; } ||
        { tq_has "$1" "PM: hibernation: resume from hibernation" && tq_lacks "$1" "Restarting tasks"; }
}

# tq_hang_signature NAME: what the hung boot's log shows, for the RETRY line and the scenario's
# result: a soft lockup and where, or the silence and its last line; "after thaw's handoff" when
# thaw had handed an image to the kernel (a fault of thaw's there would look the same).
tq_hang_signature() {
    local log=$TQ_WORK/$1.log last where=""
    if tq_soft_lockup_in "$log"; then
        echo "a soft lockup at $(grep -m1 -o 'RIP: 0010:[^ ]*' "$log" | tr -d '\r')"
        return
    fi
    last=$(tq_last_line "$log" | sed 's/^ *[0-9.]*| *//; s/^\[ *[0-9.]*\] //' | cut -c1-80)
    tq_has "$1" "thaw: resuming from" && where=" after thaw's handoff"
    echo "silent${where} at '$last'"
}

tq_sleep_boot_checked() { tq_boot_retried tq_kernel_hung "$@"; }

# Boot 1 of the scenarios that need an image: setup, workload, thaw hibernate, power-off.
# tq_hibernate_boot NAME [EXTRA-CMDLINE...]
tq_hibernate_boot() {
    tq_sleep_boot_checked "$1" hibernate "${TQ_FWCFG_KEY:-$TQ_WORK/key}" "${@:2}"
    tq_check "$1: thaw setup succeeded" tq_has "$1" "THAW-TEST: setup exit 0"
    tq_check "$1: workload holds ${TQ_WORKLOAD_MIB} MiB" tq_has "$1" "THAW-TEST: workload ready"
    tq_check "$1: the image was written" tq_image_written "$1"
    tq_check "$1: powered off inside the hibernation (thaw hibernate did not return)" \
        tq_lacks "$1" "THAW-TEST: hibernate exit"
}

# A boot that must resume the image written by tq_hibernate_boot, with nothing lost.
tq_resume_boot() {
    local name=$1
    shift
    tq_sleep_boot_checked "$name" resume "${TQ_FWCFG_KEY:-$TQ_WORK/key}" "$@"
    tq_check "$name: thaw verified the image's ticket before the handoff" \
        grep -qE "thaw: image ticket verified in [0-9]+ ms: image of $TQ_DATE_RE, " "$TQ_WORK/$name.log"
    tq_check "$name: thaw handed the image to the kernel" \
        tq_has "$name" "thaw: resuming from /dev/mapper/thaw-swap"
    tq_check "$name: the kernel loaded the image" tq_has "$name" "PM: Image loading done"
    tq_check "$name: the fresh init never ran" tq_lacks "$name" "THAW-TEST: fresh boot"
    tq_check "$name: thaw hibernate returned 0 in the resumed system" \
        tq_has "$name" "THAW-TEST: hibernate exit 0"
    tq_check "$name: workload: nothing lost" tq_has "$name" "workload: nothing lost (${TQ_WORKLOAD_MIB} MiB verified"
}

# ---------------------------------------------------------------------------------------------
# The image ticket (thaw hibernate's LUKS2 token thaw-ticket on the swap device): read on the host,
# and what thaw resume says about it.

# How thaw writes a time in its lines ("2026-12-03 18:40 UTC"), as an extended regular expression.
TQ_DATE_RE='[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2} UTC'

# tq_ticket_id IMG / tq_ticket_get IMG FIELD: the thaw-ticket token's id in IMG's LUKS2 header, one
# field of it; empty if IMG has none (or several).
tq_ticket_py() {
    cryptsetup luksDump --dump-json-metadata "$1" 2> /dev/null | python3 -c '
import json, sys
tokens = json.load(sys.stdin).get("tokens", {})
found = [(i, t) for i, t in tokens.items() if t.get("type") == "thaw-ticket"]
if len(found) == 1:
    i, t = found[0]
    print(i if sys.argv[1] == "" else t.get(sys.argv[1], ""))' "$2" 2> /dev/null
}
tq_ticket_id() { tq_ticket_py "$1" ""; }
tq_ticket_get() { tq_ticket_py "$1" "$2"; }

# tq_superseded NAME REASON: boot NAME's thaw resume said it superseded the image's ticket, giving
# REASON (an extended regular expression: the outcome, "noresume", "no-key", ...).
tq_superseded() {
    grep -qE "thaw: image of $TQ_DATE_RE superseded by this boot \($2\): it will never be resumed \(resuming it \
would corrupt file systems it had mounted\)" "$TQ_WORK/$1.log"
}

# tq_stale NAME WHY: boot NAME (step inspect) refused the image for its ticket, WHY (an extended
# regular expression) in its one-line reason, dropped it and went on with the swap ready: nothing
# handed over, and the real system's thaw status says so.
tq_stale() {
    local n=$1 why=$2
    tq_check "$n: thaw refused the image for its ticket and dropped it: $why" \
        grep -qE "thaw: not resuming the image on /dev/mapper/thaw-swap: $why; image discarded, boot continues, swap \
ready" "$TQ_WORK/$n.log"
    tq_check "$n: no handoff" tq_lacks "$n" "thaw: resuming from"
    tq_check "$n: the kernel never saw the image" tq_lacks "$n" "PM: hibernation: resume from hibernation"
    tq_check "$n: thaw resume exited normally (no crash)" tq_lacks "$n" "thaw resume exited with status"
    tq_check "$n: the boot went on to the real init" tq_has "$n" "THAW-TEST: fresh boot step=inspect"
    tq_check "$n: the mapping is open for swap" tq_has "$n" "THAW-TEST: mapping present"
    tq_check "$n: the image is gone, the swap signature back (SWAPSPACE2)" \
        tq_has "$n" "THAW-TEST: image signature: SWAPSPACE"
    tq_check "$n: the kernel takes it as swap" tq_has "$n" "THAW-TEST: swapon exit 0"
    tq_check "$n: the outcome is stale" tq_has "$n" "THAW-TEST: state: outcome=stale"
    tq_check "$n: thaw status in the real system says why the image was dropped" \
        tq_has "$n" "THAW-TEST: status: At boot, thaw resume: an image that could not be resumed safely was discarded"
    tq_log "$n: $(grep -F 'thaw: not resuming' "$TQ_WORK/$n.log" | sed 's/.*thaw: //' | head -n1)"
}

# tq_disks_sum: the sha256 of this run's root and swap disks.
tq_disks_sum() { cat "$TQ_WORK/root.img" "$TQ_WORK/swap.img" | sha256sum | cut -c1-64; }

# tq_poweroff_boot NAME WHY [EXTRA-CMDLINE...]: one boot (step inspect) in which thaw must refuse
# the image for WHY (fixed text, the start of the reason) under rd.thaw.mismatch=poweroff, the
# default: it powers the VM off before anything is mounted, and the image, its ticket and the root
# are left exactly as they were, so that a boot on the right machine still resumes it.
tq_poweroff_boot() {
    local n=$1 why=$2 before
    shift 2
    before=$(tq_disks_sum)
    tq_boot_checked "$n" inspect "$TQ_WORK/key" "$@"
    tq_check "$n: thaw refused the image and powered off: $why" \
        grep -qF "thaw: not resuming the image on /dev/mapper/thaw-swap: $why" "$TQ_WORK/$n.log"
    tq_check "$n: the line says powering off before anything is mounted, image kept" \
        tq_has "$n" "; rd.thaw.mismatch=poweroff: powering off before anything is mounted, image kept: "
    tq_check "$n: the kernel powered the VM off" tq_has "$n" "reboot: Power down"
    tq_check "$n: no handoff" tq_lacks "$n" "thaw: resuming from"
    tq_check "$n: the kernel never saw the image" tq_lacks "$n" "PM: hibernation: resume from hibernation"
    tq_check "$n: the root was never mounted" tq_lacks "$n" "EXT4-fs (vda): mounted"
    tq_check "$n: the real init never ran" tq_lacks "$n" "THAW-TEST: fresh boot"
    tq_check "$n: the ticket was not superseded" tq_lacks "$n" "superseded by this boot"
    tq_check "$n: nothing was written to the root or swap disk (sha256 before and after)" \
        test "$before" = "$(tq_disks_sum)"
    tq_check "$n: the ticket is still fresh" test "$(tq_ticket_get "$TQ_WORK/swap.img" state)" = fresh
    tq_log "$n: $(grep -F 'thaw: not resuming' "$TQ_WORK/$n.log" | sed 's/.*thaw: //' | head -n1)"
}

tq_finish() {
    local log
    tq_log "boot times: ${TQ_TIMES[*]}"
    if ((TQ_FAILS > 0)); then
        for log in "$TQ_WORK"/*.log; do
            tq_log "--- $(basename "$log"): markers and thaw lines"
            tq_show "$(basename "$log" .log)"
        done
        tq_log "serial logs: $TQ_WORK"
        exit 1
    fi
    exit 0
}

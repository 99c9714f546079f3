#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# dracut module: installs thaw and runs `thaw resume` before the root file system is mounted: a
# pre-mount hook (and an initqueue job) in the shell flavour, thaw-resume.service when the systemd
# module is included.
# shellcheck disable=SC2154 # dracut sets moddir, hostonly, hostonly_cmdline, dracutsysrootdir, initdir, SYSTEMCTL, systemd*dir

# The thaw binary to install; the test harness points this at its build.
thaw_bin() {
    echo "${THAW_BINARY:-/usr/sbin/thaw}"
}

# thaw as it runs at build time: the sysroot's (dracut --sysroot), unless the harness names one.
thaw_exe() {
    echo "${THAW_BINARY:-$dracutsysrootdir/usr/sbin/thaw}"
}

# Host-only, and thaw is configured on the (sys)root: build what thaw.conf needs, nothing else.
thaw_hostonly() {
    [[ $hostonly ]] && [[ -e "$dracutsysrootdir/etc/thaw/thaw.conf" ]]
}

# thaw_config FALLBACK ARG...: `thaw config ARG... --root SYSROOT`, its output. thaw.conf is read by
# thaw alone (blanks, quotes, comments, bad lines, its size cap: as the boot will read it); this
# module parses none of it. Status 0, or 1 as thaw config's (no device); 2 when thaw gives no
# answer (not runnable on this host, killed, too old for ARG), said with FALLBACK, what the build
# does instead: as for an image built for any host, never a failed build (the image's own thaw,
# which may run where this one cannot, reads the copied thaw.conf at boot).
thaw_config() {
    local fallback=$1 exe err rc
    shift
    exe=$(thaw_exe)
    { err=$("$exe" config "$@" --root "$dracutsysrootdir" 2>&1 >&3 3>&-); } 3>&1
    rc=$?
    ((rc <= 1)) && return "$rc"
    derror "thaw: '$exe config $*' gave no answer (exit $rc${err:+: ${err//$'\n'/ }}): $fallback"
    return 2
}

# thaw_uses TYPE: the initramfs needs key source TYPE (fwcfg, smbios, drive, imds, keyfile, tpm2,
# systemd-tpm2): in a host-only image if thaw.conf's key= names it, in a generic image always, and
# when thaw cannot tell (a false match only costs a driver, a miss costs the key at boot).
thaw_uses() {
    thaw_hostonly || return 0
    thaw_key_types || return 0
    [[ $_thaw_types == *" $1 "* ]]
}

# thaw_key_types: _thaw_types, the types of thaw.conf's key= (" fwcfg tpm2 "), asked once; status 1
# when thaw gives no answer.
thaw_key_types() {
    local out
    if [[ -z ${_thaw_types+x} ]]; then
        if out=$(thaw_config "the drivers of every key source go in, the network only with thaw_network=yes" \
            --key-types) || (($? == 1)); then
            _thaw_types=" ${out//$'\n'/ } "
        else
            _thaw_types=unknown
        fi
    fi
    [[ $_thaw_types != unknown ]]
}

# Does this initramfs need the TPM2 pieces? When the key chain in thaw.conf names a tpm2 or
# systemd-tpm2 source (the chain, not the header, decides what the boot uses); otherwise as
# thaw_uses.
thaw_needs_tpm2() {
    thaw_uses tpm2 || thaw_uses systemd-tpm2
}

# Whether the key chain the boot will use names an imds: source, so the initramfs needs a link
# (DHCP) and libcurl. thaw_network=yes|no in dracut.conf decides outright (a chain that only the
# kernel command line names, or an initramfs built for other hosts); otherwise, host-only, the
# chain of thaw.conf (as thaw reads it: not when thaw cannot tell, the network needs busybox), of
# the running kernel's command line and of dracut's kernel_cmdline.
thaw_wants_network() {
    case ${thaw_network:-} in
        yes) return 0 ;;
        no) return 1 ;;
    esac
    [[ $hostonly ]] || return 1
    thaw_hostonly && thaw_key_types && [[ $_thaw_types == *" imds "* ]] && return 0
    # shellcheck disable=SC2154 # kernel_cmdline comes from dracut.conf
    printf '%s %s\n' "$(cat /proc/cmdline 2> /dev/null)" "${kernel_cmdline:-}" | tr ' ' '\n' \
        | grep -q '^rd\.thaw\.key=.*imds:'
}

# called by dracut (and by install() for a host-only image): thaw.conf as rd.thaw.* arguments.
# The systemd flavour: thaw-resume.service must not wait for the root device, which thaw itself
# opens when the swap file is on an encrypted root (rd.thaw.name= is the root's mapping).
cmdline() {
    local args
    thaw_hostonly || return 0
    args=$(thaw_config "no rd.thaw.* arguments stored, thaw resume reads the copied thaw.conf" \
        --cmdline) || return 0
    [[ $args ]] && printf ' %s' "$args"
}

# Host-only: the arguments stored in the image (read by thaw resume and dracut's getcmdline);
# /sbin/thaw-resume, which runs thaw in both flavours; shell flavour: it also runs from the
# initqueue, so that a root container it unlocks (swap file on an encrypted root) appears before
# dracut gives up waiting for the root device.
thaw_install_early() {
    local args
    # inst_simple looks for its source outside the sysroot (dracut 059): copy the sysroot's own.
    thaw_hostonly && inst_multiple -H /etc/thaw/thaw.conf
    if thaw_hostonly && [[ $hostonly_cmdline == yes ]]; then
        args=$(cmdline)
        mkdir -p "$initdir/etc/cmdline.d"
        [[ $args ]] && printf '%s\n' "$args" >> "$initdir/etc/cmdline.d/90thaw.conf"
    fi
    inst_script "$moddir/thaw-resume.sh" /sbin/thaw-resume
    if ! dracut_module_included "systemd"; then
        inst_hook cmdline 90 "$moddir/thaw-queue.sh"
    fi
}

# called by dracut
check() {
    [[ -x "$(thaw_exe)" ]] || return 1
    # A host configured by `thaw setup` needs the module; otherwise only when asked for.
    # An imds: source brings the link up with busybox's udhcpc.
    if thaw_wants_network; then
        require_binaries busybox || return 1
    fi
    [[ $hostonly ]] && [[ -e "$dracutsysrootdir/etc/thaw/thaw.conf" ]] && return 0
    return 255
}

# called by dracut
depends() {
    echo dm
    return 0
}

# called by dracut
installkernel() {
    # dm-crypt and its ciphers, the kernel crypto API libcryptsetup uses for keyslots,
    # the fw_cfg key source, and the virtio disks the swap device usually lives on.
    hostonly='' instmods dm_mod dm_crypt xts ecb cbc aesni_intel aes_generic sha256_generic \
        af_alg algif_skcipher algif_hash virtio_blk virtio_scsi virtio_pci
    thaw_uses fwcfg && hostonly='' instmods qemu_fw_cfg
    # thaw setup --integrity: dm-integrity and the authenc(hmac(sha256),xts(aes)) AEAD; the
    # kernel loads them on demand, only for such a container.
    hostonly='' instmods dm_integrity authenc sha256_ssse3
    # The drive: key source mounts a config drive (ISO 9660 or vfat, whose code pages the kernel
    # loads at mount time). The smbios: source needs dmi-sysfs, built in on Debian; a module elsewhere.
    thaw_uses drive && hostonly='' instmods isofs vfat nls_cp437 nls_ascii nls_utf8 nls_iso8859_1
    thaw_uses smbios && hostonly='' instmods dmi-sysfs
    # The TPM2 drivers (built in on Debian; modules elsewhere).
    if thaw_needs_tpm2; then
        hostonly='' instmods tpm_tis tpm_crb
    fi
    if thaw_wants_network; then
        local _m _mods=(virtio_net)
        if [[ $hostonly ]]; then
            # The drivers of this host's network interfaces.
            for _m in /sys/class/net/*/device/driver/module; do
                [[ -e $_m ]] && _mods+=("$(basename "$(readlink -f "$_m")")")
            done
        else
            _mods+=(ena gve hv_netvsc) # AWS, Google Cloud, Azure
        fi
        hostonly='' instmods "${_mods[@]}"
        mkdir -p "$initdir/usr/lib/thaw"
        printf '%s\n' "${_mods[@]}" > "$initdir/usr/lib/thaw/net-modules"
    fi
    return 0
}

# libcurl and, since nothing links it, the libraries it needs, which dracut-install does not follow
# for a library.
inst_curl() {
    local _dir _lib _curl=""
    for _dir in $libdirs; do
        [[ -e $dracutsysrootdir$_dir/libcurl.so.4 ]] && _curl=$_dir/libcurl.so.4 && break
    done
    if [[ -z $_curl ]]; then
        derror "thaw: libcurl.so.4 not found (install libcurl4): imds: key sources will fail at boot"
        return 1
    fi
    inst_library "$_curl"
    for _lib in $(ldd "$dracutsysrootdir$_curl" | grep -o '/[^ ]*'); do
        inst_library "${_lib#"$dracutsysrootdir"}"
    done
}

# called by dracut
install() {
    thaw_install_early
    inst_binary "$(thaw_bin)" /usr/sbin/thaw
    # thaw links tpm2-tss's ESAPI; its TCTI loader dlopen()s the device TCTI for /dev/tpmrm0.
    if thaw_needs_tpm2; then
        inst_libdir_file "libtss2-tcti-device.so.0*"
    fi
    [[ $hostonly ]] && [[ -e "$dracutsysrootdir/etc/thaw/thaw.conf" ]] && inst_simple /etc/thaw/thaw.conf
    if thaw_wants_network; then
        # /sbin/thaw-resume runs busybox's udhcpc and ip (in both flavours); thaw loads libcurl (and
        # its libraries) with dlopen.
        inst "$(find_binary busybox)" /usr/bin/busybox
        inst_simple "$moddir/thaw-udhcpc.sh" /usr/lib/thaw/udhcpc.sh
        inst_curl
    fi
    # One flavour or the other, never both: dracut-systemd would also run a pre-mount hook.
    if dracut_module_included "systemd"; then
        inst_simple "$moddir/thaw-resume.service" "$systemdsystemunitdir/thaw-resume.service"
        inst_simple "$moddir/thaw-hibernate-resume.conf" \
            "$systemdsystemunitdir/systemd-hibernate-resume@.service.d/thaw.conf"
        inst_script "$moddir/thaw-generator.sh" "$systemdutildir/system-generators/thaw-generator"
        $SYSTEMCTL -q --root "$initdir" enable thaw-resume.service
    else
        inst_hook pre-mount 10 "$moddir/thaw-resume.sh"
    fi
}

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# dracut module: installs thaw and runs `thaw resume` before the root file system is mounted: a
# pre-mount hook in the shell flavour, thaw-resume.service when the systemd module is included.
# shellcheck disable=SC2154 # dracut sets moddir, hostonly, dracutsysrootdir, initdir, SYSTEMCTL, systemd*dir

# The thaw binary to install; the test harness points this at its build.
thaw_bin() {
    echo "${THAW_BINARY:-/usr/sbin/thaw}"
}

# Does this initramfs need the TPM2 pieces? Always without hostonly; with it, only when the key
# chain in thaw.conf names a tpm2 source (the chain, not the header, decides what the boot uses).
thaw_needs_tpm2() {
    [[ $hostonly ]] || return 0
    grep -qE '^key=(.*,)?tpm2([:,]|$)' "$dracutsysrootdir/etc/thaw/thaw.conf" 2> /dev/null
}

# called by dracut
check() {
    [[ -x "$(thaw_bin)" ]] || return 1
    # A host configured by `thaw setup` needs the module; otherwise only when asked for.
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
        af_alg algif_skcipher algif_hash qemu_fw_cfg virtio_blk virtio_scsi virtio_pci
    # The drive: key source mounts a config drive (ISO 9660 or vfat, whose code pages the kernel
    # loads at mount time). The smbios: source needs dmi-sysfs, built in on Debian; a module elsewhere.
    hostonly='' instmods isofs vfat nls_cp437 nls_ascii nls_utf8 nls_iso8859_1 dmi-sysfs
    # The TPM2 drivers (built in on Debian; modules elsewhere).
    if thaw_needs_tpm2; then
        hostonly='' instmods tpm_tis tpm_crb
    fi
}

# called by dracut
install() {
    inst_binary "$(thaw_bin)" /usr/sbin/thaw
    # thaw links tpm2-tss's ESAPI; its TCTI loader dlopen()s the device TCTI for /dev/tpmrm0.
    if thaw_needs_tpm2; then
        inst_libdir_file "libtss2-tcti-device.so.0*"
    fi
    [[ $hostonly ]] && [[ -e "$dracutsysrootdir/etc/thaw/thaw.conf" ]] && inst_simple /etc/thaw/thaw.conf
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

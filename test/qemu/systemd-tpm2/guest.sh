# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=sh
# systemd-tpm2's guest code (sourced by guest-init.sh, sent as fw_cfg opt/test/guest): a keyslot
# enrolled by systemd-cryptenroll.

# hook_setup (hibernate step, after thaw setup), thaw.sdenroll=PCRS: systemd 252's
# systemd-cryptenroll (put into this run's root by the scenario) adds a systemd-tpm2 keyslot bound
# to PCRS of this guest's TPM, unlocking with the fw_cfg key setup used.
hook_setup() {
    pcrs=$(arg thaw.sdenroll)
    [ -n "$pcrs" ] || return 0
    systemd-cryptenroll --unlock-key-file=/sys/firmware/qemu_fw_cfg/by_name/opt/thaw/key/raw \
        --tpm2-device=/dev/tpmrm0 --tpm2-pcrs="$pcrs" /dev/vdb 2>&1 | sed 's/^/THAW-TEST: cryptenroll: /'
    cryptsetup luksDump /dev/vdb | grep -q 'systemd-tpm2' || fail "no systemd-tpm2 token after systemd-cryptenroll"
    say "systemd-tpm2 enrolled"
    # The header changed on purpose: re-pinned as thaw(8) says, or thaw hibernate refuses the stale pin.
    thaw enroll --device /dev/vdb --repin 2>&1 | sed 's/^/THAW-TEST: repin: /'
}

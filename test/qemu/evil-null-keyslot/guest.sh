# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=sh
# evil-null-keyslot's guest code (sourced by guest-init.sh, sent as fw_cfg opt/test/guest): does
# libcryptsetup open the forged container with any key?

# hook_inspect (inspect step): does libcryptsetup open /dev/vdb with a key that is no key (a forged
# cipher_null keyslot, CVE-2025-59054)? Only checks the passphrase: nothing is mapped.
hook_inspect() {
    printf 'not the key at all' > /tmp/anykey
    cryptsetup open --test-passphrase --key-file /tmp/anykey /dev/vdb
    say "any key: test-passphrase exit $?"
}

# SPDX-License-Identifier: LGPL-2.1-or-later
# The plain harness guest's step cryptroot for test/cloud/swapfile.sh (sent as its guest.sh, which
# test/qemu/guest-init.sh sources): /dev/vdb becomes a LUKS2 container with the installer key of
# fw_cfg opt/test/rootkey (guest-init.sh's luks_root, as mkroot), and the
# file system on /dev/vdc (read-only) is copied into it with e2image -ra, only the blocks in use,
# then checked with e2fsck -fn.
# shellcheck shell=sh

# shellcheck disable=SC2154 # uuid: set by guest-init.sh's luks_root
step_cryptroot() {
    luks_root
    say "cryptroot: copying /dev/vdc into /dev/mapper/luks-$uuid"
    /bin/e2image -ra -p /dev/vdc "/dev/mapper/luks-$uuid" || fail "e2image failed"
    sync
    if /bin/e2fsck -fn "/dev/mapper/luks-$uuid" > /tmp/fsck 2>&1; then
        say "cryptroot: e2fsck clean"
    else
        sed 's/^/THAW-TEST: e2fsck: /' /tmp/fsck | tail -n 20
        fail "e2fsck of the copy failed"
    fi
    cryptsetup close "luks-$uuid" || fail "cannot close luks-$uuid"
    say "cryptroot: done"
}

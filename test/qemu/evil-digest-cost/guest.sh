# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=sh
# evil-digest-cost's guest code (sourced by guest-init.sh, sent as fw_cfg opt/test/guest): no look
# at the forged header with cryptsetup.

# look_realkey (inspect step): cryptsetup would spend hours on the forged digest with the real key.
look_realkey() {
    say "inspect: no look at /dev/vdb with the real key (its digest asks for hours of PBKDF2)"
}

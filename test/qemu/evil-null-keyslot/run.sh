#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# evil-null-keyslot: any key opens a forged container. Offline, a working keyslot with area encryption
# cipher_null-ecb is added to the swap disk's LUKS2 header (the attacker's own volume key in
# clear, segment 0's digest made the attacker's, the thaw token copied to it): libcryptsetup
# before 2.8.1 opens it with any passphrase (CVE-2025-59054), which the guest shows. The boot's
# fw_cfg key is a wrong one: without the policy thaw unlocked the device with it. thaw must refuse
# the header, naming the keyslot, before any key is tried.
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=test/qemu/crafted.sh
. "$(dirname "$0")/../crafted.sh"
# shellcheck source=test/qemu/evil.sh
. "$(dirname "$0")/../evil.sh"

tq_prepare
tq_workdir evil-null-keyslot
tq_crafted_image pristine
tq_forge --null-keyslot "$TQ_WORK/attacker-vk"
tq_check "forged: keyslot 1 is cipher_null-ecb" grep -qF "Cipher:     cipher_null-ecb" "$TQ_WORK/forged.dump"
# Its guest.sh tries to open the forged container with a key that is no key.
tq_evil_boot nullslot "$TQ_WORK/wrong-key"
tq_header_refused nullslot "keyslot 1 area encryption is cipher_null-ecb: not a header thaw wrote"
tq_check "nullslot: the forgery is a real attack: libcryptsetup opens it with a key that is no key" \
    tq_has nullslot "THAW-TEST: any key: test-passphrase exit 0"
tq_finish

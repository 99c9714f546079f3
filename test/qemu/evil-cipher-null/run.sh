#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# evil-cipher-null: the attacker's image resumes. Offline, the swap disk's LUKS2 header (keyslots and
# digest untouched) has its data segment switched to cipher_null-ecb, and a plain hibernation image
# (the cached image, decrypted) lies in the data area: libcryptsetup 2.6.1 would map it in the clear
# with the real key. thaw must refuse the header before any key is tried, map nothing, resume
# nothing, write nothing, and let the boot go on.
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=test/qemu/crafted.sh
. "$(dirname "$0")/../crafted.sh"
# shellcheck source=test/qemu/evil.sh
. "$(dirname "$0")/../evil.sh"

tq_prepare
tq_workdir evil-cipher-null
tq_crafted_image plain
tq_forge --segment-cipher cipher_null-ecb
tq_check "forged: segment 0 is cipher_null-ecb" grep -qF "cipher: cipher_null-ecb" "$TQ_WORK/forged.dump"
tq_check "forged: the data area holds the plain image (S1SUSPEND in the clear)" \
    test "$(dd if="$TQ_WORK/swap.img" bs=1 skip=$(($(python3 "$TQ_FORGE" "$TQ_WORK/swap.img" --print-data-offset) + 4086)) \
        count=9 2> /dev/null)" = S1SUSPEND
tq_evil_boot evil "$TQ_WORK/key"
tq_header_refused evil "segment 0 encryption is cipher_null-ecb: not a header thaw wrote"
tq_finish

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# evil-plain-swap: cleartext swap. Offline, the swap disk's LUKS2 header has its data segment switched
# to cipher_null-ecb and a plain swap signature (mkswap) is put at the start of the data area: the
# unfixed thaw unlocked it, said "swap ready", and the system swapped (and hibernated) in the
# clear. thaw must refuse the header before any key is tried, and no swap may be in use.
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=test/qemu/crafted.sh
. "$(dirname "$0")/../crafted.sh"
# shellcheck source=test/qemu/evil.sh
. "$(dirname "$0")/../evil.sh"

tq_prepare
tq_workdir evil-plain-swap
tq_crafted_image pristine
tq_forge --segment-cipher cipher_null-ecb
offset=$(python3 "$TQ_FORGE" "$TQ_WORK/swap.img" --print-data-offset)
# A swap signature for the whole data area, made on a file of its size (mkswap has no offset option
# everywhere), its first page put at the start of the data area.
(umask 077 && truncate -s $(($(stat -c %s "$TQ_WORK/swap.img") - offset)) "$TQ_WORK/plain-swap.img")
mkswap "$TQ_WORK/plain-swap.img" > "$TQ_WORK/mkswap.log" 2>&1 || tq_die "mkswap failed: $(cat "$TQ_WORK/mkswap.log")"
dd if="$TQ_WORK/plain-swap.img" of="$TQ_WORK/swap.img" bs=4096 count=1 seek=$((offset / 4096)) conv=notrunc \
    2> /dev/null || tq_die "cannot write the swap signature"
rm -f "$TQ_WORK/plain-swap.img"
tq_check "forged: a plain swap signature at the data area" \
    test "$(dd if="$TQ_WORK/swap.img" bs=1 skip=$((offset + 4086)) count=10 2> /dev/null)" = SWAPSPACE2
tq_evil_boot plainswap "$TQ_WORK/key"
tq_header_refused plainswap "segment 0 encryption is cipher_null-ecb: not a header thaw wrote"
tq_check "plainswap: thaw never said the swap was ready" tq_lacks plainswap "swap ready"
tq_check "plainswap: nothing was swapped on" tq_lacks plainswap "THAW-TEST: swapon exit 0"
tq_check "plainswap: /proc/swaps in the booted system is empty" tq_has plainswap "THAW-TEST: swaps in use: 0"
tq_finish

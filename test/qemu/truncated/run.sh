#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# truncated: a real image on a swap disk cut short (a disk shrunk, or a copy that ended early):
# the header and the first map page are there, later map and data pages lie past the end. thaw
# must refuse before the handoff, never crash or hang, keep what is left and let the boot go on.
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=test/qemu/crafted.sh
. "$(dirname "$0")/../crafted.sh"

tq_prepare
tq_workdir truncated
tq_crafted_image pristine
# Cut 8 MiB past the first map page (the crafting boot logged where it is; the image is the same
# on every copy), so the header and the start of the chain are there and the rest is not.
map=$(sed -n 's/.*THAW-TEST: crafted lz4 on .* (first map page \([0-9]*\)).*/\1/p' \
    "$TQ_CACHE"/images/*/craft.log | head -n1)
data=$(cryptsetup luksDump "$TQ_WORK/swap.img" | sed -n 's/^[[:space:]]*offset: \([0-9]*\) \[bytes\].*/\1/p' | head -n1)
tq_check "truncated: the first map page (block ${map:-?}) and the data offset (${data:-?}) are known" \
    test -n "$map" -a -n "$data"
truncate -s $((${data:-0} + (${map:-0} + 2048) * 4096)) "$TQ_WORK/swap.img"
tq_boot_checked truncated inspect "$TQ_WORK/key"
tq_refused truncated "the image is damaged: "
tq_check "truncated: the reason is a map or data page past the device's end, not the first map page" \
    grep -qE 'thaw: not resuming .*(map page [0-9]+ points to|data page [0-9]+ is at) block [0-9]+, outside' \
    "$TQ_WORK/truncated.log"
tq_check "truncated: thaw status names the failed check" tq_has truncated "THAW-TEST: status: Failed check: malformed"
tq_finish

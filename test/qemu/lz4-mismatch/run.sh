#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# lz4-mismatch: an image marked LZ4-compressed (flag 0x10, Linux 6.9+) meets Debian's 6.1 kernel,
# which has no such flag and would try LZO on it after erasing the signature. 6.1 cannot write LZ4
# images (hibernate.compressor= came in 6.9), so the flag is set on a real image's header. A boot on
# a kernel with LZ4 could still resume it: under rd.thaw.mismatch=poweroff (the default) thaw must
# refuse before the handoff, say why, and power off before anything is mounted, the image and its
# ticket untouched. A second boot with rd.thaw.mismatch=discard must give the swap back exactly as
# the kernel would (the swap signature back from orig_sig, nothing else on the header page changed:
# the crafting boot summed the header page as crafted).
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=test/qemu/crafted.sh
. "$(dirname "$0")/../crafted.sh"

tq_prepare
tq_workdir lz4-mismatch
tq_crafted_image lz4
start=$EPOCHREALTIME
sum=$(sed -n 's/.*THAW-TEST: crafted lz4 on .*; header page sum: \([0-9a-f]*\).*/\1/p' "$TQ_CRAFTED/craft.log" | head -n1)

tq_poweroff_boot off "the image is compressed with LZ4, which this kernel ("

tq_boot_checked discard inspect "$TQ_WORK/key" rd.thaw.mismatch=discard
tq_check "discard: thaw dropped the image and said so" \
    tq_has discard "rd.thaw.mismatch=discard: image discarded, boot continues, swap ready"
tq_check "discard: no handoff" tq_lacks discard "thaw: resuming from"
tq_check "discard: the mapping stays open for swap" tq_has discard "THAW-TEST: mapping present"
tq_check "discard: the swap signature is back (SWAPSPACE2)" tq_has discard "THAW-TEST: image signature: SWAPSPACE"
tq_check "discard: the rest of the header page is as crafted (sum ${sum:-?})" \
    test -n "$sum" -a "$(sed -n 's/.*THAW-TEST: header page sum: //p' "$TQ_WORK/discard.log" | head -n1)" = "$sum"
tq_check "discard: the kernel takes it as swap" tq_has discard "THAW-TEST: swapon exit 0"
tq_check "discard: thaw status says the image was discarded" \
    tq_has discard "THAW-TEST: status: At boot, thaw resume: an image this machine cannot resume was discarded"
tq_check "discard: thaw status names the failed check" tq_has discard "THAW-TEST: status: Failed check: lz4"
tq_log "lz4-mismatch: $(tq_since "$start") s of boots after the image"
tq_finish

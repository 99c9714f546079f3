#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# verify: rd.thaw.verify=1 decompresses a real image and checks its CRC32 before the handoff. The
# crafted image's "flip" copy has one byte of its first compressed chunk changed (by the crafting
# boot, which ran thaw inspect --verify before and after: it accepts the image as written and finds
# the change). A boot with rd.thaw.verify=1 refuses the changed image and keeps it; the boot goes
# on, so it also supersedes the image's ticket: that copy is never resumable again. The image as
# written verifying and resuming with rd.thaw.verify=1 (thaw's decompression, CRC32 and the
# image's MAC agree with the image) is stale-mismatch's last boot, which resumes the same image.
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=test/qemu/crafted.sh
. "$(dirname "$0")/../crafted.sh"

tq_prepare
tq_workdir verify
tq_crafted_image flip
craftlog=$TQ_CRAFTED/craft.log
tq_check "craft: thaw inspect --verify accepts the image as written (its CRC32 matches)" \
    grep -qF "THAW-TEST: verify-before:   verified:       yes: CRC32" "$craftlog"
tq_check "craft: one byte changed" grep -qF "THAW-TEST: corrupted: byte 64 of block" "$craftlog"
tq_check "craft: thaw inspect --verify finds the change" grep -qF "THAW-TEST: verify-after:   verified:       no: " "$craftlog"
tq_log "inspect before: $(grep -F 'verify-before:   verified:' "$craftlog" | sed 's/.*verified: *//')"
tq_log "inspect after:  $(grep -F 'verify-after:   verified:' "$craftlog" | sed 's/.*verified: *//')"

# rd.thaw.verify=1 on the changed image: refused, kept, its ticket superseded.
tq_boot_checked refused inspect "$TQ_WORK/key" rd.thaw.verify=1
tq_check "refused: thaw refused before handoff, naming the damage" \
    tq_has refused "thaw: not resuming the image on /dev/mapper/thaw-swap: image data is damaged: "
tq_check "refused: no handoff" tq_lacks refused "thaw: resuming from"
tq_check "refused: the kernel never saw the image" tq_lacks refused "PM: hibernation: resume from hibernation"
tq_check "refused: the boot went on to the real init" tq_has refused "THAW-TEST: fresh boot step=inspect"
tq_check "refused: the mapping is not open" tq_has refused "THAW-TEST: mapping absent"
tq_check "refused: the image is still on disk (S1SUSPEND)" tq_has refused "THAW-TEST: image signature: S1SUSPEND"
tq_check "refused: the boot went on with the image there: its ticket superseded" tq_superseded refused '[^)]+'
tq_check "refused: the ticket on the swap disk says superseded" \
    test "$(tq_ticket_get "$TQ_WORK/swap.img" state)" = superseded
tq_log "refused: $(grep -F 'thaw: not resuming' "$TQ_WORK/refused.log" | sed 's/.*thaw: //' | head -n1)"
tq_log "refused: $(grep -E 'thaw: image of .* superseded by this boot' "$TQ_WORK/refused.log" | sed 's/.*thaw: //' |
    head -n1)"

tq_finish

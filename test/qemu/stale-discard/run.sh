#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# stale-discard: an image made with TQ_MEM MiB meets a VM with 256 MiB more, booted with
# rd.thaw.mismatch=discard: thaw drops the image (the swap signature back, as the kernel would) and
# the boot goes on with the swap ready; nothing is powered off.
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=test/qemu/crafted.sh
. "$(dirname "$0")/../crafted.sh"

tq_prepare
tq_workdir stale-discard
mem=$TQ_MEM
big=$((TQ_MEM + 256))
tq_crafted_image pristine

TQ_MEM=$big tq_boot_checked discard inspect "$TQ_WORK/key" rd.thaw.mismatch=discard
why="image was made with $mem MiB of memory, this machine has $big MiB"
tq_check "discard: thaw dropped the image, naming both memory sizes" \
    tq_has discard "thaw: not resuming the image on /dev/mapper/thaw-swap: $why; rd.thaw.mismatch=discard: image discarded, boot continues, swap ready"
tq_check "discard: nothing was powered off by thaw" tq_lacks discard "rd.thaw.mismatch=poweroff"
tq_check "discard: no handoff" tq_lacks discard "thaw: resuming from"
tq_check "discard: the kernel never saw the image" tq_lacks discard "PM: hibernation: resume from hibernation"
tq_check "discard: the boot went on to the real init" tq_has discard "THAW-TEST: fresh boot step=inspect"
tq_check "discard: the mapping stays open for swap" tq_has discard "THAW-TEST: mapping present"
tq_check "discard: the swap signature is back (SWAPSPACE2)" tq_has discard "THAW-TEST: image signature: SWAPSPACE"
tq_check "discard: the kernel takes it as swap" tq_has discard "THAW-TEST: swapon exit 0"
tq_check "discard: the outcome is mismatch-discarded" tq_has discard "THAW-TEST: state: outcome=mismatch-discarded"
tq_check "discard: thaw status says the image was discarded" \
    tq_has discard "THAW-TEST: status: At boot, thaw resume: an image this machine cannot resume was discarded"
tq_check "discard: thaw status gives the reason, with both memory sizes" \
    tq_has discard "THAW-TEST: status: Details: not resuming the image on /dev/mapper/thaw-swap: $why"
tq_log "discard: the ticket on the swap disk afterwards: $(tq_ticket_get "$TQ_WORK/swap.img" state) ($(tq_ticket_get \
    "$TQ_WORK/swap.img" state-why))"

tq_finish

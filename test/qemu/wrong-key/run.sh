#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# wrong-key: an image is on disk but fw_cfg holds another key: the boot goes on within the
# timeout, nothing is resumed and the image stays. That boot went on with the image there (its real
# system could have mounted and written the hibernated system's file systems): thaw supersedes the
# image's ticket without any key (token metadata) and says so. A boot with the right key then
# unlocks the device but must refuse the image as superseded, drop it and go on with the swap ready.
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=test/qemu/crafted.sh
. "$(dirname "$0")/../crafted.sh"

timeout=10
tq_prepare
tq_workdir wrong-key
tq_crafted_image pristine

tq_boot_checked wrong inspect "$TQ_WORK/wrong-key" "rd.thaw.timeout=$timeout"
tq_check "wrong: thaw says no key source unlocked the device" tq_has wrong "thaw: no key source unlocked"
tq_check "wrong: no handoff" tq_lacks wrong "thaw: resuming from"
tq_check "wrong: the kernel did not look at the image" tq_lacks wrong "PM: hibernation: resume from hibernation"
tq_check "wrong: the boot went on to the real init" tq_has wrong "THAW-TEST: fresh boot step=inspect"
tq_check "wrong: the mapping is not open" tq_has wrong "THAW-TEST: mapping absent"
tq_check "wrong: the image is still on disk (S1SUSPEND)" tq_has wrong "THAW-TEST: image signature: S1SUSPEND"
tq_check "wrong: thaw superseded the image's ticket (no key obtained)" tq_superseded wrong no-key
tq_check "wrong: the ticket on the swap disk says superseded" \
    test "$(tq_ticket_get "$TQ_WORK/swap.img" state)" = superseded
hook=$(tq_time wrong "thaw-resume.sh: running thaw resume")
gave_up=$(tq_time wrong "thaw: no key source unlocked")
init=$(tq_time wrong "THAW-TEST: fresh boot")
tq_log "wrong: thaw started at ${hook:-?} s, gave up at ${gave_up:-?} s, real init at ${init:-?} s" \
    "(rd.thaw.timeout=$timeout)"
tq_check "wrong: thaw gave up within rd.thaw.timeout=$timeout" \
    awk -v a="${hook:-0}" -v b="${gave_up:-999}" -v t="$timeout" 'BEGIN { exit !(b - a <= t) }'

tq_boot_checked stale inspect "$TQ_WORK/key"
tq_check "stale: the right key unlocked the device" tq_has stale "/dev/mapper/thaw-swap with fwcfg:opt/thaw/key"
tq_stale stale "image of $TQ_DATE_RE was superseded by the boot of $TQ_DATE_RE \(no-key\): resuming it would \
corrupt file systems it had mounted"
tq_finish

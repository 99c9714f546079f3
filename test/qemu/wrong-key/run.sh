#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# wrong-key: an image is on disk but fw_cfg holds another key: the boot goes on within the
# timeout, nothing is resumed and the image stays; a boot with the right key then resumes it.
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"

timeout=10
tq_prepare
tq_workdir wrong-key
tq_hibernate_boot hibernate

tq_boot_checked wrong inspect "$TQ_WORK/wrong-key" "rd.thaw.timeout=$timeout"
tq_check "wrong: thaw says no key source unlocked the device" tq_has wrong "thaw: no key source unlocked"
tq_check "wrong: no handoff" tq_lacks wrong "thaw: resuming from"
tq_check "wrong: the kernel did not look at the image" tq_lacks wrong "PM: hibernation: resume from hibernation"
tq_check "wrong: the boot went on to the real init" tq_has wrong "THAW-TEST: fresh boot step=inspect"
tq_check "wrong: the mapping is not open" tq_has wrong "THAW-TEST: mapping absent"
tq_check "wrong: the image is still on disk (S1SUSPEND)" tq_has wrong "THAW-TEST: image signature: S1SUSPEND"
hook=$(tq_time wrong "thaw-resume.sh: running thaw resume")
gave_up=$(tq_time wrong "thaw: no key source unlocked")
init=$(tq_time wrong "THAW-TEST: fresh boot")
tq_log "wrong: thaw started at ${hook:-?} s, gave up at ${gave_up:-?} s, real init at ${init:-?} s" \
    "(rd.thaw.timeout=$timeout)"
tq_check "wrong: thaw gave up within rd.thaw.timeout=$timeout" \
    awk -v a="${hook:-0}" -v b="${gave_up:-999}" -v t="$timeout" 'BEGIN { exit !(b - a <= t) }'

tq_resume_boot resume
tq_finish

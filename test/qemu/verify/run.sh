#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# verify: rd.thaw.verify=1 decompresses the kernel's real image and checks its CRC32 before the
# handoff. One image, four boots: thaw inspect --verify accepts the kernel's image, then one byte of
# its first compressed chunk is changed (from a noresume boot that opens the container with the
# test-only real key); a boot with rd.thaw.verify=1 refuses it and keeps it, and its init changes
# the byte back; a last boot with rd.thaw.verify=1 verifies and resumes it, nothing lost (so thaw's
# decompression and CRC32 agree with the kernel's).
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"

tq_prepare
tq_workdir verify
tq_hibernate_boot hibernate

tq_boot_checked corrupt inspect "$TQ_WORK/key" noresume thaw.corrupt=1
tq_check "corrupt: thaw inspect --verify accepts the kernel's image (its CRC32 matches)" \
    tq_has corrupt "THAW-TEST: verify-before:   verified:       yes: CRC32"
tq_check "corrupt: one byte changed" tq_has corrupt "THAW-TEST: corrupted: byte 64 of block"
tq_check "corrupt: thaw inspect --verify finds the change" \
    tq_has corrupt "THAW-TEST: verify-after:   verified:       no: "
tq_log "inspect before: $(grep -F 'verify-before:   verified:' "$TQ_WORK/corrupt.log" | sed 's/.*verified: *//')"
tq_log "inspect after:  $(grep -F 'verify-after:   verified:' "$TQ_WORK/corrupt.log" | sed 's/.*verified: *//')"

# rd.thaw.verify=1 on the changed image: refused, kept; then the init changes the byte back.
tq_boot_checked refused inspect "$TQ_WORK/key" rd.thaw.verify=1 thaw.corrupt=1
tq_check "refused: thaw refused before handoff, naming the damage" \
    tq_has refused "thaw: not resuming the image on /dev/mapper/thaw-swap: image data is damaged: "
tq_check "refused: no handoff" tq_lacks refused "thaw: resuming from"
tq_check "refused: the kernel never saw the image" tq_lacks refused "PM: hibernation: resume from hibernation"
tq_check "refused: the boot went on to the real init" tq_has refused "THAW-TEST: fresh boot step=inspect"
tq_check "refused: the image is still on disk (S1SUSPEND)" tq_has refused "THAW-TEST: image signature: S1SUSPEND"
tq_check "refused: the byte changed back, the image verifies again" \
    tq_has refused "THAW-TEST: verify-after:   verified:       yes: CRC32"
tq_log "refused: $(grep -F 'thaw: not resuming' "$TQ_WORK/refused.log" | sed 's/.*thaw: //' | head -n1)"

# rd.thaw.verify=1 on the good image: verified, resumed, nothing lost.
tq_resume_boot resume rd.thaw.verify=1
tq_check "resume: the verification line names a matching CRC32" \
    grep -qE 'thaw: image verified in [0-9]+ ms: CRC32 [0-9a-f]{8} matches' "$TQ_WORK/resume.log"
verified=$(sed -n 's/.*thaw: \(image verified in [0-9]* ms: .*\)/\1/p' "$TQ_WORK/resume.log" | head -n1)
tq_log "boot verification: ${verified:-none}"
tq_log "the kernel's own load: $(grep -F 'PM: hibernation: Read' "$TQ_WORK/resume.log" | sed 's/.*PM: hibernation: //' | head -n1)"
tq_finish

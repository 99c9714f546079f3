#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# replay-tpm: with a thaw-tpm2 key enrolled, thaw setup defines the volume's TPM2 counter; each
# hibernation and each resume increment it, and the ticket records its value. Both disks are
# copied after hibernation 1 (a snapshot); the VM resumes and hibernates again (image 2). The copy
# put back, root and swap as they were, passes every check but the counter's: refused as "2
# hibernations old" and dropped. The current disks put back: image 2 resumes with nothing lost.
# It also carries what tpm-resume checked before (only a TPM2 key enrolled, fw_cfg holds a wrong
# key): the resume boots unseal it through /dev/tpmrm0 (a new swtpm process on the same state, as a
# vTPM across a power cycle), and tpm-lock: in the system resumed last, unsealing the same token
# fails, because the resume boot extended the lock PCR.
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"

tq_prepare
tq_workdir replay-tpm
TQ_TPM_STATE=$TQ_WORK/tpm
TQ_FWCFG_KEY=$TQ_WORK/wrong-key
src=tpm2

# After the resume its guest.sh hibernates the resumed system once more, and tries the TPM key
# named by thaw.aftercheck once the last resume came back (the resumed system runs with this
# command line).
tq_hibernate_boot hibernate "thaw.setupkey=$src" "rd.thaw.key=$src" "thaw.aftercheck=$src"
tq_check "hibernate: setup sealed the key to the TPM" tq_lacks hibernate "cannot read the key from"
tq_check "hibernate: setup defined the TPM2 counter" tq_has hibernate "TPM2 counter of /dev/vdb at NV index"
tq_check "hibernate: thaw hibernate incremented it to 2" tq_has hibernate "TPM2 counter of /dev/vdb incremented to 2"
for disk in root swap; do
    cp --sparse=always "$TQ_WORK/$disk.img" "$TQ_WORK/$disk.img.1"
done

tq_sleep_boot_checked resume1 resume "$TQ_FWCFG_KEY" "rd.thaw.key=$src"
tq_check "resume1: unlocked with the TPM key" tq_has resume1 "/dev/mapper/thaw-swap with $src (key"
tq_check "resume1: the ticket's counter value matched" tq_has resume1 "TPM2 counter 2 as its ticket says"
tq_check "resume1: counter incremented before the handoff" \
    tq_has resume1 "thaw: TPM2 counter incremented to 3: this image can never pass again"
tq_check "resume1: thaw handed image 1 to the kernel" tq_has resume1 "thaw: resuming from /dev/mapper/thaw-swap"
tq_check "resume1: the resumed system hibernated again" tq_has resume1 "THAW-TEST: hibernating again"
tq_check "resume1: counter incremented to 4 for image 2" tq_has resume1 "TPM2 counter of /dev/vdb incremented to 4"
tq_check "resume1: image 2 was written" tq_image_written resume1
for disk in root swap; do
    mv "$TQ_WORK/$disk.img" "$TQ_WORK/$disk.img.2"
    cp --sparse=always "$TQ_WORK/$disk.img.1" "$TQ_WORK/$disk.img"
done

tq_boot_checked replay inspect "$TQ_FWCFG_KEY" "rd.thaw.key=$src"
tq_check "replay: the copy of image 1 refused as 2 hibernations old" \
    tq_has replay "is 2 hibernations old: the TPM2 counter is at 4, its ticket says 2"
tq_check "replay: no handoff" tq_lacks replay "thaw: resuming from"
tq_check "replay: the image was dropped, the boot went on" tq_has replay "THAW-TEST: fresh boot step=inspect"
for disk in root swap; do
    mv "$TQ_WORK/$disk.img.2" "$TQ_WORK/$disk.img"
done

tq_sleep_boot_checked resume2 resume "$TQ_FWCFG_KEY" "rd.thaw.key=$src"
tq_check "resume2: image 2's counter value matched" tq_has resume2 "TPM2 counter 4 as its ticket says"
tq_check "resume2: thaw handed image 2 to the kernel" tq_has resume2 "thaw: resuming from /dev/mapper/thaw-swap"
tq_check "resume2: the fresh init never ran" tq_lacks resume2 "THAW-TEST: fresh boot"
tq_check "resume2: the second thaw hibernate returned 0" tq_has resume2 "THAW-TEST: rehibernate exit 0"
tq_check "resume2: workload: nothing lost" tq_has resume2 "workload: nothing lost (${TQ_WORKLOAD_MIB} MiB verified"
tq_check "tpm-lock: the resumed system cannot unseal the key again (lock PCR 15 moved)" \
    tq_has resume2 "THAW-TEST: aftercheck: thaw: cannot get the key from tpm2 (PCR mismatch: PCRs 7+15 (sha256)"
tq_check "tpm-lock: thaw enroll --check failed there" tq_has resume2 "THAW-TEST: aftercheck exit 1"
tq_log "unlock: $(grep -o 'with tpm2 (key [0-9]* ms, keyslot and mapping [0-9]* ms)' "$TQ_WORK/resume1.log" | head -n1)"
tq_log "$(grep -o 'peak memory of thaw resume before the handoff: .*' "$TQ_WORK/resume1.log" | head -n1)"
tq_finish

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# tpm-migrated: the VM resumes on another host and its vTPM followed it: the TPM state directory is
# copied to a new one and a new swtpm process serves it to the resume boot, which unseals the key
# and resumes with nothing lost.
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"

tq_prepare
tq_workdir tpm-migrated
TQ_TPM_STATE=$TQ_WORK/tpm-host-a
TQ_FWCFG_KEY=$TQ_WORK/wrong-key
src=tpm2

tq_hibernate_boot hibernate "thaw.setupkey=$src" "rd.thaw.key=$src"
cp -a "$TQ_WORK/tpm-host-a" "$TQ_WORK/tpm-host-b"
TQ_TPM_STATE=$TQ_WORK/tpm-host-b
tq_resume_boot resume "rd.thaw.key=$src"
tq_check "resume: unlocked with the migrated TPM's key" tq_has resume "/dev/mapper/thaw-swap with $src (key"
tq_finish

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# systemd-tpm2: a device enrolled by systemd 252's systemd-cryptenroll (in the guest, PCR 7 of its
# TPM) resumes through thaw with rd.thaw.key=systemd-tpm2 alone: fw_cfg holds a wrong key at the
# resume, so systemd's TPM2 keyslot is what unlocked it, and nothing is lost.
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"

command -v systemd-cryptenroll > /dev/null || tq_skip "systemd-cryptenroll missing (run make deps)"
tq_prepare
tq_workdir systemd-tpm2
TQ_TPM_STATE=$TQ_WORK/tpm
# systemd-cryptenroll and what it dlopen()s for the TPM, only in this run's root.
libdir=/usr/lib/x86_64-linux-gnu
tq_root_add "$(command -v systemd-cryptenroll)" "$libdir"/libtss2-{esys,rc,mu}.so.0 "$(tq_tcti_device)"

tq_hibernate_boot hibernate thaw.sdenroll=7
tq_check "hibernate: systemd-cryptenroll added a systemd-tpm2 keyslot" tq_has hibernate "THAW-TEST: systemd-tpm2 enrolled"
tq_check "hibernate: the changed header re-pinned (thaw enroll --repin)" tq_has hibernate "THAW-TEST: repin: rd.thaw.header=sha256:"
TQ_FWCFG_KEY=$TQ_WORK/wrong-key
tq_resume_boot resume rd.thaw.key=systemd-tpm2
tq_check "resume: unlocked with systemd-tpm2" tq_has resume "/dev/mapper/thaw-swap with systemd-tpm2"
tq_finish

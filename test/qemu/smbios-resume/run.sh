#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# smbios-resume: the key reaches the guest only as a systemd credential in an SMBIOS type 11
# entry (fw_cfg holds a wrong key); thaw setup enrolls smbios:thaw-key, the boot after the
# hibernation unlocks with it and resumes with nothing lost.
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"

tq_prepare
tq_workdir smbios-resume
# The binary form: a random key is not text. QEMU takes the OEM string as is (base64 has no ',').
cred="io.systemd.credential.binary:thaw-key=$(base64 -w0 < "$TQ_WORK/key")"
TQ_QEMU_EXTRA=(-smbios "type=11,value=io.systemd.credential:unrelated=x" -smbios "type=11,value=$cred")
TQ_FWCFG_KEY=$TQ_WORK/wrong-key
src=smbios:thaw-key

tq_hibernate_boot hibernate "thaw.setupkey=$src" "rd.thaw.key=$src"
tq_check "hibernate: setup enrolled $src" tq_lacks hibernate "cannot read the key from"
tq_resume_boot resume "rd.thaw.key=$src"
tq_check "resume: unlocked with $src" tq_has resume "with $src"
tq_finish

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# resume-basic: thaw setup in the guest, a workload holding 256 MiB, thaw hibernate, power-off;
# a new QEMU process with the key in fw_cfg resumes, and the workload finds nothing lost.
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"

tq_prepare
tq_workdir resume-basic
tq_root_add "$(command -v dmsetup)"
# Its guest.sh: mappings of the container thaw hibernate must refuse, before the workload.
tq_hibernate_boot hibernate
# The live-table check (thaw(8)): a mapping of the container in the clear is refused, the system runs on.
tq_check "hibernate: the live table of thaw-swap was shown" tq_has hibernate "THAW-TEST: live table thaw-swap: 0 "
tq_check "badmap: thaw hibernate refuses a cipher_null mapping of the container" tq_has hibernate \
    "thaw: refusing to hibernate to /dev/mapper/thaw-null: live table cipher is cipher_null-ecb, the header says aes-xts-plain64"
tq_check "badmap: with exit status 1" tq_has hibernate "THAW-TEST: badmap thaw-null: exit 1"
tq_check "badmap: thaw hibernate refuses a linear mapping" tq_has hibernate \
    "thaw: refusing to hibernate to /dev/mapper/thaw-lin: live table is a linear target, not crypt"
tq_check "badmap: with exit status 1" tq_has hibernate "THAW-TEST: badmap thaw-lin: exit 1"
tq_check "badmap: thaw hibernate refuses a header the next boot's pin would refuse" tq_has hibernate \
    "differs from the pinned sha256:0000000000000000 (rd.thaw.header=): not the header thaw set up; the next boot would not resume it"
tq_check "badmap: with exit status 1" tq_has hibernate "THAW-TEST: badmap pin: exit 1"
tq_check "badmap: nothing was frozen, the system kept running" tq_has hibernate "THAW-TEST: badmap: still running"
tq_log "$(grep -F 'THAW-TEST: live table' "$TQ_WORK/hibernate.log" | sed 's/.*THAW-TEST: //' | tr -d '\r')"
tq_resume_boot resume
tq_finish

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# resume-basic: thaw setup in the guest, a workload holding 256 MiB, thaw hibernate, power-off;
# a new QEMU process with the key in fw_cfg resumes, and the workload finds nothing lost.
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"

tq_prepare
tq_workdir resume-basic
tq_hibernate_boot hibernate
tq_resume_boot resume
tq_finish

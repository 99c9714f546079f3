#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# noresume: an image is on disk and the kernel command line says noresume: the boot goes on, the
# image is not touched (its header still says S1SUSPEND, and a later boot still resumes it).
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"

tq_prepare
tq_workdir noresume
tq_hibernate_boot hibernate

tq_boot_checked noresume inspect "$TQ_WORK/key" noresume
tq_check "noresume: thaw says noresume was given" tq_has noresume "thaw: noresume given"
tq_check "noresume: no handoff" tq_lacks noresume "thaw: resuming from"
tq_check "noresume: the kernel did not look at the image" \
    tq_lacks noresume "PM: hibernation: resume from hibernation"
tq_check "noresume: the boot went on to the real init" tq_has noresume "THAW-TEST: fresh boot step=inspect"
tq_check "noresume: the mapping is not open" tq_has noresume "THAW-TEST: mapping absent"
tq_check "noresume: the image is untouched (S1SUSPEND)" \
    tq_has noresume "THAW-TEST: image signature: S1SUSPEND"

tq_resume_boot resume
tq_finish

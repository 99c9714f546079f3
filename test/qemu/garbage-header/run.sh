#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# garbage-header: random bytes over a real image's header page (swsusp_info and the x86_64 restore
# record), its swap header still saying S1SUSPEND: thaw must refuse before the handoff, never
# crash or hang, keep the image, and let the boot go on.
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=test/qemu/crafted.sh
. "$(dirname "$0")/../crafted.sh"

tq_prepare
tq_workdir garbage-header
tq_crafted_image garbage
tq_boot_checked garbage inspect "$TQ_WORK/key"
tq_refused garbage "the image is damaged: the image header is not an x86_64 restore record"
tq_check "garbage: thaw status names the failed check" tq_has garbage "THAW-TEST: status: Failed check: malformed"
tq_finish

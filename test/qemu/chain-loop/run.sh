#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# chain-loop: a real image whose second swap-map page points back at the first. The kernel follows
# next_swap with no loop check; thaw must find the loop, refuse before the handoff, never hang,
# keep the image and let the boot go on.
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=test/qemu/crafted.sh
. "$(dirname "$0")/../crafted.sh"

tq_prepare
tq_workdir chain-loop
tq_crafted_image loop
tq_boot_checked loop inspect "$TQ_WORK/key"
tq_refused loop "the image is damaged: the swap-map chain loops back to block"
tq_check "loop: thaw status names the failed check" tq_has loop "THAW-TEST: status: Failed check: malformed"
tq_finish

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cold-boot: thaw setup, power-off, boot again: no image, so no handoff; the boot goes on, the
# mapping is left open and the encrypted swap really takes pages (the workload is larger than RAM).
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"

tq_prepare
tq_workdir cold-boot
tq_boot_checked setup setup "$TQ_WORK/key"
tq_check "setup: thaw setup succeeded" tq_has setup "THAW-TEST: setup exit 0"

big=$((TQ_MEM - 96))
tq_boot_checked cold cold "$TQ_WORK/key" "thaw.mib=$big"
tq_check "cold: thaw found no image" tq_has cold "thaw: no hibernation image on /dev/mapper/thaw-swap"
tq_check "cold: no handoff" tq_lacks cold "thaw: resuming from"
tq_check "cold: the kernel did not try to resume" tq_lacks cold "PM: hibernation: resume from hibernation"
tq_check "cold: the boot went on to the real init" tq_has cold "THAW-TEST: fresh boot step=cold"
tq_check "cold: /dev/mapper/thaw-swap is open" tq_has cold "THAW-TEST: mapping present"
tq_check "cold: swapon on the mapping worked" tq_has cold "THAW-TEST: swapon exit 0"
used=$(grep -o 'THAW-TEST: swap used [0-9]*' "$TQ_WORK/cold.log" | grep -o '[0-9]*$')
tq_log "cold: ${used:-?} KiB in swap while the workload held $big MiB"
tq_check "cold: the swap took pages" test "${used:-0}" -gt 0
tq_check "cold: workload: nothing lost" tq_has cold "workload: nothing lost ($big MiB verified"
tq_finish

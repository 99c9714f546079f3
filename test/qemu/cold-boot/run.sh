#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cold-boot: thaw setup, power-off, boot again: no image, so no handoff; the boot goes on, the
# mapping is left open and the encrypted swap really takes pages (the workload is larger than RAM).
# thaw doctor runs in that boot, and once more with lockdown=integrity.
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
# thaw doctor on Debian's 6.1 guest kernel: config from /boot, hibernation on, dm-crypt a module,
# the 6.9-only options skipped, nothing required missing.
tq_check "cold: doctor read the kernel config" \
    tq_has cold "doctor: ok       kernel config: $TQ_KVER, from /boot/config-$TQ_KVER"
tq_check "cold: doctor: hibernation available" tq_has cold "doctor: ok       hibernation: available"
tq_check "cold: doctor: CONFIG_HIBERNATION=y" tq_has cold "doctor: ok       CONFIG_HIBERNATION: y"
tq_check "cold: doctor: dm_crypt ok (module)" tq_has cold "doctor: ok       CONFIG_DM_CRYPT: m"
tq_check "cold: doctor: LZ4 hibernation skipped before 6.9" \
    tq_has cold "doctor: skip     CONFIG_HIBERNATION_COMP_LZ4: only from 6.9 on"
tq_check "cold: doctor: no lockdown" tq_has cold "doctor: ok       lockdown: [none] integrity confidentiality"
tq_check "cold: doctor: /dev/mapper/control ok" tq_has cold "doctor: ok       device-mapper:"
tq_check "cold: doctor: fw_cfg ok" tq_has cold "doctor: ok       fw_cfg:"
tq_check "cold: doctor: swap ok" tq_has cold "doctor: ok       swap: 1 active swap area"
tq_check "cold: doctor: nothing required missing" tq_has cold "doctor: thaw doctor: nothing required is missing"
tq_check "cold: doctor exit 0" tq_has cold "THAW-TEST: doctor exit 0"

# The same kernel locked down (what Secure Boot does to distribution kernels): no hibernation.
tq_boot_checked lockdown doctor "$TQ_WORK/key" lockdown=integrity
tq_check "lockdown: doctor: hibernation disabled by lockdown" \
    tq_has lockdown "doctor: missing  hibernation: disabled by kernel lockdown (integrity)"
tq_check "lockdown: doctor: lockdown missing" \
    tq_has lockdown "doctor: missing  lockdown: none [integrity] confidentiality"
tq_check "lockdown: doctor exit 1" tq_has lockdown "THAW-TEST: doctor exit 1"
tq_finish

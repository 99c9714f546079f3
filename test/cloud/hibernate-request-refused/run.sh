#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# hibernate-request-refused: a cloud asks a VM to hibernate that thaw must refuse. The image of
# provision-first-boot sets itself up at its first boot (thaw provision: thaw's swap at priority
# 32767), hibernates and is resumed, and powers off (lib.sh's tc_state resumed). At the next
# boot, a swap file is turned on at that same priority, as a swap the image left behind would be
# (README: "Only thaw's swap takes the image"). With the workload running the host
# presses the sleep button: thaw-hibernate-request.service's thaw hibernate refuses and says why,
# on the console and in the journal, the unit fails and its ExecStopPost says the VM keeps running;
# no image is written, the VM does not power off by the request, and the workload is intact in
# the same boot.
set -u
# shellcheck source=test/cloud/lib.sh
. "$(dirname "$0")/../lib.sh"

tc_prepare
tq_workdir hibernate-request-refused
export TQ_THAW_ARGS=""
tc_state resumed
tc_report_checks first
tq_check "first: thaw provision planned the first setup" tq_has first "first setup: format /dev/vdb as LUKS2 swap"
tq_check "first: thaw provision rebuilt the initramfs" tq_has first "rebuilt the running kernel's initramfs"
tc_initramfs refuse
tc_monitor

reason="/swap.rival is active swap of priority 32767, not below thaw's swap (32767): memory pushed out \
before the image is made would go there, and systemctl hibernate would write the image there; swapoff it, \
or give thaw's swap the highest priority (pri= in /etc/fstab, swapon --priority)"
keeps="the cloud asked this VM to hibernate and thaw hibernate did not"
# shellcheck disable=SC2317 # called through tq_check; the boot got to its end, no image
no_image() { tq_has refuse "THAW-TEST: powering off" && ! tq_image_written refuse; }

tc_press_when refuse "THAW-TEST: workload ready"
tq_boot_checked refuse refuse "$TQ_WORK/key"
kill "$TC_PRESSER" 2> /dev/null
tc_report_checks refuse
tq_check "refuse: thaw provision planned nothing" tq_has refuse "nothing to change: /dev/vdb gives "
tq_check "refuse: the thaw swap is on" tq_has refuse "THAW-TEST: swap on: /dev/dm-"
tq_check "refuse: the rival swap file is on at priority 32767" \
    grep -qE 'THAW-TEST: swap on: /swap\.rival file [0-9]+ [0-9]+ 32767' "$TQ_WORK/refuse.log"
tq_check "refuse: workload holds ${TQ_WORKLOAD_MIB} MiB" tq_has refuse "THAW-TEST: workload ready"
tq_check "refuse: thaw hibernate's reason on the console" tc_console refuse "$reason"
tq_check "refuse: thaw hibernate did not hibernate, on the console" tc_console refuse "not hibernating: the next boot could not resume"
tq_check "refuse: the unit's ExecStopPost on the console: the VM keeps running" tc_console refuse "$keeps"
tq_check "refuse: thaw hibernate's reason in the journal" tq_has refuse "THAW-TEST: journal: thaw: $reason"
tq_check "refuse: the VM keeps running, in the journal" tq_has refuse "THAW-TEST: journal: thaw: $keeps"
tq_check "refuse: the request unit failed (thaw hibernate's exit status 1)" \
    tq_has refuse "THAW-TEST: hibernate request: result=exit-code status=1"
tq_check "refuse: thaw hibernate did not start a hibernation" \
    tc_lacks_after refuse "THAW-TEST: hibernate request: result=" "thaw: hibernating to"
tq_check "refuse: no image was written" no_image
tq_check "refuse: the same boot after the request" tq_has refuse "THAW-TEST: same boot after the request (refused)"
tq_check "refuse: workload: nothing lost" tq_has refuse "workload: nothing lost (${TQ_WORKLOAD_MIB} MiB verified"
tq_check "refuse: the step powered the VM off afterwards" tq_has refuse "THAW-TEST: powering off"
tq_log "on the console: $(grep -avF 'THAW-TEST: ' "$TQ_WORK/refuse.log" | grep -ao -m1 'thaw\[[0-9]*\]: thaw: /swap\.rival .*')"
tq_finish

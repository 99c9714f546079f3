#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# provision-resize: the same image stopped and started with more memory: the swap file grows, and
# the next hibernation and resume work (issue 18). The swap-file variant of the cloud image
# (test/cloud/swapfile.sh: the cloud root inside a LUKS2 container, provision.conf
# swapfile=/swapfile, key=fwcfg:opt/thaw/key, unlock=fwcfg:opt/test/rootkey, size=ram).
#   first    TQ_MEM MiB. The harness's systemd initramfs stands for the one the image was built
#            with: thaw's arguments unlock the root with the installer key (resume_offset=1, any
#            page but 0, only keeps thaw from closing the root's mapping: no swap there yet).
#            thaw provision's first setup makes /swapfile (size=ram), enrolls the thaw key in the
#            root's container, writes thaw.conf and rebuilds the initramfs; report, power off.
#   bigger   TQ_MEM + 256 MiB, the initramfs thaw provision built and no thaw arguments: thaw
#            unlocks the root with the enrolled key (thaw.conf); thaw provision plans "grow the
#            swap file", makes it again at the new size, rewrites offset= and rebuilds the
#            initramfs; the sleep button hibernates into the grown file.
#   resume   the same memory, the initramfs the grow rebuilt: the image at the new offset is
#            resumed, nothing lost.
#   cut      256 MiB more again: thaw provision grows the swap file once more, and the power is
#            cut (QEMU killed) as soon as it says so, before its dracut --force.
#   recover  the same memory, the initramfs of the boot before: thaw provision finishes what the
#            cut stopped; the sleep button hibernates into the swap file where thaw.conf says.
#   resume2  it is resumed, nothing lost.
set -u
# shellcheck source=test/cloud/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=test/cloud/swapfile.sh
. "$TC_DIR/swapfile.sh"

tc_prepare
first_initrd=$TQ_INITRD
tcs_build_cryptroot
tq_workdir provision-resize
tc_monitor
tcs_export_init
TQ_QEMU_EXTRA+=(-fw_cfg "name=opt/test/rootkey,file=$TCS_ROOTKEY")
export TQ_ROOT_ARGS="root=/dev/mapper/luks-$TCS_UUID"
big=$((TQ_MEM + 256))
mapper=/dev/mapper/luks-$TCS_UUID

# sleep_boot NAME MIB: boot NAME with MIB MiB of memory, no thaw arguments (the initramfs thaw
# provision built), the workload, and the sleep button pressed once it is ready; then what thaw
# provision did.
sleep_boot() {
    tc_press_when "$1" "THAW-TEST: workload ready"
    TQ_MEM=$2 TQ_THAW_ARGS="" tq_sleep_boot_checked "$1" sleep "$TQ_WORK/key"
    kill "$TC_PRESSER" 2> /dev/null
    tc_report_checks "$1"
}

TQ_INITRD=$first_initrd TQ_THAW_ARGS="rd.thaw.device=UUID=$TCS_UUID rd.thaw.key=fwcfg:opt/test/rootkey rd.thaw.name=luks-$TCS_UUID resume_offset=1" \
    tq_boot_checked first report "$TQ_WORK/key"
tc_report_checks first
tq_check "first: the root came up from the container thaw opened" tq_has first "THAW-TEST: root: $mapper / ext4 rw"
tq_check "first: thaw provision planned the first setup of the swap file" \
    grep -qE "first setup: make /swapfile with [0-9]+ MiB, enroll key=fwcfg:opt/thaw/key in the root's LUKS2 container" \
    "$TQ_WORK/first.log"
tq_check "first: thaw provision rebuilt the initramfs" tq_has first "rebuilt the running kernel's initramfs"
tq_check "first: the swap file is on at thaw's priority" grep -qE "THAW-TEST: proc-swaps: /swapfile file [0-9]+ [0-9]+ 32767" \
    "$TQ_WORK/first.log"
tq_check "first: no /swapfile.thaw-new left" tq_has first "THAW-TEST: swapfile.thaw-new: absent"
off1=$(tcs_conf_offset first)
mib1=$(tcs_swapfile_mib first)
tq_check "first: thaw.conf names the root's container and an offset" \
    test -n "$off1" -a "${off1:-0}" -gt 0 -a -n "$(grep -F "THAW-TEST: thaw.conf: device=UUID=$TCS_UUID" "$TQ_WORK/first.log")"
tq_log "first: /swapfile ${mib1:-?} MiB at offset ${off1:-?}; $(grep -ao -m1 'THAW-TEST: memtotal: .*' "$TQ_WORK/first.log" | sed 's/.*: //')"
tcs_initramfs first first
tq_check "first: the initramfs it built carries thaw.conf with offset=$off1" \
    grep -qx "offset=$off1" <(tcs_initramfs_file "$TQ_INITRD" etc/thaw/thaw.conf)
tq_log "first: the initramfs's stored arguments: $(tcs_initramfs_file "$TQ_INITRD" etc/cmdline.d/90thaw.conf | tr '\n' ' ')"

sleep_boot bigger "$big"
tq_check "bigger: thaw unlocked the root with the enrolled key, no image yet" \
    tq_has bigger "thaw: no hibernation image on $mapper: boot continues"
tq_check "bigger: the root came up from that container" tq_has bigger "THAW-TEST: root: $mapper / ext4 rw"
tq_check "bigger: thaw provision planned to grow the swap file" \
    grep -qE "grow the swap file: /swapfile has $mib1 MiB, the size rule asks for [0-9]+ MiB: make it again at that size" \
    "$TQ_WORK/bigger.log"
want=$(sed -n 's/.*grow the swap file: .* asks for \([0-9]*\) MiB.*/\1/p' "$TQ_WORK/bigger.log" | head -n1)
off2=$(tcs_conf_offset bigger)
mib2=$(tcs_swapfile_mib bigger)
tq_check "bigger: it grew the swap file and rewrote offset= (${want:-?} MiB, offset ${off2:-?})" \
    tq_has bigger "grew /swapfile to $want MiB; /etc/thaw/thaw.conf says offset=$off2"
tq_check "bigger: the swap file is $want MiB in the guest, more than the first boot's $mib1 MiB" \
    test "${mib2:-0}" -eq "${want:-x}" -a "${mib2:-0}" -gt "${mib1:-0}"
tq_check "bigger: thaw.conf's offset changed ($off1 to $off2)" test -n "$off2" -a "$off2" != "$off1"
tq_check "bigger: thaw provision rebuilt the initramfs" tq_has bigger "rebuilt the running kernel's initramfs"
# /proc/swaps: its size in KiB (the header page not counted), its priority.
swaps2=$(sed -n 's/.*THAW-TEST: proc-swaps: \/swapfile file \([0-9]*\) [0-9]* \(-\{0,1\}[0-9]*\).*/\1 \2/p' "$TQ_WORK/bigger.log" | head -n1)
tq_check "bigger: the grown swap file is on at thaw's priority (/proc/swaps: ${swaps2:-none})" \
    test "${swaps2#* }" = 32767 -a "${swaps2%% *}" -ge $(((${want:-0} - 1) * 1024))
tq_check "bigger: no /swapfile.thaw-new left" tq_has bigger "THAW-TEST: swapfile.thaw-new: absent"
tq_check "bigger: workload holds ${TQ_WORKLOAD_MIB} MiB" tq_has bigger "THAW-TEST: workload ready"
tq_check "bigger: the image was written" tq_image_written bigger
tq_check "bigger: powered off inside the hibernation (the request did not return)" \
    tc_lacks_after bigger "thaw: hibernating to" "THAW-TEST: hibernate request:"
tq_log "bigger: /swapfile ${mib2:-?} MiB at offset ${off2:-?}; $(grep -ao -m1 'THAW-TEST: memtotal: .*' "$TQ_WORK/bigger.log" | sed 's/.*: //')"
tcs_initramfs bigger bigger
tq_check "bigger: the initramfs it rebuilt carries thaw.conf with offset=$off2" \
    grep -qx "offset=$off2" <(tcs_initramfs_file "$TQ_INITRD" etc/thaw/thaw.conf)
tq_log "bigger: the initramfs's stored arguments: $(tcs_initramfs_file "$TQ_INITRD" etc/cmdline.d/90thaw.conf | tr '\n' ' ')"

TQ_MEM=$big TQ_THAW_ARGS="" tq_sleep_boot_checked resume resume "$TQ_WORK/key"
tq_check "resume: thaw verified the image's ticket before the handoff" \
    grep -qE "thaw: image ticket verified in [0-9]+ ms: image of $TQ_DATE_RE, " "$TQ_WORK/resume.log"
tcs_resumed_checks resume "$off2"

# A power cut in the next grow: started with 256 MiB more again, the VM loses its power as soon as
# thaw provision says it grew the swap file (QEMU killed), before its dracut --force and sync.
# Started again with that memory, from the initramfs of the boot before (which names the old
# offset), thaw provision finishes what was cut short: the grow (the rename never reached the
# disk), the offset (thaw.conf did not), or the initramfs (ARGS_STALE_PATH); then the swap file
# has the new size where thaw.conf and the rebuilt initramfs say, and a hibernation into it is
# resumed, nothing lost.
more=$((big + 256))
tcs_cut_when cut "grew /swapfile to"
rc=0
TQ_MEM=$more TQ_THAW_ARGS="" tq_boot cut report "$TQ_WORK/key" || rc=$?
# The cutter stops with the boot, if the guest never said TEXT.
kill "$TCS_CUTTER" 2> /dev/null
wait "$TCS_CUTTER" 2> /dev/null
TQ_TIMES+=("cut=${TQ_BOOT_SECONDS}s")
tq_check "cut: thaw provision planned to grow the swap file again" \
    grep -qE "grow the swap file: /swapfile has $mib2 MiB, the size rule asks for [0-9]+ MiB: make it again at that size" \
    "$TQ_WORK/cut.log"
tq_check "cut: the power was cut after the grow, before the initramfs was rebuilt (QEMU status $rc)" \
    test -e "$TQ_WORK/cut.cut" -a "$rc" -ne 0
# shellcheck disable=SC2317 # called through tq_check
cut_short() { tq_lacks cut "rebuilt the running kernel's initramfs" && tq_lacks cut "THAW-TEST: fresh boot"; }
tq_check "cut: the boot got no further (no rebuilt initramfs, no report)" cut_short
want3=$(sed -n 's/.*grow the swap file: .* asks for \([0-9]*\) MiB.*/\1/p' "$TQ_WORK/cut.log" | head -n1)

sleep_boot recover "$more"
tq_check "recover: thaw unlocked the root from the old initramfs, no image" \
    tq_has recover "thaw: no hibernation image on $mapper: boot continues"
plan3=$(grep -aoE "thaw\[[0-9]+\]: (grow the swap file|correct thaw.conf's offset|nothing to change|refused[^:]*): .*" \
    "$TQ_WORK/recover.log" | head -n1 | sed 's/^thaw\[[0-9]*\]: //')
tq_log "recover: thaw provision's plan: ${plan3:-none}"
tq_check "recover: thaw provision's plan finishes what the cut stopped (the offset or the initramfs: the rename was on disk before the grow said so)" \
    grep -qE "^(correct thaw.conf's offset: |nothing to change: /swapfile has $want3 MiB, .*; but the initramfs does not carry /etc/thaw/thaw.conf yet)" \
    <<< "$plan3"
off3=$(tcs_conf_offset recover)
mib3=$(tcs_swapfile_mib recover)
tq_check "recover: the swap file is ${want3:-?} MiB" test "${mib3:-0}" -eq "${want3:-x}"
tq_check "recover: thaw.conf's offset moved (${off2:-?} to ${off3:-?})" test -n "$off3" -a "$off3" != "$off2"
tq_check "recover: thaw provision rebuilt the initramfs" tq_has recover "rebuilt the running kernel's initramfs"
tq_check "recover: no /swapfile.thaw-new left" tq_has recover "THAW-TEST: swapfile.thaw-new: absent"
tq_check "recover: the swap file is on at thaw's priority" \
    grep -qE "THAW-TEST: proc-swaps: /swapfile file [0-9]+ [0-9]+ 32767" "$TQ_WORK/recover.log"
tq_check "recover: the image was written" tq_image_written recover
tq_check "recover: powered off inside the hibernation (the request did not return)" \
    tc_lacks_after recover "thaw: hibernating to" "THAW-TEST: hibernate request:"
tcs_initramfs recover recover
tq_check "recover: the initramfs it rebuilt carries thaw.conf with offset=$off3" \
    grep -qx "offset=$off3" <(tcs_initramfs_file "$TQ_INITRD" etc/thaw/thaw.conf)

TQ_MEM=$more TQ_THAW_ARGS="" tq_sleep_boot_checked resume2 resume "$TQ_WORK/key"
tq_check "resume2: thaw verified the image's ticket before the handoff" \
    grep -qE "thaw: image ticket verified in [0-9]+ ms: image of $TQ_DATE_RE, " "$TQ_WORK/resume2.log"
tcs_resumed_checks resume2 "$off3"
tq_finish

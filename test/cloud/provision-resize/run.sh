#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# provision-resize: the same image stopped and started with more memory: the swap file grows, with
# a power cut in the middle, and the next hibernation and resume work; started with that image on
# the swap file and different memory again, nothing is resized and the image is kept (issue 18,
# README "Fresh images only"). The swap-file variant of the cloud image (test/cloud/swapfile.sh:
# the cloud root inside a LUKS2 container, provision.conf swapfile=/swapfile, key=tpm2,
# unlock=fwcfg:opt/test/rootkey, size=ram), on an instance with a TPM (swtpm, its state kept
# from boot to boot as the instance's).
#   first    TQ_MEM MiB. The harness's systemd initramfs stands for the one the image was built
#            with: thaw's arguments unlock the root with the installer key (resume_offset=1, any
#            page but 0, only keeps thaw from closing the root's mapping: no swap there yet).
#            thaw provision's first setup makes /swapfile (size=ram), seals a fresh key to the
#            TPM and enrolls it in the root's container, writes thaw.conf and rebuilds the
#            initramfs; report, power off.
#   cut      TQ_MEM + 256 MiB, the initramfs thaw provision built and no thaw arguments: thaw
#            unseals the key with the TPM and unlocks the root; thaw provision plans "grow the
#            swap file" and makes it again at the new size; the power is cut (QEMU killed) as soon
#            as it says so, before its dracut --force.
#   recover  the same memory, the same initramfs (the cut one never replaced it): thaw provision
#            finishes what the cut stopped; the sleep button hibernates into the grown swap file
#            where thaw.conf says.
#   other    256 MiB more again, the initramfs recover rebuilt, the image on the swap file: thaw
#            powers the VM off before anything is mounted (rd.thaw.mismatch=poweroff, the
#            default); thaw provision never runs, nothing is resized, the root's container is
#            not written and the ticket stays fresh.
#   resume   the memory of the hibernation: the image at the grown file's offset is resumed,
#            nothing lost.
# (A grow that is not cut, dracut in the same boot, is t-provision's on a fixture root; here it is
# the cut boot's grow and the recover boot's rebuild.)
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
TQ_TPM_STATE=$TQ_WORK/tpm
export TQ_ROOT_ARGS="root=/dev/mapper/luks-$TCS_UUID"
big=$((TQ_MEM + 256))
other=$((big + 256))
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
    grep -qE "first setup: make /swapfile with [0-9]+ MiB, enroll key=tpm2 in the root's LUKS2 container" \
    "$TQ_WORK/first.log"
tq_check "first: thaw provision rebuilt the initramfs" tq_has first "rebuilt the running kernel's initramfs"
tq_check "first: the swap file is on at thaw's priority" grep -qE "THAW-TEST: proc-swaps: /swapfile file [0-9]+ [0-9]+ 32767" \
    "$TQ_WORK/first.log"
tq_check "first: no /swapfile.thaw-new left" tq_has first "THAW-TEST: swapfile.thaw-new: absent"
off1=$(tcs_conf_offset first)
mib1=$(tcs_swapfile_mib first)
tq_check "first: thaw.conf names the root's container and an offset" \
    test -n "$off1" -a "${off1:-0}" -gt 0 -a -n "$(grep -F "THAW-TEST: thaw.conf: device=UUID=$TCS_UUID" "$TQ_WORK/first.log")"
tq_check "first: thaw.conf's key chain is the TPM's key" tq_has first "THAW-TEST: thaw.conf: key=tpm2"
tq_log "first: /swapfile ${mib1:-?} MiB at offset ${off1:-?}; $(grep -ao -m1 'THAW-TEST: memtotal: .*' "$TQ_WORK/first.log" | sed 's/.*: //')"
tcs_initramfs first first
tq_check "first: the initramfs it built carries thaw.conf with offset=$off1" \
    grep -qx "offset=$off1" <(tcs_initramfs_file "$TQ_INITRD" etc/thaw/thaw.conf)
tq_log "first: the initramfs's stored arguments: $(tcs_initramfs_file "$TQ_INITRD" etc/cmdline.d/90thaw.conf | tr '\n' ' ')"

# The cut: thaw provision grows the swap file for 256 MiB more memory and the VM loses its power
# as soon as it says so (QEMU killed), before its dracut --force and sync. Started again with that
# memory, from the initramfs of the first boot (which names the old offset), thaw provision
# finishes what was cut short: the offset (thaw.conf did not reach the disk) or the initramfs
# (ARGS_STALE_PATH); the grow itself is not redone, its rename was made durable before it said so.
tcs_cut_when cut "grew /swapfile to"
rc=0
TQ_MEM=$big TQ_THAW_ARGS="" tq_boot cut report "$TQ_WORK/key" || rc=$?
# The cutter stops with the boot, if the guest never said TEXT.
kill "$TCS_CUTTER" 2> /dev/null
wait "$TCS_CUTTER" 2> /dev/null
TQ_TIMES+=("cut=${TQ_BOOT_SECONDS}s")
tq_check "cut: thaw unsealed the key with the TPM and unlocked the root, no image yet" \
    grep -qE "thaw: no hibernation image on $mapper: boot continues" "$TQ_WORK/cut.log"
tq_check "cut: the key came from the TPM (tpm2)" grep -qE "$mapper with tpm2" "$TQ_WORK/cut.log"
tq_check "cut: thaw provision planned to grow the swap file" \
    grep -qE "grow the swap file: /swapfile has $mib1 MiB, the size rule asks for [0-9]+ MiB: make it again at that size" \
    "$TQ_WORK/cut.log"
want=$(sed -n 's/.*grow the swap file: .* asks for \([0-9]*\) MiB.*/\1/p' "$TQ_WORK/cut.log" | head -n1)
tq_check "cut: it grew the swap file (${want:-?} MiB), more than the first boot's $mib1 MiB" \
    test -n "$(grep -F "grew /swapfile to $want MiB; /etc/thaw/thaw.conf says offset=" "$TQ_WORK/cut.log")" \
    -a "${want:-0}" -gt "${mib1:-0}"
tq_check "cut: the power was cut after the grow, before the initramfs was rebuilt (QEMU status $rc)" \
    test -e "$TQ_WORK/cut.cut" -a "$rc" -ne 0
# shellcheck disable=SC2317 # called through tq_check
unmounted() { tq_has "$1" "reboot: Power down" && ! grep -qaE 'EXT4-fs \([^)]*\): mounted' "$TQ_WORK/$1.log"; }
# shellcheck disable=SC2317 # called through tq_check
cut_short() { tq_lacks cut "rebuilt the running kernel's initramfs" && tq_lacks cut "THAW-TEST: fresh boot"; }
tq_check "cut: the boot got no further (no rebuilt initramfs, no report)" cut_short

sleep_boot recover "$big"
tq_check "recover: thaw unlocked the root from the first boot's initramfs, no image" \
    tq_has recover "thaw: no hibernation image on $mapper: boot continues"
tq_check "recover: the key came from the TPM (tpm2)" grep -qE "$mapper with tpm2" "$TQ_WORK/recover.log"
plan=$(grep -aoE "thaw\[[0-9]+\]: (grow the swap file|correct thaw.conf's offset|nothing to change|refused[^:]*): .*" \
    "$TQ_WORK/recover.log" | head -n1 | sed 's/^thaw\[[0-9]*\]: //')
tq_log "recover: thaw provision's plan: ${plan:-none}"
tq_check "recover: thaw provision's plan finishes what the cut stopped (the offset or the initramfs: the rename was on disk before the grow said so)" \
    grep -qE "^(correct thaw.conf's offset: |nothing to change: /swapfile has $want MiB, .*; but the initramfs does not carry /etc/thaw/thaw.conf yet)" \
    <<< "$plan"
off2=$(tcs_conf_offset recover)
mib2=$(tcs_swapfile_mib recover)
tq_check "recover: the swap file is ${want:-?} MiB in the guest" test "${mib2:-0}" -eq "${want:-x}"
tq_check "recover: thaw.conf's offset moved (${off1:-?} to ${off2:-?})" test -n "$off2" -a "$off2" != "$off1"
tq_check "recover: thaw provision rebuilt the initramfs" tq_has recover "rebuilt the running kernel's initramfs"
tq_check "recover: no /swapfile.thaw-new left" tq_has recover "THAW-TEST: swapfile.thaw-new: absent"
# /proc/swaps: its size in KiB (the header page not counted), its priority.
swaps2=$(sed -n 's/.*THAW-TEST: proc-swaps: \/swapfile file \([0-9]*\) [0-9]* \(-\{0,1\}[0-9]*\).*/\1 \2/p' "$TQ_WORK/recover.log" | head -n1)
tq_check "recover: the grown swap file is on at thaw's priority (/proc/swaps: ${swaps2:-none})" \
    test "${swaps2#* }" = 32767 -a "${swaps2%% *}" -ge $(((${want:-0} - 1) * 1024))
tq_check "recover: workload holds ${TQ_WORKLOAD_MIB} MiB" tq_has recover "THAW-TEST: workload ready"
tq_check "recover: the image was written" tq_image_written recover
tq_check "recover: powered off inside the hibernation (the request did not return)" \
    tc_lacks_after recover "thaw: hibernating to" "THAW-TEST: hibernate request:"
tq_log "recover: /swapfile ${mib2:-?} MiB at offset ${off2:-?}; $(grep -ao -m1 'THAW-TEST: memtotal: .*' "$TQ_WORK/recover.log" | sed 's/.*: //')"
tcs_initramfs recover recover
tq_check "recover: the initramfs it rebuilt carries thaw.conf with offset=$off2" \
    grep -qx "offset=$off2" <(tcs_initramfs_file "$TQ_INITRD" etc/thaw/thaw.conf)

# Started with other memory and the image on the swap file: nothing may touch the root before the
# image is dealt with; under rd.thaw.mismatch=poweroff the VM powers off and the image is kept.
before=$(tq_disks_sum)
TQ_MEM=$other TQ_THAW_ARGS="" tq_boot_checked other inspect "$TQ_WORK/key"
tq_check "other: thaw refused the image: made with $big MiB, this machine has $other MiB" \
    grep -qF "thaw: not resuming the image on $mapper: image was made with $big MiB of memory, this machine has $other MiB" \
    "$TQ_WORK/other.log"
tq_check "other: powering off before anything is mounted, image kept" \
    tq_has other "; rd.thaw.mismatch=poweroff: powering off before anything is mounted, image kept: "
tq_check "other: the advice names the memory size that resumes it, and the way to drop it" \
    tq_has other "image kept: start the VM again with $big MiB to resume it, or boot with rd.thaw.mismatch=discard to drop it"
tq_check "other: the kernel powered the VM off" tq_has other "reboot: Power down"
tq_check "other: no file system was mounted" unmounted other
tq_check "other: thaw provision never ran" tc_lacks_after other "reboot: Power down" "thaw-provision"
tq_check "other: the real init never ran" tq_lacks other "THAW-TEST: fresh boot"
tq_check "other: nothing was written to the disks (sha256 before and after)" test "$before" = "$(tq_disks_sum)"
tq_check "other: the ticket in the root's container is still fresh" \
    test "$(tq_ticket_get "$TQ_WORK/root.img" state)" = fresh

TQ_MEM=$big TQ_THAW_ARGS="" tq_sleep_boot_checked resume resume "$TQ_WORK/key"
tq_check "resume: the key came from the TPM (tpm2)" grep -qE "$mapper with tpm2" "$TQ_WORK/resume.log"
tq_check "resume: thaw verified the image's ticket before the handoff" \
    grep -qE "thaw: image ticket verified in [0-9]+ ms: image of $TQ_DATE_RE, " "$TQ_WORK/resume.log"
tcs_resumed_checks resume "$off2"
tq_finish

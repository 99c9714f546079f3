#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# provision-resize-partition: a resize that cannot be done. The image of provision-first-boot sets
# itself up (size=ram for TQ_MEM MiB on /dev/vdb, a partition), hibernates and is resumed, and
# powers off (lib.sh's tc_state resumed). Started again with 512 MiB more memory, as an instance
# whose type changed while it was stopped, the size rule asks for more than the partition gives:
# thaw provision says so, and what to do, on the console and in the journal, and exits 1 (the unit
# fails); it changes nothing (the same initramfs and thaw.conf), and thaw's swap is on all the
# same. (That the VM then hibernates to it and resumes, nothing lost, was seen in two runs; it is
# not repeated here, for make test's time.)
set -u
# shellcheck source=test/cloud/lib.sh
. "$(dirname "$0")/../lib.sh"

tc_prepare
tq_workdir provision-resize-partition
export TQ_THAW_ARGS=""
big=$((TQ_MEM + 512))
refusal="a partition cannot grow here; make it larger in the image, or change size=; nothing changed"
# shellcheck disable=SC2317 # called through tq_check
same() { local a b; a=$(tc_line first "$1") b=$(tc_line bigger "$1"); test -n "$a" -a "$a" = "$b"; }

tc_state resumed
tc_report_checks first
tq_check "first: thaw provision planned the first setup" tq_has first "first setup: format /dev/vdb as LUKS2 swap"
tq_check "first: thaw provision rebuilt the initramfs" tq_has first "rebuilt the running kernel's initramfs"

tc_initramfs bigger
TQ_MEM=$big tq_boot_checked bigger report "$TQ_WORK/key"
tq_check "bigger: the initramfs thaw provision built unlocked the swap, no image" \
    tq_has bigger "thaw: no hibernation image on /dev/mapper/thaw-swap: boot continues, swap ready"
tq_check "bigger: thaw provision refused: the partition is smaller than the rule, and what to do" \
    grep -qE "refused: no room: /dev/vdb gives [0-9]+ MiB of swap, the size rule asks for [0-9]+ MiB: a partition cannot grow here" \
    "$TQ_WORK/bigger.log"
tq_check "bigger: the refusal on the console" tc_console bigger "$refusal"
tq_check "bigger: thaw-provision.service ran and failed (exit status 1)" \
    tq_has bigger "THAW-TEST: provision: result=exit-code status=1 condition=yes started=yes"
tq_check "bigger: dracut did not run" tq_has bigger "THAW-TEST: provision: dracut did not run"
tq_check "bigger: the same initramfs (sha256, size, change time)" same initramfs
tq_check "bigger: the same thaw.conf (sha256, change time)" same thaw.conf
tq_check "bigger: thaw's swap is on all the same" tq_has bigger "THAW-TEST: swap on: /dev/dm-"
tq_log "bigger: $(grep -ao -m1 'refused: no room: /dev/vdb gives .*' "$TQ_WORK/bigger.log")"
tq_finish

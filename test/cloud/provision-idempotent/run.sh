#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# provision-idempotent: the image of provision-first-boot boots again. Its first boot set it up
# (thaw provision: format, enroll, thaw.conf, dracut), hibernated, and was resumed and powered off
# (lib.sh's tc_state resumed); the next, from the initramfs the first built, changes nothing:
# thaw provision plans nothing, dracut does not run, and the initramfs and thaw.conf are the same
# files (checksum and change time, in the guest; their bytes, from the disk on the host). What
# the unchanged run cost is said: thaw provision's own time and the unit's.
set -u
# shellcheck source=test/cloud/lib.sh
. "$(dirname "$0")/../lib.sh"

tc_prepare
tq_workdir provision-idempotent
export TQ_THAW_ARGS=""

# file NAME: /boot's initramfs and /etc/thaw/thaw.conf from this run's root disk, as NAME.*.
file() {
    debugfs -R "dump /boot/initrd.img-$TQ_KVER $TQ_WORK/$1.initrd" "$TQ_WORK/root.img" > /dev/null 2>&1
    debugfs -R "dump /etc/thaw/thaw.conf $TQ_WORK/$1.thaw.conf" "$TQ_WORK/root.img" > /dev/null 2>&1
}

tc_state resumed
tc_report_checks first
tq_check "first: thaw provision planned the first setup" tq_has first "first setup: format /dev/vdb as LUKS2 swap"
tq_check "first: thaw provision rebuilt the initramfs" tq_has first "rebuilt the running kernel's initramfs"
file first

tc_initramfs again
tq_boot_checked again report "$TQ_WORK/key"
tc_report_checks again
tq_check "again: the initramfs thaw provision built unlocked the swap, no image" \
    tq_has again "thaw: no hibernation image on /dev/mapper/thaw-swap: boot continues, swap ready"
tq_check "again: thaw provision planned nothing" tq_has again "nothing to change: /dev/vdb gives "
tq_check "again: dracut did not run" tq_has again "THAW-TEST: provision: dracut did not run"
tq_check "again: the thaw swap is on" tq_has again "THAW-TEST: swap on: /dev/dm-"
a=$(tc_line first initramfs) b=$(tc_line again initramfs)
tq_check "again: the same initramfs in the guest (sha256, size, change time: $b)" test -n "$a" -a "$a" = "$b"
a=$(tc_line first thaw.conf) b=$(tc_line again thaw.conf)
tq_check "again: the same thaw.conf in the guest (sha256, change time: $b)" test -n "$a" -a "$a" = "$b"
file again
tq_check "the initramfs on the disk is byte for byte the first boot's" cmp "$TQ_WORK/first.initrd" "$TQ_WORK/again.initrd"
tq_check "thaw.conf on the disk is byte for byte the first boot's" cmp "$TQ_WORK/first.thaw.conf" "$TQ_WORK/again.thaw.conf"
tq_log "unchanged boot: $(grep -ao -m1 'thaw: nothing to change ([0-9]* ms)' "$TQ_WORK/again.log"); \
$(grep -ao -m1 'THAW-TEST: provision took [0-9]* ms' "$TQ_WORK/again.log" | sed 's/THAW-TEST: //') (the unit)"
tq_finish

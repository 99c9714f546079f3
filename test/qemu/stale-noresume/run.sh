#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# stale-noresume: an image is on disk and the kernel command line says noresume. The boot goes on as
# a real one: the root mounted read-write (the hibernated system's journal replayed), files written.
# Resuming the image after that would give back a system whose page cache and file-system state are
# older than the disk: thaw supersedes the image's ticket in that boot, and says so. The next boot
# refuses the image with the reason, drops it and goes on with the swap ready; e2fsck -fn on the
# host finds the root clean.
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=test/qemu/crafted.sh
. "$(dirname "$0")/../crafted.sh"

tq_prepare
tq_workdir stale-noresume
tq_crafted_image pristine

tq_boot_checked noresume write "$TQ_WORK/key" noresume
tq_check "noresume: thaw says noresume was given" tq_has noresume "thaw: noresume given"
tq_check "noresume: thaw superseded the image's ticket, saying why" tq_superseded noresume noresume
tq_check "noresume: no handoff" tq_lacks noresume "thaw: resuming from"
tq_check "noresume: the kernel did not look at the image" \
    tq_lacks noresume "PM: hibernation: resume from hibernation"
tq_check "noresume: the boot went on to the real init" tq_has noresume "THAW-TEST: fresh boot step=write"
tq_check "noresume: the root was mounted read-write" \
    grep -qE 'THAW-TEST: root: /dev/vda / ext4 rw[, ]' "$TQ_WORK/noresume.log"
tq_check "noresume: files were written and synced" tq_has noresume "THAW-TEST: wrote files: "
tq_check "noresume: the root was remounted read-only at the end" tq_has noresume "THAW-TEST: root remounted read-only"
tq_check "noresume: the ticket on the swap disk says superseded" \
    test "$(tq_ticket_get "$TQ_WORK/swap.img" state)" = superseded
tq_log "noresume: $(grep -E 'thaw: image of .* superseded by this boot' "$TQ_WORK/noresume.log" | sed 's/.*thaw: //' |
    head -n1)"
tq_log "noresume: the root's journal: $(grep -E 'EXT4-fs \(vda\): (recovery|mounted)' "$TQ_WORK/noresume.log" |
    sed 's/.*EXT4-fs/EXT4-fs/' | tr '\n' ' ')"

tq_boot_checked stale inspect "$TQ_WORK/key"
tq_stale stale "image of $TQ_DATE_RE was superseded by the boot of $TQ_DATE_RE \(noresume\): resuming it would \
corrupt file systems it had mounted"

# The root as the two boots left it: clean, with the files the noresume boot wrote.
e2fsck -fn "$TQ_WORK/root.img" > "$TQ_WORK/e2fsck.log" 2>&1
rc=$?
tq_check "e2fsck -fn on the root finds it clean (exit $rc)" test "$rc" -eq 0
((rc == 0)) || sed 's/^/#   e2fsck: /' "$TQ_WORK/e2fsck.log" >&2
tq_check "the root holds the four files the noresume boot wrote" \
    test "$(debugfs -R 'ls /var/tmp' "$TQ_WORK/root.img" 2> /dev/null | grep -o 'thaw-test-boot-[0-9]*-[0-9]' | wc -l)" -eq 4
tq_finish

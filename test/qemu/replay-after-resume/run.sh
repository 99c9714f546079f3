#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# replay-after-resume: the host keeps a copy of the swap disk with its image (a VM snapshot, a disk
# backup); the image resumes, the resumed system writes files to its root and powers off. Then the
# copy is put back: its ticket is authentic and still says fresh (the resume marked only the disk it
# resumed from as consumed), but the root's markers have moved on since it was made. thaw must refuse
# it with the file system that changed and how, hand nothing over, and let the boot go on. No TPM.
# The host also kept a copy of the root from the same moment (a snapshot of both disks), attached
# beside the real root at the replay: it shows the markers the ticket recorded, and must not pass for
# the root, whichever of the two udev names for the UUID.
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=test/qemu/crafted.sh
. "$(dirname "$0")/../crafted.sh"

tq_prepare
tq_workdir replay-after-resume
tq_crafted_image pristine
cp --sparse=always "$TQ_WORK/swap.img" "$TQ_WORK/swap.copy"
cp --sparse=always "$TQ_WORK/root.img" "$TQ_WORK/root.copy"

# The crafted image's hibernating boot had thaw.after=write: the resumed system writes and syncs files.
tq_resume_boot resume
tq_check "resume: the resumed system wrote files to its root" tq_has resume "THAW-TEST: wrote files: "
tq_check "resume: the resumed disk's ticket says consumed" \
    test "$(tq_ticket_get "$TQ_WORK/swap.img" state)" = consumed
tq_check "the copy's ticket still says fresh" test "$(tq_ticket_get "$TQ_WORK/swap.copy" state)" = fresh

mv "$TQ_WORK/swap.copy" "$TQ_WORK/swap.img"
TQ_QEMU_EXTRA=(-drive "file=$TQ_WORK/root.copy,if=virtio,format=raw,readonly=on")
tq_boot_checked replay inspect "$TQ_WORK/key"
TQ_QEMU_EXTRA=()
tq_check "replay: the root's copy is attached as /dev/vdc" tq_has replay "[vdc] 524288 512-byte logical blocks"
# Which of the two carriers of the root's UUID thaw reads first depends on the boot (both seen):
# the changed /dev/vda, or the copy /dev/vdc and then the other one.
marker='(mount count|mount time|write time|kbytes written|journal commit sequence) [0-9]+, recorded [0-9]+'
tq_stale replay "image of $TQ_DATE_RE( is older than its file systems: ext4 [0-9a-f-]+ on /dev/vda changed since it \
was made \($marker\): resuming it would corrupt it|: ext4 [0-9a-f-]+ is on /dev/vdc and on another device that differs \
\(/dev/vda carries it too, with other markers \($marker\)\): thaw cannot tell which one the image had mounted, and \
resuming over the changed one would corrupt it)"
tq_finish

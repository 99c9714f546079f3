#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# tamper-mac: one byte of a thaw-written image on plain LUKS2 (no dm-integrity) changed where no
# other check looks: past the end of the domain name in the image header page (swsusp_info), which
# no CRC32 covers and neither thaw's checks nor the kernel's read (the crafted "uts" copy, changed
# through the mapping with the key, as the least an attacker's ciphertext edit could do). With
# rd.thaw.verify=1 the MAC of the whole image, in its ticket, refuses it: nothing handed over.
# Then the same copy, put back as it was, without rd.thaw.verify=1: the kernel resumes it, so the
# MAC was the one check that saw the change (the limit README states).
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=test/qemu/crafted.sh
. "$(dirname "$0")/../crafted.sh"

tq_prepare
tq_workdir tamper-mac
tq_crafted_image uts
tq_check "the crafting boot changed one byte of the image header page" \
    grep -qF "THAW-TEST: crafted uts on" "$TQ_CRAFTED/craft.log"
cp --sparse=always "$TQ_WORK/swap.img" "$TQ_WORK/swap.uts"
cp --sparse=always "$TQ_WORK/root.img" "$TQ_WORK/root.uts"

tq_boot_checked tampered inspect "$TQ_WORK/key" rd.thaw.verify=1
tq_refused tampered "image data is damaged: it does not match the MAC its ticket holds (a sector changed, moved or replayed)"
tq_check "tampered: the ticket itself verified (only the image's MAC differs)" \
    tq_has tampered "thaw: image ticket verified in "

# The control: the same copy, ticket fresh again (as the crafting left it), no rd.thaw.verify=1.
mv "$TQ_WORK/swap.uts" "$TQ_WORK/swap.img"
mv "$TQ_WORK/root.uts" "$TQ_WORK/root.img"
tq_resume_boot control
tq_finish

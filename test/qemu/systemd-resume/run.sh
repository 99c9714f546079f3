#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# systemd-resume: resume-basic's flow with dracut's systemd-flavour initramfs, where
# thaw-resume.service runs thaw. resume= names the thaw mapping on every boot, so that
# systemd-hibernate-resume (in the image, with its generator) would act if thaw did not keep it out;
# pm_debug_messages makes the kernel log every write to /sys/power/resume. A last boot without an
# image goes on to the real root with the swap ready.
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"

tq_prepare
tq_build_initramfs_systemd
tq_workdir systemd-resume
# loglevel=8: pm_debug_messages prints at KERN_DEBUG.
sd_args="resume=/dev/mapper/thaw-swap pm_debug_messages loglevel=8"
handoff="PM: hibernation: Configured hibernation resume from disk to"

# The check that systemd-hibernate-resume stayed out means something only if it is in the image.
# shellcheck disable=SC2317 # called through tq_check
in_image() { cpio -it < "$TQ_INITRD" 2> /dev/null | grep -qx "$1"; }
for f in usr/lib/systemd/system-generators/systemd-hibernate-resume-generator \
    usr/lib/systemd/systemd-hibernate-resume usr/lib/systemd/system/thaw-resume.service \
    usr/lib/systemd/system-generators/thaw-generator; do
    tq_check "the initramfs holds /$f" in_image "$f"
done

# handoffs NAME: how many times the device was written to /sys/power/resume before the image loaded.
handoffs() { sed '/PM: Image loading done/q' "$TQ_WORK/$1.log" | grep -cF "$handoff"; }

# sd_silent NAME: no systemd status line for systemd-hibernate-resume@ (truncated on the console,
# as "Starting systemd-hibernate…ng device /dev/mapper/thaw-swap...").
# shellcheck disable=SC2317 # called through tq_check
sd_silent() { ! grep -aqE 'Starting .*systemd-hibernate' "$TQ_WORK/$1.log"; }

# sd_checks NAME: thaw ran from its unit, and systemd-hibernate-resume did not act at all.
sd_checks() {
    tq_check "$1: thaw-resume.service ran" tq_has "$1" "thaw-resume.service: running thaw resume"
    tq_check "$1: the shell flavour's hook is not in this image" tq_lacks "$1" "thaw-resume.sh: running"
    tq_check "$1: thaw-generator masked systemd-hibernate-resume for resume=" \
        tq_has "$1" "thaw: resume=/dev/mapper/thaw-swap on the kernel command line: systemd-hibernate-resume masked"
    tq_check "$1: systemd-hibernate-resume did not start" sd_silent "$1"
}

tq_hibernate_boot hibernate "$sd_args"
sd_checks hibernate
tq_check "hibernate: thaw found no LUKS2 container before setup, boot went on" \
    tq_has hibernate "thaw: /dev/vdb is not a LUKS2 container: boot continues without resume"

tq_resume_boot resume "$sd_args"
sd_checks resume
n=$(handoffs resume)
tq_check "resume: the image was handed to the kernel once ($n write(s) to /sys/power/resume)" test "$n" -eq 1

# After the resume the kernel has put the swap signature back: no image, a cold boot.
tq_boot_checked cold cold "$TQ_WORK/key" "$sd_args" thaw.mib=64
sd_checks cold
tq_check "cold: thaw found no image and left the swap ready" \
    tq_has cold "thaw: no hibernation image on /dev/mapper/thaw-swap: boot continues, swap ready"
n=$(handoffs cold)
tq_check "cold: nothing was handed to the kernel ($n write(s) to /sys/power/resume)" test "$n" -eq 0
tq_check "cold: the boot went on to the real root" tq_has cold "THAW-TEST: fresh boot step=cold"
tq_check "cold: the mapping is there after switch-root" tq_has cold "THAW-TEST: mapping present"
tq_check "cold: the real system used the encrypted swap" tq_has cold "THAW-TEST: swapon exit 0"
tq_check "cold: thaw status tells the outcome (/run/thaw/state kept across switch-root)" \
    tq_has cold "THAW-TEST: status: At boot, thaw resume: there was no image; the swap is ready."
tq_finish

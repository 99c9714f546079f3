#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# provision-first-boot: a Debian 12 image with only /etc/thaw/provision.conf (device=/dev/vdb,
# key=tpm2,fwcfg:opt/thaw/key, size=ram) and thaw-provision.service enabled boots on an instance
# with no TPM2; thaw provision formats the swap and enrolls the chain without its tpm2, writes
# thaw.conf and rebuilds the initramfs with the image's dracut. With the workload running the host presses the sleep button (QEMU's sendkey sleep):
# acpid's event starts thaw-hibernate-request.service, whose thaw hibernate writes the image and
# powers off. The next boot, from the initramfs thaw provision built, resumes it: nothing lost.
# Those two boots are lib.sh's tc_state resumed, shared with the scenarios that go on from the
# image once set up and used, and made by whichever asks first.
set -u
# shellcheck source=test/cloud/lib.sh
. "$(dirname "$0")/../lib.sh"

tc_prepare
tq_workdir provision-first-boot
# No thaw arguments on the kernel command line: the first boot's initramfs finds nothing to do,
# the next one carries thaw.conf.
export TQ_THAW_ARGS=""

tc_state resumed
tc_report_checks first
tq_check "first: thaw provision planned the first setup" \
    tq_has first "first setup: format /dev/vdb as LUKS2 swap"
tq_check "first: no TPM2 on this instance: key='s tpm2 left out, the rest enrolled" \
    tq_has first "enroll key=fwcfg:opt/thaw/key (this instance has no TPM2: no /dev/tpmrm0, no ACPI TPM2 table"
tq_check "first: thaw provision wrote thaw.conf" tq_has first "THAW-TEST: thaw.conf: device="
tq_check "first: thaw.conf's key= is that chain" tq_has first "THAW-TEST: thaw.conf: key=fwcfg:opt/thaw/key"
tq_check "first: thaw provision rebuilt the initramfs" tq_has first "rebuilt the running kernel's initramfs"
tq_check "first: the thaw swap is on" tq_has first "THAW-TEST: swap on: /dev/dm-"
tq_check "first: workload holds ${TQ_WORKLOAD_MIB} MiB" tq_has first "THAW-TEST: workload ready"
tq_check "first: after the sleep button, thaw hibernate (only thaw-hibernate-request.service runs it) hibernated" \
    tq_has first "thaw: hibernating to /dev/mapper/thaw-swap"
tq_check "first: the image was written" tq_image_written first
tq_check "first: powered off inside the hibernation (the request did not return)" \
    tc_lacks_after first "thaw: hibernating to /dev/mapper/thaw-swap" "THAW-TEST: hibernate request:"

tc_initramfs resume
# shellcheck disable=SC2317 # called through tq_check
in_image() { cpio -it < "$TQ_INITRD" 2> /dev/null | grep -qx "$1"; }
for f in etc/thaw/thaw.conf usr/sbin/thaw usr/lib/systemd/system/thaw-resume.service; do
    tq_check "the initramfs thaw provision built holds /$f" in_image "$f"
done
tq_log "the initramfs thaw provision built: $(stat -c %s "$TQ_INITRD") bytes"

tq_check "resume: thaw verified the image's ticket before the handoff" \
    grep -qE "thaw: image ticket verified in [0-9]+ ms: image of $TQ_DATE_RE, " "$TQ_WORK/resume.log"
tc_resumed_checks
tq_finish

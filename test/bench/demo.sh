#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# make demo: boots a VM (QEMU, TCG), sets up encrypted swap with thaw, fills memory with a workload,
# hibernates, resumes in a new QEMU process, and prints a timeline of the resume.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=test/qemu/lib.sh
. "$here/../qemu/lib.sh"

exec 2>&1
tq_prepare
tq_workdir demo
echo "thaw demo: guest with ${TQ_MEM} MiB RAM, ${TQ_SMP} vCPU(s), QEMU TCG (software emulation, no KVM)"
echo "thaw demo: boot 1: thaw setup on /dev/vdb, swap on, workload fills ${TQ_WORKLOAD_MIB} MiB, thaw hibernate"
tq_sleep_boot_checked hibernate hibernate "$TQ_WORK/key"
grep -E '\| (THAW-TEST: setup exit|rd\.thaw\.|thaw: hibernating)|PM: hibernation: Wrote|thaw: wrote the image|workload: ready' \
    "$TQ_WORK/hibernate.log" | sed 's/^ *[0-9.]*| //; s/^\[ *[0-9.]*\] //; s/^/    /'
echo "thaw demo: boot 2: a new QEMU process, key in fw_cfg; the initramfs runs thaw resume"
tq_sleep_boot_checked resume resume "$TQ_WORK/key"

# mark LABEL TEXT: one timeline line at the first serial line containing TEXT.
mark() {
    local t
    t=$(tq_time resume "$2")
    printf '  %7s  %s\n' "${t:--}" "$1"
}
echo
echo "Resume timeline (seconds since the second QEMU process started; host clock at each serial line):"
mark "kernel starts" "Linux version"
mark "initramfs starts (dracut)" "Run /init as init process"
mark "thaw resume starts (dracut pre-mount hook)" "thaw-resume.sh: running thaw resume"
mark "key obtained, LUKS2 unlocked" "thaw: unlocked"
mark "image ticket verified (fresh, authentic)" "thaw: image ticket verified"
mark "image handed to the kernel" "thaw: resuming from"
mark "image loaded" "PM: Image loading done"
mark "hibernated system running again" "THAW-TEST: hibernate exit"
mark "workload verified its memory" "workload: nothing lost"
grep -hE 'thaw: (unlocked|image ticket verified|resuming)|PM: hibernation: Read|workload: (nothing lost|MISMATCH)' "$TQ_WORK/resume.log" \
    | sed 's/^ *[0-9.]*| //; s/^\[ *[0-9.]*\] //; s/^/    /'
echo
echo "serial logs: $TQ_WORK/hibernate.log $TQ_WORK/resume.log"
if tq_has resume "workload: nothing lost" && tq_has resume "thaw: resuming from"; then
    echo "thaw demo: resumed from the encrypted image, nothing lost"
    exit 0
fi
echo "thaw demo: FAILED: the VM did not resume with its memory intact (see the logs above)"
exit 1

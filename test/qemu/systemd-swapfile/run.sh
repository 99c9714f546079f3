#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# systemd-swapfile: a cloud image as most are built: a systemd-flavour initramfs with dracut's crypt
# module (systemd-cryptsetup), the root on LUKS2 holding the swap file, thaw installed from the
# Debian package (its thaw and its 90thaw), and the key only from a metadata service (imds-net.sh:
# AWS IMDSv2 in a network namespace of the test's own; fw_cfg's opt/thaw/key holds a wrong key).
# Boot 1 (mkroot, as in swapfile-resume) makes the encrypted root and runs the package's
# `thaw setup --swapfile` in it. Boot 2 has no image: thaw-resume.service brings the link up, takes
# the key from the metadata service, opens the root's container and finds no image; the link goes
# down again, systemd-cryptsetup@ for the same root (rd.luks.uuid=) finds it open, and the boot
# reaches the encrypted root, which then hibernates into the swap file. Boot 3 resumes it, nothing
# lost. Both later boots use the same initramfs and the arguments thaw setup printed, with the key
# chain replaced by the imds: source.
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=test/qemu/imds-net.sh
. "$(dirname "$0")/../imds-net.sh"

TQ_SWAP_MIB=1024 # the encrypted root: the guest tree and the 600 MiB swap file
tq_prepare
shell_initrd=$TQ_INITRD
tq_build_deb
tq_workdir systemd-swapfile
tree=$TQ_WORK/tree
tq_tree_with_deb "$tree"
mke2fs -q -F -t ext4 -L root -d "$tree" "$TQ_WORK/root.img" 256M || tq_die "mke2fs failed"

# The initramfs from the package: its thaw and its dracut module, systemd flavour with crypt and
# the network for imds:.
TQ_THAW=$tree/usr/sbin/thaw TQ_THAW_MODULE=$tree/usr/lib/dracut/modules.d/90thaw TQ_SYSTEMD_MODULES=crypt \
    TQ_INITRAMFS_NET=1 tq_build_initramfs_systemd
sd_initrd=$TQ_INITRD
# shellcheck disable=SC2317 # called through tq_check
in_image() { cpio -it < "$sd_initrd" 2> /dev/null | grep -qx "$1"; }
for f in usr/lib/systemd/system/thaw-resume.service usr/lib/systemd/systemd-cryptsetup \
    usr/lib/systemd/system-generators/systemd-cryptsetup-generator usr/sbin/thaw-resume usr/bin/busybox; do
    tq_check "the initramfs holds /$f" in_image "$f"
done
tq_check "the initramfs holds the package's thaw" \
    cmp "$tree/usr/sbin/thaw" <(cd "$TQ_WORK" && cpio -i --to-stdout usr/sbin/thaw < "$sd_initrd" 2> /dev/null)

tq_imds_start "$TQ_WORK/key"
(umask 077; head -c 32 /dev/urandom > "$TQ_WORK/rootkey")
uuid=$(cat /proc/sys/kernel/random/uuid)
TQ_QEMU_EXTRA+=(-fw_cfg "name=opt/test/rootkey,file=$TQ_WORK/rootkey")

# mkroot (shell-flavour initramfs, plain root): fw_cfg's opt/thaw/key is the real key here, so
# thaw setup enrolls it; later boots get it only from the metadata service.
TQ_INITRD=$shell_initrd
TQ_THAW_ARGS="" tq_boot_checked mkroot mkroot "$TQ_WORK/key" thaw.rootuuid="$uuid" thaw.swapmib=600
tq_check "mkroot: the package's thaw setup --swapfile succeeded" tq_has mkroot "THAW-TEST: setup exit 0"
args=$(sed -n 's/.*THAW-TEST: setup-cmdline: //p' "$TQ_WORK/mkroot.log" | head -n1)
offset=$(printf '%s\n' "$args" | sed -n 's/.*resume_offset=\([0-9]*\).*/\1/p')
tq_log "printed: $args"
tq_check "mkroot: it printed the root container, the root's mapping name, the header pin and resume_offset" \
    grep -qxE "rd\.thaw\.device=UUID=$uuid rd\.thaw\.key=fwcfg:opt/thaw/key rd\.thaw\.name=luks-$uuid rd\.thaw\.header=sha256:[0-9a-f]{64} resume_offset=[1-9][0-9]*" \
    <<< "$args"

src=imds:aws:/latest/raw
TQ_INITRD=$sd_initrd
# rd.luks.uuid=: systemd-cryptsetup@luks-UUID.service for the root, as a host-only image's crypttab
# gives it. journald forwards to the console, so its "already active" line is in the serial log.
export TQ_ROOT_ARGS="root=/dev/mapper/luks-$uuid rd.luks.uuid=$uuid systemd.journald.forward_to_console=1"
printed_key=rd.thaw.key=fwcfg:opt/thaw/key
export TQ_THAW_ARGS="${args/"$printed_key"/rd.thaw.key=$src}"
tq_log "boots with: $TQ_ROOT_ARGS $TQ_THAW_ARGS"

# shellcheck disable=SC2317 # called through before()
# line NAME TEXT: the number of the first line of NAME's log holding TEXT (empty if none).
line() { grep -nF -m1 -- "$2" "$TQ_WORK/$1.log" | cut -d: -f1; }
# before NAME A B: A is logged, and before B.
# shellcheck disable=SC2317 # called through tq_check
before() {
    local a b
    a=$(line "$1" "$2") b=$(line "$1" "$3")
    [[ -n $a && -n $b ]] && ((a < b))
}

# no_address NAME: the real system saw at least one interface, and none with an IPv4 address.
# shellcheck disable=SC2317 # called through tq_check
no_address() {
    local lines
    lines=$(grep -F 'THAW-TEST: net: ' "$TQ_WORK/$1.log")
    [[ -n $lines ]] && ! grep -vqF 'ipv4=[]' <<< "$lines"
}

# sd_net_checks NAME: thaw-resume.service ran the shared script, which brought the link up for the
# key and the key came from the metadata service.
sd_net_checks() {
    tq_check "$1: thaw-resume.service ran" tq_has "$1" "thaw-resume.service: running thaw resume"
    tq_check "$1: the link came up by DHCP before thaw fetched the key" \
        before "$1" "configured by DHCP for the imds: key source" "with $src"
}

# --writer kernel: the kernel's own writer stays covered, with the image ticket it gets
# (thaw hibernate writes it first, markers read while the system runs).
tq_sleep_boot_checked cold hibernate-file "$TQ_WORK/wrong-key" thaw.hibargs=--writer,kernel
sd_net_checks cold
tq_check "cold: thaw unlocked the root's container with $src and found no image" \
    before cold "with $src" "thaw: no hibernation image on /dev/mapper/luks-$uuid: boot continues"
tq_check "cold: the link was deconfigured after thaw resume" \
    before cold "thaw: no hibernation image on /dev/mapper/luks-$uuid" "deconfigured"
tq_check "cold: systemd-cryptsetup for the root found thaw's mapping open, after thaw" \
    before cold "thaw: no hibernation image on /dev/mapper/luks-$uuid" "Volume luks-$uuid already active."
tq_check "cold: systemd-cryptsetup did not fail" tq_lacks cold "Failed to start Cryptography Setup"
tq_check "cold: nothing asked for a passphrase" tq_lacks cold "Please enter passphrase"
tq_check "cold: the root came up from the mapping thaw opened" \
    tq_has cold "THAW-TEST: root: /dev/mapper/luks-$uuid / ext4 rw"
tq_check "cold: one mapping in the real system, the root's" tq_has cold "THAW-TEST: dm: luks-$uuid "
tq_check "cold: the real system found the interface without an address" no_address cold
tq_check "cold: no DHCP client left running" tq_has cold "THAW-TEST: dhcp clients running: 0"
tq_check "cold: the swap file is active" tq_has cold "THAW-TEST: swap on: /swapfile file"
tq_check "cold: workload holds ${TQ_WORKLOAD_MIB} MiB" tq_has cold "THAW-TEST: workload ready"
tq_check "cold: thaw hibernate chose the swap file at resume_offset=$offset" \
    tq_has cold "swap file /swapfile, offset $offset, mode shutdown"
tq_check "cold: thaw wrote the image's ticket first, saying the kernel's writer means the weaker check" \
    tq_has cold "thaw: image ticket written to /dev/vdb: 1 file system(s); the kernel writes the image, so the next boot checks only their mount count and time"
tq_check "cold: the kernel wrote the image" tq_has cold "PM: hibernation: Wrote"
tq_check "cold: powered off inside the hibernation" tq_lacks cold "THAW-TEST: hibernate exit"

tq_sleep_boot_checked resume resume "$TQ_WORK/wrong-key"
sd_net_checks resume
tq_check "resume: thaw handed the image at the swap file's offset to the kernel" \
    grep -qE "thaw: resuming from /dev/mapper/luks-$uuid \([0-9]+:[0-9]+, offset $offset\)" "$TQ_WORK/resume.log"
tq_check "resume: systemd-cryptsetup did not run before the handoff" \
    bash -c "! sed '/PM: Image loading done/q' '$TQ_WORK/resume.log' | grep -qE 'Cryptography Setup|already active'"
tq_check "resume: the ticket verified, the root's mount count and time checked (the kernel wrote the image)" \
    tq_has resume "1 file system(s) as the image left them (mount count and time only: the kernel wrote the image)"
tq_check "resume: the kernel loaded the image" tq_has resume "PM: Image loading done"
tq_check "resume: the fresh init never ran" tq_lacks resume "THAW-TEST: fresh boot"
tq_check "resume: thaw hibernate returned 0 in the resumed system" tq_has resume "THAW-TEST: hibernate exit 0"
tq_check "resume: workload: nothing lost" tq_has resume "workload: nothing lost (${TQ_WORKLOAD_MIB} MiB verified"
# One per boot that ran thaw (a third if the hibernating boot was retried).
n=$(grep -cx "GET /latest/raw 200" "$TQ_IMDS_LOG")
tq_check "the metadata service served the key for both boots, after an IMDSv2 token each time ($n GETs)" \
    test "$n" -ge 2 -a "$(grep -cx "PUT /latest/api/token 200" "$TQ_IMDS_LOG")" -eq "$n"
tq_log "metadata service requests: $(tr '\n' ';' < "$TQ_IMDS_LOG")"
tq_finish

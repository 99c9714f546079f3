# SPDX-License-Identifier: LGPL-2.1-or-later
# test/cloud's swap-file variant of the cloud image: the same root (tc_build_root's), with
# provision.conf asking for a swap file, inside a LUKS2 container; and what its scenarios read
# back from it. Sourced after lib.sh by the scenarios that boot it (provision-resize).
# shellcheck shell=bash
#
# The host has no device-mapper: the container is made in one boot of the plain harness guest
# (test/qemu's busybox root and initramfs), whose step cryptroot (swapfile-guest.sh, sent as its
# guest.sh) formats it with an installer key from fw_cfg opt/test/rootkey and copies the file
# system in with e2image -ra (only the blocks in use). The file system is made ready on the host
# first: a copy of the cloud root grown to TCS_FS_MIB and given provision.conf and the export
# unit (debugfs). Cached as $TQ_CACHE/cloud-cryptroot-KEY.img with its installer key (.key, made
# at build time, mode 0600, never committed) and its UUID (.uuid), KEY a hash of the cloud root's
# name, the two functions that make it (with their settings) and swapfile-guest.sh.
#
# The root's file system is encrypted, so the host cannot read the initramfs thaw provision
# rebuilt in it (tc_initramfs reads a plain root with debugfs). Instead, the image's unit
# thaw-test-export.service (this file writes it in), after thaw-provision.service and before the
# test's step, copies the running kernel's initramfs to the raw disk /dev/vdc (TCS_EXPORT) and
# says its size and sha256 on the console; it also says the swap file as it is after thaw
# provision (size, allocation, /proc/swaps, PATH.thaw-new). tcs_initramfs takes it back.

# The file system: the cloud root (686 MiB in use), the first swap file (size=ram: MemTotal of
# TQ_MEM, 768 MiB), the grown one made beside it (of 1024 MiB), and PROVPLAN_SPARE_BYTES (256 MiB)
# more, with room to spare.
TCS_FS_MIB=${TCS_FS_MIB:-3584}
# The container: the file system and LUKS2's 16 MiB header.
TCS_CONTAINER_MIB=$((TCS_FS_MIB + 16))
TCS_PROVISION_CONF=$'swapfile=/swapfile\nkey=tpm2\nunlock=fwcfg:opt/test/rootkey\nsize=ram'

# tcs_export_files DIR: the export unit and its script, written into DIR.
tcs_export_files() {
    cat > "$1/thaw-test-export.service" << 'EOF'
# SPDX-License-Identifier: LGPL-2.1-or-later
# test/cloud/swapfile.sh: this boot's initramfs out to /dev/vdc for the host, the swap file as it is.
[Unit]
Description=thaw test: the initramfs out to /dev/vdc, the swap file as it is
ConditionKernelCommandLine=thaw.step
After=thaw-provision.service
Before=thaw-test.service

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/thaw-test-export

[Install]
WantedBy=multi-user.target
EOF
    cat > "$1/thaw-test-export" << 'EOF'
#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# test/cloud/swapfile.sh: the running kernel's initramfs copied to /dev/vdc (its size and sha256
# said first), and the swap file as thaw provision left it; THAW-TEST: lines on the console.
exec > /dev/ttyS0 2>&1
say() { echo "THAW-TEST: $*"; }
f=/boot/initrd.img-$(uname -r)
n=0
while [ ! -b /dev/vdc ] && [ "$n" -lt 30 ]; do n=$((n + 1)); sleep 1; done
if [ -s "$f" ] && [ -b /dev/vdc ] && dd if="$f" of=/dev/vdc bs=1M conv=fsync status=none; then
    say "export: initrd $(stat -c %s "$f") $(sha256sum < "$f" | cut -c1-64)"
else
    say "export: failed ($f to /dev/vdc)"
fi
say "memtotal: $(awk '/^MemTotal:/ {print $2}' /proc/meminfo) kB"
if [ -e /swapfile ]; then
    say "swapfile: $(stat -c '%s bytes, %b blocks of %B, mode %a, owner %u' /swapfile)"
else
    say "swapfile: absent"
fi
if [ -e /swapfile.thaw-new ]; then say "swapfile.thaw-new: present"; else say "swapfile.thaw-new: absent"; fi
tail -n +2 /proc/swaps | tr -s ' \t' ' ' | sed 's/^/THAW-TEST: proc-swaps: /'
df -k / | tail -n 1 | tr -s ' ' | sed 's/^/THAW-TEST: df: /'
EOF
}

# tcs_build_cryptroot: the swap-file image (see above), built once per input. Needs tc_prepare
# (TQ_ROOT_BASE is the cloud root). Sets TQ_ROOT_BASE to it, TCS_UUID and TCS_ROOTKEY (the
# installer key's file); TQ_INITRD is left as it was. Call it before anything sets TQ_QEMU_EXTRA,
# which it leaves empty.
tcs_build_cryptroot() {
    local cloud=$TQ_ROOT_BASE key base dir fs keep_initrd=$TQ_INITRD
    # Its recipe: these two functions and their settings (not the rest of this file), the guest's step.
    key=$(tq_hash "$TC_DIR/swapfile-guest.sh" <(declare -f tcs_build_cryptroot tcs_export_files
        echo "$(basename "$cloud") $TCS_FS_MIB $TCS_PROVISION_CONF"))
    base=$TQ_CACHE/cloud-cryptroot-$key
    if [[ -s $base.img && -s $base.key && -s $base.uuid ]]; then
        # shellcheck disable=SC2034 # read by the scenario
        TQ_ROOT_BASE=$base.img TCS_UUID=$(cat "$base.uuid") TCS_ROOTKEY=$base.key
        return 0
    fi
    tq_log "building the swap-file image: the cloud root in LUKS2 ($TCS_FS_MIB MiB file system, one boot of the plain guest)"
    rm -f "$TQ_CACHE"/cloud-cryptroot-*
    tq_build_initramfs
    tq_build_rootfs
    tq_workdir provision-resize-cryptroot
    dir=$TQ_WORK
    fs=$dir/fs.img
    # The file system on the host: the cloud root grown, provision.conf for a swap file, the export unit.
    cp --sparse=always "$cloud" "$fs"
    e2fsck -fy "$fs" > "$dir/e2fsck.log" 2>&1
    (($? <= 1)) || tq_die "e2fsck of the copied cloud root failed"
    resize2fs "$fs" "${TCS_FS_MIB}M" > "$dir/resize2fs.log" 2>&1 || tq_die "resize2fs failed"
    printf '%s\n' "$TCS_PROVISION_CONF" > "$dir/provision.conf"
    tcs_export_files "$dir"
    debugfs -w -f - "$fs" > "$dir/debugfs.log" 2>&1 << EOF || tq_die "debugfs could not change the file system"
rm /etc/thaw/provision.conf
write $dir/provision.conf /etc/thaw/provision.conf
sif /etc/thaw/provision.conf mode 0100644
sif /etc/thaw/provision.conf uid 0
sif /etc/thaw/provision.conf gid 0
write $dir/thaw-test-export.service /etc/systemd/system/thaw-test-export.service
sif /etc/systemd/system/thaw-test-export.service mode 0100644
sif /etc/systemd/system/thaw-test-export.service uid 0
sif /etc/systemd/system/thaw-test-export.service gid 0
symlink /etc/systemd/system/multi-user.target.wants/thaw-test-export.service /etc/systemd/system/thaw-test-export.service
write $dir/thaw-test-export /usr/local/sbin/thaw-test-export
sif /usr/local/sbin/thaw-test-export mode 0100755
sif /usr/local/sbin/thaw-test-export uid 0
sif /usr/local/sbin/thaw-test-export gid 0
EOF
    [[ $(debugfs -R "cat /etc/thaw/provision.conf" "$fs" 2> /dev/null) == "$TCS_PROVISION_CONF" ]] \
        || tq_die "provision.conf was not replaced in $fs"
    debugfs -R "stat /usr/local/sbin/thaw-test-export" "$fs" 2> /dev/null | grep -q 'Mode:  0755' \
        || tq_die "the export script is not in $fs"
    # The guest's side: e2image and e2fsck in the plain root, the container on vdb, the file system on vdc.
    tq_root_add "$(command -v e2image)" "$(command -v e2fsck)"
    truncate -s "${TCS_CONTAINER_MIB}M" "$dir/swap.img"
    (umask 077; head -c 32 /dev/urandom > "$dir/rootkey")
    cat /proc/sys/kernel/random/uuid > "$dir/uuid"
    # shellcheck disable=SC2034 # read by harness.sh's tq_boot
    TQ_GUEST=$TC_DIR/swapfile-guest.sh
    TQ_QEMU_EXTRA=(-fw_cfg "name=opt/test/rootkey,file=$dir/rootkey" -drive "file=$fs,if=virtio,format=raw,readonly=on")
    TQ_THAW_ARGS="" tq_boot cryptroot cryptroot "$dir/key" thaw.rootuuid="$(cat "$dir/uuid")" \
        || tq_die "the cryptroot boot failed (log: $dir/cryptroot.log)"
    TQ_QEMU_EXTRA=()
    tq_has cryptroot "THAW-TEST: cryptroot: done" || { tq_show cryptroot; tq_die "the cryptroot boot did not finish its copy"; }
    mv "$dir/rootkey" "$base.key"
    mv "$dir/uuid" "$base.uuid"
    mv "$dir/swap.img" "$base.img"
    rm -rf "$dir"
    # shellcheck disable=SC2034 # read by the scenario
    TQ_ROOT_BASE=$base.img TCS_UUID=$(cat "$base.uuid") TCS_ROOTKEY=$base.key TQ_INITRD=$keep_initrd
}

# tcs_export_init: an empty export disk for the boots of this run (vdc, after root and swap).
tcs_export_init() {
    TCS_EXPORT=$TQ_WORK/export.img
    truncate -s 256M "$TCS_EXPORT"
    TQ_QEMU_EXTRA+=(-drive "file=$TCS_EXPORT,if=virtio,format=raw")
}

# tcs_initramfs BOOT NAME: the initramfs boot BOOT exported (its size and sha256 from the serial
# log, checked against the bytes on the export disk), as $TQ_WORK/NAME-initrd.img; sets TQ_INITRD.
tcs_initramfs() {
    local line size sum img=$TQ_WORK/$2-initrd.img
    line=$(grep -ao -m1 'THAW-TEST: export: initrd [0-9]* [0-9a-f]*' "$TQ_WORK/$1.log")
    size=$(awk '{print $4}' <<< "$line")
    sum=$(awk '{print $5}' <<< "$line")
    [[ -n $size && -n $sum ]] || tq_die "boot $1 exported no initramfs"
    head -c "$size" "$TCS_EXPORT" > "$img"
    [[ $(sha256sum < "$img" | cut -c1-64) == "$sum" ]] || tq_die "the initramfs on the export disk is not the one boot $1 said"
    # shellcheck disable=SC2034 # read by harness.sh's tq_boot
    TQ_INITRD=$img
}

# tcs_initramfs_file IMG PATH: a file of initramfs IMG, on stdout.
tcs_initramfs_file() { (cd "$TQ_WORK" && cpio -i --quiet --to-stdout "$2" < "$1" 2> /dev/null); }

# tcs_conf_offset BOOT: offset= of thaw.conf as boot BOOT's report printed it.
tcs_conf_offset() { sed -n 's/.*THAW-TEST: thaw\.conf: offset=\([0-9]*\).*/\1/p' "$TQ_WORK/$1.log" | head -n1; }

# tcs_swapfile_mib BOOT: the swap file's size in MiB as boot BOOT's export unit saw it.
tcs_swapfile_mib() {
    sed -n 's/.*THAW-TEST: swapfile: \([0-9]*\) bytes.*/\1/p' "$TQ_WORK/$1.log" | head -n1 | awk '{print int($1 / 1048576)}'
}

# tcs_resumed_checks NAME OFFSET: boot NAME handed the image in the swap file at OFFSET to the
# kernel, which loaded it; the resumed system is the boot in which the sleep button was pressed,
# whose thaw hibernate returned 0, and the workload lost nothing (tc_resumed_checks, for a swap
# file on the root's container rather than thaw's own device).
tcs_resumed_checks() {
    local n=$1
    tq_check "$n: thaw handed the image in the swap file (offset $2) to the kernel" \
        grep -qE "thaw: resuming from /dev/mapper/luks-$TCS_UUID \([0-9]+:[0-9]+, offset $2\)" "$TQ_WORK/$n.log"
    tq_check "$n: the kernel loaded the image" tq_has "$n" "PM: Image loading done"
    tq_check "$n: no fresh boot" tq_lacks "$n" "THAW-TEST: fresh boot"
    tq_check "$n: the request's thaw hibernate returned 0 in the resumed system" \
        tq_has "$n" "THAW-TEST: hibernate request: result=success status=0"
    tq_check "$n: the same boot as before the request" tq_has "$n" "THAW-TEST: same boot after the request (resumed)"
    tq_check "$n: workload: nothing lost" tq_has "$n" "workload: nothing lost (${TQ_WORKLOAD_MIB} MiB verified"
    tc_debounce_checks "$n"
}

# tcs_cut_when NAME TEXT: in the background, a power cut: this run's QEMU (the one whose root disk is
# $TQ_WORK/root.img) killed with SIGKILL as soon as boot NAME's serial log shows TEXT. What the
# guest had not written out is lost; what QEMU had written to the disk files stays, as on a disk.
# Sets TCS_CUTTER to the background process, which ends after its cut.
tcs_cut_when() {
    local log=$TQ_WORK/$1.log
    (
        local pid
        while sleep 0.2; do
            grep -qF -- "$2" "$log" 2> /dev/null || continue
            pid=$(pgrep -f -- "^$TQ_QEMU .*file=$TQ_WORK/root.img,")
            if [[ -n $pid ]] && kill -KILL "$pid"; then
                tq_log "boot $1: power cut (QEMU $pid killed) at '$2'"
                touch "$TQ_WORK/$1.cut"
            else
                tq_log "boot $1: no QEMU to cut at '$2'"
            fi
            break
        done
    ) &
    # shellcheck disable=SC2034 # read by the scenario, which stops it
    TCS_CUTTER=$!
}

# SPDX-License-Identifier: LGPL-2.1-or-later
# test/cloud's scenarios: a Debian 12 root with systemd and thaw from its own Debian package, set
# up by thaw provision at its first boot, as a cloud image is (make check-cloud; part of make test).
# shellcheck shell=bash
#
# Sourced by test/cloud/*/run.sh, which test/qemu/run.sh runs beside test/qemu's scenarios; it
# sources the QEMU harness (test/qemu/lib.sh) and boots through it. The root is built once with
# mmdebstrap (from the apt sources of this machine) into $TQ_CACHE/cloud-root-KEY.img, KEY a hash
# of the package, root.sh, image/ and the guest kernel; the guest kernel's modules are copied in,
# as its own package would put them, for dracut and udev. The image after its first boot is shared
# too (tc_state).

# The harness's defaults that differ here (set before it is sourced, which keeps what is set).
# A first boot under TCG: systemd, thaw provision's setup and dracut, the workload, the hibernation.
TQ_BOOT_TIMEOUT=${TQ_BOOT_TIMEOUT:-900}
# dracut works silently for up to a minute at a step (resolving the executables' libraries).
TQ_SILENCE_SECONDS=${TQ_SILENCE_SECONDS:-120}
# The swap holds the RAM (size=ram) and thaw's LUKS2 header.
TQ_SWAP_MIB=${TQ_SWAP_MIB:-1024}

# shellcheck source=test/qemu/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../qemu/lib.sh"

TC_DIR=$TQ_REPO/test/cloud
# shellcheck source=test/cloud/root.sh
. "$TC_DIR/root.sh"

# tc_prepare: the kernel, dracut, the workload, the package, the first boot's initramfs and the
# root. The first boot's initramfs stands for the one the image was built with: thaw's part finds
# no thaw.conf and does nothing (the image's own is made by thaw provision). It is the harness's
# systemd flavour as systemd-resume boots it, so make check-qemu and make check-cloud share it.
tc_prepare() {
    command -v "$TQ_QEMU" > /dev/null || tq_skip "$TQ_QEMU missing (run make deps)"
    [[ -x $TQ_THAW ]] || tq_die "$TQ_THAW missing (run make)"
    mkdir -p "$TQ_CACHE"
    tq_fetch_kernel
    tq_fetch_dracut
    tq_build_workload
    tq_build_deb
    tq_build_initramfs_systemd
    tc_build_root
}

# tc_initramfs NAME: the initramfs thaw provision built in this run's root, copied out as
# $TQ_WORK/NAME-initrd.img; sets TQ_INITRD to it.
tc_initramfs() {
    local img=$TQ_WORK/$1-initrd.img
    rm -f "$img"
    debugfs -R "dump /boot/initrd.img-$TQ_KVER $img" "$TQ_WORK/root.img" > /dev/null 2>&1
    [[ -s $img ]] || tq_die "no /boot/initrd.img-$TQ_KVER in $TQ_WORK/root.img"
    # shellcheck disable=SC2034 # read by harness.sh's tq_boot
    TQ_INITRD=$img
}

# A sleep-button presser (tc_press_when), a power cutter (swapfile.sh's tcs_cut_when) and the
# monitor's socket do not outlive the scenario.
trap 'kill "${TC_PRESSER:-}" "${TCS_CUTTER:-}" 2> /dev/null; rm -f "${TC_MONITOR:-}"' EXIT

# tc_monitor: the boots' QEMU monitor on a UNIX socket (TC_MONITOR), for the sleep button.
tc_monitor() {
    # A socket path must fit 108 bytes: not under the (maybe long) work directory.
    TC_MONITOR=${TMPDIR:-/tmp}/tc-monitor.$$.sock
    TQ_QEMU_EXTRA+=(-monitor "unix:$TC_MONITOR,server=on,wait=off")
}

# tc_press_when NAME TEXT: in the background until killed, presses the sleep button (HMP sendkey
# sleep: the PS/2 Sleep key, KEY_SLEEP in the guest) once in each boot NAME whose serial log shows
# TEXT; a boot tried again is a new log (tq_boot_retried). Sets TC_PRESSER to its process.
tc_press_when() {
    local log=$TQ_WORK/$1.log
    (
        local done="" inode
        while sleep 1; do
            inode=$(stat -c %i "$log" 2> /dev/null) || continue
            [[ $inode == "$done" ]] && continue
            grep -qF -- "$2" "$log" || continue
            python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"sendkey sleep\n")
time.sleep(0.5)' "$TC_MONITOR" || tq_log "boot $1: could not press the sleep button"
            tq_log "boot $1: pressed the sleep button (sendkey sleep)"
            done=$inode
        done
    ) &
    # shellcheck disable=SC2034 # read by the scenario, which stops it
    TC_PRESSER=$!
}

# tc_report_checks NAME: thaw-provision.service ran (its condition held, its process started) and
# succeeded at boot NAME, and what it cost.
tc_report_checks() {
    tq_check "$1: the guest's step ran" tq_has "$1" "THAW-TEST: fresh boot step="
    tq_check "$1: thaw-provision.service ran and succeeded" \
        tq_has "$1" "THAW-TEST: provision: result=success status=0 condition=yes started=yes"
    tq_log "$1: thaw-provision.service $(grep -ao -m1 'THAW-TEST: provision took [0-9]* ms' "$TQ_WORK/$1.log" |
        sed 's/.*provision //'); $(grep -ao -m1 'THAW-TEST: provision: dracut .*' "$TQ_WORK/$1.log" | sed 's/.*provision: //')"
}

# tc_line NAME WHAT: the value of boot NAME's first THAW-TEST line for WHAT ("initramfs", "thaw.conf").
tc_line() { grep -aF -m1 "THAW-TEST: $2: " "$TQ_WORK/$1.log" | sed "s/.*THAW-TEST: $2: //"; }

# tc_console NAME TEXT: boot NAME's serial console shows TEXT on a line of its own, not one of the
# step's THAW-TEST lines (which copy the journal).
tc_console() { grep -avF 'THAW-TEST: ' "$TQ_WORK/$1.log" | grep -qF -- "$2"; }

# tc_lacks_after NAME AFTER TEXT: boot NAME logged AFTER (it got that far) and never TEXT.
tc_lacks_after() { tq_has "$1" "$2" && tq_lacks "$1" "$3"; }

# tc_state KIND: this run's disks and key become those of the cloud image after its first boots,
# with their serial logs in $TQ_WORK (first.log, resume.log). KIND says how far:
#   hibernated  the first boot (step sleep) sets the image up (thaw provision: format, enroll,
#               thaw.conf, dracut) and, with the workload running, the host presses the sleep
#               button: thaw-hibernate-request.service's thaw hibernate powers it off inside the
#               hibernation (the first half of resumed)
#   resumed     then the boot "resume", from the initramfs thaw provision built, resumes it, and
#               the resumed system checks the workload and powers off: an image set up, used and
#               shut down (provision-first-boot, provision-idempotent, hibernate-request-refused,
#               provision-resize-partition)
# Each is made once, by the first scenario that asks, under a lock, and cached in
# $TQ_CACHE/cloud-state/KEY-KIND (KEY from every input: this file, the harness, the root and the
# initramfs, the boots' settings), as crafted.sh caches test/qemu's shared image; the scenarios
# check those boots from their logs, whichever of them made them. Boots that failed a check are not
# kept: their logs go to the scenario that made them, and the next one that asks boots again.
tc_state() {
    local kind=$1 key dir fd fails=$TQ_FAILS work=$TQ_WORK initrd=$TQ_INITRD extra=("${TQ_QEMU_EXTRA[@]}")
    key=$(tq_hash "${BASH_SOURCE[0]}" "$TQ_REPO/test/qemu/harness.sh" \
        <(echo "$TQ_INITRD $TQ_ROOT_BASE $TQ_MEM $TQ_SMP $TQ_CPU $TQ_SWAP_MIB $TQ_WORKLOAD_MIB"))
    dir=$TQ_CACHE/cloud-state/$key-$kind
    mkdir -p "$TQ_CACHE/cloud-state"
    exec {fd}> "$TQ_CACHE/cloud-state/.lock-$kind"
    flock "$fd"
    if [[ -e $dir/.done ]]; then
        tq_log "the image after its first boots ($kind) from the cache ($dir)"
    else
        find "$TQ_CACHE/cloud-state" -mindepth 1 -maxdepth 1 -type d -name "*-$kind" -exec rm -rf {} +
        # resumed goes on from hibernated, into this scenario's disks first.
        [[ $kind == resumed ]] && tc_state hibernated
        tq_log "the image's first boots ($kind), cached in $dir"
        mkdir -p "$dir"
        cp --sparse=always "$work/root.img" "$work/swap.img" "$work/key" "$dir/"
        [[ $kind == resumed ]] && cp "$work/first.log" "$dir/"
        TQ_WORK=$dir
        case $kind in
        hibernated)
            tc_monitor
            tc_press_when first "THAW-TEST: workload ready"
            tq_sleep_boot_checked first sleep "$dir/key"
            kill "$TC_PRESSER" 2> /dev/null
            rm -f "$TC_MONITOR"
            TQ_QEMU_EXTRA=("${extra[@]}")
            tq_check "first: thaw-provision.service ran and succeeded" \
                tq_has first "THAW-TEST: provision: result=success status=0 condition=yes started=yes"
            tq_check "first: the image was written" tq_image_written first
            ;;
        resumed)
            tc_initramfs resume
            tq_sleep_boot_checked resume resume "$dir/key"
            TQ_INITRD=$initrd
            tc_resumed_checks
            tq_check "resume: the resumed system powered off" tq_has resume "THAW-TEST: powering off"
            ;;
        *) tq_die "tc_state: no kind $kind" ;;
        esac
        TQ_WORK=$work
        if ((TQ_FAILS == fails)); then
            touch "$dir/.done"
        else
            cp "$dir"/*.log "$work/"
        fi
    fi
    if [[ -e $dir/.done ]]; then
        cp --sparse=always "$dir/root.img" "$dir/swap.img" "$dir/key" "$dir"/*.log "$work/"
    fi
    exec {fd}>&-
    [[ -e $dir/.done ]] || { tq_log "no first boots to go on from"; tq_finish; }
}

# tc_resumed_checks: the boot "resume" handed the image over and the kernel loaded it; the
# resumed system is the same boot as the one the sleep-button request came in, whose thaw
# hibernate returned 0, and the workload lost nothing.
tc_resumed_checks() {
    tq_check "resume: thaw handed the image to the kernel" tq_has resume "thaw: resuming from /dev/mapper/thaw-swap"
    tq_check "resume: the kernel loaded the image" tq_has resume "PM: Image loading done"
    tq_check "resume: no fresh boot after the image was loaded" \
        tc_lacks_after resume "PM: Image loading done" "THAW-TEST: fresh boot"
    tq_check "resume: the request's thaw hibernate returned 0 in the resumed system" \
            tq_has resume "THAW-TEST: hibernate request: result=success status=0"
    tq_check "resume: the same boot as before the request" tq_has resume "THAW-TEST: same boot after the request (resumed)"
    tq_check "resume: workload: nothing lost" tq_has resume "workload: nothing lost (${TQ_WORKLOAD_MIB} MiB verified"
    tc_debounce_checks resume
}

# tc_debounce_checks NAME: in the system boot NAME resumed, a second request right after the resume
# (the step's, as acpid's action starts it) came while the first one's unit was still starting
# (its debounce), and thaw hibernate did not run again: one request, one hibernation.
tc_debounce_checks() {
    tq_check "$1: a second request right after the resume came within the debounce" \
        tq_has "$1" "THAW-TEST: second request: sent while the unit was activating"
    tq_check "$1: ... and hibernated nothing (thaw hibernate did not run again)" \
        tq_has "$1" "THAW-TEST: second request: thaw hibernate did not run again"
}

# SPDX-License-Identifier: LGPL-2.1-or-later
# The QEMU harness's runs: disks and keys, boots, the hang watcher and retries, swtpm, log checks.
# shellcheck shell=bash
#
# Sourced by lib.sh (source that, not this file). It boots what cache.sh prepared (tq_prepare): the
# kernel, the initramfs (TQ_INITRD) and a copy of the root image (TQ_ROOT_BASE). What every boot
# gets, unless the caller sets it:
TQ_MEM=${TQ_MEM:-768}              # MiB; the same on every boot (the image records the RAM size)
# One vCPU per guest, and as many guests side by side as the host has cores (TQ_JOBS, run.sh). With
# two vCPUs Debian's 6.1 guest under TCG now and then hung inside its hibernation while taking the
# second CPU offline, or in its resume after thaw's handoff (HACKING.md "Guest hangs"); with one
# there is no second CPU to take offline. One vCPU makes a boot 10-40% longer, but two one-vCPU
# guests at a time on two cores ran six scenarios (resume-basic smbios-resume drive-resume
# tpm-migrated tpm-new-host cold-boot) in 0.68x the time of one two-vCPU guest at a time (267 s
# against 393 s, two rounds each, interleaved, 2026-12-04, load 1.8-3.9). The benchmarks keep two
# vCPUs (their figures were taken so).
TQ_SMP=${TQ_SMP:-1}
TQ_QEMU=${TQ_QEMU:-qemu-system-x86_64}
TQ_ACCEL=${TQ_ACCEL:-tcg}    # tcg,thread=single: all vCPUs on one host thread (test/bench/soak.sh)
# +rdrand: the guest's random pool is ready at once (Debian's RANDOM_TRUST_CPU=y credits RDRAND,
# which TCG emulates). With plain qemu64 it was ready only after udev had loaded virtio_rng, seconds
# into the boot, and systemd-udevd's getrandom() waited for it: with Debian's 6.1.176 guest kernel
# that wait hung both vCPUs in soft lockups (issue "A test suite that does not flake").
# max emulates AES-NI, but was not faster overall.
TQ_CPU=${TQ_CPU:-qemu64,+rdrand}
TQ_SWAP_MIB=${TQ_SWAP_MIB:-600}
TQ_WORKLOAD_MIB=${TQ_WORKLOAD_MIB:-256}
TQ_BOOT_TIMEOUT=${TQ_BOOT_TIMEOUT:-300}   # seconds, hard limit per QEMU process
TQ_LOGLEVEL=${TQ_LOGLEVEL:-7}

# ---------------------------------------------------------------------------------------------
# Per-run work directory: disks and keys (generated here, never committed).

# tq_workdir NAME: fresh $TQ_WORK with a root disk, an empty swap disk and two random keys; TQ_GUEST
# the scenario's own guest code, test/qemu/NAME/guest.sh (or test/bench/NAME/guest.sh), when it has
# one: tq_boot sends it to every boot as fw_cfg opt/test/guest, and guest-init.sh sources it.
tq_workdir() {
    local f
    TQ_WORK=$TQ_CACHE/run/$1
    TQ_GUEST=
    for f in "$TQ_REPO/test/qemu/$1/guest.sh" "$TQ_REPO/test/bench/$1/guest.sh"; do
        [[ -f $f ]] && TQ_GUEST=$f
    done
    rm -rf "$TQ_WORK"
    mkdir -p "$TQ_WORK"
    cp --sparse=always "$TQ_ROOT_BASE" "$TQ_WORK/root.img"
    truncate -s "${TQ_SWAP_MIB}M" "$TQ_WORK/swap.img"
    (umask 077; head -c 32 /dev/urandom > "$TQ_WORK/key"; head -c 32 /dev/urandom > "$TQ_WORK/wrong-key")
    TQ_SEED=$(od -An -tu4 -N4 /dev/urandom | tr -d ' ')
}

# tq_root_add FILE...: copies each executable to /bin and each library (*.so*) to its host path,
# with the libraries ldd reports, into this run's root disk, $TQ_WORK/root.img; the shared root
# image is not changed, so only the scenario that needs a tool pays for it. Files already there
# are kept. (debugfs follows no symbolic link, so nothing goes under the guest's /usr/bin link.)
tq_root_add() {
    local tree=$TQ_WORK/root-add cmds=$TQ_WORK/root-add.debugfs f d
    rm -rf "$tree"
    mkdir -p "$tree"
    for f in "$@"; do
        case $f in
        *.so*) tq_install_bin "$f" "$tree" "$f" ;;
        *) tq_install_bin "$f" "$tree" "/bin/$(basename "$f")" ;;
        esac
    done
    : > "$cmds"
    # Parents first; debugfs says "exists" for what the root already has, and goes on.
    while IFS= read -r d; do
        echo "mkdir ${d#"$tree"}" >> "$cmds"
    done < <(find "$tree" -mindepth 1 -type d | sort)
    while IFS= read -r f; do
        echo "write $f ${f#"$tree"}" >> "$cmds"
    done < <(find "$tree" -type f | sort)
    debugfs -w -f "$cmds" "$TQ_WORK/root.img" > "$TQ_WORK/root-add.log" 2>&1 \
        || tq_die "debugfs could not add files to $TQ_WORK/root.img"
    # debugfs writes files without their modes: make them executable (libraries too, as installed).
    while IFS= read -r f; do
        echo "sif ${f#"$tree"} mode 0100755"
    done < <(find "$tree" -type f | sort) > "$cmds"
    debugfs -w -f "$cmds" "$TQ_WORK/root.img" >> "$TQ_WORK/root-add.log" 2>&1 \
        || tq_die "debugfs could not set modes in $TQ_WORK/root.img"
}

# TQ_TPM_STATE: when set, each boot gets a TPM2 (QEMU tpm-tis) backed by a new swtpm process on this
# state directory, as a cloud's vTPM follows its VM: copying the directory moves the TPM to the next
# boot, a new empty directory is a fresh TPM.
TQ_TPM_STATE=${TQ_TPM_STATE:-}
TQ_SWTPM_PID=

# tq_swtpm_start NAME: swtpm on $TQ_TPM_STATE; sets TQ_TPM_ARGS (QEMU arguments) and TQ_SWTPM_PID.
tq_swtpm_start() {
    local sock i
    command -v swtpm > /dev/null || tq_skip "swtpm missing (run make deps)"
    mkdir -p "$TQ_TPM_STATE"
    # A UNIX socket path must fit 108 bytes: not under the (maybe long) work directory.
    sock=${TMPDIR:-/tmp}/tq-swtpm.$$.sock
    rm -f "$sock"
    # --terminate: it exits when QEMU closes the control channel.
    swtpm socket --tpm2 --tpmstate "dir=$TQ_TPM_STATE" --ctrl "type=unixio,path=$sock" --terminate \
        --log "file=$TQ_WORK/$1.swtpm.log,level=1" &
    TQ_SWTPM_PID=$!
    for ((i = 0; i < 100; i++)); do
        [[ -S $sock ]] && break
        sleep 0.1
    done
    [[ -S $sock ]] || tq_die "swtpm did not create $sock"
    TQ_TPM_ARGS=(-chardev "socket,id=chrtpm,path=$sock" -tpmdev "emulator,id=tpm0,chardev=chrtpm"
        -device "tpm-tis,tpmdev=tpm0")
}

tq_swtpm_stop() {
    [[ -n $TQ_SWTPM_PID ]] || return 0
    kill "$TQ_SWTPM_PID" 2> /dev/null
    wait "$TQ_SWTPM_PID" 2> /dev/null
    TQ_SWTPM_PID=
    rm -f "${TMPDIR:-/tmp}/tq-swtpm.$$.sock"
}

# tq_boot NAME STEP KEYFILE [EXTRA-CMDLINE...]
# Boots once with a hard timeout. Serial output goes to $TQ_WORK/NAME.log, each line prefixed by
# the seconds since QEMU started (host clock). Returns QEMU's status (124 = timed out).
# TQ_QEMU_EXTRA (array) adds QEMU arguments, TQ_QEMU_WRAP (array) a command QEMU runs under (such
# as ip netns exec NS); the real key is always also given to the guest as
# opt/test/realkey so it can inspect the image header read-only, and TQ_GUEST (see tq_workdir),
# when set, as opt/test/guest.
tq_boot() {
    local name=$1 step=$2 key=$3 log rc start
    shift 3
    log=$TQ_WORK/$name.log
    # A boot that is not to resume must not touch the root file system the hibernated system
    # still has mounted: read-only, and no ext4 journal replay.
    local rootmode=rw
    [[ $step == inspect ]] && rootmode="ro rootflags=noload"
    # TQ_ROOT_ARGS and TQ_THAW_ARGS replace the root and thaw arguments (swapfile-resume boots from
    # the LUKS2 root that thaw unlocks, with the arguments thaw setup printed).
    local append="console=ttyS0 ${TQ_ROOT_ARGS:-root=/dev/vda} $rootmode"
    append+=" ${TQ_THAW_ARGS-rd.thaw.device=/dev/vdb rd.thaw.key=fwcfg:opt/thaw/key}"
    # no_timer_check: on a loaded host a TCG guest can fail the IO-APIC timer check and panic at
    # boot ("IO-APIC + timer doesn't work"), as seen during development; the check is for real hardware.
    append+=" no_timer_check loglevel=$TQ_LOGLEVEL panic=-1 thaw.step=$step thaw.seed=$TQ_SEED thaw.mib=$TQ_WORKLOAD_MIB $*"
    # TQ_KERNEL: another kernel (make bench-kernel's); an empty TQ_INITRD boots without initramfs.
    local boot=(-kernel "${TQ_KERNEL:-$(tq_vmlinuz)}")
    [[ -n ${TQ_INITRD:-} ]] && boot+=(-initrd "$TQ_INITRD")
    tq_log "boot $name: step=$step ${*:-}"
    TQ_TPM_ARGS=()
    [[ -n $TQ_TPM_STATE ]] && tq_swtpm_start "$name"
    local guest=()
    [[ -n ${TQ_GUEST:-} ]] && guest=(-fw_cfg "name=opt/test/guest,file=$TQ_GUEST")
    start=$EPOCHREALTIME
    local tag=thaw-test-$$-$RANDOM watch
    rm -f "$TQ_WORK/$name.hung"
    tq_watch_hang "$log" "$tag" "$TQ_WORK/$name.hung" &
    watch=$!
    "${TQ_QEMU_WRAP[@]}" timeout -k 10 "$TQ_BOOT_TIMEOUT" "$TQ_QEMU" -name "$tag" -accel "$TQ_ACCEL" -cpu "$TQ_CPU" -m "$TQ_MEM" -smp "$TQ_SMP" \
        -nodefaults -display none -no-reboot -serial stdio \
        "${boot[@]}" -append "$append" \
        -drive "file=$TQ_WORK/root.img,if=virtio,format=raw" \
        -drive "file=$TQ_WORK/swap.img,if=virtio,format=raw" \
        -fw_cfg "name=opt/thaw/key,file=$key" -fw_cfg "name=opt/test/realkey,file=$TQ_WORK/key" \
        -object rng-random,id=rng0,filename=/dev/urandom -device virtio-rng-pci,rng=rng0 \
        "${guest[@]}" "${TQ_TPM_ARGS[@]}" "${TQ_QEMU_EXTRA[@]}" < /dev/null 2>&1 | tee "$log.raw" | tq_stamp "$start" > "$log"
    rc=${PIPESTATUS[0]}
    kill "$watch" 2> /dev/null
    wait "$watch" 2> /dev/null
    rm -f "$log.raw"
    if [[ -e $TQ_WORK/$name.hung ]]; then
        tq_log "boot $name: stopped as hung $(cat "$TQ_WORK/$name.hung"): $(tq_hang_signature "$name")"
        rc=124
    fi
    tq_swtpm_stop
    TQ_BOOT_SECONDS=$(tq_since "$start")
    tq_log "boot $name: QEMU exited with status $rc after ${TQ_BOOT_SECONDS} s"
    return "$rc"
}

# tq_watch_hang LOG TAG MARK: a hung guest, seen early, so a hang costs seconds rather than
# TQ_BOOT_TIMEOUT. It is hung when the kernel reports a soft lockup, or when the guest has sent no
# byte to its serial console (LOG.raw, the console's output as it comes, progress bars included;
# an empty log counts from QEMU's start) for
# - TQ_HANG_SECONDS (30) at the kernel's own hibernation steps (the last line the console suspend
#   or taking CPUs offline) or inside a resume the kernel started and did not finish: in a
#   clean-clone run of all scenarios the longest silence there in a boot that went on was 0.5 s
#   (hibernating) and 2.5 s (resuming);
# - TQ_PREALLOC_SECONDS (60) at the kernel's "Preallocating image memory", the one step that works
#   long without a word and cannot be made to say more: 15 s on a quiet host with one vCPU, 29.3 s
#   with another guest beside it (systemd-swapfile, 2026-12-04);
# - TQ_SILENCE_SECONDS (30) anywhere else. What works long there says how far it has got every few
#   seconds (the workload's fill and check, thaw setup's integrity tags, thaw hibernate's reclaim,
#   thaw swapin's progress bar). 0 turns it and the preallocation's limit off: the benchmarks,
#   whose guests work silently for long (bench-swapin's swapoff of 700 MiB took 28 s on a quiet
#   host, and grows with its sizes and the host's load), watch only the kernel's steps.
# Then MARK gets what was seen and the boot's timeout is fired at once (SIGALRM: it stops QEMU and
# exits 124, as at the full timeout).
TQ_HANG_SECONDS=${TQ_HANG_SECONDS:-30}
TQ_PREALLOC_SECONDS=${TQ_PREALLOC_SECONDS:-60}
TQ_SILENCE_SECONDS=${TQ_SILENCE_SECONDS:-30}
TQ_HANG_POLL=${TQ_HANG_POLL:-5}   # seconds between looks (test/host/t-harness.sh: 1)
tq_watch_hang() {
    local log=$1 tag=$2 mark=$3 age limit mtime last
    while sleep "$TQ_HANG_POLL"; do
        [[ -e $log ]] || continue
        # A soft lockup (seen at boot under TCG, both vCPUs spinning in getrandom(), long before
        # thaw runs; issue "A test suite that does not flake") never ended in any boot seen: its
        # reports keep the log growing, so no silence would show it. Stopped at once.
        if tq_soft_lockup_in "$log"; then
            tq_stop_hung "$tag" "$mark" "at once" && return 0
            continue
        fi
        last=$(tq_last_line "$log")
        # A resume the kernel started and never finished: it prints its image loading progress
        # every 10%, and restarts tasks once the restored system runs.
        if grep -qE 'Suspending console\(s\)|Disabling non-boot CPUs' <<< "$last" ||
            { grep -qF 'PM: hibernation: resume from hibernation' "$log" &&
                ! grep -qF 'Restarting tasks' "$log"; }; then
            limit=$TQ_HANG_SECONDS
        elif ((TQ_SILENCE_SECONDS <= 0)); then
            continue
        elif [[ $last == *'PM: hibernation: Preallocating image memory'* ]]; then
            limit=$TQ_PREALLOC_SECONDS
        else
            limit=$TQ_SILENCE_SECONDS
        fi
        mtime=$(stat -c %Y "$log" "$log.raw" 2> /dev/null | sort -n | tail -n 1)
        [[ -n $mtime ]] || continue
        age=$(($(date +%s) - mtime))
        ((age >= limit)) || continue
        tq_stop_hung "$tag" "$mark" "after $limit s with no serial output" && return 0
    done
}

# tq_stop_hung TAG MARK WHY: writes WHY to MARK and fires the timeout of the QEMU named TAG; if no
# such timeout was found, MARK is removed again (a boot whose QEMU could not be signalled is not said
# to be hung). MARK comes first: tq_boot stops this watcher as soon as QEMU has exited.
tq_stop_hung() {
    echo "$3" > "$2"
    pkill -ALRM -f -- "^timeout -k 10 [0-9]+ [^ ]+ -name $1 " 2> /dev/null && return 0
    rm -f "$2"
    return 1
}

tq_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }

# Prefixes each line with seconds since $1, e.g. " 12.34| text".
tq_stamp() {
    local a=$1 line now n
    while IFS= read -r line || [[ -n $line ]]; do
        line=${line//$'\r'/}
        now=$EPOCHREALTIME
        # Integer microseconds: no subprocess per line.
        n=$(( ${now%.*} * 1000000 + 10#${now#*.} - ${a%.*} * 1000000 - 10#${a#*.} ))
        printf '%4d.%02d| %s\n' $((n / 1000000)) $(( (n % 1000000) / 10000 )) "$line"
    done
}

# ---------------------------------------------------------------------------------------------
# Reading results from the serial logs.

# tq_has NAME TEXT: the boot's log contains TEXT (fixed string).
tq_has() { grep -qF -- "$2" "$TQ_WORK/$1.log"; }

# tq_time NAME TEXT: seconds (from QEMU start) of the first line containing TEXT, or empty.
tq_time() { grep -F -m1 -- "$2" "$TQ_WORK/$1.log" | sed 's/|.*//; s/ //g'; }

# tq_show NAME: the lines a reader needs when something fails (test markers and thaw lines).
tq_show() {
    grep -E 'THAW-TEST|thaw:|workload:|PM: |Kernel panic|BUG|Oops|reboot: |EXT4-fs \(vda\)' "$TQ_WORK/$1.log" |
        sed 's/^/#   /' >&2
}

# Assertions used by scenarios: count failures, print what was checked.
TQ_FAILS=0
tq_check() {
    local what=$1
    shift
    if "$@"; then
        tq_log "ok: $what"
    else
        tq_log "FAILED: $what"
        TQ_FAILS=$((TQ_FAILS + 1))
    fi
}

# tq_image_written NAME: the kernel (thaw hibernate --writer kernel) or thaw (--writer thaw) wrote an image.
tq_image_written() { tq_has "$1" "PM: hibernation: Wrote" || tq_has "$1" "thaw: wrote the image to "; }

# tq_lacks NAME TEXT: the boot's log does not contain TEXT.
tq_lacks() { ! tq_has "$1" "$2"; }

# tq_state_save, tq_state_restore, tq_state_drop: what a boot can change, kept before it and put
# back for a retry: the root and swap disks, and the TPM's state when the boot has one (a resume
# increments the TPM2 counter before thaw's handoff, so a retry on the disks alone would meet a
# counter one ahead of its image; replay-tpm, seen in a clean-clone run). Further drives of
# TQ_QEMU_EXTRA are not kept.
tq_state_save() {
    local disk
    for disk in root swap; do
        cp --sparse=always "$TQ_WORK/$disk.img" "$TQ_WORK/$disk.img.pre"
    done
    rm -rf "$TQ_WORK/tpm.pre"
    if [[ -n $TQ_TPM_STATE && -d $TQ_TPM_STATE ]]; then
        cp -a "$TQ_TPM_STATE" "$TQ_WORK/tpm.pre"
    fi
}
tq_state_restore() {
    local disk
    for disk in root swap; do
        cp --sparse=always "$TQ_WORK/$disk.img.pre" "$TQ_WORK/$disk.img"
    done
    if [[ -n $TQ_TPM_STATE ]]; then
        # No copy: there was no state before the boot, a fresh TPM.
        rm -rf "$TQ_TPM_STATE"
        [[ ! -d $TQ_WORK/tpm.pre ]] || cp -a "$TQ_WORK/tpm.pre" "$TQ_TPM_STATE"
    fi
}
tq_state_drop() { rm -rf "$TQ_WORK/root.img.pre" "$TQ_WORK/swap.img.pre" "$TQ_WORK/tpm.pre"; }

# tq_boot_checked NAME STEP KEYFILE [EXTRA-CMDLINE...]: tq_boot, and count a timeout or crash; only a
# soft lockup is retried.
tq_boot_checked() { tq_boot_retried tq_soft_lockup_of "$@"; }

# tq_boot_retried HUNG NAME STEP KEYFILE [EXTRA-CMDLINE...]: tq_boot; a boot stopped as hung for
# which HUNG NAME holds is tried again (up to TQ_HANG_RETRIES times) on its disks and TPM state as
# they were before it (tq_state_restore), and said; then the power-off is checked.
tq_boot_retried() {
    local hung=$1 rc=0 try=0
    shift
    tq_state_save
    tq_boot "$@" || rc=$?
    while ((rc == 124 && try < TQ_HANG_RETRIES)) && "$hung" "$1"; do
        try=$((try + 1))
        tq_log "RETRY: boot $1 hung: $(tq_hang_signature "$1"); its log is $1.hung$try.log; disks${TQ_TPM_STATE:+ and TPM} put back as before it, once more"
        mv "$TQ_WORK/$1.log" "$TQ_WORK/$1.hung$try.log"
        tq_state_restore
        rc=0
        tq_boot "$@" || rc=$?
    done
    tq_state_drop
    tq_check "boot $1 powered off by itself (QEMU status $rc, ${TQ_BOOT_SECONDS} s)" test "$rc" -eq 0
    TQ_TIMES+=("$1=${TQ_BOOT_SECONDS}s")
}
TQ_TIMES=()

# The file given to the guest as fw_cfg opt/thaw/key by the two boots below; a scenario whose key
# comes from elsewhere sets it to $TQ_WORK/wrong-key, so fw_cfg cannot be what unlocked the device.
TQ_FWCFG_KEY=${TQ_FWCFG_KEY:-}

# tq_sleep_boot_checked NAME STEP KEYFILE [EXTRA-CMDLINE...]: tq_boot_checked for a boot that
# hibernates or resumes. Under TCG with 2 vCPUs Debian's 6.1 guest kernel hangs now and then, idle
# until stopped, inside its hibernation (after "hibernation entry", before any image was written;
# the last line "Disabling non-boot CPUs" or the console suspend before it) or inside its resume
# after thaw's handoff (CI: verify's resume boot, silent after "resume from hibernation";
# test/bench/integrity-cost.sh: at "Suspending console(s)" after the image was loaded), with no
# thaw code running. tq_watch_hang stops such a boot after TQ_HANG_SECONDS of silence. Nothing of
# thaw's was judged there, so it is said loudly and the boot tried again (up to TQ_HANG_RETRIES
# times: systemd-swapfile's hung twice in a row once) on the disks as they were before it, copied
# first (a resume's kernel had erased the image's signature); every check still applies.
TQ_HANG_RETRIES=${TQ_HANG_RETRIES:-3}

# tq_kernel_hung NAME: the boot stopped inside the kernel's hibernation before an image was
# written, or inside its resume before the restored system restarted its tasks.
# tq_soft_lockup_in LOG: the kernel reported a soft lockup.
tq_soft_lockup_in() { grep -qF 'watchdog: BUG: soft lockup' "$1"; }
tq_soft_lockup_of() { tq_soft_lockup_in "$TQ_WORK/$1.log"; }

# tq_last_line LOG: the guest's last line, not QEMU's own note of the signal that stopped it
# ("qemu-system-x86_64: terminating on signal 15 from pid …", named after whichever QEMU ran).
tq_last_line() { grep -vE '^ *[0-9.]+\| [^ ]+: terminating on signal [0-9]+' "$1" | tail -n 1; }

# With thaw's writer (/dev/snapshot) there is no "hibernation entry": a boot silent at the kernel's
# own steps of the snapshot (preallocating its memory, console suspend, CPUs offline) before thaw
# wrote anything. A silence anywhere else in thaw's write is not the kernel's, and is not retried.
tq_kernel_hung() {
    tq_soft_lockup_of "$1" ||
    { tq_has "$1" "PM: hibernation: hibernation entry" && ! tq_image_written "$1"; } ||
    { tq_has "$1" "thaw: hibernating to" && ! tq_image_written "$1" &&
        tq_last_line "$TQ_WORK/$1.log" |
            grep -qE 'Preallocating image memory|Suspending console\(s\)|Disabling non-boot CPUs'; } ||
        { tq_has "$1" "PM: hibernation: resume from hibernation" && tq_lacks "$1" "Restarting tasks"; }
}

# tq_hang_signature NAME: what the hung boot's log shows, for the RETRY line and the scenario's
# result: a soft lockup and where, or the silence and its last line; "after thaw's handoff" when
# thaw had handed an image to the kernel (a fault of thaw's there would look the same).
tq_hang_signature() {
    local log=$TQ_WORK/$1.log last where=""
    if tq_soft_lockup_in "$log"; then
        echo "a soft lockup at $(grep -m1 -o 'RIP: 0010:[^ ]*' "$log" | tr -d '\r')"
        return
    fi
    last=$(tq_last_line "$log" | sed 's/^ *[0-9.]*| *//; s/^\[ *[0-9.]*\] //' | cut -c1-80)
    tq_has "$1" "thaw: resuming from" && where=" after thaw's handoff"
    echo "silent${where} at '$last'"
}

tq_sleep_boot_checked() { tq_boot_retried tq_kernel_hung "$@"; }

# Boot 1 of the scenarios that need an image: setup, workload, thaw hibernate, power-off.
# tq_hibernate_boot NAME [EXTRA-CMDLINE...]
tq_hibernate_boot() {
    tq_sleep_boot_checked "$1" hibernate "${TQ_FWCFG_KEY:-$TQ_WORK/key}" "${@:2}"
    tq_check "$1: thaw setup succeeded" tq_has "$1" "THAW-TEST: setup exit 0"
    tq_check "$1: workload holds ${TQ_WORKLOAD_MIB} MiB" tq_has "$1" "THAW-TEST: workload ready"
    tq_check "$1: the image was written" tq_image_written "$1"
    tq_check "$1: powered off inside the hibernation (thaw hibernate did not return)" \
        tq_lacks "$1" "THAW-TEST: hibernate exit"
}

# A boot that must resume the image written by tq_hibernate_boot, with nothing lost.
tq_resume_boot() {
    local name=$1
    shift
    tq_sleep_boot_checked "$name" resume "${TQ_FWCFG_KEY:-$TQ_WORK/key}" "$@"
    tq_check "$name: thaw verified the image's ticket before the handoff" \
        grep -qE "thaw: image ticket verified in [0-9]+ ms: image of $TQ_DATE_RE, " "$TQ_WORK/$name.log"
    tq_check "$name: thaw handed the image to the kernel" \
        tq_has "$name" "thaw: resuming from /dev/mapper/thaw-swap"
    tq_check "$name: the kernel loaded the image" tq_has "$name" "PM: Image loading done"
    tq_check "$name: the fresh init never ran" tq_lacks "$name" "THAW-TEST: fresh boot"
    tq_check "$name: thaw hibernate returned 0 in the resumed system" \
        tq_has "$name" "THAW-TEST: hibernate exit 0"
    tq_check "$name: workload: nothing lost" tq_has "$name" "workload: nothing lost (${TQ_WORKLOAD_MIB} MiB verified"
}

# ---------------------------------------------------------------------------------------------
# The image ticket (thaw hibernate's LUKS2 token thaw-ticket on the swap device): read on the host,
# and what thaw resume says about it.

# How thaw writes a time in its lines ("2026-12-03 18:40 UTC"), as an extended regular expression.
TQ_DATE_RE='[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2} UTC'

# tq_ticket_id IMG / tq_ticket_get IMG FIELD: the thaw-ticket token's id in IMG's LUKS2 header, one
# field of it; empty if IMG has none (or several).
tq_ticket_py() {
    cryptsetup luksDump --dump-json-metadata "$1" 2> /dev/null | python3 -c '
import json, sys
tokens = json.load(sys.stdin).get("tokens", {})
found = [(i, t) for i, t in tokens.items() if t.get("type") == "thaw-ticket"]
if len(found) == 1:
    i, t = found[0]
    print(i if sys.argv[1] == "" else t.get(sys.argv[1], ""))' "$2" 2> /dev/null
}
tq_ticket_id() { tq_ticket_py "$1" ""; }
tq_ticket_get() { tq_ticket_py "$1" "$2"; }

# tq_superseded NAME REASON: boot NAME's thaw resume said it superseded the image's ticket, giving
# REASON (an extended regular expression: the outcome, "noresume", "no-key", ...).
tq_superseded() {
    grep -qE "thaw: image of $TQ_DATE_RE superseded by this boot \($2\): it will never be resumed \(resuming it \
would corrupt file systems it had mounted\)" "$TQ_WORK/$1.log"
}

# tq_stale NAME WHY: boot NAME (step inspect) refused the image for its ticket, WHY (an extended
# regular expression) in its one-line reason, dropped it and went on with the swap ready: nothing
# handed over, and the real system's thaw status says so.
tq_stale() {
    local n=$1 why=$2
    tq_check "$n: thaw refused the image for its ticket and dropped it: $why" \
        grep -qE "thaw: not resuming the image on /dev/mapper/thaw-swap: $why; image discarded, boot continues, swap \
ready" "$TQ_WORK/$n.log"
    tq_check "$n: no handoff" tq_lacks "$n" "thaw: resuming from"
    tq_check "$n: the kernel never saw the image" tq_lacks "$n" "PM: hibernation: resume from hibernation"
    tq_check "$n: thaw resume exited normally (no crash)" tq_lacks "$n" "thaw resume exited with status"
    tq_check "$n: the boot went on to the real init" tq_has "$n" "THAW-TEST: fresh boot step=inspect"
    tq_check "$n: the mapping is open for swap" tq_has "$n" "THAW-TEST: mapping present"
    tq_check "$n: the image is gone, the swap signature back (SWAPSPACE2)" \
        tq_has "$n" "THAW-TEST: image signature: SWAPSPACE"
    tq_check "$n: the kernel takes it as swap" tq_has "$n" "THAW-TEST: swapon exit 0"
    tq_check "$n: the outcome is stale" tq_has "$n" "THAW-TEST: state: outcome=stale"
    tq_check "$n: thaw status in the real system says why the image was dropped" \
        tq_has "$n" "THAW-TEST: status: At boot, thaw resume: an image that could not be resumed safely was discarded"
    tq_log "$n: $(grep -F 'thaw: not resuming' "$TQ_WORK/$n.log" | sed 's/.*thaw: //' | head -n1)"
}

# tq_disks_sum: the sha256 of this run's root and swap disks.
tq_disks_sum() { cat "$TQ_WORK/root.img" "$TQ_WORK/swap.img" | sha256sum | cut -c1-64; }

# tq_poweroff_boot NAME WHY [EXTRA-CMDLINE...]: one boot (step inspect) in which thaw must refuse
# the image for WHY (fixed text, the start of the reason) under rd.thaw.mismatch=poweroff, the
# default: it powers the VM off before anything is mounted, and the image, its ticket and the root
# are left exactly as they were, so that a boot on the right machine still resumes it.
tq_poweroff_boot() {
    local n=$1 why=$2 before
    shift 2
    before=$(tq_disks_sum)
    tq_boot_checked "$n" inspect "$TQ_WORK/key" "$@"
    tq_check "$n: thaw refused the image and powered off: $why" \
        grep -qF "thaw: not resuming the image on /dev/mapper/thaw-swap: $why" "$TQ_WORK/$n.log"
    tq_check "$n: the line says powering off before anything is mounted, image kept" \
        tq_has "$n" "; rd.thaw.mismatch=poweroff: powering off before anything is mounted, image kept: "
    tq_check "$n: the kernel powered the VM off" tq_has "$n" "reboot: Power down"
    tq_check "$n: no handoff" tq_lacks "$n" "thaw: resuming from"
    tq_check "$n: the kernel never saw the image" tq_lacks "$n" "PM: hibernation: resume from hibernation"
    tq_check "$n: the root was never mounted" tq_lacks "$n" "EXT4-fs (vda): mounted"
    tq_check "$n: the real init never ran" tq_lacks "$n" "THAW-TEST: fresh boot"
    tq_check "$n: the ticket was not superseded" tq_lacks "$n" "superseded by this boot"
    tq_check "$n: nothing was written to the root or swap disk (sha256 before and after)" \
        test "$before" = "$(tq_disks_sum)"
    tq_check "$n: the ticket is still fresh" test "$(tq_ticket_get "$TQ_WORK/swap.img" state)" = fresh
    tq_log "$n: $(grep -F 'thaw: not resuming' "$TQ_WORK/$n.log" | sed 's/.*thaw: //' | head -n1)"
}

tq_finish() {
    local log
    tq_log "boot times: ${TQ_TIMES[*]}"
    if ((TQ_FAILS > 0)); then
        for log in "$TQ_WORK"/*.log; do
            tq_log "--- $(basename "$log"): markers and thaw lines"
            tq_show "$(basename "$log" .log)"
        done
        tq_log "serial logs: $TQ_WORK"
        exit 1
    fi
    exit 0
}

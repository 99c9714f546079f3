#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# /sbin/init of the test guest: runs the step named by thaw.step= on the kernel command line,
# prints "THAW-TEST: …" markers on the console for the harness, and powers off.
#
# Steps:
#   setup        thaw setup on /dev/vdb, then power off (no image)
#   hibernate    setup, swap on, workload, thaw hibernate; after the resume: verify the workload
#   plain        the same with plain swap on /dev/vdb and the raw sysfs interface (harness self-test)
#   cold         a boot without image: the mapping is there, swap is usable
#   inspect      a boot that must not have resumed: say whether the image header is still armed
#   write        a boot that goes on as a real one: the root read-write (its journal replayed), a few
#                files written and synced, then the root remounted read-only (a clean shutdown)
#   resume       a boot that must resume: reaching this init at all means it did not
#   doctor       thaw doctor only (the cold step runs it too, with the swap on)
#   bench        make bench-swapin's script, from fw_cfg opt/test/bench
#   mkroot       make /dev/vdb an encrypted root with a swap file (thaw setup --swapfile in a chroot)
#   hibernate-file  (on that root) swapon /swapfile, workload, thaw hibernate; then verify
#
# thaw.hibargs=a,b passes options to thaw hibernate (commas for spaces); thaw.after= names what the
# hibernate step does after the resume, before verifying the workload (see after_resume). The
# resumed system runs with the hibernating boot's command line: both go on the hibernate boot.

# /usr/sbin: where the hostonly scenario's root has thaw, installed from the Debian package.
PATH=/bin:/usr/sbin
export PATH
# This root runs no udev: libdevmapper creates the /dev/mapper nodes itself.
DM_DISABLE_UDEV=1
export DM_DISABLE_UDEV

# dracut's switch_root (util-linux's, see test/qemu/dracut/06switchroot) moves /proc, /sys, /dev
# and /run into the new root: /run/thaw/state comes with it. Mount what is missing.
[ -e /proc/self ] || mount -t proc proc /proc
[ -d /sys/kernel ] || mount -t sysfs sysfs /sys
[ -e /dev/null ] || mount -t devtmpfs devtmpfs /dev
grep -q ' /run ' /proc/mounts || mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
# As on a systemd system: thaw hibernate --reclaim uses its memory.reclaim.
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2> /dev/null

say() { echo "THAW-TEST: $*"; }

arg() { tr ' ' '\n' < /proc/cmdline | sed -n "s/^$1=//p" | tail -n 1; }

off() {
    sync
    say "poweroff"
    poweroff -f
    sleep 30
}

fail() {
    say "FAIL: $*"
    off
}

kmsg_thaw() {
    dmesg | grep 'thaw:' | sed 's/^/THAW-TEST: kmsg: /'
}

step=$(arg thaw.step)
seed=$(arg thaw.seed)
mib=$(arg thaw.mib)
# An inspect boot runs while a hibernated system still has this root mounted: it must not write
# to it (the harness mounts it ro without journal replay). Every other step needs it writable.
[ "$step" = inspect ] || mount -o remount,rw /
say "fresh boot step=$step"
say "root: $(grep ' / ' /proc/mounts)"
modprobe -q qemu_fw_cfg
modprobe -q dm_crypt
kmsg_thaw

# thaw.setupkey= names the key source chain setup enrolls (default: the fw_cfg key);
# thaw.integrity=1 makes the container with --integrity.
setup() {
    setupkey=$(arg thaw.setupkey)
    integrity=
    [ "$(arg thaw.integrity)" = 1 ] && integrity=--integrity
    say "setup starts"
    # shellcheck disable=SC2086 # $integrity is one option or none
    thaw setup --device /dev/vdb --key "${setupkey:-fwcfg:opt/thaw/key}" --yes $integrity
    rc=$?
    say "setup exit $rc"
    [ "$rc" -eq 0 ] || fail "thaw setup failed"
    [ -b /dev/mapper/thaw-swap ] || fail "no /dev/mapper/thaw-swap after setup"
}

# thaw.sdenroll=PCRS: after setup, systemd 252's systemd-cryptenroll (put into this run's root by
# the scenario) adds a systemd-tpm2 keyslot bound to PCRS of this guest's TPM, unlocking with the
# fw_cfg key setup used.
sdenroll() {
    pcrs=$(arg thaw.sdenroll)
    [ -n "$pcrs" ] || return 0
    systemd-cryptenroll --unlock-key-file=/sys/firmware/qemu_fw_cfg/by_name/opt/thaw/key/raw \
        --tpm2-device=/dev/tpmrm0 --tpm2-pcrs="$pcrs" /dev/vdb 2>&1 | sed 's/^/THAW-TEST: cryptenroll: /'
    cryptsetup luksDump /dev/vdb | grep -q 'systemd-tpm2' || fail "no systemd-tpm2 token after systemd-cryptenroll"
    say "systemd-tpm2 enrolled"
    # The header changed on purpose: re-pinned as thaw(8) says, or thaw hibernate refuses the stale pin.
    thaw enroll --device /dev/vdb --repin 2>&1 | sed 's/^/THAW-TEST: repin: /'
}

# wait_ready FILE PID NAME: waits (up to 300 s) until the workload PID has created FILE.
wait_ready() {
    n=0
    while [ ! -e "$1" ]; do
        kill -0 "$2" 2> /dev/null || fail "$3 died"
        n=$((n + 1))
        [ "$n" -lt 600 ] || fail "$3 not ready after 300 s"
        sleep 0.5
    done
}

# start_workload MIB: fills MIB MiB, waits until it is ready; sets $wl.
start_workload() {
    rm -f /tmp/ready
    workload "$1" "$seed" /tmp/ready &
    wl=$!
    wait_ready /tmp/ready "$wl" workload
    say "workload ready"
}

verify_workload() {
    kill -USR1 "$wl"
    wait "$wl"
    say "workload exit $?"
}

# What thaw doctor says about this kernel (Debian's). securityfs mounted as on a systemd system,
# so it can read the lockdown state.
doctor() {
    mount -t securityfs securityfs /sys/kernel/security 2> /dev/null
    thaw doctor > /tmp/doctor 2>&1
    rc=$?
    sed 's/^/THAW-TEST: doctor: /' /tmp/doctor
    say "doctor exit $rc"
}

mapping_state() {
    if [ -b /dev/mapper/thaw-swap ]; then say "mapping present"; else say "mapping absent"; fi
}

swap_used_kib() {
    awk '/^SwapTotal:/ {t = $2} /^SwapFree:/ {f = $2} END {print t - f}' /proc/meminfo
}

# corrupt DEV: verify the image, flip one bit in the first compressed chunk, verify again
# (craft's flip).
corrupt() {
    thaw inspect --verify "$1" 2>&1 | sed 's/^/THAW-TEST: verify-before: /'
    map=$(thaw inspect --json "$1" | sed -n 's/.*"first_map_block":\([0-9]*\).*/\1/p')
    # Entry 1 of the first map page: the first page of the first chunk (entry 0 is the header page).
    blk=$(dd if="$1" bs=4 skip=$((map * 1024 + 2)) count=1 2> /dev/null | od -An -tu4 | tr -d ' ')
    off=$((blk * 4096 + 64))
    v=$(dd if="$1" bs=1 skip="$off" count=1 2> /dev/null | od -An -tu1 | tr -d ' ')
    # shellcheck disable=SC2059 # the format is the octal escape
    printf "$(printf '\\%03o' $((v ^ 1)))" | dd of="$1" bs=1 seek="$off" conv=notrunc 2> /dev/null
    sync
    say "corrupted: byte 64 of block $blk (map page $map) was $v"
    thaw inspect --verify "$1" 2>&1 | sed 's/^/THAW-TEST: verify-after: /'
}

# write_files WHEN: what any running system does to its root: four files of random content in
# /var/tmp, synced, so that the file system's markers (journal commit sequence, kbytes written) move.
write_files() {
    mkdir -p /var/tmp || fail "cannot make /var/tmp"
    t=$(date +%s)
    for i in 1 2 3 4; do
        head -c 262144 /dev/urandom > "/var/tmp/thaw-test-$1-$t-$i" || fail "cannot write /var/tmp/thaw-test-$1-$t-$i"
    done
    sync
    say "wrote files: 4 of 256 KiB in /var/tmp ($1), synced"
}

vmswap_kib() { awk '/^VmSwap:/ {print $2}' "/proc/$1/status"; }
# The process's anonymous memory in transparent huge pages.
anonhuge_kib() { awk '/^AnonHugePages:/ {print $2}' "/proc/$1/smaps_rollup"; }

# Swapped memory that is not also in RAM (the swap cache keeps copies of pages brought back).
swapped_kib() {
    awk '/^SwapTotal:/ {t = $2} /^SwapFree:/ {f = $2} /^SwapCached:/ {c = $2} END {print t - f - c}' /proc/meminfo
}

meminfo_kib() { awk -v k="$1:" '$1 == k {print $2}' /proc/meminfo; }

# busybox has no pgrep: is a "thaw swapin" process running?
swapin_running() {
    for f in /proc/[0-9]*/cmdline; do
        case "$(tr '\0' ' ' < "$f" 2> /dev/null)" in "thaw swapin"*) return 0 ;; esac
    done
    return 1
}

# The swap-in thaw hibernate started after the resume: wait until it has come and gone.
wait_swapin() {
    say "after resume: workload VmSwap $(vmswap_kib "$wl") kB, swapped $(swapped_kib) kB," \
        "AnonHugePages $(anonhuge_kib "$wl") kB"
    t0=$(cut -d. -f1 /proc/uptime)
    n=0
    while ! swapin_running && [ "$n" -lt 20 ]; do sleep 0.5; n=$((n + 1)); done
    while swapin_running; do
        [ $(($(cut -d. -f1 /proc/uptime) - t0)) -lt 600 ] || fail "thaw swapin still running after 600 s"
        sleep 1
    done
    say "swap-in over after $(($(cut -d. -f1 /proc/uptime) - t0)) s: workload VmSwap $(vmswap_kib "$wl") kB," \
        "swapped $(swapped_kib) kB, AnonHugePages $(anonhuge_kib "$wl") kB"
}

# A heartbeat every second while $1 runs; prints the longest gap between two beats.
heartbeat() {
    rm -f /tmp/beats
    ( while :; do date +%s >> /tmp/beats; sleep 1; done ) &
    hb=$!
    "$@"
    rc=$?
    kill "$hb"
    say "heartbeat: longest gap $(awk 'NR > 1 && $1 - p > g {g = $1 - p} {p = $1} END {print g + 0}' /tmp/beats) s"
    return "$rc"
}

# More swapped than fits: a second workload takes all but about 140 MiB of the available memory,
# then swapoff must refuse and prefetch must stop at the floor. Once it is gone, a second prefetch
# brings the rest back.
tight() {
    avail=$(meminfo_kib MemAvailable)
    hog=$(((avail - 140 * 1024) / 1024))
    rm -f /tmp/ready2
    workload "$hog" "$((seed + 1))" /tmp/ready2 &
    hogpid=$!
    wait_ready /tmp/ready2 "$hogpid" "second workload"
    say "tight: second workload holds $hog MiB; workload VmSwap $(vmswap_kib "$wl") kB," \
        "MemAvailable $(meminfo_kib MemAvailable) kB"
    thaw swapin --strategy swapoff
    say "swapoff strategy exit $?"
    heartbeat thaw swapin
    say "prefetch exit $?"
    say "after prefetch: workload VmSwap $(vmswap_kib "$wl") kB, MemAvailable $(meminfo_kib MemAvailable) kB," \
        "swap on: $(grep -c '^/dev/' /proc/swaps)"
    kill -USR1 "$hogpid"
    wait "$hogpid"
    say "second workload exit $?"
    swapin_first_interrupt
    thaw swapin 2> /tmp/plain
    say "prefetch with room exit $?: workload VmSwap $(vmswap_kib "$wl") kB"
    # Not a terminal: one summary line and no bar (the console is a terminal, this file is not).
    say "plain: $(wc -l < /tmp/plain) lines, $(tr -cd '\r' < /tmp/plain | wc -c) carriage returns"
    sed 's/^/THAW-TEST: plain: /' /tmp/plain
    swapoff_priority
}

# With room again, a third small workload and the first are pushed out to swap (cgroup v2
# memory.reclaim, as thaw hibernate --reclaim does); thaw swapin --first THIRD runs on a terminal
# (util-linux script: a pty; the scenario adds it) and gets SIGTERM once the third is back; the rest
# comes back afterwards. Says how much the first still had in swap when the third had (nearly) none,
# the pty's output (bar and summary), the exit status and whether the swap is on.
swapin_first_interrupt() {
    rm -f /tmp/ready3 /tmp/ts
    workload 16 "$((seed + 2))" /tmp/ready3 &
    third=$!
    wait_ready /tmp/ready3 "$third" "third workload"
    echo 1G > /sys/fs/cgroup/memory.reclaim 2> /dev/null
    say "reclaimed: workload VmSwap $(vmswap_kib "$wl") kB, third VmSwap $(vmswap_kib "$third") kB"
    rm -f /tmp/swapin.pid
    # shellcheck disable=SC2016 # $$ is the inner shell's, which becomes thaw swapin
    script -qec 'echo $$ > /tmp/swapin.pid; exec thaw swapin --first '"$third" /tmp/ts > /dev/null 2>&1 < /dev/null &
    sp=$!
    n=0
    # Back: at most 64 kB left (a few pages can go out again meanwhile). Then SIGTERM at once.
    while [ "$(vmswap_kib "$third")" -gt 64 ] && kill -0 "$sp" 2> /dev/null && [ "$n" -lt 3000 ]; do
        sleep 0.1
        n=$((n + 1))
    done
    tp=$(cat /tmp/swapin.pid 2> /dev/null)
    wlf=$(vmswap_kib "$wl")
    kill -TERM "$tp" 2> /dev/null && say "sent SIGTERM to thaw swapin $tp"
    say "first: third VmSwap $(vmswap_kib "$third") kB while workload VmSwap $wlf kB"
    wait "$sp"
    say "interrupted swap-in exit $?: workload VmSwap $(vmswap_kib "$wl") kB, swap on: $(grep -c '^/dev/' /proc/swaps)"
    # The end of the pty's output: the bar redraws with \r and erases the rest of the line with ESC [K.
    tr '\r' '\n' < /tmp/ts | tr -d '\033' | sed 's/\[K$//' | grep -a . | tail -n 8 | sed 's/^/THAW-TEST: pty: /'
    kill -USR1 "$third"
    wait "$third"
    say "third workload exit $?"
}

# swapoff strategy with room: the swap comes back on with the priority it had (util-linux swapon
# sets one; the scenario adds it as ul-swapon).
swapoff_priority() {
    swapoff /dev/mapper/thaw-swap && ul-swapon -p 7 /dev/mapper/thaw-swap
    say "priority before: $(awk 'NR > 1 {print $5}' /proc/swaps)"
    thaw swapin --strategy swapoff
    say "swapoff strategy with room exit $?: priority after: $(awk 'NR > 1 {print $5}' /proc/swaps)"
}

after_resume() {
    case "$1" in
    wait-swapin) wait_swapin ;;
    tight) tight ;;
    # replay-tpm: hibernate once more from the resumed system (the second image); its resume
    # comes back here and goes on to verify the workload.
    rehibernate)
        say "hibernating again"
        thaw hibernate --mode shutdown
        say "rehibernate exit $?"
        ;;
    write) write_files after-resume ;;
    '') ;;
    *) say "unknown thaw.after '$1'" ;;
    esac
}

# thaw.aftercheck=SRC: in the resumed system, try the key of SRC against /dev/vdb (a tpm2 source
# must fail there: the resume boot locked it).
aftercheck() {
    src=$(arg thaw.aftercheck)
    [ -n "$src" ] || return 0
    thaw enroll --device /dev/vdb --check "$src" > /tmp/aftercheck 2>&1
    rc=$?
    sed 's/^/THAW-TEST: aftercheck: /' /tmp/aftercheck
    say "aftercheck exit $rc"
}

# An encrypted root on /dev/vdb, as an image builder makes one: LUKS2 with an installer key
# (fw_cfg opt/test/rootkey; cheap PBKDF2 to keep TCG fast), ext4 holding a copy of this root, then
# thaw setup --swapfile in a chroot of it, which enrolls the thaw key with the installer key.
mkroot() {
    uuid=$(arg thaw.rootuuid)
    rootkey=/sys/firmware/qemu_fw_cfg/by_name/opt/test/rootkey/raw
    cryptsetup luksFormat -q --type luks2 --uuid "$uuid" --pbkdf pbkdf2 --pbkdf-force-iterations 1000 \
        --key-file "$rootkey" /dev/vdb || fail "luksFormat /dev/vdb failed"
    cryptsetup open --key-file "$rootkey" /dev/vdb "luks-$uuid" || fail "cannot open /dev/vdb"
    # The path: busybox sh would run its own mke2fs applet (no ext4) for a bare name.
    /bin/mke2fs -q -t ext4 -L cryptroot "/dev/mapper/luks-$uuid" || fail "mke2fs failed"
    mount "/dev/mapper/luks-$uuid" /mnt || fail "cannot mount the new root"
    for d in bin sbin lib lib64 usr etc boot var; do
        [ -e "/$d" ] && cp -a "/$d" /mnt/
    done
    mkdir -p /mnt/dev /mnt/proc /mnt/sys /mnt/run /mnt/tmp /mnt/mnt
    rm -f /mnt/etc/thaw/thaw.conf
    mount --bind /dev /mnt/dev
    mount -t proc proc /mnt/proc
    mount -t sysfs sysfs /mnt/sys
    chroot /mnt thaw setup --swapfile /swapfile --size "$(arg thaw.swapmib)M" \
        --key fwcfg:opt/thaw/key --unlock fwcfg:opt/test/rootkey > /tmp/cmdline 2> /tmp/setup.err
    rc=$?
    sed 's/^/THAW-TEST: setup: /' /tmp/setup.err
    say "setup exit $rc"
    say "setup-cmdline: $(cat /tmp/cmdline)"
    chroot /mnt thaw config 2>&1 | sed 's/^/THAW-TEST: config: /'
    sed 's/^/THAW-TEST: thaw.conf: /' /mnt/etc/thaw/thaw.conf
    umount /mnt/sys /mnt/proc /mnt/dev /mnt
    cryptsetup close "luks-$uuid"
}

# What the initramfs left to the real system: the device-mapper mappings, each network interface
# (state and IPv4 addresses), and whether a DHCP client still runs.
left_over() {
    say "dm: $(cat /sys/block/dm-*/dm/name 2> /dev/null | tr '\n' ' ')"
    for d in /sys/class/net/*; do
        i=${d##*/}
        [ "$i" = lo ] && continue
        say "net: $i $(cat "$d/operstate") ipv4=[$(ip -4 -o addr show dev "$i" | awk '{print $4}' | tr '\n' ' ')]"
    done
    n=0
    for f in /proc/[0-9]*/cmdline; do
        case "$(tr '\0' ' ' < "$f" 2> /dev/null)" in *udhcpc*) n=$((n + 1)) ;; esac
    done
    say "dhcp clients running: $n"
}

# rd32 DEV BYTE / wr32 DEV BYTE VALUE: a little-endian u32 (block numbers fit: a u64's upper half is 0).
rd32() {
    dd if="$1" bs=1 skip="$2" count=4 2> /dev/null | od -An -tu4 | tr -d ' '
}
wr32() {
    # shellcheck disable=SC2059 # the format is the octal escapes
    printf "$(printf '\\%03o\\%03o\\%03o\\%03o' $(($3 & 255)) $(($3 >> 8 & 255)) $(($3 >> 16 & 255)) \
        $(($3 >> 24 & 255)))" | dd of="$1" bs=1 seek="$2" count=4 conv=notrunc 2> /dev/null
}

# craft DEV KIND: make a real image on DEV (an opened mapping) into a bad one, as a test fixture.
#   lz4      set SF_COMPRESSION_ALG_LZ4 (0x10, 6.9+) in the header's flags; 6.1 has no LZ4
#   garbage  random bytes over the image header page (swsusp_info, the restore record)
#   loop     the second map page's next_swap points back at the first
#   cut      the first map page's next_swap is 0: the chain ends ~2 MiB into the image
#   plain    the image decrypted in place: each block read through DEV is written back, in the
#            clear, at the same place of the raw disk $craftraw (the evil-cipher-null attacker's image)
#   flip     one bit of the first compressed chunk changed, thaw inspect --verify before and after
#            (corrupt(); the verify scenario)
#   uts      one byte of the image header page (swsusp_info) changed where nothing reads it (past
#            the end of the domain name): no CRC32 covers that page and no check looks there, only
#            the image's MAC in its ticket (the tamper-mac scenario)
# Then the header page's sum (see header_sum) as crafted, on the "crafted" line.
craft() {
    map=$(rd32 "$1" 4064)
    case "$2" in
    lz4) wr32 "$1" 4072 $(($(rd32 "$1" 4072) | 16)) ;;
    garbage) dd if=/dev/urandom of="$1" bs=4096 seek="$(rd32 "$1" $((map * 4096)))" count=1 conv=notrunc 2> /dev/null ;;
    loop)
        m2=$(rd32 "$1" $((map * 4096 + 4088)))
        [ "$m2" -gt 0 ] || m2=$map
        wr32 "$1" $((m2 * 4096 + 4088)) "$map"
        ;;
    cut) wr32 "$1" $((map * 4096 + 4088)) 0 ;;
    plain)
        # Block by block in order: no block is read through DEV after its raw place was written.
        # 64 MiB at a time with a line after each: the whole copy took 30 s under TCG, and the
        # harness takes 30 s without output for a hang.
        seg=$(cryptsetup luksDump "$craftraw" | sed -n 's/^[[:space:]]*offset: \([0-9]*\) \[bytes\].*/\1/p' | head -n1)
        total=$(($(blockdev --getsize64 "$1") / 1048576))
        copied=0
        while [ "$copied" -lt "$total" ]; do
            if ! dd if="$1" of="$craftraw" bs=1048576 skip="$copied" seek=$((seg / 1048576 + copied)) count=64 \
                iflag=fullblock conv=notrunc 2> /dev/null; then
                say "craft: copying the plain image to $craftraw failed"
                break
            fi
            copied=$((copied + 64))
            say "crafting plain: $copied of $total MiB copied"
        done
        ;;
    flip) corrupt "$1" ;;
    uts)
        info=$(rd32 "$1" $((map * 4096)))
        printf '\125' | dd of="$1" bs=1 seek=$((info * 4096 + 385)) conv=notrunc 2> /dev/null
        ;;
    *) say "craft: unknown kind $2" ;;
    esac
    sync
    say "crafted $2 on $1 (first map page $map); header page sum: $(dd if="$1" bs=4086 count=1 2> /dev/null |
        sha256sum | cut -c1-16)"
}

# rd8 DEV BYTE / rd16 DEV BYTE: one byte, a little-endian u16.
rd8() {
    dd if="$1" bs=1 skip="$2" count=1 2> /dev/null | od -An -tu1 | tr -d ' '
}
rd16() {
    dd if="$1" bs=1 skip="$2" count=2 2> /dev/null | od -An -tu2 | tr -d ' '
}

# tamper: on an --integrity container, flip one byte of the ciphertext of the image's first data
# page on the raw disk, as someone with the disk but not the key could. Where dm-integrity keeps a
# data sector: drivers/md/dm-integrity.c, get_data_sector() and calculate_device_limits() (6.1).
tamper() {
    dev=$1
    realkey=/sys/firmware/qemu_fw_cfg/by_name/opt/test/realkey/raw
    # Opened writable once, so dm-integrity replays its journal into place, then closed.
    cryptsetup open --key-file "$realkey" --keyfile-size 32 "$dev" thaw-tamper || fail "cannot open $dev"
    map=$(rd32 /dev/mapper/thaw-tamper 4064)
    blk=$(rd32 /dev/mapper/thaw-tamper $((map * 4096 + 8)))
    cryptsetup close thaw-tamper
    seg=$(cryptsetup luksDump "$dev" | sed -n 's/^[[:space:]]*offset: \([0-9]*\) \[bytes\].*/\1/p' | head -n1)
    magic=$(dd if="$dev" bs=1 skip="$seg" count=7 2> /dev/null)
    [ "$magic" = integrt ] || fail "no dm-integrity superblock at byte $seg of $dev"
    li=$(rd8 "$dev" $((seg + 9)))
    tag=$(rd16 "$dev" $((seg + 10)))
    js=$(rd32 "$dev" $((seg + 12)))
    flags=$(rd32 "$dev" $((seg + 24)))
    lspb=$(rd8 "$dev" $((seg + 28)))
    space=504
    [ $((flags & 1)) -eq 0 ] || space=496
    entry=$(((8 + 8 * (1 << lspb) + tag + 7) / 8 * 8))
    per_sector=$((space / entry))
    initial=$((8 + js * ((per_sector * 8 << lspb) + 8)))
    pad=131072
    [ $((flags & 8)) -eq 0 ] || pad=4096
    run=$((((tag << (li - lspb)) + pad - 1) / pad))
    run=$((run * pad / 512))
    sector=$((blk * 8))
    raw=$((seg / 512 + initial + ((sector >> li) + 1) * run + sector))
    off=$((raw * 512 + 64))
    v=$(rd8 "$dev" "$off")
    # shellcheck disable=SC2059 # the format is the octal escape
    printf "$(printf '\\%03o' $((v ^ 1)))" | dd of="$dev" bs=1 seek="$off" conv=notrunc 2> /dev/null
    sync
    say "tampered: byte $off of $dev (first data page, block $blk) was $v"
    cryptsetup open --readonly --key-file "$realkey" --keyfile-size 32 "$dev" thaw-tamper || fail "cannot open $dev"
    if dd if=/dev/mapper/thaw-tamper of=/dev/null bs=4096 skip="$blk" count=1 2> /tmp/dd; then
        say "tampered block reads without error"
    else
        say "tampered block reads: $(tail -n1 /tmp/dd)"
    fi
    cryptsetup close thaw-tamper
}

# With dmsetup (added by the scenario): the live tables of the thaw mapping, the key field masked.
# thaw.badmap=1: then /dev/vdb's data area mapped read-only in the clear (cipher_null, as a header
# switched to cipher_null makes libcryptsetup map it) and as linear: thaw hibernate must refuse
# both before freezing anything, and this system keeps running.
live_tables() {
    command -v dmsetup > /dev/null || return 0
    for m in thaw-swap thaw-swap_dif; do
        [ -b "/dev/mapper/$m" ] || continue
        # Only the key's form: ":SIZE:TYPE:..." in the keyring, or its length in hex.
        say "live table $m: $(dmsetup table "$m" | awk '$3 == "crypt" {
            if ($5 ~ /^:/) { split($5, k, ":"); $5 = ":" k[2] ":" k[3] ":<desc>" }
            else $5 = "<" length($5) " hex digits>" } { print }')"
    done
    [ "$(arg thaw.badmap)" = 1 ] || return 0
    dev=$(cat /sys/block/vdb/dev)
    seg=$(cryptsetup luksDump /dev/vdb | sed -n 's/^[[:space:]]*offset: \([0-9]*\) \[bytes\].*/\1/p' | head -n1)
    dmsetup create --noudevsync --readonly thaw-null \
        --table "0 16384 crypt cipher_null-ecb - 0 $dev $((seg / 512))" || say "badmap: dmsetup failed"
    dmsetup create --noudevsync --readonly thaw-lin --table "0 16384 linear $dev $((seg / 512))" ||
        say "badmap: dmsetup failed"
    for m in thaw-null thaw-lin; do
        say "live table $m: $(dmsetup table "$m")"
        thaw hibernate --name "$m" --mode shutdown > /tmp/badmap 2>&1
        rc=$?
        sed "s/^/THAW-TEST: badmap $m: /" /tmp/badmap
        say "badmap $m: exit $rc"
    done
    dmsetup remove thaw-null
    dmsetup remove thaw-lin
    # A stale pin (the header changed, thaw.conf not re-pinned): the next boot would refuse the header.
    if grep -q '^header=' /etc/thaw/thaw.conf 2> /dev/null; then
        cp /etc/thaw/thaw.conf /tmp/thaw.conf.good
        sed -i 's/^header=.*/header=sha256:'"$(printf '%064d' 0)"'/' /etc/thaw/thaw.conf
        thaw hibernate --dry-run > /tmp/badmap 2>&1
        rc=$?
        sed "s/^/THAW-TEST: badmap pin: /" /tmp/badmap
        say "badmap pin: exit $rc"
        cp /tmp/thaw.conf.good /etc/thaw/thaw.conf
    else
        say "badmap pin: no header= in /etc/thaw/thaw.conf"
    fi
    say "badmap: still running"
}

# header_sum DEV: the header page without its signature, which is all rd.thaw.mismatch=discard may change.
header_sum() {
    say "header page sum: $(dd if="$1" bs=4086 count=1 2> /dev/null | sha256sum | cut -c1-16)"
}

case "$step" in
setup)
    setup
    ;;
hibernate)
    setup
    sdenroll
    swapon /dev/mapper/thaw-swap || fail "swapon /dev/mapper/thaw-swap failed"
    say "swap on"
    live_tables
    start_workload "$mib"
    say "workload AnonHugePages before hibernating: $(anonhuge_kib "$wl") kB"
    say "hibernating"
    # thaw.hibenv=A=1,B=2: its environment (make bench-hibernate's THAW_BENCH_NO_IMAGE_MAC).
    # shellcheck disable=SC2046 # the options are separate words
    env $(arg thaw.hibenv | tr ',' ' ') thaw hibernate --mode shutdown $(arg thaw.hibargs | tr ',' ' ')
    # Reached only after a resume (or when hibernation failed).
    say "hibernate exit $?"
    after_resume "$(arg thaw.after)"
    verify_workload
    kmsg_thaw
    aftercheck
    ;;
plain)
    mkswap /dev/vdb > /dev/null || fail "mkswap failed"
    swapon /dev/vdb || fail "swapon /dev/vdb failed"
    start_workload "$mib"
    say "hibernating"
    cat /sys/block/vdb/dev > /sys/power/resume
    echo shutdown > /sys/power/disk
    echo disk > /sys/power/state
    # shellcheck disable=SC2320 # the status of that write is the point
    rc=$?
    say "hibernate exit $rc"
    verify_workload
    ;;
cold)
    mapping_state
    thaw status 2>&1 | sed 's/^/THAW-TEST: status: /'
    swapon /dev/mapper/thaw-swap
    say "swapon exit $?"
    grep -q '^/dev/' /proc/swaps && say "swap active: $(grep '^/dev/' /proc/swaps | tr -s ' \t' ' ')"
    doctor
    # More than the guest's free memory: part of it has to go to the encrypted swap and back.
    start_workload "$mib"
    say "swap used $(swap_used_kib) KiB"
    verify_workload
    ;;
inspect)
    mapping_state
    thaw status 2>&1 | sed 's/^/THAW-TEST: status: /'
    [ -r /run/thaw/state ] && sed -n 's/^outcome=/THAW-TEST: state: outcome=/p' /run/thaw/state
    # thaw.anykey=1: does libcryptsetup open /dev/vdb with a key that is no key (a forged
    # cipher_null keyslot, CVE-2025-59054)? Only checks the passphrase: nothing is mapped.
    if [ "$(arg thaw.anykey)" = 1 ]; then
        printf 'not the key at all' > /tmp/anykey
        cryptsetup open --test-passphrase --key-file /tmp/anykey /dev/vdb
        say "any key: test-passphrase exit $?"
    fi
    # Read-only look at the header with the real key (test-only fw_cfg entry), so the tests can
    # say the image is still there without resuming it.
    # thaw.tamper=DISK (with noresume): change the ciphertext of the --integrity container on that
    # disk (a copy of the image's, so that this boot's superseding of /dev/vdb does not touch it),
    # see tamper().
    t=$(arg thaw.tamper)
    [ -n "$t" ] && tamper "/dev/$t"
    # thaw.craft=DISK:KIND,... (with noresume): craft each extra disk's image, see craft().
    for c in $(arg thaw.craft | tr ',' ' '); do
        cryptsetup open --key-file /sys/firmware/qemu_fw_cfg/by_name/opt/test/realkey/raw \
            --keyfile-size 32 "/dev/${c%%:*}" thaw-craft || fail "cannot open /dev/${c%%:*}"
        craftraw=/dev/${c%%:*}
        craft /dev/mapper/thaw-craft "${c#*:}"
        cryptsetup close thaw-craft
    done
    # rd.thaw.mismatch=discard leaves the mapping open for swap: look at the image through it.
    if [ -b /dev/mapper/thaw-swap ]; then
        say "image signature: $(dd if=/dev/mapper/thaw-swap bs=1 skip=4086 count=9 2> /dev/null)"
        header_sum /dev/mapper/thaw-swap
        swapon /dev/mapper/thaw-swap
        say "swapon exit $?"
        say "swaps in use: $(grep -c '^/' /proc/swaps)"
        swapoff /dev/mapper/thaw-swap
    elif [ "$(arg thaw.nolook)" = 1 ]; then
        # evil-digest-cost: cryptsetup would spend hours on the forged digest.
        say "inspect: no look at /dev/vdb with the real key (thaw.nolook=1)"
    elif cryptsetup open --readonly --key-file /sys/firmware/qemu_fw_cfg/by_name/opt/test/realkey/raw \
        --keyfile-size 32 /dev/vdb thaw-inspect; then
        sig=$(dd if=/dev/mapper/thaw-inspect bs=1 skip=4086 count=9 2> /dev/null)
        say "image signature: $sig"
        header_sum /dev/mapper/thaw-inspect
        thaw inspect /dev/mapper/thaw-inspect 2>&1 | sed 's/^/THAW-TEST: inspect: /'
        cryptsetup close thaw-inspect
    else
        say "inspect: cannot open /dev/vdb with the real key"
    fi
    say "swaps in use: $(grep -c '^/' /proc/swaps)"
    ;;
write)
    mapping_state
    thaw status 2>&1 | sed 's/^/THAW-TEST: status: /'
    [ -r /run/thaw/state ] && sed -n 's/^outcome=/THAW-TEST: state: outcome=/p' /run/thaw/state
    write_files boot
    # As a real shutdown does: the journal checkpointed, the file system clean on disk.
    mount -o remount,ro / && say "root remounted read-only"
    ;;
mkroot)
    mkroot
    ;;
hibernate-file)
    left_over
    swapon /swapfile || fail "swapon /swapfile failed"
    say "swap on: $(grep '^/swapfile' /proc/swaps | tr -s ' \t' ' ')"
    start_workload "$mib"
    say "hibernating"
    # shellcheck disable=SC2046 # the options are separate words
    thaw hibernate --mode shutdown $(arg thaw.hibargs | tr ',' ' ')
    say "hibernate exit $?"
    verify_workload
    kmsg_thaw
    ;;
resume)
    say "not resumed"
    thaw status 2>&1 | sed 's/^/THAW-TEST: status: /'
    ;;
doctor)
    doctor
    ;;
bench)
    # make bench-swapin brings its own script as fw_cfg opt/test/bench (test/bench/bench-swapin/guest.sh).
    # shellcheck disable=SC1091 # not in the repository's tree at this path
    . /sys/firmware/qemu_fw_cfg/by_name/opt/test/bench/raw
    ;;
*)
    say "unknown step '$step'"
    ;;
esac
off

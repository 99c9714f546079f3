#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# /sbin/init of the test guest: runs the step named by thaw.step= on the kernel command line,
# prints "THAW-TEST: …" markers on the console for the harness, and powers off.
#
# Steps:
#   setup        thaw setup on /dev/vdb, then power off (no image)
#   hibernate    setup, swap on, workload, thaw hibernate; after the resume: verify the workload
#   cold         a boot without image: the mapping is there, swap is usable
#   inspect      a boot that must not have resumed: say whether the image header is still armed
#   resume       a boot that must resume: reaching this init at all means it did not
#   doctor       thaw doctor only (the cold step runs it too, with the swap on)
#   mkroot       make /dev/vdb an encrypted root with a swap file (thaw setup --swapfile in a chroot)
#   hibernate-file  (on that root) swapon /swapfile, workload, thaw hibernate; then verify
# Any other step NAME is a scenario's own, the function step_NAME of its guest.sh (below): write
# (stale-noresume), bench (make bench-swapin).
#
# thaw.hibargs=a,b passes options to thaw hibernate (commas for spaces); thaw.after=write makes the
# resumed system write files before verifying the workload (see after_resume). The resumed system
# runs with the hibernating boot's command line: both go on the hibernate boot.
#
# What only one scenario does is in that scenario's folder, test/qemu/NAME/guest.sh (or
# test/bench/NAME/guest.sh): the harness sends it as fw_cfg opt/test/guest and this init sources it
# after its own functions, before running the step, so it can define the hooks below (empty here)
# and its own steps. What several scenarios use stays here (crafted.sh's images are shared: their
# boots get no guest.sh). Nothing is written to the root image for it, so it builds no image again.

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

# A process's swapped memory, one /proc/meminfo field (swapin-auto, swapin-tight, bench-swapin).
vmswap_kib() { awk '/^VmSwap:/ {print $2}' "/proc/$1/status"; }
# The process's anonymous memory in transparent huge pages.
anonhuge_kib() { awk '/^AnonHugePages:/ {print $2}' "/proc/$1/smaps_rollup"; }

meminfo_kib() { awk -v k="$1:" '$1 == k {print $2}' /proc/meminfo; }

# The benchmarks' workload throughput (bench-swapin, bench-roundtrip): the guest clock, the median of
# the workload's rate lines in /tmp/rate after t=$1 (the first interval of a start is skipped), and
# its baseline: 8 s of measurement of workload $wl.
now() { cut -d' ' -f1 /proc/uptime; }

median_rate() {
    awk -v t="$1" '$1 > t {print $2}' /tmp/rate | sed 1d | sort -n |
        awk '{v[NR] = $1} END {if (NR) print v[int((NR + 1) / 2)]; else print 0}'
}

measure_baseline() {
    t=$(now)
    kill -USR2 "$wl"
    sleep 8
    kill -USR2 "$wl"
    sleep 0.5
    median_rate "$t"
}

# thaw.after=write: the resumed system writes files, as a real one would (crafted.sh's image).
after_resume() {
    case "$1" in
    write) write_files after-resume ;;
    '') ;;
    *) say "unknown thaw.after '$1'" ;;
    esac
}

# luks_root: /dev/vdb becomes the LUKS2 container of an encrypted root, as an image builder makes
# one (UUID thaw.rootuuid=, the installer key of fw_cfg opt/test/rootkey, cheap PBKDF2 to keep TCG
# fast), opened as /dev/mapper/luks-$uuid; sets uuid. mkroot here, test/cloud/swapfile-guest.sh's
# step cryptroot.
luks_root() {
    uuid=$(arg thaw.rootuuid)
    rootkey=/sys/firmware/qemu_fw_cfg/by_name/opt/test/rootkey/raw
    cryptsetup luksFormat -q --type luks2 --uuid "$uuid" --pbkdf pbkdf2 --pbkdf-force-iterations 1000 \
        --key-file "$rootkey" /dev/vdb || fail "luksFormat /dev/vdb failed"
    cryptsetup open --key-file "$rootkey" /dev/vdb "luks-$uuid" || fail "cannot open /dev/vdb"
}

# An encrypted root on /dev/vdb (luks_root), ext4 holding a copy of this root, then thaw setup
# --swapfile in a chroot of it, which enrolls the thaw key with the installer key.
mkroot() {
    luks_root
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

# With dmsetup (added by resume-basic and tamper-integrity): the live tables of the thaw mapping,
# the key field masked.
live_tables() {
    command -v dmsetup > /dev/null || return 0
    for m in thaw-swap thaw-swap_dif; do
        [ -b "/dev/mapper/$m" ] || continue
        # Only the key's form: ":SIZE:TYPE:..." in the keyring, or its length in hex.
        say "live table $m: $(dmsetup table "$m" | awk '$3 == "crypt" {
            if ($5 ~ /^:/) { split($5, k, ":"); $5 = ":" k[2] ":" k[3] ":<desc>" }
            else $5 = "<" length($5) " hex digits>" } { print }')"
    done
}

# header_sum DEV: the header page without its signature, which is all rd.thaw.mismatch=discard may change.
header_sum() {
    say "header page sum: $(dd if="$1" bs=4086 count=1 2> /dev/null | sha256sum | cut -c1-16)"
}

# The hooks a scenario's guest.sh may define, where the steps call them:
# - hook_setup: hibernate step, after thaw setup (systemd-tpm2: systemd-cryptenroll);
# - hook_swap: hibernate step, the swap on and its live tables shown, before the workload
#   (resume-basic: mappings thaw hibernate must refuse);
# - hook_resumed: hibernate step, after thaw hibernate returned (after a resume), before the
#   workload is verified (swapin-auto, swapin-tight, replay-tpm);
# - hook_verified: hibernate step, the workload verified (replay-tpm);
# - hook_inspect: inspect step, before any look at the image (tamper-integrity, evil-null-keyslot);
# - look_realkey: the inspect step's look at /dev/vdb with the real key, when thaw left no mapping
#   (replaced by evil-digest-cost, whose forged digest would make cryptsetup spend hours on it).
hook_setup() { :; }
hook_swap() { :; }
hook_resumed() { :; }
hook_verified() { :; }
hook_inspect() { :; }
# Read-only look at the header with the real key (test-only fw_cfg entry), so the tests can say the
# image is still there without resuming it.
look_realkey() {
    if cryptsetup open --readonly --key-file /sys/firmware/qemu_fw_cfg/by_name/opt/test/realkey/raw \
        --keyfile-size 32 /dev/vdb thaw-inspect; then
        sig=$(dd if=/dev/mapper/thaw-inspect bs=1 skip=4086 count=9 2> /dev/null)
        say "image signature: $sig"
        header_sum /dev/mapper/thaw-inspect
        thaw inspect /dev/mapper/thaw-inspect 2>&1 | sed 's/^/THAW-TEST: inspect: /'
        cryptsetup close thaw-inspect
    else
        say "inspect: cannot open /dev/vdb with the real key"
    fi
}

guest=/sys/firmware/qemu_fw_cfg/by_name/opt/test/guest/raw
if [ -r "$guest" ]; then
    # shellcheck disable=SC1090 # the scenario's test/qemu/NAME/guest.sh, linted on its own
    . "$guest"
fi

case "$step" in
setup)
    setup
    ;;
hibernate)
    setup
    hook_setup
    swapon /dev/mapper/thaw-swap || fail "swapon /dev/mapper/thaw-swap failed"
    say "swap on"
    live_tables
    hook_swap
    start_workload "$mib"
    say "workload AnonHugePages before hibernating: $(anonhuge_kib "$wl") kB"
    say "hibernating"
    # thaw.hibenv=A=1,B=2: its environment (make bench-hibernate's THAW_BENCH_NO_IMAGE_MAC).
    # shellcheck disable=SC2046 # the options are separate words
    env $(arg thaw.hibenv | tr ',' ' ') thaw hibernate --mode shutdown $(arg thaw.hibargs | tr ',' ' ')
    # Reached only after a resume (or when hibernation failed).
    say "hibernate exit $?"
    after_resume "$(arg thaw.after)"
    hook_resumed
    verify_workload
    kmsg_thaw
    hook_verified
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
    hook_inspect
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
    else
        look_realkey
    fi
    say "swaps in use: $(grep -c '^/' /proc/swaps)"
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
*)
    # A scenario's own step, from its guest.sh.
    if command -v "step_$step" > /dev/null; then "step_$step"; else say "unknown step '$step'"; fi
    ;;
esac
off

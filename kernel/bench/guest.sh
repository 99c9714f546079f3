#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# make bench-kernel's guest init (the harness's root image, written as /bin/kbench): the test
# case of commit ebc5951eea49 in one VM. Fills ~85% of memory, then hibernates, resumes and times
# the first swapoff after each resume, kbench.runs= times for cluster readahead and as many for
# VMA readahead (alternating), then checks the workload's memory and powers off.
#
# Kernel arguments: thaw.step=fresh on the first boot (resume= names /dev/vdb on every boot; a
# later boot that reaches this init did not resume), thaw.seed=, kbench.runs=, kbench.pct=.
# Prints "KBENCH: ..." lines on the console; run.sh reads them.

PATH=/bin
export PATH

[ -e /proc/self ] || mount -t proc proc /proc
[ -d /sys/kernel ] || mount -t sysfs sysfs /sys
[ -e /dev/null ] || mount -t devtmpfs devtmpfs /dev
grep -q ' /tmp ' /proc/mounts || mount -t tmpfs tmpfs /tmp

say() { echo "KBENCH: $*"; }
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

meminfo() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }
vmstat() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }
# Reads completed and sectors read on the swap disk (/sys/block/vdb/stat fields 1 and 3).
disk_reads() { read -r ios _ sect _ < /sys/block/vdb/stat; }

# The readahead window is computed in swapin_nr_pages() (cluster) and __swapin_nr_pages() (both);
# a kprobe on either could record it only if the compiler kept it as a function.
symbols() {
    for s in swapin_nr_pages __swapin_nr_pages; do
        if grep -q " $s\$" /proc/kallsyms; then say "symbol $s: present"; else say "symbol $s: absent (inlined)"; fi
    done
}

# measure RUN MODE: the first swapoff after this resume, timed, with the readahead counters.
measure() {
    used=$(( $(meminfo SwapTotal) - $(meminfo SwapFree) ))
    pin0=$(vmstat pswpin) ra0=$(vmstat swap_ra) hit0=$(vmstat swap_ra_hit)
    disk_reads
    ios0=$ios sect0=$sect
    read -r t0 _ < /proc/uptime
    swapoff /dev/vdb
    rc=$?
    read -r t1 _ < /proc/uptime
    disk_reads
    ios1=$ios sect1=$sect
    [ "$rc" -eq 0 ] || fail "swapoff exit $rc"
    say "result run=$run mode=$mode swapoff_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')" \
        "swap_used_kib=$used pswpin=$(( $(vmstat pswpin) - pin0 ))" \
        "swap_ra=$(( $(vmstat swap_ra) - ra0 )) swap_ra_hit=$(( $(vmstat swap_ra_hit) - hit0 ))" \
        "reads=$((ios1 - ios0)) read_kib=$(( (sect1 - sect0) / 2 ))"
}

step=$(arg thaw.step)
[ "$step" = fresh ] || fail "not resumed (step=$step)"
say "fresh boot: $(uname -r) $(cat /proc/sys/kernel/version 2> /dev/null)"
symbols
runs=$(arg kbench.runs)
pct=$(arg kbench.pct)
mkswap /dev/vdb > /dev/null || fail "mkswap /dev/vdb failed"
swapon /dev/vdb || fail "swapon /dev/vdb failed"
cat /sys/block/vdb/dev > /sys/power/resume || fail "cannot set /sys/power/resume"
echo shutdown > /sys/power/disk || fail "cannot set /sys/power/disk"

total=$(meminfo MemTotal)
mib=$((total * pct / 100 / 1024))
say "MemTotal $((total / 1024)) MiB, page-cluster $(cat /proc/sys/vm/page-cluster), image_size $(( $(cat /sys/power/image_size) / 1048576 )) MiB, workload $mib MiB ($pct%)"
rm -f /tmp/ready
workload "$mib" "$(arg thaw.seed)" /tmp/ready &
wl=$!
while [ ! -e /tmp/ready ]; do
    kill -0 "$wl" 2> /dev/null || fail "workload died"
    sleep 0.5
done
say "workload ready"

i=0
while [ "$i" -lt $((2 * runs)) ]; do
    run=$((i / 2 + 1))
    if [ $((i % 2)) -eq 0 ]; then mode=cluster ra=false; else mode=vma ra=true; fi
    echo "$ra" > /sys/kernel/mm/swap/vma_ra_enabled || fail "cannot set vma_ra_enabled"
    say "hibernating run=$run mode=$mode swap_used_kib=$(( $(meminfo SwapTotal) - $(meminfo SwapFree) ))"
    echo disk > /sys/power/state || fail "hibernation failed"
    # The resumed system goes on here (the boot in between powered off and QEMU restarted).
    say "resumed run=$run mode=$mode"
    sleep 1
    measure
    swapon /dev/vdb || fail "swapon /dev/vdb failed"
    i=$((i + 1))
done
kill -USR1 "$wl"
wait "$wl"
say "workload exit $?"
say "done"
off

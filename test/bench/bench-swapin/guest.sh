# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=sh
# shellcheck disable=SC2154 # mib, seed, wl and the helpers come from guest-init.sh
# The guest half of make bench-swapin, sourced by guest-init.sh (it reaches the guest as fw_cfg
# opt/test/guest, as a scenario's guest.sh does): the step bench. Uses guest-init's say, fail, arg,
# setup, vmswap_kib, meminfo_kib.
#
# Before hibernating: the workload in its own cgroup (so memory.reclaim can push exactly it out),
# its baseline throughput; then thaw hibernate with image_size 0 and no automatic swap-in.
# After the resume, thaw.rounds= rounds, each with the three variants in a rotated order:
# push the workload out to swap (memory.reclaim), start the workload's own throughput measurement
# and at the same moment swapoff+swapon / thaw swapin (its huge-page collapse included) / nothing;
# the time the helper took, and the time until the workload is back at 90% of its throughput before
# the hibernation; and the workload's memory in transparent huge pages (AnonHugePages) before the
# push-out, after it (where a resume leaves it) and once the helper is done (nothing: at the end). Each round also reads the swap device
# sequentially (O_DIRECT, the limit for any swap-in) and its disk below dm-crypt: with one reader
# (one request at a time: dm-crypt decrypts it on one vCPU) and with RAW_READERS readers at
# different offsets (several requests in flight, as the prefetch's threads have).
# Where the prefetch's time goes (issue 20): the prefetch runs with --verbose (its threads' time in
# process_madvise and process_vm_readv, its CPU time), and the guest's CPU split (/proc/stat) is
# taken over it and over the 4-reader read; each round also runs the prefetch once more with the
# workload stopped (SIGSTOP: no competition for the 2 vCPUs, no back-to-90%), and the 4-reader read
# once more at thaw swapin's nice 19 while the workload's throughput measurement runs (the CPU
# competition the prefetch meets, without its mapping).

CG=/sys/fs/cgroup
SWAPDEV=/dev/mapper/thaw-swap
LIMIT=${BENCH_LIMIT:-240} # seconds a variant may take to get back to 90%
RAW_READERS=4             # as thaw swapin's default --threads

# The workload's memory in transparent huge pages, kB.
hugekb() { awk '/^AnonHugePages:/ {print $2}' "/proc/$wl/smaps_rollup"; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
# The guest's CPU time since the /proc/stat "cpu" line $1 (from cpuline), as shares of all vCPUs.
cpuline() { sed -n 's/^cpu  *//p' /proc/stat; }
cpu_since() {
    echo "$1 $(cpuline)" | awk '{
        n = NF / 2; for (i = 1; i <= n; i++) { d[i] = $(n + i) - $i; t += d[i] }
        if (t <= 0) t = 1
        printf "user %.0f%%, nice %.0f%%, system %.0f%%, irq+softirq %.0f%%, iowait %.0f%%, idle %.0f%%",
            100 * d[1] / t, 100 * d[2] / t, 100 * d[3] / t, 100 * (d[6] + d[7]) / t, 100 * d[5] / t, 100 * d[4] / t }'
}

# First time after $1 at which the workload ran at $2 MiB/s or more; waits at most LIMIT s.
time_to() {
    n=0
    while [ "$n" -lt "$LIMIT" ]; do
        hit=$(awk -v t="$1" -v r="$2" '$1 > t && $2 >= r {printf "%.2f", $1 - t; exit}' /tmp/rate)
        [ -n "$hit" ] && { echo "$hit"; return; }
        sleep 1
        n=$((n + 1))
    done
    echo ">$LIMIT"
}

pushout() {
    kb=$(vmswap_kib "$wl")
    # More than the workload holds: the kernel reclaims what it can, then says EAGAIN.
    echo 4G > "$CG/bench/memory.reclaim" 2> /dev/null
    sync
    echo 3 > /proc/sys/vm/drop_caches
    say "bench: pushed out: workload VmSwap $kb -> $(vmswap_kib "$wl") kB," \
        "MemAvailable $(meminfo_kib MemAvailable) kB"
}

# rawread DEV MIB: seconds to read MIB MiB from the start of DEV with O_DIRECT.
rawread() {
    echo 3 > /proc/sys/vm/drop_caches
    t=$(now)
    dd if="$1" of=/dev/null bs=1M count="$2" iflag=direct 2> /dev/null || dd if="$1" of=/dev/null bs=1M count="$2" 2> /dev/null
    elapsed "$t" "$(now)"
}

# rawread_par DEV MIB [NICE]: seconds for RAW_READERS readers to read MIB MiB from the start of
# DEV together, each its own part (O_DIRECT, 1 MiB requests), all started at once, at nice NICE
# (default 0). The guest's CPU split over it goes to /tmp/rawcpu.
rawread_par() {
    echo 3 > /proc/sys/vm/drop_caches
    part=$(($2 / RAW_READERS))
    c=$(cpuline)
    t=$(now)
    i=0
    while [ "$i" -lt "$RAW_READERS" ]; do
        # busybox has renice but no nice: each reader lowers itself, then becomes dd.
        # shellcheck disable=SC2016 # $$ is the inner shell's, which becomes dd
        sh -c 'renice -n "$0" -p $$ > /dev/null; exec dd if="$1" of=/dev/null bs=1M skip="$2" count="$3" iflag=direct 2> /dev/null' \
            "${3:-0}" "$1" $((i * part)) "$part" &
        i=$((i + 1))
    done
    wait
    elapsed "$t" "$(now)"
    cpu_since "$c" > /tmp/rawcpu
}

variant() {
    v=$1 r=$2
    h0=$(hugekb)
    pushout
    swapped=$(vmswap_kib "$wl")
    h1=$(hugekb)
    c=$(cpuline)
    t0=$(now)
    kill -USR2 "$wl"
    case $v in
    swapoff)
        swapoff "$SWAPDEV" || say "bench: swapoff failed"
        swapon "$SWAPDEV" || fail "swapon after swapoff failed"
        ;;
    prefetch)
        thaw swapin --verbose 2>&1 | sed 's/^/THAW-TEST: bench: /'
        ;;
    nothing) ;;
    esac
    helper=$(elapsed "$t0" "$(now)")
    [ "$v" = nothing ] || say "bench: round $r $v cpu: $(cpu_since "$c") (over the helper, the workload measuring)"
    h2=$(hugekb)
    back=$(time_to "$t0" "$threshold")
    [ "$v" = nothing ] && h2=$(hugekb)
    kill -USR2 "$wl"
    sleep 0.5
    say "bench: round $r $v: swapped $swapped kB, helper $helper s, back to 90% after $back s," \
        "VmSwap after $(vmswap_kib "$wl") kB, AnonHugePages before push-out $h0 kB, after it $h1 kB," \
        "after $h2 kB"
    # Whatever is left comes back before the next variant's push-out: the same start for all.
    [ "$v" = nothing ] && thaw swapin > /dev/null 2>&1
}

# The prefetch with the workload stopped: no competition for the vCPUs, nothing else faulting.
prefetch_alone() {
    r=$1
    pushout
    swapped=$(vmswap_kib "$wl")
    kill -STOP "$wl"
    c=$(cpuline)
    t0=$(now)
    thaw swapin --verbose 2>&1 | sed 's/^/THAW-TEST: bench: alone /'
    helper=$(elapsed "$t0" "$(now)")
    cpu=$(cpu_since "$c")
    kill -CONT "$wl"
    say "bench: round $r alone: swapped $swapped kB, helper $helper s (prefetch, workload stopped)"
    say "bench: round $r alone cpu: $cpu"
}

step_bench() {
    rounds=$(arg thaw.rounds)
    setup
    swapon "$SWAPDEV" || fail "swapon $SWAPDEV failed"
    [ -e "$CG/cgroup.procs" ] || mount -t cgroup2 cgroup2 "$CG" || fail "cannot mount cgroup2"
    echo +memory > "$CG/cgroup.subtree_control" || fail "no memory controller"
    mkdir -p "$CG/bench"
    rm -f /tmp/ready /tmp/rate
    # shellcheck disable=SC2016 # $$ is the inner shell's, which becomes the workload
    sh -c 'echo $$ > '"$CG"'/bench/cgroup.procs && exec workload "$0" "$1" /tmp/ready /tmp/rate' \
        "$mib" "$seed" &
    wl=$!
    n=0
    while [ ! -e /tmp/ready ]; do
        kill -0 "$wl" 2> /dev/null || fail "workload died"
        n=$((n + 1))
        [ "$n" -lt 1200 ] || fail "workload not ready after 600 s"
        sleep 0.5
    done
    say "workload ready"
    before=$(measure_baseline)
    say "bench: baseline before hibernation $before MiB/s"
    say "bench: huge pages before hibernation: AnonHugePages $(hugekb) kB of $((mib * 1024)) kB"
    say "hibernating"
    # The push-out first (--reclaim), not inside the hibernation: see test/qemu/swapin-auto/run.sh.
    thaw hibernate --mode shutdown --image-size 0 --reclaim --no-swapin
    say "hibernate exit $?"
    say "bench: after resume: workload VmSwap $(vmswap_kib "$wl") kB, AnonHugePages $(hugekb) kB"
    # Which implementation dm-crypt decrypts with: AES-NI (a guest CPU with aes) or the generic C.
    say "bench: xts(aes) in /proc/crypto: $(awk '/^name/ { n = $3 } /^driver/ && n == "xts(aes)" { printf "%s%s", s, $3; s = ", " }' /proc/crypto)"
    # Everything back once, then the baseline again: the host's load may have changed meanwhile.
    thaw swapin 2>&1 | sed 's/^/THAW-TEST: bench: initial /'
    say "bench: huge pages after the first swap-in: AnonHugePages $(hugekb) kB"
    after=$(measure_baseline)
    say "bench: baseline after resume $after MiB/s (all of it back, by thaw swapin)"
    # Back to full speed means the speed before the hibernation, whatever the resume left.
    threshold=$(awk -v a="$before" 'BEGIN { printf "%.1f", a * 0.9 }')
    say "bench: 90% threshold $threshold MiB/s (of the baseline before hibernation)"
    r=1
    while [ "$r" -le "${rounds:-3}" ]; do
        case $((r % 3)) in
        1) order="swapoff prefetch nothing" ;;
        2) order="nothing swapoff prefetch" ;;
        0) order="prefetch nothing swapoff" ;;
        esac
        for v in $order; do variant "$v" "$r"; done
        mibs=$((swapped / 1024))
        say "bench: round $r raw $SWAPDEV: $mibs MiB in $(rawread "$SWAPDEV" "$mibs") s"
        say "bench: round $r raw /dev/vdb: $mibs MiB in $(rawread /dev/vdb "$mibs") s"
        mibs=$((mibs / RAW_READERS * RAW_READERS))
        say "bench: round $r raw $SWAPDEV x$RAW_READERS: $mibs MiB in $(rawread_par "$SWAPDEV" "$mibs") s"
        say "bench: round $r raw $SWAPDEV x$RAW_READERS cpu: $(cat /tmp/rawcpu)"
        say "bench: round $r raw /dev/vdb x$RAW_READERS: $mibs MiB in $(rawread_par /dev/vdb "$mibs") s"
        # The same read beside the workload's measurement, at thaw swapin's nice level.
        kill -USR2 "$wl"
        secs=$(rawread_par "$SWAPDEV" "$mibs" 19)
        kill -USR2 "$wl"
        say "bench: round $r raw $SWAPDEV x$RAW_READERS nice 19 beside the workload: $mibs MiB in $secs s"
        say "bench: round $r raw $SWAPDEV x$RAW_READERS nice 19 beside the workload cpu: $(cat /tmp/rawcpu)"
        prefetch_alone "$r"
        r=$((r + 1))
    done
    say "bench: done"
    verify_workload
}

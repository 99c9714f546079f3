#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# make bench-kernel: the swapoff-after-resume test case of commit ebc5951eea49 ("mm: swap:
# properly update readahead statistics in unuse_pte_range()"), scaled to a QEMU guest, on
# Debian's 6.1 with the fix (as shipped) and without it (kernel/patches/0002).
#
# One VM per kernel (guest.sh as init on the harness's root image, plain swap on /dev/vdb): a
# fresh boot fills 85% of memory and hibernates; each later boot resumes, times the first swapoff
# after the resume (alternately with cluster and VMA readahead), swaps on and hibernates again.
# The two VMs' boots alternate, so a change in the machine's load hits both kernels alike.
# Writes the table to build/bench-kernel.txt and prints it.
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
# Guest work silent for longer than the harness's 60 s silence limit (swapoff, large images): only
# a silence at the kernel's hibernation or resume steps is a hang here.
export TQ_SILENCE_SECONDS=${TQ_SILENCE_SECONDS:-0}
# shellcheck source=test/qemu/lib.sh
. "$repo/test/qemu/lib.sh"

runs=${KBENCH_RUNS:-3}
pct=${KBENCH_PCT:-85}
out=${KBENCH_OUT:-$repo/build/bench-kernel.txt}
# Read by the harness's tq_boot and tq_workdir (test/qemu/harness.sh).
# shellcheck disable=SC2034
TQ_MEM=${KBENCH_MEM:-1024} TQ_SMP=1
# Room for what hibernation swaps out plus the image (together at most the memory).
# shellcheck disable=SC2034
TQ_SWAP_MIB=$((TQ_MEM * 3 / 2)) TQ_BOOT_TIMEOUT=${KBENCH_BOOT_TIMEOUT:-900} TQ_INITRD=
start=$SECONDS

command -v "$TQ_QEMU" > /dev/null || tq_die "$TQ_QEMU missing (run make deps)"
[[ -x $TQ_THAW ]] || tq_die "$TQ_THAW missing (run make)"
command -v debugfs > /dev/null || tq_die "debugfs missing (e2fsprogs; run make deps)"

t=$SECONDS
declare -A kernel work seed
while read -r variant path; do kernel[$variant]=$path; done < <("$repo/kernel/bench/build.sh")
[[ -s ${kernel[fix]:-} && -s ${kernel[nofix]:-} ]] || tq_die "kernel/bench/build.sh gave no kernels"
build_s=$((SECONDS - t))

# The harness's guest root (it needs Debian's kernel only for the modules it copies in).
mkdir -p "$TQ_CACHE"
tq_fetch_kernel
tq_build_workload
tq_build_rootfs

for v in fix nofix; do
    tq_workdir "kbench-$v"
    work[$v]=$TQ_WORK
    seed[$v]=$TQ_SEED
    debugfs -w -R "write $repo/kernel/bench/guest.sh /bin/kbench" "$TQ_WORK/root.img" > /dev/null 2>&1
    debugfs -w -R "set_inode_field /bin/kbench mode 0100755" "$TQ_WORK/root.img" > /dev/null 2>&1
    debugfs -R "stat /bin/kbench" "$TQ_WORK/root.img" 2> /dev/null | grep -q 'Mode:  0755' ||
        tq_die "cannot write /bin/kbench into $TQ_WORK/root.img"
done

# boot VARIANT NAME STEP: one QEMU run of that variant's VM; stops the benchmark on a failure.
# no_timer_check: on a loaded host a TCG guest can miss the IO-APIC timer check and panic.
# A boot that panicked before it read the image has left the image alone: it is tried once more.
boot() {
    local v=$1 name=$2 step=$3 rc=0
    # shellcheck disable=SC2034 # read by tq_boot
    TQ_WORK=${work[$v]} TQ_SEED=${seed[$v]} TQ_KERNEL=${kernel[$v]}
    tq_boot "$name" "$step" "$TQ_WORK/key" init=/bin/kbench resume=/dev/vdb no_timer_check \
        kbench.runs="$runs" kbench.pct="$pct" || rc=$?
    if tq_has "$name" "Kernel panic" && tq_lacks "$name" "resume from hibernation" && tq_lacks "$name" "KBENCH:"; then
        mv "$TQ_WORK/$name.log" "$TQ_WORK/$name-panicked.log"
        tq_log "$v: boot $name panicked before reading the image; once more"
        rc=0
        tq_boot "$name" "$step" "$TQ_WORK/key" init=/bin/kbench resume=/dev/vdb no_timer_check \
            kbench.runs="$runs" kbench.pct="$pct" || rc=$?
    fi
    if ((rc != 0)) || tq_has "$name" "KBENCH: FAIL"; then
        grep -E 'KBENCH|PM: |Kernel panic|BUG|Oops' "$TQ_WORK/$name.log" | sed 's/^/#   /' >&2
        tq_die "$v: boot $name failed (QEMU status $rc; log $TQ_WORK/$name.log)"
    fi
}

t=$SECONDS
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for v in fix nofix; do
    boot "$v" boot0 fresh
    tq_has boot0 "PM: hibernation: Wrote" || tq_die "$v: the first boot did not hibernate (${work[$v]}/boot0.log)"
done
for ((b = 1; b <= 2 * runs; b++)); do
    for v in fix nofix; do
        boot "$v" "boot$b" resume
        tq_has "boot$b" "KBENCH: result" || tq_die "$v: boot $b did not resume and measure (${work[$v]}/boot$b.log)"
    done
done
for v in fix nofix; do
    tq_has "boot$((2 * runs))" "workload: nothing lost" ||
        tq_die "$v: the workload's memory did not survive (${work[$v]}/boot$((2 * runs)).log)"
done
qemu_s=$((SECONDS - t))
load1=$(cut -d' ' -f1-3 /proc/loadavg)

# One line per measurement: "variant mode run seconds swapped-KiB swap_ra swap_ra_hit reads read-KiB".
results() {
    local v
    for v in fix nofix; do
        cat "${work[$v]}"/boot*.log | grep -o 'KBENCH: result .*' | awk -v v="$v" '{
            for (i = 3; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
            print v, f["mode"], f["run"], f["swapoff_s"], f["swap_used_kib"], f["swap_ra"],
                  f["swap_ra_hit"], f["reads"], f["read_kib"]
        }'
    done
}

# median VARIANT MODE FIELD: the median of that field (awk field number) over the runs.
median() {
    results | awk -v v="$1" -v m="$2" -v k="$3" '$1 == v && $2 == m { print $k }' | sort -g |
        awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.2f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# range VARIANT MODE: the fastest and the slowest swapoff, "a-b".
range() {
    results | awk -v v="$1" -v m="$2" '$1 == v && $2 == m { print $4 }' | sort -g | sed -n '1p;$p' | paste -sd' ' |
        awk '{ printf "%.1f-%.1f", $1, $2 }'
}

symbols=$(grep -ho 'KBENCH: symbol .*' "${work[fix]}/boot0.log" | sed 's/KBENCH: symbol //' | paste -sd';' | sed 's/;/; /g')
kver=$(grep -o 'KBENCH: fresh boot: [^ ]*' "${work[fix]}/boot0.log" | awk '{ print $4 }')
meminfo=$(grep -o 'KBENCH: MemTotal.*' "${work[fix]}/boot0.log" | sed 's/KBENCH: //')

mkdir -p "$(dirname "$out")"
{
    echo "make bench-kernel: the first swapoff after hibernation and resume (commit ebc5951eea49's test case)"
    echo
    printf '%-19s %-34s %s\n' "" "patch: 5.6, KVM guest, 8 GB," "ours: $kver, QEMU TCG guest, $TQ_MEM MiB,"
    printf '%-19s %-34s %s\n' "" "16 GB swap file on ext4, NVMe" "plain swap on virtio-blk, median of $runs"
    printf '%-19s %9s %9s %6s        %9s %9s %6s\n' "" "without" "with fix" "ratio" "without" "with fix" "ratio"
    for m in cluster vma; do
        case $m in
        cluster) p0=22.09 p1=12.19 label="cluster readahead" ;;
        vma) p0=18.20 p1=15.33 label="VMA readahead" ;;
        esac
        o0=$(median nofix "$m" 4) o1=$(median fix "$m" 4)
        printf '%-19s %8.2fs %8.2fs %6s        %8.2fs %8.2fs %6s\n' "$label" "$p0" "$p1" "$(ratio "$p0" "$p1")" \
            "$o0" "$o1" "$(ratio "$o0" "$o1")"
        printf '%54s%9s %9s   (fastest-slowest)\n' "" "$(range nofix "$m")" "$(range fix "$m")"
    done
    echo
    echo "Readahead (medians per swapoff): swap_ra = pages read ahead, swap_ra_hit = read-ahead pages"
    echo "found in the swap cache and counted as hits (/proc/vmstat), reads = read requests on the swap"
    echo "disk and their mean size (/sys/block/vdb/stat; adjacent readahead pages merge into one request,"
    echo "so pages/read is the mean readahead window: 1 << page-cluster = 8 at most)."
    printf '%-8s %-8s %10s %9s %12s %9s %11s\n' kernel mode "swapped in" swap_ra swap_ra_hit reads "pages/read"
    for m in cluster vma; do
        for v in nofix fix; do
            kib=$(median "$v" "$m" 9) reads=$(median "$v" "$m" 8)
            printf '%-8s %-8s %7d MiB %9d %12d %9d %11.1f\n' "$v" "$m" "$(($(median "$v" "$m" 5) / 1024))" \
                "$(median "$v" "$m" 6)" "$(median "$v" "$m" 7)" "$reads" \
                "$(awk -v k="$kib" -v r="$reads" 'BEGIN { print (r > 0 ? k / 4 / r : 0) }')"
        done
    done
    echo
    echo "Every run (seconds; nofix = with kernel/patches/0002, the fix taken out):"
    printf '%-8s %-8s %4s %9s %12s %9s %12s %9s %10s\n' kernel mode run swapoff "swapped KiB" swap_ra swap_ra_hit reads "read KiB"
    results | sort -k2,2 -k1,1r -k3,3n | awk '{ printf "%-8s %-8s %4s %8ss %12s %9s %12s %9s %10s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9 }'
    echo
    echo "Guest: $meminfo; one vCPU (qemu64); kprobe targets in /proc/kallsyms: $symbols."
    echo "Time: kernel builds ${build_s} s, QEMU $qemu_s s ($((2 + 4 * runs)) boots), total $((SECONDS - start)) s;"
    echo "host load average $load0 before the boots, $load1 after (2 cores)."
    echo "Logs: ${work[fix]}, ${work[nofix]}"
} > "$out"
cat "$out"

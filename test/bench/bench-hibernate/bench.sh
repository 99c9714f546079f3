#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# make bench-hibernate: does `thaw hibernate --reclaim` or --image-size 0 shorten the hibernation,
# and what do thaw's own writer and its image MAC cost against the kernel's writer?
# Side by side in one run, interleaved per round: the same guest (1 GiB RAM, a workload of 600 MiB)
# hibernates with the kernel writing the image (thaw hibernate --writer kernel), with --reclaim,
# with --image-size 0, and with thaw's writer (the default where /dev/snapshot exists, which also
# computes the image's MAC for its ticket), each on a fresh swap disk, then resumes.
# "thaw-nomac" is thaw's writer without the image's MAC (THAW_BENCH_NO_IMAGE_MAC, for this
# benchmark only): the two side by side give what the MAC adds to the write.
# BENCH_VARIANTS= picks some of "kernel reclaim image0 thaw thaw-nomac". Per variant: seconds from the command to power-off (host clock),
# the frozen part (guest clock, "hibernation entry" to power-down), the image written, the kernel's
# read time at resume and the resume boot's time until the hibernated system runs again. Table to
# stdout and to $B/bench-hibernate.txt. Not part of make test: about 6 minutes a round under TCG.
set -u
here=$(cd "$(dirname "$0")" && pwd)
export TQ_MEM=${TQ_MEM:-1024} TQ_WORKLOAD_MIB=${TQ_WORKLOAD_MIB:-600} TQ_SWAP_MIB=${TQ_SWAP_MIB:-1600}
export TQ_BOOT_TIMEOUT=${TQ_BOOT_TIMEOUT:-1800}
# Guest work silent for longer than the harness's 30 s silence limit (swapoff, large images): only
# a silence at the kernel's hibernation or resume steps is a hang here.
export TQ_SILENCE_SECONDS=${TQ_SILENCE_SECONDS:-0}
# Two vCPUs, as the figures in README.md were taken (the test scenarios run with one).
export TQ_SMP=${TQ_SMP:-2}
# shellcheck source=test/qemu/lib.sh
. "$here/../../qemu/lib.sh"
ROUNDS=${BENCH_ROUNDS:-1}
OUT=${BENCH_OUT:-$TQ_REPO/build/bench-hibernate.txt}
read -r -a variants <<< "${BENCH_VARIANTS:-kernel reclaim image0 thaw thaw-nomac}"
# The kernel's writer logs "Wrote N kbytes in S seconds"; thaw's its own line, with the share of the
# image's MAC in its time.
declare -A hibargs=([kernel]="--writer,kernel" [reclaim]="--writer,kernel,--reclaim" [image0]="--writer,kernel,--image-size,0"
    [thaw]="--writer,thaw" [thaw-nomac]="--writer,thaw")
declare -A hibenv=([thaw-nomac]="THAW_BENCH_NO_IMAGE_MAC=1")

# ptime NAME TEXT: the guest clock (printk seconds) of the first line containing TEXT.
ptime() { grep -F -m1 -- "$2" "$TQ_WORK/$1.log" | sed -n 's/.*| \[ *\([0-9.]*\)\].*/\1/p'; }
# kfield NAME REGEX: the first number after REGEX in the boot's log.
kfield() { grep -m1 -oE -- "$2 [0-9.]+" "$TQ_WORK/$1.log" | grep -oE '[0-9.]+$'; }

tq_prepare
tq_workdir bench-hibernate
rows=()
for ((r = 1; r <= ROUNDS; r++)); do
    for v in "${variants[@]}"; do
        truncate -s 0 "$TQ_WORK/swap.img"
        truncate -s "${TQ_SWAP_MIB}M" "$TQ_WORK/swap.img"
        h=hib-$v-$r u=res-$v-$r
        tq_sleep_boot_checked "$h" hibernate "$TQ_WORK/key" "thaw.hibargs=${hibargs[$v]}" \
            ${hibenv[$v]:+"thaw.hibenv=${hibenv[$v]}"}
        hib_total=$TQ_BOOT_SECONDS
        if [[ $v == thaw* ]]; then
            if [[ $v == thaw ]]; then
                tq_check "$h: thaw wrote the image, timing its MAC" grep -qE \
                    'thaw: wrote the image .* in [0-9.]+ s \(waiting for the disk [0-9.]+ s, the image.s MAC [0-9.]+ s\)' "$TQ_WORK/$h.log"
            else
                tq_check "$h: thaw wrote the image, without its MAC" grep -qE \
                    'thaw: wrote the image .* in [0-9.]+ s \(waiting for the disk [0-9.]+ s\), flushed' "$TQ_WORK/$h.log"
            fi
            # The image's pages, as the kernel's "Wrote N kbytes" counts them (before compression).
            kb=$(( $(kfield "$h" 'thaw: wrote the image to [^:]+:') * 4 ))
            ws=$(kfield "$h" 'thaw: wrote the image .*CRC32 [0-9a-f]+, in')
            mac=$(kfield "$h" "thaw: wrote the image .*the image.s MAC")
            mac=${mac:-0}
            e=$(ptime "$h" "Freezing user space processes")
        else
            tq_check "$h: the kernel wrote the image" tq_has "$h" "PM: hibernation: Wrote"
            kb=$(kfield "$h" 'PM: hibernation: Wrote') ws=$(kfield "$h" 'PM: hibernation: Wrote [0-9]+ kbytes in') mac=0
            e=$(ptime "$h" "PM: hibernation: hibernation entry")
        fi
        tq_resume_boot "$u"
        t_cmd=$(tq_time "$h" "THAW-TEST: hibernating")
        p=$(ptime "$h" "reboot: Power down")
        rows+=("$(printf '%s %s %s %s %s %s %s %s %s %s' "$v" "$r" \
            "$(awk -v a="$hib_total" -v b="$t_cmd" 'BEGIN { printf "%.1f", a - b }')" \
            "$(awk -v a="$p" -v b="$e" 'BEGIN { printf "%.1f", a - b }')" \
            "$kb" "$ws" \
            "$(kfield "$u" 'PM: hibernation: Read [0-9]+ kbytes in')" "$(tq_time "$u" "THAW-TEST: hibernate exit")" \
            "$(r=$(kfield "$h" 'thaw: reclaimed part of [0-9]+ MiB in'); echo "${r:-0}")" "$mac")")
    done
done

mkdir -p "$(dirname "$OUT")"
{
    echo "make bench-hibernate, $(date -u '+%Y-%m-%d %H:%M UTC'), host load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "guest: ${TQ_MEM} MiB RAM, ${TQ_SMP} vCPUs (QEMU TCG, $TQ_CPU), workload ${TQ_WORKLOAD_MIB} MiB," \
         "swap on dm-crypt; $ROUNDS round(s), variants interleaved; medians"
    echo
    printf '%s\n' "${rows[@]}" | awk '
        function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
            return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
        { v = $1; n[v]++; k = n[v]; cmd[v, k] = $3; fr[v, k] = $4; kb[v, k] = $5; ws[v, k] = $6; rs[v, k] = $7; up[v, k] = $8; rc[v, k] = ($9 == "" ? 0 : $9); mc[v, k] = $10
          if (!(v in seen)) { seen[v] = 1; order[++nv] = v } }
        END {
            printf "%-9s %13s %11s %10s %9s %9s %9s %12s %10s\n", "variant", "cmd->off s", "frozen s", "image MiB", "write s", "MAC s", "read s", "resumed at s", "reclaim s"
            for (i = 1; i <= nv; i++) { v = order[i]; m = n[v]
                for (f = 1; f <= 8; f++) { delete x
                    for (k = 1; k <= m; k++) x[k] = (f == 1 ? cmd[v, k] : f == 2 ? fr[v, k] : f == 3 ? kb[v, k] / 1024 : f == 4 ? ws[v, k] : f == 5 ? rs[v, k] : f == 6 ? up[v, k] : f == 7 ? rc[v, k] : mc[v, k])
                    val[v, f] = med(x, m) }
                # the MAC share of each round'"'"'s own write, then its median
                delete x; for (k = 1; k <= m; k++) x[k] = (ws[v, k] > 0 ? mc[v, k] / ws[v, k] : 0); share[v] = med(x, m)
                printf "%-9s %13.1f %11.1f %10.0f %9.2f %9.2f %9.2f %12.1f %10.1f\n", v, val[v, 1], val[v, 2], val[v, 3], val[v, 4], val[v, 8], val[v, 5], val[v, 6], val[v, 7] }
            print ""
            if (("kernel", 1) in val) for (i = 1; i <= nv; i++) { v = order[i]; if (v == "kernel") continue
                printf "%s vs kernel: command to power-off %.2fx, frozen part %.2fx, image %.2fx, write %.2fx, resume boot until running %.2fx (below 1: shorter)\n",
                    v, val[v, 1] / val["kernel", 1], val[v, 2] / val["kernel", 2], val[v, 3] / val["kernel", 3], val[v, 4] / val["kernel", 4], val[v, 6] / val["kernel", 6] }
            if ("thaw" in seen)
                printf "thaw writer: the image MAC took %.1f%% of its write time (median of the rounds; write = the whole stream, ticket and mark, flushed)\n", 100 * share["thaw"]
            if (("thaw", 1) in val && ("thaw-nomac", 1) in val)
                printf "thaw writer: with the image MAC the write took %.2fx as long as without it (medians %.2f s and %.2f s): the MAC adds %.1f%%\n",
                    val["thaw", 4] / val["thaw-nomac", 4], val["thaw", 4], val["thaw-nomac", 4], 100 * (val["thaw", 4] / val["thaw-nomac", 4] - 1) }'
    echo
    echo "cmd->off: host seconds from the guest's 'hibernating' line to QEMU's exit; frozen: guest clock from"
    echo "'hibernation entry' (thaw's writer: 'Freezing user space processes') to power-down (freezing,"
    echo "shrinking memory, the image copy and write); MAC: the part of thaw's write spent in the image's MAC;"
    echo "resumed at: seconds from the resume boot's QEMU start until the hibernated system runs again."
} | tee "$OUT"
tq_finish

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# make bench-roundtrip: the whole round trip, hibernate to the workload back at full speed, of thaw
# against what people use today, in the same VM and the same run.
# One guest (1 GiB RAM, 2 vCPUs, a workload of 700 MiB that measures its own throughput, a 1600 MiB
# swap disk), hibernated and resumed by each contender, the contenders interleaved in each of
# BENCH_ROUNDS (3) rounds, each on fresh disks:
# - stock: Debian's dracut 059 initramfs (systemd flavour, crypt and resume, no thaw) holding the
#   swap's key file; the LUKS2 swap made in the guest with cryptsetup luksFormat's defaults;
#   echo disk > /sys/power/state; the resume boot has rd.luks.uuid=, rd.luks.key= and resume=, so
#   systemd-cryptsetup opens the swap and systemd-hibernate-resume hands it to the kernel. The one
#   hibernation is resumed twice, from copies of its disks: stock-nothing (nothing after the
#   resume: pages fault back one by one) and stock-swapoff (swapoff; swapon of the swap device).
# - thaw (thaw hibernate, its defaults: the swap-in starts by itself), and the alternatives of
#   BENCH_VARIANTS (default "thaw thaw-reclaim thaw-noswapin thaw-image0"): --reclaim, --no-swapin
#   (nothing after the resume), --image-size 0; all with thaw's systemd-flavour initramfs (dracut's
#   same modules, thaw instead of crypt), so both contenders boot the same stack.
# Per contender and round: seconds from the command to power-off (host clock), the frozen part
# (guest clock, as make bench-hibernate), the image; on the resume boot, host seconds since QEMU
# started to the handoff (the kernel's "PM: hibernation: resume from hibernation", for both), to the
# system running (the guest's line right after the hibernation command returned) and to the
# workload back at 90% of its throughput before the hibernation (the running line's host time plus
# the guest's own seconds from it, read from its rate file); capped at BENCH_LIMIT (240) seconds
# after the running line, marked +. And where thaw spends its own time at boot, from the printk
# clock of thaw's resume boots. Table to stdout and $B/bench-roundtrip.txt.
# Not part of make test: about 5 minutes per contender and round under TCG.
set -u
here=$(cd "$(dirname "$0")" && pwd)
export TQ_MEM=${TQ_MEM:-1024} TQ_WORKLOAD_MIB=${TQ_WORKLOAD_MIB:-700} TQ_SWAP_MIB=${TQ_SWAP_MIB:-1600}
export TQ_BOOT_TIMEOUT=${TQ_BOOT_TIMEOUT:-1800}
# Guest work silent for longer than the harness's 30 s silence limit (swapoff, large images): only
# a silence at the kernel's hibernation or resume steps is a hang here.
export TQ_SILENCE_SECONDS=${TQ_SILENCE_SECONDS:-0}
export TQ_SMP=${TQ_SMP:-2}
# shellcheck source=test/qemu/lib.sh
. "$here/../../qemu/lib.sh"
ROUNDS=${BENCH_ROUNDS:-3}
LIMIT=${BENCH_LIMIT:-240}
OUT=${BENCH_OUT:-$TQ_REPO/build/bench-roundtrip.txt}
read -r -a variants <<< "${BENCH_VARIANTS:-stock thaw thaw-reclaim thaw-noswapin thaw-image0}"
declare -A hibargs=([thaw]="" [thaw-reclaim]="--reclaim" [thaw-noswapin]="--no-swapin" [thaw-image0]="--image-size,0")
for v in "${variants[@]}"; do
    [[ $v == stock || -v hibargs[$v] ]] || tq_die "BENCH_VARIANTS: no contender '$v' (have: stock ${!hibargs[*]})"
done

# ptime NAME TEXT: the guest clock (printk seconds) of the first line containing TEXT.
ptime() { grep -F -m1 -- "$2" "$TQ_WORK/$1.log" | sed -n 's/.*| \[ *\([0-9.]*\)\].*/\1/p'; }
# kfield NAME REGEX: the first number after REGEX in the boot's log.
kfield() { grep -m1 -oE -- "$2 [0-9.]+" "$TQ_WORK/$1.log" | grep -oE '[0-9.]+$'; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "") print "-"; else printf "%.2f", a - b }'; }

fresh_disks() {
    cp --sparse=always "$TQ_WORK/root.base" "$TQ_WORK/root.img"
    truncate -s 0 "$TQ_WORK/swap.img"
    truncate -s "${TQ_SWAP_MIB}M" "$TQ_WORK/swap.img"
}

# hib_row NAME: cmd->off, frozen, image kB of hibernate boot NAME (fields 3-5 of a row).
hib_row() {
    local h=$1 kb e
    if tq_has "$h" "thaw: wrote the image to "; then
        kb=$(($(kfield "$h" 'thaw: wrote the image to [^:]+:') * 4))
        e=$(ptime "$h" "Freezing user space processes")
    else
        kb=$(kfield "$h" 'PM: hibernation: Wrote')
        e=$(ptime "$h" "PM: hibernation: hibernation entry")
    fi
    echo "$(sub "$TQ_BOOT_SECONDS" "$(tq_time "$h" "THAW-TEST: hibernating")") $(sub "$(ptime "$h" "reboot: Power down")" "$e") ${kb:--}"
}

# res_row NAME: handoff, running, back to 90% (host seconds since QEMU start; + when capped).
res_row() {
    local u=$1 run back hand cap=""
    run=$(tq_time "$u" "THAW-TEST: bench: running")
    back=$(sed -n 's/.*THAW-TEST: bench: back to 90% after \([>0-9.]*\) s.*/\1/p' "$TQ_WORK/$u.log" | head -n1)
    [[ $back == '>'* ]] && { cap=+; back=${back#>}; }
    hand=$(tq_time "$u" "PM: hibernation: resume from hibernation")
    echo "${hand:--} ${run:--} $(
        [[ -n $run && -n $back ]] && awk -v a="$run" -v b="$back" -v c="$cap" 'BEGIN { printf "%.1f%s", a + b, c }' || echo -)"
}

# thaw_parts NAME: thaw's own boot-time parts of resume boot NAME, ms from the printk clock and its
# own lines: device appears -> hook starts (0 when the hook was already waiting for it), key,
# keyslot and mapping, the rest of the unlock (from the later of the two: the hook's modprobes,
# thaw's start-up, header and policy checks), checks (ticket, image, what else comes before the
# handoff), and the total device -> handoff.
thaw_parts() {
    local u=$1 dev hook unl hand key slot
    dev=$(ptime "$u" ": [vdb] ") hook=$(ptime "$u" "running thaw resume")
    unl=$(ptime "$u" "thaw: unlocked ") hand=$(ptime "$u" "thaw: resuming from ")
    key=$(kfield "$u" 'thaw: unlocked .*\(key') slot=$(kfield "$u" 'thaw: unlocked .*keyslot and mapping')
    [[ -n $dev && -n $hook && -n $unl && -n $hand && -n $key && -n $slot ]] || return 0
    awk -v d="$dev" -v h="$hook" -v u="$unl" -v f="$hand" -v k="$key" -v s="$slot" 'BEGIN {
        b = h > d ? h : d
        printf "%.0f %d %d %.0f %.0f %.0f\n", (b - d) * 1000, k, s, (u - b) * 1000 - k - s, (f - u) * 1000, (f - d) * 1000 }'
}

# run_rounds: every boot of every round; each contender-round adds its row to $TQ_WORK/rows.
run_rounds() {
    tq_prepare
    tq_workdir bench-roundtrip
    cut -d' ' -f1-3 /proc/loadavg > "$TQ_WORK/load-start"
    stock_key=$TQ_CACHE/bench-roundtrip-stock.key
    [[ -s $stock_key ]] || (umask 077; head -c 32 /dev/urandom > "$stock_key")
    tq_build_initramfs_stock "$stock_key"
    stock_initrd=$TQ_INITRD
    tq_build_initramfs_systemd
    thaw_initrd=$TQ_INITRD
    # What the stock guest does after the resume, read from QEMU only then; the same name and size on
    # every boot (the guest's fw_cfg list is the one of its hibernating boot).
    TQ_QEMU_EXTRA=(-fw_cfg "name=opt/test/after,file=$TQ_WORK/after")

    # cryptsetup's argon2 threads need libgcc_s (pthread_exit), which the shared root image lacks: this
    # run's root has it, and each contender starts from a copy of that root.
    tq_root_add /lib/x86_64-linux-gnu/libgcc_s.so.1
    cp --sparse=always "$TQ_WORK/root.img" "$TQ_WORK/root.base"
    for ((r = 1; r <= ROUNDS; r++)); do
        # The contenders in a rotated order each round.
        order=("${variants[@]:$(((r - 1) % ${#variants[@]}))}" "${variants[@]:0:$(((r - 1) % ${#variants[@]}))}")
        for v in "${order[@]}"; do
            fresh_disks
            h=hib-$v-$r
            printf 'nothing' > "$TQ_WORK/after"
            if [[ $v == stock ]]; then
                uuid=$(cat /proc/sys/kernel/random/uuid)
                TQ_INITRD=$stock_initrd TQ_THAW_ARGS="" tq_sleep_boot_checked "$h" rt "$stock_key" thaw.rt=stock \
                    "thaw.uuid=$uuid" "thaw.limit=$LIMIT"
                tq_check "$h: the kernel wrote the image" tq_has "$h" "PM: hibernation: Wrote"
                hib=$(hib_row "$h")
                cp --sparse=always "$TQ_WORK/root.img" "$TQ_WORK/root.img.hib"
                cp --sparse=always "$TQ_WORK/swap.img" "$TQ_WORK/swap.img.hib"
                # Nothing and swapoff first in turn.
                afters=(nothing swapoff)
                ((r % 2)) || afters=(swapoff nothing)
                for a in "${afters[@]}"; do
                    u=res-stock-$a-$r
                    cp --sparse=always "$TQ_WORK/root.img.hib" "$TQ_WORK/root.img"
                    cp --sparse=always "$TQ_WORK/swap.img.hib" "$TQ_WORK/swap.img"
                    printf '%s' "$a" > "$TQ_WORK/after"
                    TQ_INITRD=$stock_initrd TQ_THAW_ARGS="" tq_sleep_boot_checked "$u" resume "$stock_key" \
                        "rd.luks.uuid=$uuid" rd.luks.key=/etc/bench-swap.key "resume=/dev/mapper/luks-$uuid"
                    tq_check "$u: systemd-cryptsetup opened the swap, the kernel loaded the image" tq_has "$u" "PM: Image loading done"
                    tq_check "$u: the workload was back at 90% or the limit hit" tq_has "$u" "THAW-TEST: bench: back to 90%"
                    tq_check "$u: the resumed system did '$a'" tq_has "$u" "THAW-TEST: bench: after the resume: $a"
                    if [[ $a == swapoff ]]; then
                        tq_check "$u: swapoff and swapon worked" tq_has "$u" "THAW-TEST: bench: swapoff and swapon done"
                        tq_check "$u: swapoff did not fail" tq_lacks "$u" "THAW-TEST: bench: swapoff failed"
                    fi
                    echo "stock-$a $r $hib $(res_row "$u")" >> "$TQ_WORK/rows"
                done
                rm -f "$TQ_WORK/root.img.hib" "$TQ_WORK/swap.img.hib"
            else
                TQ_INITRD=$thaw_initrd tq_sleep_boot_checked "$h" rt "$TQ_WORK/key" thaw.rt=thaw \
                    "thaw.hibargs=${hibargs[$v]}" "thaw.limit=$LIMIT"
                tq_check "$h: the image was written" tq_image_written "$h"
                hib=$(hib_row "$h")
                u=res-$v-$r
                TQ_INITRD=$thaw_initrd tq_sleep_boot_checked "$u" resume "$TQ_WORK/key"
                tq_check "$u: thaw handed the image to the kernel" tq_has "$u" "thaw: resuming from /dev/mapper/thaw-swap"
                tq_check "$u: the kernel loaded the image" tq_has "$u" "PM: Image loading done"
                tq_check "$u: the workload was back at 90% or the limit hit" tq_has "$u" "THAW-TEST: bench: back to 90%"
                echo "$v $r $hib $(res_row "$u")" >> "$TQ_WORK/rows"
            fi
        done
    done
    cut -d' ' -f1-3 /proc/loadavg > "$TQ_WORK/load-end"
    date -u '+%Y-%m-%d %H:%M UTC' > "$TQ_WORK/date"
}

# BENCH_TABLE_ONLY=1: no boots, the table again from the last run's rows and serial logs.
if [[ ${BENCH_TABLE_ONLY:-0} == 1 ]]; then
    TQ_WORK=$TQ_CACHE/run/bench-roundtrip
    [[ -s $TQ_WORK/rows ]] || tq_die "no rows of a run in $TQ_WORK"
else
    run_rounds
fi

# dev_handoff NAME: seconds (printk clock) of resume boot NAME from the swap disk's [vdb] line to the
# kernel's "resume from hibernation": each contender's whole unlock and handoff.
dev_handoff() { sub "$(ptime "$1" "PM: hibernation: resume from hibernation")" "$(ptime "$1" ": [vdb] ")"; }

mapfile -t rows < "$TQ_WORK/rows"
parts=()
for i in "${!rows[@]}"; do
    read -r v r _ <<< "${rows[i]}"
    u=res-$v-$r
    rows[i]+=" $(dev_handoff "$u")"
    [[ $v == thaw* ]] || continue
    p=$(thaw_parts "$u")
    [[ -n $p ]] && parts+=("$v $r $p")
done

mkdir -p "$(dirname "$OUT")"
{
    echo "make bench-roundtrip, $(cat "$TQ_WORK/date" 2> /dev/null || echo "run not finished"), host load at start" \
        "$(cat "$TQ_WORK/load-start"), at end $(cat "$TQ_WORK/load-end" 2> /dev/null || echo "-")"
    echo "guest: ${TQ_MEM} MiB RAM, ${TQ_SMP} vCPUs (QEMU TCG, $TQ_CPU), workload ${TQ_WORKLOAD_MIB} MiB, swap disk ${TQ_SWAP_MIB} MiB;" \
        "$ROUNDS round(s), contenders interleaved; medians (min-max)"
    echo "$(tq_kernel_package); dracut $(cat "$TQ_CACHE/dracut/.done"), systemd $(dpkg-query -W -f '${Version}' systemd)"
    grep -h "THAW-TEST: bench: luksFormat took" "$TQ_WORK"/hib-stock-*.log 2> /dev/null | head -n1 | sed 's/.*THAW-TEST: bench: /stock: /'
    echo
    printf '%s\n' "${rows[@]}" | awk -v limit="$LIMIT" '
        function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
            return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
        # col V F: median of field F of contender V, with its spread; sets M (the median)
        function col(v, f, scale,   k, m, lo, hi, x, c) { m = 0; c = ""
            for (k = 1; k <= n[v]; k++) { if (val[v, k, f] == "-") return "-"
                x[k] = val[v, k, f]; if (x[k] ~ /\+$/) { c = "+"; x[k] = substr(x[k], 1, length(x[k]) - 1) + 0 } else x[k] += 0
                x[k] /= scale }
            M[v, f] = med(x, n[v]); lo = x[1]; hi = x[n[v]]
            return n[v] > 1 ? sprintf("%.1f%s (%.1f-%.1f)", M[v, f], c, lo, hi) : sprintf("%.1f%s", M[v, f], c) }
        { v = $1; n[v]++; for (f = 3; f <= NF; f++) val[v, n[v], f] = $f; if (!(v in seen)) { seen[v] = 1; order[++nv] = v } }
        END {
            printf "%-14s %-18s %-16s %-12s %-16s %-16s %-18s %-14s\n", "contender", "cmd->off s", "frozen s", "image MiB", "handoff at s", "running at s", "90% back at s", "vdb->handoff s"
            for (i = 1; i <= nv; i++) { v = order[i]
                printf "%-14s %-18s %-16s %-12s %-16s %-16s %-18s %-14s\n", v, col(v, 3, 1), col(v, 4, 1), col(v, 5, 1024), col(v, 6, 1), col(v, 7, 1), col(v, 8, 1), col(v, 9, 1) }
            print ""
            for (i = 1; i <= nv; i++) { v = order[i]; if (v ~ /^stock/) continue
                line = v ":"
                if (M["stock-nothing", 8] > 0) line = line sprintf(" 90%% back %.2fx stock-nothing (goal <= 0.6),", M[v, 8] / M["stock-nothing", 8])
                if (M["stock-swapoff", 8] > 0) line = line sprintf(" %.2fx stock-swapoff (goal <= 0.8),", M[v, 8] / M["stock-swapoff", 8])
                if (M["stock-nothing", 3] > 0) line = line sprintf(" cmd->off %.2fx stock (goal <= 1.0)", M[v, 3] / M["stock-nothing", 3])
                print line }
        }'
    if ((${#parts[@]})); then
        echo
        echo "thaw's own time at boot, ms (printk clock; medians over thaw's resume boots, min-max):"
        printf '%s\n' "${parts[@]}" | awk '
            function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
                return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
            { n++; for (f = 3; f <= 8; f++) p[f, n] = $f }
            END { split("device [vdb] -> thaw-resume starts|key (rd.thaw.key=)|keyslot and mapping (libcryptsetup, one call)|rest of the unlock (modprobes, start-up, header, policy)|checks (ticket, image, TPM) -> handoff|total: device -> handoff", name, "|")
                for (f = 3; f <= 8; f++) { delete x; for (k = 1; k <= n; k++) x[k] = p[f, k]; m = med(x, n)
                    printf "  %-58s %6.0f (%.0f-%.0f)%s\n", name[f - 2], m, x[1], x[n], f == 8 ? sprintf("   goal <= 300: %s", m <= 300 ? "met" : "not met") : "" } }'
    fi
    echo
    echo "cmd->off: host seconds from the guest's 'hibernating' line to QEMU's exit; frozen: guest clock from"
    echo "'hibernation entry' (thaw's writer: 'Freezing user space processes') to power-down; image: as written"
    echo "(the kernel's 'Wrote N kbytes', thaw's pages x 4 KiB); handoff, running, 90% back: host seconds since"
    echo "the resuming QEMU started until the kernel took the resume device ('PM: hibernation: resume from"
    echo "hibernation'), the hibernated system ran again, and the workload ran at >= 90% of its throughput before"
    echo "the hibernation (the guest's seconds from its running line, added; + hit the limit of $LIMIT s, counted as it);"
    echo "vdb->handoff: guest clock from the swap disk's [vdb] line to the kernel's 'resume from hibernation'."
    echo "stock: dracut's systemd flavour with crypt and resume, key file in the initramfs, its keyslot argon2id as"
    echo "luksFormat chose it in this guest (above); thaw: thaw's own PBKDF2 keyslot for a random key. That"
    echo "difference is real and part of what is compared. stock-nothing and stock-swapoff resume the same"
    echo "hibernation (copies of its disks). Both modes power off (disk=shutdown; thaw's default --mode shutdown)."
} > "$OUT.tmp" && mv "$OUT.tmp" "$OUT"
cat "$OUT"
tq_log "serial logs: $TQ_WORK; table: $OUT"
tq_finish

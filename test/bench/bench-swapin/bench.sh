#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# make bench-swapin: swapoff, thaw swapin (prefetch) and doing nothing, side by side in one VM.
# A 1 GiB guest whose workload holds 700 MiB hibernates with image_size 0 (most of the workload goes
# to swap) and resumes; then test/bench/bench-swapin/guest.sh runs BENCH_ROUNDS rounds of the three
# variants, interleaved, each after pushing the workload out to swap again, and reads the swap
# device sequentially as the limit (one reader, and 4 readers at different offsets). "Back to 90%"
# is of the workload's throughput before the hibernation; the huge-page columns are the workload's
# AnonHugePages as a share of its size, after the push-out (as a resume leaves it) and once the
# helper is done. The table goes to stdout and to $B/bench-swapin.txt.
# Not part of make test: it takes 15-40 minutes under TCG.
set -u
here=$(cd "$(dirname "$0")" && pwd)
export TQ_MEM=${TQ_MEM:-1024} TQ_WORKLOAD_MIB=${TQ_WORKLOAD_MIB:-700} TQ_SWAP_MIB=${TQ_SWAP_MIB:-1600}
export TQ_BOOT_TIMEOUT=${TQ_BOOT_TIMEOUT:-5400}
# Guest work silent for longer than the harness's 30 s silence limit (swapoff, large images): only
# a silence at the kernel's hibernation or resume steps is a hang here.
export TQ_SILENCE_SECONDS=${TQ_SILENCE_SECONDS:-0}
# Two vCPUs, as the figures in README.md were taken (the test scenarios run with one).
export TQ_SMP=${TQ_SMP:-2}
# shellcheck source=test/qemu/lib.sh
. "$here/../../qemu/lib.sh"
ROUNDS=${BENCH_ROUNDS:-3}
OUT=${BENCH_OUT:-$TQ_REPO/build/bench-swapin.txt}

tq_prepare
tq_workdir bench-swapin
tq_boot_checked hibernate bench "$TQ_WORK/key" "thaw.rounds=$ROUNDS"
tq_check "hibernate: the image was written" tq_image_written hibernate
tq_boot_checked resume resume "$TQ_WORK/key"
tq_check "resume: the benchmark ran to its end" tq_has resume "THAW-TEST: bench: done"
tq_check "resume: workload: nothing lost" tq_has resume "workload: nothing lost (${TQ_WORKLOAD_MIB} MiB verified"

log=$TQ_WORK/resume.log
grep -hE "THAW-TEST: bench|PM: hibernation: (Wrote|Allocated)|thaw: wrote the image|PM: Image (loading|restored)" \
    "$TQ_WORK/hibernate.log" "$log" | sed 's/^/# /' >&2
mkdir -p "$(dirname "$OUT")"
{
    echo "make bench-swapin, $(date -u '+%Y-%m-%d %H:%M UTC'), host load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "guest: ${TQ_MEM} MiB RAM, ${TQ_SMP} vCPUs (QEMU TCG, $TQ_CPU), workload ${TQ_WORKLOAD_MIB} MiB," \
         "swap on dm-crypt (aes-xts-plain64) over virtio-blk; rounds: $ROUNDS, the three variants interleaved in each"
    grep -h "THAW-TEST: bench: baseline\|THAW-TEST: bench: 90%\|THAW-TEST: bench: huge pages\|THAW-TEST: bench: xts" \
        "$TQ_WORK/hibernate.log" "$log" | sed 's/.*THAW-TEST: bench: /  /'
    echo
    sed -n 's/.*THAW-TEST: bench: round \([0-9]*\) \([a-z]*\): swapped \([0-9]*\) kB, helper \([0-9.]*\) s, back to 90% after \([>0-9.]*\) s.*AnonHugePages before push-out \([0-9]*\) kB, after it \([0-9]*\) kB, after \([0-9]*\) kB.*/\1 \2 \3 \4 \5 \6 \7 \8/p; s/.*THAW-TEST: bench: round \([0-9]*\) raw \([^:]*\): \([0-9]*\) MiB in \([0-9.]*\) s.*/\1 raw:\2 \3 \4/p' "$log" | awk -v wkb=$((TQ_WORKLOAD_MIB * 1024)) '
        function med(a, n,   i, j, t) {   # median of a[1..n]
            for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
            return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        }
        $2 ~ /^raw:/ {   # "R raw:DEV [xN] MIB SECONDS"
            d = substr($2, 5); for (i = 3; i <= NF - 2; i++) d = d " " $i
            if ($NF > 0) { rn[d]++; rate[d, rn[d]] = $(NF - 1) / $NF }; rawmib[d] = $(NF - 1); next }
        {
            v = $2; n[v]++; mib[v] = $3 / 1024
            h[v, n[v]] = $4; hr[v, n[v]] = $4 > 0 ? ($3 / 1024) / $4 : 0
            if ($5 ~ /^>/) { capped[v] = 1; b[v, n[v]] = substr($5, 2) + 0 } else b[v, n[v]] = $5
            line[v] = line[v] sprintf(" %s/%s", $4, $5)
            hp[v, n[v]] = 100 * $7 / wkb; ha[v, n[v]] = 100 * $8 / wkb   # huge: after push-out, after
        }
        END {
            split("swapoff prefetch nothing", vs, " ")
            printf "%-9s %9s %10s %10s %13s %10s %10s   %s\n", "variant", "swapped", "helper s", "MiB/s", "back to 90%",
                "huge out", "huge after", "per round (helper/back s)"
            for (k = 1; k <= 3; k++) {
                v = vs[k]; if (!n[v]) continue
                for (i = 1; i <= n[v]; i++) { x[i] = h[v, i] }; mh[v] = med(x, n[v])
                for (i = 1; i <= n[v]; i++) { x[i] = hr[v, i] }; mr[v] = med(x, n[v])
                for (i = 1; i <= n[v]; i++) { x[i] = b[v, i] }; mb[v] = med(x, n[v])
                for (i = 1; i <= n[v]; i++) { x[i] = hp[v, i] }; mhp = med(x, n[v])
                for (i = 1; i <= n[v]; i++) { x[i] = ha[v, i] }; mha = med(x, n[v])
                printf "%-9s %5.0f MiB %10s %10s %12s%s %9.0f%% %9.0f%%  %s\n", v, mib[v], v == "nothing" ? "-" : sprintf("%.1f", mh[v]),
                    v == "nothing" ? "-" : sprintf("%.1f", mr[v]), sprintf("%.1f", mb[v]), capped[v] ? "+" : " ", mhp, mha, line[v]
            }
            split("/dev/vdb|/dev/vdb x4|/dev/mapper/thaw-swap|/dev/mapper/thaw-swap x4|/dev/mapper/thaw-swap x4 nice 19 beside the workload", ds, "|")
            for (k = 1; k <= 5; k++) { d = ds[k]; if (!rn[d]) continue
                for (i = 1; i <= rn[d]; i++) x[i] = rate[d, i]; raw[d] = med(x, rn[d])
                how = d ~ / x4$/ ? "4 readers at different offsets, dd bs=1M iflag=direct each" : "dd bs=1M iflag=direct: one request at a time"
                if (d ~ /beside/) { how = "the same 4 readers at nice 19 while the workload measures; dm-crypt decrypts in its workers at nice 0"; d = "thaw-swap x4 at nice 19" }
                printf "raw sequential read %-25s %7.1f MiB/s (%d MiB, %s; median of %d)\n", d, raw[ds[k]], rawmib[ds[k]], how, rn[ds[k]] }
            print ""
            if (mh["prefetch"] > 0 && mh["swapoff"] > 0)
                printf "prefetch vs swapoff, helper time: %.2fx faster\n", mh["swapoff"] / mh["prefetch"]
            if (mb["prefetch"] > 0 && mb["swapoff"] > 0)
                printf "prefetch vs swapoff, workload back to 90%%: %.2fx sooner\n", mb["swapoff"] / mb["prefetch"]
            if (mb["prefetch"] > 0 && mb["nothing"] > 0)
                printf "prefetch vs nothing, workload back to 90%%: %.2fx sooner%s\n", mb["nothing"] / mb["prefetch"], capped["nothing"] ? " (at least: nothing hit the limit)" : ""
            for (k = 3; k <= 5; k++) { d = ds[k]
                if (raw[d] > 0 && mr["prefetch"] > 0)
                    printf "prefetch speed / raw read of %s: %.2f%s\n", d, mr["prefetch"] / raw[d], d ~ / x4$/ ? " (target >= 0.9)" : ""
                if (raw[d] > 0 && mr["prefetch"] > 0 && d ~ /beside/)
                    continue
                if (raw[d] > 0 && mr["swapoff"] > 0)
                    printf "swapoff speed / raw read of %s: %.2f\n", d, mr["swapoff"] / raw[d] }
            print "(back to 90%: of the throughput before the hibernation; huge out / after: the workload'"'"'s AnonHugePages"
            print " as a share of its size after the push-out and once the helper was done, medians;"
            print " +: at least one round hit the time limit; its value counts as the limit)"
        }'
    # thaw swapin's own figures for its prefetch rounds: the read (its MiB/s, which the device
    # limit compares with) apart from the collapse that follows it (the helper time has both).
    grep -h "THAW-TEST: bench: thaw: swap-in done:" "$log" |
        sed -n 's/.* in \([0-9.]*\) s (\([0-9.]*\) MiB\/s.*; \([0-9]*\) MiB back in huge pages in \([0-9.]*\) s.*/\1 \2 \3 \4/p' | awk '
        function med(a, n,   i, j, t) {
            for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
            return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        }
        { n++; s[n] = $1; r[n] = $2; h[n] = $3; c[n] = $4 }
        END { if (!n) exit
            for (i = 1; i <= n; i++) x[i] = s[i]; ms = med(x, n)
            for (i = 1; i <= n; i++) x[i] = r[i]; mr = med(x, n)
            for (i = 1; i <= n; i++) x[i] = h[i]; mh = med(x, n)
            for (i = 1; i <= n; i++) x[i] = c[i]; mc = med(x, n)
            printf "prefetch, thaw swapin'"'"'s own summary (median of %d): read %.1f s at %.1f MiB/s, then %d MiB back in huge pages in %.1f s\n", n, ms, mr, mh, mc }'
    # Where the prefetch's time goes (issue 20): the prefetch again with the workload stopped, thaw
    # swapin --verbose's breakdown of its threads' time, and the guest's CPU split (/proc/stat).
    sed -n 's/.*THAW-TEST: bench: alone thaw: swap-in done: .* in \([0-9.]*\) s (\([0-9.]*\) MiB\/s.*/alone \1 \2/p
            s/.*THAW-TEST: bench: round [0-9]* raw \/dev\/mapper\/thaw-swap x[0-9]*: \([0-9]*\) MiB in \([0-9.]*\) s.*/raw \1 \2/p' "$log" | awk '
        function med(a, n,   i, j, t) {
            for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
            return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        }
        $1 == "raw" && $3 > 0 { rn++; raw[rn] = $2 / $3; next }
        $1 == "alone" { n++; s[n] = $2; r[n] = $3 }
        END { if (!n) exit
            for (i = 1; i <= n; i++) x[i] = s[i]; ms = med(x, n)
            for (i = 1; i <= n; i++) x[i] = r[i]; mr = med(x, n)
            printf "prefetch with the workload stopped (SIGSTOP), thaw swapin'"'"'s own summary (median of %d): read %.1f s at %.1f MiB/s", n, ms, mr
            if (rn) { for (i = 1; i <= rn; i++) x[i] = raw[i]; printf "; / raw read of /dev/mapper/thaw-swap x4: %.2f", mr / med(x, rn) }
            print "" }'
    echo "where the time went, per round:"
    sed -n 's/.*THAW-TEST: bench: round \([0-9]*\) \(.*\) cpu: \(.*\)/  round \1 \2, guest CPU: \3/p
            s/.*THAW-TEST: bench: \(alone \)\{0,1\}thaw: swap-in time: \(.*\)/  prefetch \1thaw swapin: \2/p' "$log"
} > "$OUT.tmp" && mv "$OUT.tmp" "$OUT"
cat "$OUT"
tq_log "serial logs: $TQ_WORK; table: $OUT"
tq_finish

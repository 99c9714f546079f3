#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Soak: N round trips (thaw setup + workload + thaw hibernate, then a resume with nothing lost), each
# boot tried once, never retried, and every hang counted by its signature. Not part of make test.
# Usage: test/bench/soak.sh [ROUNDS]     (make soak SOAK_ROUNDS=N)
# The configuration comes from the harness's variables: TQ_SMP (vCPUs), TQ_ACCEL (tcg, or
# tcg,thread=single), TQ_CPU (qemu64, qemu64,+rdrand), SOAK_APPEND (more kernel arguments),
# TQ_KERNEL_PKG with a TQ_CACHE of its own (another Debian guest kernel), and SOAK_JOBS (rounds
# side by side, default TQ_JOBS's default as make test runs them: one per core). One line per
# round and a summary line go to stdout and to $SOAK_OUT (default build/soak.txt, appended).
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=test/qemu/lib.sh
. "$here/../qemu/lib.sh"

rounds=${1:-${SOAK_ROUNDS:-10}}
out=${SOAK_OUT:-$TQ_REPO/build/soak.txt}
mkdir -p "$(dirname "$out")"
# shellcheck disable=SC2206 # words: kernel arguments
append=(${SOAK_APPEND:-})

tq_prepare
config="smp=$TQ_SMP accel=$TQ_ACCEL cpu=$TQ_CPU kernel=$(tq_kernel_package | cut -d' ' -f2)${SOAK_APPEND:+ append=$SOAK_APPEND}"

# soak_boot NAME STEP: one boot, no retry; prints its seconds, then "ok", or "hung: SIGNATURE", or
# "failed: WHY".
soak_boot() {
    local rc=0
    tq_boot "$1" "$2" "$TQ_WORK/key" "${append[@]}" 2> /dev/null || rc=$?
    printf '%s ' "$TQ_BOOT_SECONDS"
    if ((rc == 124)); then
        if [[ -e $TQ_WORK/$1.hung ]]; then
            echo "hung: $(tq_hang_signature "$1")"
        else
            echo "hung: no end within ${TQ_BOOT_TIMEOUT} s: $(tq_hang_signature "$1")"
        fi
    elif ((rc != 0)); then
        echo "failed: QEMU status $rc"
    elif [[ $2 == hibernate ]] && ! tq_image_written "$1"; then
        echo "failed: no image written"
    elif [[ $2 == resume ]] && ! tq_has "$1" "workload: nothing lost"; then
        echo "failed: not resumed with nothing lost"
    else
        echo ok
    fi
}

njobs=${SOAK_JOBS:-$(nproc)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# soak_round R: one round trip in its own work directory; its line to $tmp/R.line, its seconds to
# $tmp/R.time, one line per hung boot (its signature) to $tmp/R.hung, per failed boot to $tmp/R.failed.
soak_round() {
    local r=$1 t0 line step res secs
    tq_workdir "soak-$r"
    t0=$EPOCHREALTIME
    line="round $r:"
    : > "$tmp/$r.hung"
    : > "$tmp/$r.failed"
    for step in hibernate resume; do
        res=$(soak_boot "$step" "$step")
        secs=${res%% *}
        res=${res#* }
        line+=" $step $res ($secs s);"
        case $res in
            hung:*) echo "${res#hung: }" >> "$tmp/$r.hung" ;;
            failed:*) echo "$res" >> "$tmp/$r.failed" ;;
        esac
        [[ $res == ok ]] || break
    done
    printf '%s\n' "$(tq_since "$t0")" > "$tmp/$r.time"
    rm -rf "$TQ_WORK"
    echo "$line" > "$tmp/$r.line"
}

# show_ended: the lines of the rounds that ended since the last call.
show_ended() {
    local f
    for f in "$tmp"/*.line; do
        [[ -e $f ]] && { cat "$f"; mv "$f" "$f.shown"; }
    done
}

{
    echo "soak $(date -u '+%Y-%m-%d %H:%M UTC'), host load $(cut -d' ' -f1 /proc/loadavg), $njobs round(s) at a time: $config"
    running=0
    for ((r = 1; r <= rounds; r++)); do
        if ((running >= njobs)); then
            wait -n
            running=$((running - 1))
        fi
        soak_round "$r" &
        running=$((running + 1))
        show_ended
    done
    wait
    show_ended
    hangs=$(cat "$tmp"/*.hung | grep -c .)
    fails=$(cat "$tmp"/*.failed | grep -c .)
    median=$(cat "$tmp"/*.time | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    echo "summary: $config, $njobs at a time: $rounds round trips, $hangs hung boot(s), $fails failed boot(s), median round ${median} s"
    # The signatures without the guest's timestamps: soft lockups by RIP, silences by line.
    cat "$tmp"/*.hung | sort | uniq -c | sed 's/^ *\([0-9]*\) /  \1 x /'
} | tee -a "$out"

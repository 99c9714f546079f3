#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Soak: N round trips (thaw setup + workload + thaw hibernate, then a resume with nothing lost), each
# boot tried once, never retried, and every hang counted by its signature. Not part of make test.
# Usage: test/qemu/soak.sh [ROUNDS]     (make soak SOAK_ROUNDS=N)
# The configuration comes from the harness's variables: TQ_SMP (vCPUs), TQ_ACCEL (tcg, or
# tcg,thread=single), TQ_CPU (qemu64, qemu64,+rdrand), SOAK_APPEND (more kernel arguments),
# TQ_KERNEL_PKG with a TQ_CACHE of its own (another Debian guest kernel). One line per round and a
# summary line go to stdout and to $SOAK_OUT (default build/soak.txt, appended).
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=test/qemu/lib.sh
. "$here/lib.sh"

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

declare -A sigs=()
hangs=0 fails=0 times=()
{
    echo "soak $(date -u '+%Y-%m-%d %H:%M UTC'), host load $(cut -d' ' -f1 /proc/loadavg): $config"
    for ((r = 1; r <= rounds; r++)); do
        tq_workdir "soak-$r"
        t0=$EPOCHREALTIME
        line="round $r:"
        for step in hibernate resume; do
            res=$(soak_boot "$step" "$step")
            secs=${res%% *}
            res=${res#* }
            line+=" $step $res ($secs s);"
            case $res in
                hung:*)
                    hangs=$((hangs + 1))
                    # The signature without the guest's timestamps: soft lockups by RIP, silences by line.
                    sig=${res#hung: }
                    sigs[$sig]=$((${sigs[$sig]:-0} + 1))
                    ;;
                failed:*) fails=$((fails + 1)) ;;
            esac
            [[ $res == ok ]] || break
        done
        times+=("$(tq_since "$t0")")
        echo "$line"
        rm -rf "$TQ_WORK"
    done
    median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    echo "summary: $config: $rounds round trips, $hangs hung boot(s), $fails failed boot(s), median round ${median} s"
    for sig in "${!sigs[@]}"; do
        echo "  ${sigs[$sig]} x $sig"
    done
} | tee -a "$out"

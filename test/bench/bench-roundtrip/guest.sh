# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=sh
# shellcheck disable=SC2154 # mib, seed, wl and the helpers come from guest-init.sh
# The guest half of make bench-roundtrip, sourced by guest-init.sh (fw_cfg opt/test/guest): the
# step rt, one hibernation and what the resumed system does until its workload is back at full speed.
#
# thaw.rt=stock: the swap made as a Debian user makes it: cryptsetup luksFormat with its defaults
# (argon2id, as it benchmarks in this guest), the key file from fw_cfg opt/thaw/key (the one the
# stock initramfs holds as /etc/bench-swap.key), the UUID thaw.uuid=, opened as luks-UUID, mkswap,
# swapon; then the workload, its baseline, and echo disk > /sys/power/state (disk=shutdown, as thaw's
# default mode). After the resume fw_cfg opt/test/after says what the user does next: "nothing" or
# "swapoff" (swapoff and swapon of the one swap device, which swapoff -a; swapon -a do), read from
# QEMU only then, so that one hibernation can be resumed twice from copies of its disks.
# thaw.rt=thaw: thaw setup, swapon, the workload, its baseline, thaw hibernate thaw.hibargs= (its
# defaults when empty: the swap-in starts by itself after the resume).
# After the resume, the line "bench: running" at once, the workload's throughput measurement started
# at the same moment, and the seconds (guest clock, which goes on across the resume) from that line
# until the workload ran at 90% of its baseline or more, at most thaw.limit= (240) seconds.

# Seconds after $1 at which the workload first ran at $2 MiB/s or more, within $3 s of $1 (guest
# clock: the limit is the same however long each look takes).
time_to() {
    while :; do
        hit=$(awk -v t="$1" -v r="$2" -v l="$3" '$1 > t && $1 - t <= l && $2 >= r {printf "%.2f", $1 - t; exit}' /tmp/rate)
        [ -n "$hit" ] && { echo "$hit"; return; }
        awk -v t="$1" -v l="$3" -v n="$(now)" 'BEGIN { exit !(n - t > l) }' && break
        sleep 1
    done
    echo ">$3"
}

stock_swap() {
    uuid=$(arg thaw.uuid)
    key=/sys/firmware/qemu_fw_cfg/by_name/opt/thaw/key/raw
    t=$(now)
    cryptsetup luksFormat -q --type luks2 --uuid "$uuid" --key-file "$key" /dev/vdb || fail "luksFormat failed"
    say "bench: luksFormat took $(awk -v a="$t" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }') s:" \
        "$(cryptsetup luksDump /dev/vdb | grep -E 'PBKDF|Memory|Time cost|Threads' | tr -s ' \t' ' ' | tr '\n' ';')"
    cryptsetup open --key-file "$key" /dev/vdb "luks-$uuid" || fail "cryptsetup open failed"
    swapdev=/dev/mapper/luks-$uuid
    mkswap "$swapdev" > /dev/null || fail "mkswap failed"
}

step_rt() {
    kind=$(arg thaw.rt)
    limit=$(arg thaw.limit)
    limit=${limit:-240}
    if [ "$kind" = stock ]; then
        stock_swap
    else
        setup
        swapdev=/dev/mapper/thaw-swap
    fi
    swapon "$swapdev" || fail "swapon $swapdev failed"
    rm -f /tmp/ready /tmp/rate
    workload "$mib" "$seed" /tmp/ready /tmp/rate &
    wl=$!
    wait_ready /tmp/ready "$wl" workload
    say "workload ready"
    before=$(measure_baseline)
    threshold=$(awk -v a="$before" 'BEGIN { printf "%.1f", a * 0.9 }')
    say "bench: baseline before hibernation $before MiB/s, 90% threshold $threshold MiB/s"
    say "hibernating"
    if [ "$kind" = stock ]; then
        dm=$(grep -lx "luks-$(arg thaw.uuid)" /sys/block/dm-*/dm/name | cut -d/ -f4)
        cat "/sys/block/$dm/dev" > /sys/power/resume
        echo shutdown > /sys/power/disk
        rc=0
        echo disk > /sys/power/state || rc=1
    else
        # shellcheck disable=SC2046 # the options are separate words
        thaw hibernate $(arg thaw.hibargs | tr ',' ' ')
        rc=$?
    fi
    t0=$(now)
    kill -USR2 "$wl"
    say "bench: running (hibernate exit $rc)"
    if [ "$kind" = stock ]; then
        after=$(cat /sys/firmware/qemu_fw_cfg/by_name/opt/test/after/raw 2> /dev/null)
        say "bench: after the resume: $after"
        if [ "$after" = swapoff ]; then
            (
                swapoff "$swapdev" || say "bench: swapoff failed"
                swapon "$swapdev" || say "bench: swapon failed"
                say "bench: swapoff and swapon done after $(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }') s"
            ) &
        fi
    fi
    back=$(time_to "$t0" "$threshold" "$limit")
    kill -USR2 "$wl"
    say "bench: back to 90% after $back s (guest clock from the running line), VmSwap $(vmswap_kib "$wl") kB"
    say "bench: done"
}

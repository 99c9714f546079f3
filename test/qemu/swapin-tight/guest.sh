# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=sh
# shellcheck disable=SC2154 # seed and wl come from guest-init.sh
# swapin-tight's guest code (sourced by guest-init.sh, sent as fw_cfg opt/test/guest): after the
# resume, thaw swapin with more swapped than fits, then --first interrupted, then with room.

# A heartbeat every second while $1 runs; prints the longest gap between two beats.
heartbeat() {
    rm -f /tmp/beats
    ( while :; do date +%s >> /tmp/beats; sleep 1; done ) &
    hb=$!
    "$@"
    rc=$?
    kill "$hb"
    say "heartbeat: longest gap $(awk 'NR > 1 && $1 - p > g {g = $1 - p} {p = $1} END {print g + 0}' /tmp/beats) s"
    return "$rc"
}

# More swapped than fits: a second workload takes all but about 140 MiB of the available memory,
# then swapoff must refuse and prefetch must stop at the floor. Once it is gone, a second prefetch
# brings the rest back.
tight() {
    avail=$(meminfo_kib MemAvailable)
    hog=$(((avail - 140 * 1024) / 1024))
    rm -f /tmp/ready2
    workload "$hog" "$((seed + 1))" /tmp/ready2 &
    hogpid=$!
    wait_ready /tmp/ready2 "$hogpid" "second workload"
    say "tight: second workload holds $hog MiB; workload VmSwap $(vmswap_kib "$wl") kB," \
        "MemAvailable $(meminfo_kib MemAvailable) kB"
    thaw swapin --strategy swapoff
    say "swapoff strategy exit $?"
    heartbeat thaw swapin
    say "prefetch exit $?"
    say "after prefetch: workload VmSwap $(vmswap_kib "$wl") kB, MemAvailable $(meminfo_kib MemAvailable) kB," \
        "swap on: $(grep -c '^/dev/' /proc/swaps)"
    kill -USR1 "$hogpid"
    wait "$hogpid"
    say "second workload exit $?"
    swapin_first_interrupt
    thaw swapin 2> /tmp/plain
    say "prefetch with room exit $?: workload VmSwap $(vmswap_kib "$wl") kB"
    # Not a terminal: one summary line and no bar (the console is a terminal, this file is not).
    say "plain: $(wc -l < /tmp/plain) lines, $(tr -cd '\r' < /tmp/plain | wc -c) carriage returns"
    sed 's/^/THAW-TEST: plain: /' /tmp/plain
    swapoff_priority
}

# With room again, a third small workload and the first are pushed out to swap (cgroup v2
# memory.reclaim, as thaw hibernate --reclaim does); thaw swapin --first THIRD runs on a terminal
# (util-linux script: a pty; the scenario adds it) and gets SIGTERM once the third is back; the rest
# comes back afterwards. Says how much the first still had in swap when the third had (nearly) none,
# the pty's output (bar and summary), the exit status and whether the swap is on.
swapin_first_interrupt() {
    rm -f /tmp/ready3 /tmp/ts
    workload 16 "$((seed + 2))" /tmp/ready3 &
    third=$!
    wait_ready /tmp/ready3 "$third" "third workload"
    echo 1G > /sys/fs/cgroup/memory.reclaim 2> /dev/null
    say "reclaimed: workload VmSwap $(vmswap_kib "$wl") kB, third VmSwap $(vmswap_kib "$third") kB"
    rm -f /tmp/swapin.pid
    # shellcheck disable=SC2016 # $$ is the inner shell's, which becomes thaw swapin
    script -qec 'echo $$ > /tmp/swapin.pid; exec thaw swapin --first '"$third" /tmp/ts > /dev/null 2>&1 < /dev/null &
    sp=$!
    n=0
    # Back: at most 64 kB left (a few pages can go out again meanwhile). Then SIGTERM at once.
    while [ "$(vmswap_kib "$third")" -gt 64 ] && kill -0 "$sp" 2> /dev/null && [ "$n" -lt 3000 ]; do
        sleep 0.1
        n=$((n + 1))
    done
    tp=$(cat /tmp/swapin.pid 2> /dev/null)
    wlf=$(vmswap_kib "$wl")
    kill -TERM "$tp" 2> /dev/null && say "sent SIGTERM to thaw swapin $tp"
    say "first: third VmSwap $(vmswap_kib "$third") kB while workload VmSwap $wlf kB"
    wait "$sp"
    say "interrupted swap-in exit $?: workload VmSwap $(vmswap_kib "$wl") kB, swap on: $(grep -c '^/dev/' /proc/swaps)"
    # The end of the pty's output: the bar redraws with \r and erases the rest of the line with ESC [K.
    tr '\r' '\n' < /tmp/ts | tr -d '\033' | sed 's/\[K$//' | grep -a . | tail -n 8 | sed 's/^/THAW-TEST: pty: /'
    kill -USR1 "$third"
    wait "$third"
    say "third workload exit $?"
}

# swapoff strategy with room: the swap comes back on with the priority it had (util-linux swapon
# sets one; the scenario adds it as ul-swapon).
swapoff_priority() {
    swapoff /dev/mapper/thaw-swap && ul-swapon -p 7 /dev/mapper/thaw-swap
    say "priority before: $(awk 'NR > 1 {print $5}' /proc/swaps)"
    thaw swapin --strategy swapoff
    say "swapoff strategy with room exit $?: priority after: $(awk 'NR > 1 {print $5}' /proc/swaps)"
}

hook_resumed() { tight; }

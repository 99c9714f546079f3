# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=sh
# shellcheck disable=SC2154 # wl comes from guest-init.sh
# swapin-auto's guest code (sourced by guest-init.sh, sent as fw_cfg opt/test/guest): after the
# resume, wait for the swap-in thaw hibernate started.

# Swapped memory that is not also in RAM (the swap cache keeps copies of pages brought back).
swapped_kib() {
    awk '/^SwapTotal:/ {t = $2} /^SwapFree:/ {f = $2} /^SwapCached:/ {c = $2} END {print t - f - c}' /proc/meminfo
}

# busybox has no pgrep: is a "thaw swapin" process running?
swapin_running() {
    for f in /proc/[0-9]*/cmdline; do
        case "$(tr '\0' ' ' < "$f" 2> /dev/null)" in "thaw swapin"*) return 0 ;; esac
    done
    return 1
}

# The swap-in thaw hibernate started after the resume: wait until it has come and gone.
wait_swapin() {
    say "after resume: workload VmSwap $(vmswap_kib "$wl") kB, swapped $(swapped_kib) kB," \
        "AnonHugePages $(anonhuge_kib "$wl") kB"
    t0=$(cut -d. -f1 /proc/uptime)
    n=0
    while ! swapin_running && [ "$n" -lt 20 ]; do sleep 0.5; n=$((n + 1)); done
    while swapin_running; do
        [ $(($(cut -d. -f1 /proc/uptime) - t0)) -lt 600 ] || fail "thaw swapin still running after 600 s"
        sleep 1
    done
    say "swap-in over after $(($(cut -d. -f1 /proc/uptime) - t0)) s: workload VmSwap $(vmswap_kib "$wl") kB," \
        "swapped $(swapped_kib) kB, AnonHugePages $(anonhuge_kib "$wl") kB"
}

hook_resumed() { wait_swapin; }

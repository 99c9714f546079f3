#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Host tests of the QEMU harness's hang watcher (test/qemu/harness.sh: tq_boot, tq_watch_hang,
# tq_sleep_boot_checked) with a fake QEMU that prints what a hung or a working guest prints: a
# silent guest and a soft lockup are stopped within seconds, not at the boot timeout; a guest that
# keeps talking (whole lines, or a progress bar redrawn on one line), or works silently for less
# than the silence limit (or with it off, as in the benchmarks, or for longer at the kernel's
# "Preallocating image memory"), is not; a shorter silence inside the kernel's hibernation is, and
# is retried on the disks as they were.
# lib.sh is bash; run.sh starts tests with sh.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

# shellcheck source=test/host/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=test/qemu/lib.sh
. "$top/test/qemu/lib.sh"

# The fake QEMU: what it prints is chosen by FAKE_MODE; FAKE_COUNT counts its starts.
cat > "$tmp/fake-qemu" <<'FAKE'
#!/bin/bash
n=$(($(cat "$FAKE_COUNT" 2> /dev/null || echo 0) + 1))
echo "$n" > "$FAKE_COUNT"
echo "[    0.000000] Linux version 6.1.0-fake"
# Stopped by timeout's SIGTERM, QEMU says so on stderr, which the harness logs too.
hang() {
    trap 'echo "${QNAME:-qemu-system-x86_64}: terminating on signal 15 from pid 1 (timeout)" >&2; kill "$pid" 2> /dev/null; exit 0' TERM
    sleep 120 &
    pid=$!
    wait "$pid"
}
case $FAKE_MODE in
silent)
    echo "THAW-TEST: working"
    hang ;;
lockup)
    for ((i = 0; i < 120; i++)); do
        echo "[   26.$i] watchdog: BUG: soft lockup - CPU#0 stuck for 26s! [systemd-udevd:142]"
        echo "[   26.$i] RIP: 0010:__x64_sys_getrandom+0x73/0x90"
        sleep 1 &
        wait $!
    done ;;
talking)
    for i in 1 2 3 4 5 6; do echo "THAW-TEST: step $i"; sleep 1.5; done ;;
progress-bar)
    # As thaw swapin draws its bar on a terminal: the same line redrawn, no newline until the end.
    bar='#########'
    for i in 1 2 3 4 5 6 7 8 9; do printf '\r[%-9s] %d / 9 MiB' "${bar:0:i}" "$i"; sleep 1.5; done
    echo ;;
quiet-work)
    echo "${FAKE_LINE:-THAW-TEST: swapoff}"
    sleep "$FAKE_SLEEP" &
    pid=$!
    trap 'kill "$pid" 2> /dev/null; exit 0' TERM
    wait "$pid"
    echo "THAW-TEST: swapoff done" ;;
snapshot-hang-once)
    echo "thaw: hibernating to /dev/vdb"
    if ((n == 1)); then
        # What a hung boot may have changed on its disks (a resume erases the image's signature).
        for a in "$@"; do
            [[ $a == file=*/swap.img,* ]] && { a=${a#file=}; echo "changed by the hung boot" > "${a%%,*}"; }
        done
        # ... and in its TPM (a resume increments the TPM2 counter before the handoff).
        [[ -z ${FAKE_TPM:-} ]] || echo 3 > "$FAKE_TPM/counter"
        echo "[    9.100000] Disabling non-boot CPUs ..."
        QNAME=qemu-kvm hang   # QEMU names itself after its program
    fi
    echo "thaw: wrote the image to /dev/vdb" ;;
esac
FAKE
chmod +x "$tmp/fake-qemu"

export FAKE_COUNT=$tmp/count FAKE_MODE FAKE_SLEEP FAKE_LINE
TQ_QEMU=$tmp/fake-qemu TQ_KERNEL=/dev/null TQ_INITRD='' TQ_BOOT_TIMEOUT=60
TQ_HANG_SECONDS=3 TQ_SILENCE_SECONDS=6 TQ_PREALLOC_SECONDS=12 TQ_HANG_POLL=1 TQ_SEED=1
TQ_WORK=$tmp/work
mkdir -p "$TQ_WORK"
: > "$TQ_WORK/root.img"
: > "$TQ_WORK/swap.img"
: > "$TQ_WORK/key"

# A failed check shows the boots' stderr and the end of their serial logs.
diag() {
    cat "$tmp"/*.err
    tail -n 3 "$TQ_WORK"/*.log
}

# boot MODE: one tq_boot with the fake; sets rc.
boot() {
    FAKE_MODE=$1
    rm -f "$FAKE_COUNT"
    rc=0
    tq_boot "$1" test "$TQ_WORK/key" 2> "$tmp/$1.err" || rc=$?
}
quick() { awk -v s="$TQ_BOOT_SECONDS" 'BEGIN { exit !(s < 15) }'; }
no_fake_left() { ! pgrep -f "$tmp/fake-qemu" > /dev/null; }

boot silent
check "a silent guest is stopped as hung (status $rc after $TQ_BOOT_SECONDS s: the 6 s silence limit, not the 60 s timeout)" \
    test "$rc" -eq 124 -a -e "$TQ_WORK/silent.hung"
check "... within seconds" quick
check "... its signature is the last line" \
    grep -qF "stopped as hung after 6 s with no serial output: silent at 'THAW-TEST: working'" "$tmp/silent.err"

boot lockup
check "a soft lockup that keeps the log growing is stopped (status $rc after $TQ_BOOT_SECONDS s)" \
    test "$rc" -eq 124 -a -e "$TQ_WORK/lockup.hung"
check "... within seconds" quick
check "... its signature names the RIP" grep -qF "stopped as hung at once: a soft lockup at RIP: 0010:__x64_sys_getrandom+0x73/0x90" "$tmp/lockup.err"

boot talking
check "a guest that prints a line every 1.5 s for 9 s runs to its end (status $rc)" \
    test "$rc" -eq 0 -a ! -e "$TQ_WORK/talking.hung"

FAKE_SLEEP=3 boot quiet-work
check "3 s of silent guest work, under the 6 s silence limit, is no hang (status $rc)" test "$rc" -eq 0
FAKE_SLEEP=9 boot quiet-work
check "9 s of it is one (status $rc)" test "$rc" -eq 124
FAKE_SLEEP=9 TQ_SILENCE_SECONDS=0 boot quiet-work
check "... but not with TQ_SILENCE_SECONDS=0, as in the benchmarks (status $rc)" test "$rc" -eq 0
prealloc='[   20.100000] PM: hibernation: Preallocating image memory'
FAKE_SLEEP=9 FAKE_LINE=$prealloc boot quiet-work
check "9 s of silence at the kernel's 'Preallocating image memory' (its limit 12 s) is no hang (status $rc)" test "$rc" -eq 0
FAKE_SLEEP=20 FAKE_LINE=$prealloc boot quiet-work
check "20 s of it is one (status $rc)" test "$rc" -eq 124
check "... stopped at that step's limit" grep -qF "stopped as hung after 12 s with no serial output: silent at 'PM: hibernation: Preallocating image memory'" "$tmp/quiet-work.err"

boot progress-bar
check "a progress bar redrawn every 1.5 s for 13.5 s, with no newline, runs to its end (status $rc)" \
    test "$rc" -eq 0 -a ! -e "$TQ_WORK/progress-bar.hung"
check "... its last state in the log" grep -qF "9 / 9 MiB" "$TQ_WORK/progress-bar.log"
check "... the raw copy of the console removed" test ! -e "$TQ_WORK/progress-bar.log.raw"

FAKE_MODE=snapshot-hang-once
rm -f "$FAKE_COUNT"
echo before > "$TQ_WORK/swap.img"
# With a TPM (a real swtpm on a state directory, as the TPM scenarios have) where swtpm is installed.
if command -v swtpm > /dev/null; then
    TQ_TPM_STATE=$TQ_WORK/tpm
    mkdir -p "$TQ_TPM_STATE"
    echo 2 > "$TQ_TPM_STATE/counter"
    export FAKE_TPM=$TQ_TPM_STATE
fi
TQ_FAILS=0
tq_sleep_boot_checked snap test "$TQ_WORK/key" 2> "$tmp/snap.err"
check "a 3 s silence at 'Disabling non-boot CPUs' (the kernel's step) is a hang, retried once, and the retry passes" \
    test "$TQ_FAILS" -eq 0 -a "$(cat "$FAKE_COUNT")" -eq 2
check "... said with its signature" \
    grep -qF "RETRY: boot snap hung: silent at 'Disabling non-boot CPUs ...'" "$tmp/snap.err"
check "... stopped at the 3 s limit of the kernel's steps" grep -qF "boot snap: stopped as hung after 3 s with no serial output" "$tmp/snap.err"
check "... the hung boot's log kept" test -s "$TQ_WORK/snap.hung1.log"
check "... on the swap disk as it was before the hung boot" test "$(cat "$TQ_WORK/swap.img")" = before
if [[ -n ${FAKE_TPM:-} ]]; then
    check "... and with the TPM's state as it was (counter 2, not the hung boot's 3)" test "$(cat "$FAKE_TPM/counter")" = 2
else
    echo "# no swtpm: the TPM state's restore was not checked"
fi

sleep 1
check "no fake QEMU left running" no_fake_left

finish

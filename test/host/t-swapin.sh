#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Host tests of thaw swapin on a fixture root (the real swap-in needs a VM: test/qemu/swapin-*),
# of the swap-in that thaw hibernate starts after the resume, and of the systemd-sleep hook.
set -u

: "${THAW:?THAW must name the thaw binary}"
# shellcheck source=test/host/lib.sh
. "$(dirname "$0")/lib.sh"
root=$tmp/root
mkdir -p "$root/etc/thaw" "$root/proc" "$root/sys/power" "$root/sys/block/dm-0/dm" "$root/dev/mapper"
echo thaw-swap > "$root/sys/block/dm-0/dm/name"
echo 253:0 > "$root/sys/block/dm-0/dev"
echo "[shutdown] reboot" > "$root/sys/power/disk"
echo "freeze mem disk" > "$root/sys/power/state"
echo 300000000 > "$root/sys/power/image_size"
: > "$root/sys/power/resume"
: > "$root/sys/power/resume_offset"
echo "root=/dev/vda" > "$root/proc/cmdline"
# 500 MiB swapped out, 300 MiB available: more than fits above a 100 MiB floor.
printf 'Filename Type Size Used Priority\n/dev/dm-0 partition 1048572 512000 -2\n' > "$root/proc/swaps"
printf 'MemTotal: 1000000 kB\nMemAvailable: 300000 kB\nAnonPages: 250000 kB\nShmem: 2000 kB\n'\
'SwapCached: 0 kB\nSwapTotal: 1048572 kB\nSwapFree: 536572 kB\n' > "$root/proc/meminfo"
printf 'device=UUID=1234\nkey=fwcfg:opt/thaw/key\n' > "$root/etc/thaw/thaw.conf"

expect_err "prefetch with nothing swapped in any process: nothing to do" 0 \
    "no process has pages in swap" "$THAW" swapin --root "$root"
expect_err "swapoff refused when the swapped memory does not fit above the floor" 1 \
    "swapoff refused: 500 MiB are swapped out on /dev/mapper/thaw-swap, but only 195 MiB are available" \
    "$THAW" swapin --strategy swapoff --root "$root"
expect_err "swapoff refusal says what to do instead" 1 "Use --strategy prefetch" \
    "$THAW" swapin --strategy swapoff --root "$root"
expect_err "a floor above RAM is refused" 2 "--floor 2G: give a size below RAM" "$THAW" swapin --floor 2G --root "$root"
expect_err "an unknown strategy is refused" 2 "--strategy prefetch or swapoff" "$THAW" swapin --strategy fast --root "$root"
expect_err "--batch out of range is refused" 2 "--batch 0: give a size" "$THAW" swapin --batch 0 --root "$root"
printf 'swapin=off\n' >> "$root/etc/thaw/thaw.conf"
expect_err "--auto obeys swapin=off in thaw.conf" 0 "swapin=off in thaw.conf" "$THAW" swapin --auto --root "$root"
expect_err "an explicit --strategy wins over swapin=off" 0 "no process has pages in swap" \
    "$THAW" swapin --auto --strategy prefetch --root "$root"

# thaw hibernate: the fixture's /sys/power/state write "returns" at once, as after a resume.
printf 'device=UUID=1234\nkey=fwcfg:opt/thaw/key\n' > "$root/etc/thaw/thaw.conf"
printf 'Filename Type Size Used Priority\n/dev/dm-0 partition 1048572 0 -2\n' > "$root/proc/swaps"
"$THAW" hibernate --root "$root" --image-size 64M > "$tmp/out" 2> "$tmp/err"
rc=$?
# The swap-in runs detached; wait for its line (it inherits our stderr file).
i=0
while ! grep -q "swap-in: no process" "$tmp/err" && [ "$i" -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
if [ "$rc" -eq 0 ] && grep -q "started thaw swapin --strategy prefetch" "$tmp/err" &&
    grep -q "swap-in: no process has pages in swap" "$tmp/err"; then
    ok "thaw hibernate starts thaw swapin after the resume"
else not_ok "thaw hibernate starts thaw swapin after the resume"; fi
if [ "$(cat "$root/sys/power/image_size")" = 67108864 ]; then ok "--image-size 64M is written to /sys/power/image_size"
else not_ok "--image-size 64M is written to /sys/power/image_size"; fi
"$THAW" hibernate --root "$root" --no-swapin > "$tmp/out" 2> "$tmp/err"
sleep 0.5
if grep -q resumed "$tmp/err" && ! grep -q "swapin" "$tmp/err"; then ok "--no-swapin: no swap-in"
else not_ok "--no-swapin: no swap-in"; fi
printf 'swapin=off\nimage_size=0\n' >> "$root/etc/thaw/thaw.conf"
"$THAW" hibernate --root "$root" > "$tmp/out" 2> "$tmp/err"
sleep 0.5
if grep -q resumed "$tmp/err" && ! grep -q "swapin" "$tmp/err" && [ "$(cat "$root/sys/power/image_size")" = 0 ]
then ok "swapin=off and image_size=0 in thaw.conf"; else not_ok "swapin=off and image_size=0 in thaw.conf"; fi

# The systemd-sleep hook, with a systemd-run that records what it was asked to run.
mkdir -p "$tmp/bin"
printf '#!/bin/sh\necho "$*" >> %s/ran\n' "$tmp" > "$tmp/bin/systemd-run"
chmod +x "$tmp/bin/systemd-run"
hook() { PATH=$tmp/bin:/usr/bin:/bin THAW=$THAW sh "$top/dracut-module/system-sleep/thaw.sh" "$@" 2> "$tmp/err"; }
# Before hibernation it writes the image's ticket: a stand-in thaw records what it was asked.
printf '#!/bin/sh\necho "thaw $*" >> %s/thaw-ran\n' "$tmp" > "$tmp/bin/thaw"
chmod +x "$tmp/bin/thaw"
PATH=$tmp/bin:/usr/bin:/bin THAW=$tmp/bin/thaw sh "$top/dracut-module/system-sleep/thaw.sh" pre hibernate 2> "$tmp/err"
PATH=$tmp/bin:/usr/bin:/bin THAW=$tmp/bin/thaw sh "$top/dracut-module/system-sleep/thaw.sh" pre suspend 2> "$tmp/err"
if [ "$(cat "$tmp/thaw-ran" 2> /dev/null)" = "thaw hibernate --ticket-only" ] && [ ! -e "$tmp/ran" ]; then
    ok "before hibernation (only) the sleep hook writes the image's ticket (thaw hibernate --ticket-only)"
else not_ok "before hibernation (only) the sleep hook writes the image's ticket (thaw hibernate --ticket-only)"; fi
hook post suspend
if [ ! -e "$tmp/ran" ]; then ok "the sleep hook does nothing after a suspend"
else not_ok "the sleep hook does nothing after a suspend"; fi
hook post hibernate
if grep -q -- "--unit=thaw-swapin .*$THAW swapin --auto" "$tmp/ran" 2> /dev/null; then
    ok "after hibernation the sleep hook starts thaw swapin --auto as a transient unit"
else not_ok "after hibernation the sleep hook starts thaw swapin --auto as a transient unit"; fi

finish

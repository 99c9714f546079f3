#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Host tests of `thaw hibernate --dry-run` on a fixture root: it reads thaw.conf and this boot's
# /proc/cmdline like the next boot's thaw resume, and refuses when that boot would not resume.
set -u

: "${THAW:?THAW must name the thaw binary}"

# shellcheck source=test/host/lib.sh
. "$(dirname "$0")/lib.sh"
root=$tmp/root
mkdir -p "$root/etc/thaw" "$root/proc" "$root/sys/power" "$root/sys/block/dm-0/dm"
echo thaw-swap > "$root/sys/block/dm-0/dm/name"
echo 253:0 > "$root/sys/block/dm-0/dev"
echo "[shutdown] reboot" > "$root/sys/power/disk"
echo "freeze mem disk" > "$root/sys/power/state"
printf 'Filename Type Size Used Priority\n/dev/dm-0 partition 1048572 0 -2\n' > "$root/proc/swaps"
printf 'MemTotal: 2000000 kB\nMemAvailable: 1700000 kB\nAnonPages: 250000 kB\nShmem: 20000 kB\n' \
    > "$root/proc/meminfo"
printf 'device=UUID=1234\nkey=fwcfg:opt/thaw/key\nname=thaw-swap\n' > "$root/etc/thaw/thaw.conf"

# dry_run NAME STATUS TEXT CMDLINE [OPTION...]: thaw hibernate --dry-run OPTION... with /proc/cmdline =
# CMDLINE exits STATUS and says TEXT on stderr.
dry_run() {
    echo "$4" > "$root/proc/cmdline"
    dry_name=$1 dry_status=$2 dry_text=$3
    shift 4
    expect_err "$dry_name" "$dry_status" "$dry_text" "$THAW" hibernate --dry-run --root "$root" "$@"
}

dry_run "ready with thaw.conf and a plain command line" 0 "ready to hibernate to /dev/mapper/thaw-swap" \
    "root=/dev/vda"
dry_run "noresume on the command line: refused" 1 "noresume is on the kernel command line" \
    "root=/dev/vda noresume"
dry_run "nohibernate: refused" 1 "nohibernate is on the kernel command line" "root=/dev/vda nohibernate"
dry_run "rd.thaw=0: refused" 1 "rd.thaw=0 is on the kernel command line" "root=/dev/vda rd.thaw=0"
dry_run "resume_offset= without an active swap file there: refused" 1 \
    "no active swap file on /dev/mapper/thaw-swap starts at resume_offset=8" "root=/dev/vda resume_offset=8"
dry_run "refusals end with one summary" 1 "not hibernating: the next boot could not resume" \
    "root=/dev/vda resume_offset=8"
dry_run "rd.thaw.name= picks the mapping" 1 "/dev/mapper/other is not active" "rd.thaw.name=other"
dry_run "--writer thaw: thaw would write the image" 0 "; thaw would write the image" "root=/dev/vda" --writer thaw
dry_run "--writer kernel: the kernel would" 0 "; the kernel would write the image" "root=/dev/vda" --writer kernel
echo "[platform] shutdown reboot" > "$root/sys/power/disk"
dry_run "--writer thaw refuses --mode platform" 2 "use --mode shutdown or reboot, or --writer kernel" \
    "root=/dev/vda" --writer thaw --mode platform
echo "[shutdown] reboot" > "$root/sys/power/disk"
dry_run "--writer takes three values" 2 "--writer takes auto, kernel or thaw" "root=/dev/vda" --writer uswsusp
printf 'device=UUID=1234\nkey=fwcfg:opt/thaw/key\nname=thaw-swap\nwriter=thaw\n' > "$root/etc/thaw/thaw.conf"
dry_run "writer=thaw in thaw.conf" 0 "; thaw would write the image" "root=/dev/vda"
dry_run "--writer overrides writer=" 0 "; the kernel would write the image" "root=/dev/vda" --writer kernel
# Only thaw's swap takes the memory and the image: a swap that outranks it is refused, with what to do.
printf 'Filename Type Size Used Priority\n/dev/dm-0 partition 1048572 0 -2\n/dev/vdb2 partition 4000 0 5\n' \
    > "$root/proc/swaps"
dry_run "another swap of a higher priority: refused" 1 \
    "/dev/vdb2 is active swap of priority 5, not below thaw's swap (-2)" "root=/dev/vda"
printf 'Filename Type Size Used Priority\n/dev/dm-0 partition 1048572 0 10\n/dev/vdb2 partition 4000 0 5\n' \
    > "$root/proc/swaps"
dry_run "thaw's swap first: ready" 0 "ready to hibernate to /dev/mapper/thaw-swap" "root=/dev/vda"
echo 254:18 > "$root/sys/power/resume"
echo 0 > "$root/sys/power/resume_offset"
dry_run "resume= naming another swap is said" 0 \
    "/sys/power/resume names 254:18 offset 0, not thaw's swap: thaw hibernate writes the image to" \
    "root=/dev/vda"
# systemctl hibernate: systemd-sleep chose another swap; the hook points the kernel at thaw's.
"$THAW" hibernate --ticket-only --root "$root" > "$tmp/out" 2> "$tmp/err"
st=$?
if [ "$st" -eq 0 ] && [ "$(cat "$root/sys/power/resume")" = 253:0 ] &&
    [ "$(cat "$root/sys/power/resume_offset")" = 0 ] && grep -q "pointed it at /dev/mapper/thaw-swap" "$tmp/err"; then
    ok "--ticket-only points /sys/power/resume at thaw's swap when systemd-sleep chose another"
else
    not_ok "--ticket-only points /sys/power/resume at thaw's swap when systemd-sleep chose another (status $st)"
    diag
fi
"$THAW" hibernate --ticket-only --root "$root" > "$tmp/out" 2> "$tmp/err"
if ! grep -q "pointed it at" "$tmp/err"; then
    ok "--ticket-only leaves /sys/power/resume alone when it names thaw's swap"
else not_ok "--ticket-only leaves /sys/power/resume alone when it names thaw's swap"; diag; fi
# Another swap outranks thaw's: the hook cannot stop systemd-sleep, but writes no ticket.
printf 'Filename Type Size Used Priority\n/dev/dm-0 partition 1048572 0 10\n/dev/vdb2 partition 4000 0 20\n' \
    > "$root/proc/swaps"
"$THAW" hibernate --ticket-only --root "$root" > "$tmp/out" 2> "$tmp/err"
st=$?
if [ "$st" -eq 1 ] && grep -q "/dev/vdb2 is active swap of priority 20, not below thaw's swap (10)" "$tmp/err" &&
    grep -q "no ticket is written" "$tmp/err"; then
    ok "--ticket-only with another swap of a higher priority: says so, no ticket, exit 1"
else
    not_ok "--ticket-only with another swap of a higher priority: says so, no ticket, exit 1 (status $st)"
    diag
fi
printf 'Filename Type Size Used Priority\n/dev/dm-0 partition 1048572 0 10\n/dev/vdb2 partition 4000 0 5\n' \
    > "$root/proc/swaps"
echo 254:18 > "$root/sys/power/resume"
echo "rd.thaw.name=other" > "$root/proc/cmdline"
"$THAW" hibernate --ticket-only --root "$root" > "$tmp/out" 2> "$tmp/err"
st=$?
if [ "$st" -eq 1 ] && [ "$(cat "$root/sys/power/resume")" = 254:18 ] &&
    grep -q "cannot find /dev/mapper/other" "$tmp/err" && grep -q "no ticket is written" "$tmp/err"; then
    ok "--ticket-only without thaw's mapping: says so, exit 1, /sys/power/resume untouched"
else
    not_ok "--ticket-only without thaw's mapping: says so, exit 1, /sys/power/resume untouched (status $st)"
    diag
fi
rm "$root/sys/power/resume" "$root/sys/power/resume_offset"
# A device-mapper control that does not answer: the live table cannot be checked, so refused.
mkdir -p "$root/dev/mapper"
: > "$root/dev/mapper/control"
dry_run "a mapping whose live table cannot be read: refused" 1 \
    "refusing to hibernate to /dev/mapper/thaw-swap: its live table cannot be read" "root=/dev/vda"
rm -r "${root:?}/dev"
printf 'name=thaw-swap\n' > "$root/etc/thaw/thaw.conf"
dry_run "no device configured: refused" 1 "no device configured: add device=" "root=/dev/vda"
dry_run "no key configured: refused" 1 "no key source configured: add key=" "root=/dev/vda"
dry_run "the command line can supply both" 0 "ready to hibernate" \
    "rd.thaw.device=/dev/vdb rd.thaw.key=fwcfg:opt/thaw/key"

finish

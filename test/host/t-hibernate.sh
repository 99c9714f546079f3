#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Host tests of `thaw hibernate --dry-run` on a fixture root: it reads thaw.conf and this boot's
# /proc/cmdline like the next boot's thaw resume, and refuses when that boot would not resume.
set -u

: "${THAW:?THAW must name the thaw binary}"

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
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

n=0
failed=0
# expect NAME STATUS TEXT CMDLINE [OPTION...]: thaw hibernate --dry-run OPTION... with /proc/cmdline =
# CMDLINE exits STATUS and says TEXT on stderr.
expect() {
        n=$((n + 1))
        echo "$4" > "$root/proc/cmdline"
        name=$1 status=$2 text=$3
        shift 4
        "$THAW" hibernate --dry-run --root "$root" "$@" > "$tmp/out" 2> "$tmp/err"
        rc=$?
        if [ "$rc" -eq "$status" ] && grep -qF -- "$text" "$tmp/err"; then
                echo "ok $n - $name"
        else
                failed=$((failed + 1))
                echo "not ok $n - $name"
                echo "# exit $rc, wanted $status and \"$text\""
                sed 's/^/#   /' "$tmp/err"
        fi
}

expect "ready with thaw.conf and a plain command line" 0 "ready to hibernate to /dev/mapper/thaw-swap" \
        "root=/dev/vda"
expect "noresume on the command line: refused" 1 "noresume is on the kernel command line" \
        "root=/dev/vda noresume"
expect "nohibernate: refused" 1 "nohibernate is on the kernel command line" "root=/dev/vda nohibernate"
expect "rd.thaw=0: refused" 1 "rd.thaw=0 is on the kernel command line" "root=/dev/vda rd.thaw=0"
expect "resume_offset= without an active swap file there: refused" 1 \
        "no active swap file on /dev/mapper/thaw-swap starts at resume_offset=8" "root=/dev/vda resume_offset=8"
expect "refusals end with one summary" 1 "not hibernating: the next boot could not resume" \
        "root=/dev/vda resume_offset=8"
expect "rd.thaw.name= picks the mapping" 1 "/dev/mapper/other is not active" "rd.thaw.name=other"
expect "--writer thaw: thaw would write the image" 0 "; thaw would write the image" "root=/dev/vda" --writer thaw
expect "--writer kernel: the kernel would" 0 "; the kernel would write the image" "root=/dev/vda" --writer kernel
echo "[platform] shutdown reboot" > "$root/sys/power/disk"
expect "--writer thaw refuses --mode platform" 2 "use --mode shutdown or reboot, or --writer kernel" \
        "root=/dev/vda" --writer thaw --mode platform
echo "[shutdown] reboot" > "$root/sys/power/disk"
expect "--writer takes three values" 2 "--writer takes auto, kernel or thaw" "root=/dev/vda" --writer uswsusp
printf 'device=UUID=1234\nkey=fwcfg:opt/thaw/key\nname=thaw-swap\nwriter=thaw\n' > "$root/etc/thaw/thaw.conf"
expect "writer=thaw in thaw.conf" 0 "; thaw would write the image" "root=/dev/vda"
expect "--writer overrides writer=" 0 "; the kernel would write the image" "root=/dev/vda" --writer kernel
# A device-mapper control that does not answer: the live table cannot be checked, so refused.
mkdir -p "$root/dev/mapper"
: > "$root/dev/mapper/control"
expect "a mapping whose live table cannot be read: refused" 1 \
        "refusing to hibernate to /dev/mapper/thaw-swap: its live table cannot be read" "root=/dev/vda"
rm -r "${root:?}/dev"
printf 'name=thaw-swap\n' > "$root/etc/thaw/thaw.conf"
expect "no device configured: refused" 1 "no device configured: add device=" "root=/dev/vda"
expect "no key configured: refused" 1 "no key source configured: add key=" "root=/dev/vda"
expect "the command line can supply both" 0 "ready to hibernate" \
        "rd.thaw.device=/dev/vdb rd.thaw.key=fwcfg:opt/thaw/key"

echo "1..$n"
[ "$failed" -eq 0 ]

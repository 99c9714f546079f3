#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# systemd generator in a thaw initramfs: when thaw is configured at this boot, mask
# systemd-hibernate-resume@.service, so that only thaw hands the image to the kernel.
#
# Why mask, not order: systemd-hibernate-resume-generator (systemd 252) turns resume=DEV into
# systemd-hibernate-resume@DEV.service, bound to DEV's device unit with no job timeout. With DEV
# the thaw mapping (or the swap inside it), that unit would race thaw's checks as soon as the
# mapping appears, write /sys/power/resume a second time when the kernel found no image, and wait
# for ever - and the boot with it - when thaw keeps the mapping closed to protect an image it
# refused. thaw writes /sys/power/resume itself, after its checks: one handoff per boot.
# "Configured" is what `thaw resume` reads: rd.thaw.device= on the kernel command line (or in a
# host-only image's /etc/cmdline.d), or device= in /etc/thaw/thaw.conf, and no rd.thaw=0.
# Otherwise systemd-hibernate-resume keeps resume=.

early=$2
# Tests point THAW_ROOT at a fixture tree (test/host/t-generator.sh); systemd sets no such variable.
root=${THAW_ROOT:-}
[ -n "$early" ] && [ -e "$root/etc/initrd-release" ] || exit 0

device='' resume='' disabled=''
# scan FILE: thaw's arguments in FILE, one word at a time as the kernel splits its command line;
# the last one wins.
scan() {
	set -f
	# shellcheck disable=SC2013 # words, not lines
	for arg in $(cat "$1" 2> /dev/null); do
		case $arg in
		rd.thaw.device=?*) device=${arg#*=} ;;
		rd.thaw=0) disabled=1 ;;
		rd.thaw | rd.thaw=1) disabled='' ;;
		resume=*) [ "$1" = "$root/proc/cmdline" ] && resume=${arg#*=} ;;
		esac
	done
	set +f
}
# In thaw resume's order: thaw.conf, a host-only image's /etc/cmdline.d/*.conf, /proc/cmdline.
# (systemd-hibernate-resume-generator reads resume= from /proc/cmdline only.)
if grep -Eqs '^[[:space:]]*device[[:space:]]*=[[:space:]]*("[^"]|[^"[:space:]])' "$root/etc/thaw/thaw.conf"; then
	device=thaw.conf
fi
for f in "$root"/etc/cmdline.d/*.conf; do
	[ -f "$f" ] && scan "$f"
done
scan "$root/proc/cmdline"
[ -n "$device" ] && [ -z "$disabled" ] || exit 0

mkdir -p "$early" && ln -sf /dev/null "$early/systemd-hibernate-resume@.service" || exit 0
if [ -n "$resume" ]; then
	echo "<5>thaw: resume=$resume on the kernel command line: systemd-hibernate-resume masked," \
		"thaw-resume.service hands the image to the kernel after its checks" > "$root/dev/kmsg"
fi
exit 0

#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# systemd generator in a thaw initramfs: when thaw is configured at this boot, mask
# systemd-hibernate-resume@.service, so that only thaw hands the image to the kernel, and give
# thaw-resume.service a start timeout above thaw's own rd.thaw.timeout=.
#
# Why mask, not order: systemd-hibernate-resume-generator (systemd 252) turns resume=DEV into
# systemd-hibernate-resume@DEV.service, bound to DEV's device unit with no job timeout. With DEV
# the thaw mapping (or the swap inside it), that unit would race thaw's checks as soon as the
# mapping appears, write /sys/power/resume a second time when the kernel found no image, and wait
# for ever - and the boot with it - when thaw keeps the mapping closed to protect an image it
# refused. thaw writes /sys/power/resume itself, after its checks: one handoff per boot.
# "Configured" is what `thaw resume` reads: rd.thaw.device= on the kernel command line (or in a
# host-only image's /etc/cmdline.d), or device= in /etc/thaw/thaw.conf, and no rd.thaw=0.
# Otherwise systemd-hibernate-resume keeps resume=. thaw.conf is thaw's to read (`thaw config`):
# this script parses none of it.

normal=$1 early=$2
# Tests point THAW_ROOT at a fixture tree (test/host/t-generator.sh); systemd sets no such variable.
# thaw is where module-setup.sh installs it.
root=${THAW_ROOT:-}
thaw=$root/usr/sbin/thaw
[ -n "$normal" ] && [ -n "$early" ] && [ -e "$root/etc/initrd-release" ] || exit 0

device='' resume='' disabled='' timeout='' unanswered=''
# settimeout VALUE: timeout=VALUE as thaw reads it (digits, at most 3600); thaw ignores any other
# value and keeps the one before, so does this.
settimeout() {
    case $1 in
    '' | *[!0-9]*) return ;;
    esac
    # Leading zeros would make the shell read octal; the length check keeps the arithmetic small.
    set -- "${1#"${1%%[!0]*}"}"
    [ ${#1} -le 4 ] && [ "${1:-0}" -le 3600 ] && timeout=${1:-0}
}
# scan FILE: thaw's arguments in FILE, one word at a time as the kernel splits its command line;
# the last one wins.
scan() {
    set -f
    # shellcheck disable=SC2013 # words, not lines
    for arg in $(cat "$1" 2> /dev/null); do
        case $arg in
        rd.thaw.device=?*) device=${arg#*=} ;;
        rd.thaw.timeout=*) settimeout "${arg#*=}" ;;
        rd.thaw=0) disabled=1 ;;
        rd.thaw | rd.thaw=1) disabled='' ;;
        resume=*) [ "$1" = "$root/proc/cmdline" ] && resume=${arg#*=} ;;
        esac
    done
    set +f
}
# In thaw resume's order: thaw.conf, a host-only image's /etc/cmdline.d/*.conf, /proc/cmdline.
# (systemd-hibernate-resume-generator reads resume= from /proc/cmdline only.)
# thaw.conf as thaw resume will read it: exit 1 when it names no device or thaw cannot read it
# (then thaw resume does not use it either), the timeout thaw's default 30 s when it sets none.
# A thaw that gives no answer at all (missing, not runnable, killed) cannot tell: the file is
# taken to name a device. Masking then costs at most a resume that systemd-hibernate-resume
# might have done; not masking could hang the boot on a mapping thaw did not open.
if [ -e "$root/etc/thaw/thaw.conf" ]; then
    rc=0
    "$thaw" config --get device --root "$root" > /dev/null 2>&1 || rc=$?
    case $rc in
    0) device=thaw.conf ;;
    1) ;;
    *) device=thaw.conf unanswered=$rc ;;
    esac
    settimeout "$("$thaw" config --get timeout --root "$root" 2> /dev/null)"
fi
for f in "$root"/etc/cmdline.d/*.conf; do
    [ -f "$f" ] && scan "$f"
done
scan "$root/proc/cmdline"
[ -n "$device" ] && [ -z "$disabled" ] || exit 0

# thaw-resume.service's start timeout: thaw bounds the device and the unattended key sources by
# one rd.thaw.timeout= deadline, and a passphrase prompt gets rd.thaw.timeout= of its own, hence
# twice the timeout; the margin covers the DHCP link for an imds: source (up to about 30 s), the
# unlock and the image's checks. When it fires, systemd stops thaw and the unit fails; nothing
# requires it, so the root mounts and the boot goes on without resume (thaw-resume.service says so
# in the kernel log). The unit's own TimeoutStartSec= is this value for the default 30 s.
# In the normal generator directory, so that a drop-in in /etc/systemd/system wins.
if [ -n "$timeout" ]; then
    mkdir -p "$normal/thaw-resume.service.d" &&
        printf '%s\n' "# From thaw-generator: 2 x rd.thaw.timeout=$timeout + 120 s" "[Service]" \
            "TimeoutStartSec=$((2 * timeout + 120))" > "$normal/thaw-resume.service.d/timeout.conf"
fi

mkdir -p "$early" && ln -sf /dev/null "$early/systemd-hibernate-resume@.service" || exit 0
if [ -n "$unanswered" ]; then
    echo "<4>thaw: /usr/sbin/thaw config gave no answer (exit $unanswered): /etc/thaw/thaw.conf taken to" \
        "name a device, systemd-hibernate-resume masked" >> "$root/dev/kmsg"
fi
if [ -n "$resume" ]; then
    echo "<5>thaw: resume=$resume on the kernel command line: systemd-hibernate-resume masked," \
        "thaw-resume.service hands the image to the kernel after its checks" >> "$root/dev/kmsg"
fi
exit 0

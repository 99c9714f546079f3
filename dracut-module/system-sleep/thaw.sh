#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# systemd-sleep hook (installed as /usr/lib/systemd/system-sleep/thaw).
# Before `systemctl hibernate`: write the image's ticket (thaw hibernate --ticket-only), without
# which the next boot does not resume the image the kernel is about to write. systemd-sleep does
# not stop for a hook that fails, so a failure is only logged: that boot then follows
# rd.thaw.mismatch= (poweroff by default) instead of resuming.
# After the resume: start `thaw swapin --auto` in the background. It obeys swapin= in
# /etc/thaw/thaw.conf. systemd-sleep waits for its hooks, so the swap-in runs as its own transient
# unit (`systemctl stop thaw-swapin` stops it), or detached where systemd-run is missing.

THAW=${THAW:-/usr/sbin/thaw}

case "$2" in
hibernate | hybrid-sleep | suspend-then-hibernate) ;;
*) exit 0 ;;
esac
[ -x "$THAW" ] || exit 0
if [ "$1" = pre ]; then
    "$THAW" hibernate --ticket-only
    exit 0
fi
[ "$1" = post ] || exit 0
if command -v systemd-run > /dev/null 2>&1; then
    exec systemd-run --no-block --quiet --collect --unit=thaw-swapin --description="thaw swap-in after resume" \
        "$THAW" swapin --auto
fi
setsid "$THAW" swapin --auto < /dev/null > /dev/null 2>&1 &
exit 0

#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# systemd-sleep hook (installed as /usr/lib/systemd/system-sleep/thaw): after `systemctl hibernate`
# resumes, start `thaw swapin --auto` in the background. It obeys swapin= in /etc/thaw/thaw.conf.
# systemd-sleep waits for its hooks, so the swap-in runs as its own transient unit
# (`systemctl stop thaw-swapin` stops it), or detached where systemd-run is missing.

THAW=${THAW:-/usr/sbin/thaw}

[ "$1" = post ] || exit 0
case "$2" in
hibernate | hybrid-sleep | suspend-then-hibernate) ;;
*) exit 0 ;;
esac
[ -x "$THAW" ] || exit 0
if command -v systemd-run > /dev/null 2>&1; then
	exec systemd-run --no-block --quiet --collect --unit=thaw-swapin --description="thaw swap-in after resume" \
		"$THAW" swapin --auto
fi
setsid "$THAW" swapin --auto < /dev/null > /dev/null 2>&1 &
exit 0

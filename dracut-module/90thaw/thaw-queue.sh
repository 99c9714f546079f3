#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# cmdline hook (shell flavour): queue `thaw resume` in dracut's initqueue. When thaw opens the root's
# own LUKS2 container (a swap file on an encrypted root), the root device exists only after thaw
# ran, and the initqueue is where dracut waits for it; the pre-mount hook stays for every other
# case (the initqueue may finish before this job runs), and thaw-resume runs once either way.
# shellcheck disable=SC1091 # dracut-lib.sh is in the initramfs
command -v getargbool > /dev/null || . /lib/dracut-lib.sh
if getargbool 1 rd.thaw; then
    /sbin/initqueue --onetime --unique --name thaw-resume /sbin/thaw-resume
fi

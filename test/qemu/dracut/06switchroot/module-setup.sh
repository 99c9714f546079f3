#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Test harness dracut module: util-linux's switch_root, and dash as /bin/sh, as on Debian.
# shellcheck disable=SC2154 # dracut sets initdir
#
# The busybox module links every applet over the real tools, and busybox's sh runs its own applets
# before any file on PATH (a "standalone shell": `command -v switch_root` says just switch_root).
# So dracut's `exec switch_root` ran busybox's, which moves no mounts into the new root: the
# initramfs' /run, and /run/thaw/state with it, never reached the real system. util-linux's
# switch_root, run by dash, moves /dev, /proc, /sys and /run, as dracut's init expects and as a
# Debian initramfs (dash, util-linux, no busybox module) does.

# called by dracut
check() {
    return 255
}

# called by dracut
depends() {
    echo busybox
    return 0
}

# called by dracut
install() {
    rm -f -- "${initdir}/usr/sbin/switch_root" "${initdir}/sbin/switch_root"
    inst_multiple dash switch_root
    ln -sfn dash "${initdir}/usr/bin/sh"
}

#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# /sbin/thaw-resume, in both flavours: the shell flavour's pre-mount hook and initqueue job, and
# thaw-resume.service's command in the systemd flavour (which passes its own name as $1, for the
# log). Unlocks the encrypted swap (or the root's container holding the swap file) and hands a
# hibernation image to the kernel, once per boot; brings a link up around `thaw resume` only when
# the key chain names an imds: source. thaw reads the kernel command line itself and always lets
# the boot go on; this script holds nothing secret and must never fail the boot either. It is also
# sourced as a hook: no exit.
# shellcheck disable=SC1091 # dracut-lib.sh is there in the initramfs
command -v getarg > /dev/null || . /lib/dracut-lib.sh

# The key chain thaw will use: rd.thaw.key=, else key= in thaw.conf (the same rule as thaw's), which
# only thaw reads; a thaw that cannot run here cannot resume either.
thaw_key_chain() {
    thaw_k=$(getarg rd.thaw.key=)
    if [ -z "$thaw_k" ] && [ -e /etc/thaw/thaw.conf ]; then
        thaw_k=$(/usr/sbin/thaw config --get key 2> /dev/null)
    fi
    echo "$thaw_k"
}

# Bring up the first interface that gets a DHCP lease (a few seconds at most each); sets thaw_if.
thaw_net_up() {
    thaw_if=""
    if [ ! -x /usr/lib/thaw/udhcpc.sh ] || ! command -v busybox > /dev/null; then
        echo "<4>thaw: an imds: key source is configured but this initramfs has no network (rebuild it with thaw_network=yes in dracut.conf)" > /dev/kmsg
        return 1
    fi
    while read -r thaw_m; do
        modprobe -q "$thaw_m" 2> /dev/null
    done < /usr/lib/thaw/net-modules
    # Let udev name the interface first (a rename fails once it is up).
    command -v udevadm > /dev/null && udevadm settle --timeout=5 2> /dev/null
    # The driver may bind late: wait up to 5 s for an interface.
    thaw_n=0
    while [ "$thaw_n" -lt 50 ]; do
        for thaw_d in /sys/class/net/*; do
            [ "${thaw_d##*/}" = lo ] || [ ! -e "$thaw_d" ] || break 2
        done
        sleep 0.1
        thaw_n=$((thaw_n + 1))
    done
    # An interface that is up already belongs to someone else (a network root, the initramfs's own
    # network): thaw neither configures nor downs it, and uses it if it has an address.
    for thaw_d in /sys/class/net/*; do
        thaw_i=${thaw_d##*/}
        [ "$thaw_i" = lo ] && continue
        [ $(($(cat "$thaw_d/flags" 2> /dev/null || echo 0) & 1)) -eq 1 ] || continue
        if busybox ip -4 addr show dev "$thaw_i" 2> /dev/null | grep -q ' inet '; then
            echo "<6>thaw: using $thaw_i as it is configured for the imds: key source" > /dev/kmsg
            return 0
        fi
    done
    for thaw_d in /sys/class/net/*; do
        thaw_i=${thaw_d##*/}
        [ "$thaw_i" = lo ] && continue
        [ $(($(cat "$thaw_d/flags" 2> /dev/null || echo 0) & 1)) -eq 1 ] && continue
        busybox ip link set "$thaw_i" up
        if busybox udhcpc -i "$thaw_i" -f -q -n -t 4 -T 2 -s /usr/lib/thaw/udhcpc.sh > /dev/null 2>&1; then
            thaw_if=$thaw_i
            echo "<6>thaw: $thaw_i configured by DHCP for the imds: key source" > /dev/kmsg
            return 0
        fi
        busybox ip link set "$thaw_i" down
    done
    echo "<4>thaw: no network interface got a DHCP lease: the imds: key source will fail" > /dev/kmsg
    return 1
}

# The link was for the key only: the real system configures its network itself.
thaw_net_down() {
    [ -n "$thaw_if" ] || return 0
    busybox ip -4 addr flush dev "$thaw_if"
    busybox ip link set "$thaw_if" down
    echo "<6>thaw: $thaw_if deconfigured" > /dev/kmsg
}

mkdir -p /run/thaw 2> /dev/null
if mkdir /run/thaw/ran 2> /dev/null; then
    echo "<6>${1:-thaw-resume.sh}: running thaw resume" > /dev/kmsg
    modprobe -q dm_crypt 2> /dev/null
    modprobe -q qemu_fw_cfg 2> /dev/null
    modprobe -q dmi-sysfs 2> /dev/null
    modprobe -q tpm_tis 2> /dev/null
    modprobe -q tpm_crb 2> /dev/null
    thaw_if=""
    case $(thaw_key_chain) in
    *imds:*)
        # No network for anything else, nor when thaw is told to do nothing.
        if getargbool 1 rd.thaw && ! getarg noresume > /dev/null; then
            thaw_net_up
        fi
        ;;
    esac
    /usr/sbin/thaw resume || echo "<4>thaw: thaw resume exited with status $?: boot continues" > /dev/kmsg
    thaw_net_down
fi
:

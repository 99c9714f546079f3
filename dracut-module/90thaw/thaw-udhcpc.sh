#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# udhcpc event script for the link thaw brings up for an imds: key source: an address and the
# routes, nothing else (no DNS: metadata services are reached by address).
# shellcheck disable=SC2154 # udhcpc sets interface, ip, mask, subnet, router

case $1 in
deconfig)
    busybox ip -4 addr flush dev "$interface"
    busybox ip link set "$interface" up
    ;;
bound | renew)
    busybox ip -4 addr flush dev "$interface"
    busybox ip addr add "$ip/${mask:-24}" dev "$interface"
    [ -n "$router" ] && busybox ip route replace default via "${router%% *}" dev "$interface"
    ;;
esac
exit 0

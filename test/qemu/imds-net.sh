# SPDX-License-Identifier: LGPL-2.1-or-later
# The metadata service of the imds scenarios (imds-resume, systemd-swapfile), sourced after lib.sh.
# shellcheck shell=bash
#
# tq_imds_start KEYFILE: a network namespace of the test's own with a tap device that carries the
# gateway (10.0.2.2/24) and 169.254.169.254, busybox udhcpd on that tap only (one lease,
# 10.0.2.15), and test/host/imds-server.py serving KEYFILE (AWS IMDSv2, token flow); nothing else in
# the namespace, no route out. Sets TQ_QEMU_WRAP and TQ_QEMU_EXTRA so that each boot's QEMU runs in
# the namespace with a virtio NIC on the tap, and TQ_IMDS_LOG (one line per request: "PUT
# /latest/api/token 200"). Checks that the namespace has only lo and the tap and no default route.
# Everything is removed on exit. Call it after tq_workdir; skips when the host cannot do it.

TQ_IMDS_NS=
TQ_IMDS_PIDS=()

# shellcheck disable=SC2317 # called by the EXIT trap
tq_imds_cleanup() {
    local p
    for p in "${TQ_IMDS_PIDS[@]}"; do
        kill "$p" 2> /dev/null
    done
    [[ -n $TQ_IMDS_NS ]] && ip netns delete "$TQ_IMDS_NS" 2> /dev/null
}

tq_imds_start() {
    local key=$1 ns links py
    command -v ip > /dev/null || tq_skip "ip (iproute2) missing"
    command -v python3 > /dev/null || tq_skip "python3 missing"
    busybox udhcpd --help > /dev/null 2>&1 || tq_skip "busybox udhcpd missing (make deps)"
    ns=thaw-imds-$$
    ip netns add "$ns" 2> /dev/null || tq_skip "cannot create a network namespace (not root, or no CAP_SYS_ADMIN)"
    TQ_IMDS_NS=$ns
    trap tq_imds_cleanup EXIT
    ip netns exec "$ns" ip link set lo up
    ip netns exec "$ns" ip tuntap add dev thaw0 mode tap || tq_die "cannot create a tap device in $ns"
    ip netns exec "$ns" ip addr add 10.0.2.2/24 dev thaw0
    ip netns exec "$ns" ip addr add 169.254.169.254/32 dev thaw0
    ip netns exec "$ns" ip link set thaw0 up
    cat > "$TQ_WORK/udhcpd.conf" << CONF
interface thaw0
start 10.0.2.15
end 10.0.2.15
max_leases 1
lease_file $TQ_WORK/udhcpd.leases
pidfile $TQ_WORK/udhcpd.pid
option subnet 255.255.255.0
option router 10.0.2.2
option lease 600
CONF
    : > "$TQ_WORK/udhcpd.leases"
    # $! must be the daemon itself, for the kill: started with ip netns exec directly.
    ip netns exec "$ns" busybox udhcpd -f "$TQ_WORK/udhcpd.conf" > "$TQ_WORK/udhcpd.log" 2>&1 &
    TQ_IMDS_PIDS+=($!)
    # The server lives as long as the boots may take. The interpreter itself, not a wrapper that may
    # fork (pyenv's shim): $! must be the server, for the kill.
    py=$(python3 -c 'import sys; print(sys.executable)')
    ip netns exec "$ns" "$py" "$TQ_REPO/test/host/imds-server.py" "$TQ_WORK/imds.port" $((4 * TQ_BOOT_TIMEOUT)) \
        169.254.169.254 80 "$TQ_WORK/imds.log" "$key" &
    TQ_IMDS_PIDS+=($!)
    for _ in $(seq 50); do
        [[ -e $TQ_WORK/imds.port ]] && break
        sleep 0.1
    done
    [[ -e $TQ_WORK/imds.port ]] || tq_die "the metadata server did not start"
    TQ_IMDS_LOG=$TQ_WORK/imds.log
    : > "$TQ_IMDS_LOG"
    # Nothing in the namespace leads anywhere else: lo and the tap only, no default route.
    links=$(ip netns exec "$ns" ip -o link show | awk -F': ' '{print $2}' | sort | tr '\n' ' ')
    tq_check "namespace $ns holds only lo and thaw0 ($links)" test "$links" = "lo thaw0 "
    tq_check "namespace $ns has no default route" test -z "$(ip netns exec "$ns" ip route show default)"
    # shellcheck disable=SC2034 # read by tq_boot
    TQ_QEMU_WRAP=(ip netns exec "$ns")
    TQ_QEMU_EXTRA+=(-netdev "tap,id=n0,ifname=thaw0,script=no,downscript=no" -device "virtio-net-pci,netdev=n0")
}

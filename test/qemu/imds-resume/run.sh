#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# imds-resume: the key reaches the guest only from an instance metadata service (AWS IMDSv2, token
# flow) on 169.254.169.254. QEMU runs in a network namespace of the test's own: a tap device that
# carries the gateway (10.0.2.2/24) and 169.254.169.254, busybox udhcpd on that tap only, and
# test/host/imds-server.py; the namespace has no other interface and no route out. fw_cfg's
# opt/thaw/key holds a wrong key. The resume boot brings the link up in the initramfs (DHCP), thaw
# fetches imds:aws:/latest/raw, unlocks, and the system resumes with nothing lost.
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"

command -v ip > /dev/null || tq_skip "ip (iproute2) missing"
command -v python3 > /dev/null || tq_skip "python3 missing"
busybox udhcpd --help > /dev/null 2>&1 || tq_skip "busybox udhcpd missing (make deps)"
ns=thaw-imds-$$
ip netns add "$ns" 2> /dev/null || tq_skip "cannot create a network namespace (not root, or no CAP_SYS_ADMIN)"
pids=()
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
    local p
    for p in "${pids[@]}"; do
        kill "$p" 2> /dev/null
    done
    ip netns delete "$ns" 2> /dev/null
}
trap cleanup EXIT

TQ_INITRAMFS_NET=1
tq_prepare
tq_workdir imds-resume
in_ns() { ip netns exec "$ns" "$@"; }
in_ns ip link set lo up
in_ns ip tuntap add dev thaw0 mode tap || tq_die "cannot create a tap device in $ns"
in_ns ip addr add 10.0.2.2/24 dev thaw0
in_ns ip addr add 169.254.169.254/32 dev thaw0
in_ns ip link set thaw0 up
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
# Started with ip netns exec itself, not through in_ns: a function in the background is a subshell,
# and $! must be the daemon, for the kill.
ip netns exec "$ns" busybox udhcpd -f "$TQ_WORK/udhcpd.conf" > "$TQ_WORK/udhcpd.log" 2>&1 &
pids+=($!)
# The server lives as long as both boots may take; it serves this run's key. The interpreter
# itself, not a wrapper that may fork (pyenv's shim): $! must be the server, for the kill.
py=$(python3 -c 'import sys; print(sys.executable)')
ip netns exec "$ns" "$py" "$TQ_REPO/test/host/imds-server.py" "$TQ_WORK/imds.port" $((3 * TQ_BOOT_TIMEOUT)) \
    169.254.169.254 80 "$TQ_WORK/imds.log" "$TQ_WORK/key" &
pids+=($!)
for _ in $(seq 50); do
    [[ -e $TQ_WORK/imds.port ]] && break
    sleep 0.1
done
[[ -e $TQ_WORK/imds.port ]] || tq_die "the metadata server did not start"
: > "$TQ_WORK/imds.log"

# Nothing in the namespace leads anywhere else: lo and the tap only, no default route.
links=$(in_ns ip -o link show | awk -F': ' '{print $2}' | sort | tr '\n' ' ')
tq_check "namespace $ns holds only lo and thaw0 ($links)" test "$links" = "lo thaw0 "
tq_check "namespace $ns has no default route" test -z "$(in_ns ip route show default)"

TQ_QEMU_WRAP=(ip netns exec "$ns")
TQ_QEMU_EXTRA=(-netdev "tap,id=n0,ifname=thaw0,script=no,downscript=no" -device "virtio-net-pci,netdev=n0")
TQ_FWCFG_KEY=$TQ_WORK/wrong-key
src=imds:aws:/latest/raw

# setup enrolls the real key (fw_cfg opt/test/realkey); the resume boot names only the imds: source.
tq_hibernate_boot hibernate "thaw.setupkey=fwcfg:opt/test/realkey"
tq_check "hibernate: no network brought up without an imds: source" tq_lacks hibernate "configured by DHCP"
tq_check "hibernate: the metadata service saw no request" test ! -s "$TQ_WORK/imds.log"
tq_resume_boot resume "rd.thaw.key=$src"
tq_check "resume: the initramfs got a DHCP lease" tq_has resume "configured by DHCP for the imds: key source"
tq_check "resume: unlocked with $src" tq_has resume "with $src"
tq_check "resume: the guest took an IMDSv2 token (PUT with a TTL)" grep -qx "PUT /latest/api/token 200" \
    "$TQ_WORK/imds.log"
tq_check "resume: the guest fetched the key with it" grep -qx "GET /latest/raw 200" "$TQ_WORK/imds.log"
tq_log "metadata service requests: $(tr '\n' ';' < "$TQ_WORK/imds.log")"
tq_finish

#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Host tests of the installed system's units and the cloud's hibernate triggers (cloud/):
# systemd-analyze verify finds nothing to say about the units, the order puts thaw provision before
# swap and sleep, and what a refused request leaves on the console.
set -u

: "${THAW:?THAW must name the thaw binary}"
# shellcheck source=test/host/lib.sh
. "$(dirname "$0")/lib.sh"
need systemd-analyze

# The units as shipped, with /usr/sbin/thaw pointed at the built one (verify checks the command).
for u in "$top"/cloud/*.service; do
    sed "s|/usr/sbin/thaw|$THAW|" "$u" > "$tmp/$(basename "$u")"
done
check "systemd-analyze verify: the units load, with nothing to say" \
    sh -c "out=\$(systemd-analyze verify --man=no '$tmp'/thaw-provision.service '$tmp'/thaw-hibernate-request.service 2>&1) && [ -z \"\$out\" ] || { echo \"\$out\"; exit 1; }"
unit=$top/cloud/thaw-provision.service
check "thaw-provision.service runs thaw provision, before swap and sleep, after the local file systems" sh -c \
    "grep -qx 'ExecStart=/usr/sbin/thaw provision' '$unit' && grep -q '^Before=.*swap.target' '$unit' &&
     grep -q '^Before=.*sleep.target' '$unit' && grep -q '^After=.*local-fs.target' '$unit' &&
     grep -qx 'ConditionPathExists=/etc/thaw/provision.conf' '$unit' && grep -qx 'Type=oneshot' '$unit'"
req=$top/cloud/thaw-hibernate-request.service
# One request at a time: a oneshot without RemainAfterExit, so a start while it runs joins that run,
# and a later request runs again.
check "thaw-hibernate-request.service: one oneshot thaw hibernate, not remaining after it" sh -c \
    "grep -qx 'ExecStart=/usr/sbin/thaw hibernate' '$req' && grep -qx 'Type=oneshot' '$req' &&
     ! grep -q '^RemainAfterExit=yes' '$req' && grep -qx 'StandardError=journal+console' '$req'"
# The debounce (provision-first-boot and provision-resize send a second request right after the
# resume and check that nothing ran again): the start lasts 30 s past thaw hibernate's return.
check "the request unit's start lasts 30 s after thaw hibernate returns (the debounce)" \
    grep -qx 'ExecStartPost=-/usr/bin/sleep 30' "$req"
check "both units possess root's user keyring, where the swap's ticket key is (KeyringMode=shared)" sh -c \
    "grep -qx 'KeyringMode=shared' '$unit' && grep -qx 'KeyringMode=shared' '$req'"

# The ExecStopPost line as systemd runs it ($$ is one $): said on a failure, silent on success.
line=$(sed -n "s/^ExecStopPost=\/bin\/sh -c '\(.*\)'\$/\1/p" "$req" | sed 's/\$\$/$/g')
check "the request unit's ExecStopPost is one sh -c line" test -n "$line"
SERVICE_RESULT=exit-code EXIT_CODE=exited EXIT_STATUS=1 sh -c "$line" > "$tmp/out" 2> "$tmp/err"
check "a refused request says so, and that the VM keeps running" \
    grep -q "thaw hibernate did not (exited 1; the reason is above): the VM keeps running" "$tmp/err"
SERVICE_RESULT=success sh -c "$line" > "$tmp/out" 2> "$tmp/err"
check "a request that hibernated and resumed says nothing more" test ! -s "$tmp/err"

rule=$top/cloud/90-thaw-hyperv-hibernate.rules
check "the Hyper-V rule starts the request unit on hv_utils' EVENT=hibernate, without blocking udev" sh -c \
    "tr -d '\\\\\\n' < '$rule' | grep -q 'SUBSYSTEM==\"vmbus\", ACTION==\"change\", DRIVER==\"hv_utils\", ENV{EVENT}==\"hibernate\",  *RUN+=\"/usr/bin/systemctl --no-block start thaw-hibernate-request.service\"'"
check "logind leaves the sleep key (KEY_SLEEP, EC2's sleep button) alone" \
    grep -qx 'HandleSuspendKey=ignore' "$top/cloud/thaw-sleep-button.conf"
check "acpid's sleep button event starts the request unit" sh -c \
    "grep -qx 'event=button/sleep.\\*' '$top/cloud/thaw-sleep-button' &&
     grep -qx 'action=/usr/bin/systemctl --no-block start thaw-hibernate-request.service' '$top/cloud/thaw-sleep-button'"
finish

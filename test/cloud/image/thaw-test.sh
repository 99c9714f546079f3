#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The guest's side of test/cloud/: what thaw-provision.service did at this boot (its result, its
# time and dracut's share, the initramfs's and thaw.conf's checksums), then the step that
# thaw.step= names; THAW-TEST: lines on the serial console, which the harness reads. Installed as
# /usr/local/sbin/thaw-test, run by thaw-test.service.
#   report     the report, then power off
#   sleep      the report, the workload (thaw.mib= MiB from thaw.seed=), then wait for the
#              sleep-button press the host sends: acpid starts thaw-hibernate-request.service,
#              whose thaw hibernate powers the VM off; resumed, a second request at once (the
#              unit's debounce must swallow it), the workload is checked, power off
#   refuse     as sleep, but first a swap file (/swap.rival, 16 MiB) is turned on at thaw's own
#              priority, as a swap an image left behind would be: thaw hibernate refuses the
#              request, and the workload is checked in the same boot; the request unit's journal
#              follows, then power off
exec > /dev/ttyS0 2>&1

say() { echo "THAW-TEST: $*"; }
arg() { tr ' ' '\n' < /proc/cmdline | sed -n "s/^$1=//p" | tail -n 1; }
# unit_prop UNIT PROPERTY: systemctl show's value, 0 when empty.
unit_prop() { v=$(systemctl show -P "$2" "$1"); echo "${v:-0}"; }

# The seconds (monotonic, as the journal stamps them) of the first line of thaw-provision.service
# at this boot holding $1, or nothing.
prov_time() {
    journalctl -b -u thaw-provision.service -o short-monotonic --no-pager |
        grep -m1 -F -- "$1" | sed -n 's/^\[ *\([0-9.]*\)\].*/\1/p'
}

report() {
    kver=$(uname -r)
    say "fresh boot step=$step"
    say "root: $(grep ' / ' /proc/mounts)"
    # Whether it ran at all: its condition held (ConditionPathExists=provision.conf) and its
    # process was started; a unit skipped by its condition also says result=success.
    t0=$(unit_prop thaw-provision.service ExecMainStartTimestampMonotonic)
    started=no
    [ "$t0" -gt 0 ] && started=yes
    say "provision: result=$(unit_prop thaw-provision.service Result) status=$(unit_prop thaw-provision.service ExecMainStatus)\
 condition=$(unit_prop thaw-provision.service ConditionResult) started=$started"
    t1=$(unit_prop thaw-provision.service ExecMainExitTimestampMonotonic)
    say "provision took $(((t1 - t0) / 1000)) ms"
    # dracut's share: from its first line to thaw provision's line after it.
    d0=$(prov_time 'dracut: ')
    d1=$(prov_time "rebuilt the running kernel's initramfs")
    if [ -n "$d0" ] && [ -n "$d1" ]; then
        say "provision: dracut took $(awk -v a="$d0" -v b="$d1" 'BEGIN { printf "%d", (b - a) * 1000 }') ms"
    elif [ -n "$d0$d1" ]; then
        say "provision: dracut ran, without both its first line and the rebuilt line"
    else
        say "provision: dracut did not run"
    fi
    say "initramfs: $(sha256sum < "/boot/initrd.img-$kver" | cut -c1-64) $(stat -c '%s bytes, changed %z' "/boot/initrd.img-$kver")"
    say "thaw.conf: $(sha256sum < /etc/thaw/thaw.conf | cut -c1-64) $(stat -c 'changed %z' /etc/thaw/thaw.conf)"
    sed 's/^/THAW-TEST: thaw.conf: /' /etc/thaw/thaw.conf
    grep '^/dev/' /proc/swaps | tr -s ' \t' ' ' | sed 's/^/THAW-TEST: swap on: /'
    # The five slowest units, and thaw provision's among them.
    systemd-analyze blame --no-pager 2> /dev/null | awk 'NR <= 5 || / thaw-provision\.service$/' |
        sed 's/^ */THAW-TEST: blame: /'
}

# wait_request: until thaw-hibernate-request.service has run and exited (in the resumed system),
# looking once a second, 180 times before the request at most (no clock: the time a hibernation
# spends on disk would count on the wall clock and on the boot-time clock alike).
wait_request() {
    n=0
    while [ "$(unit_prop thaw-hibernate-request.service ExecMainExitTimestampMonotonic)" = 0 ]; do
        n=$((n + 1))
        [ "$n" -le 180 ] || { say "no hibernate request after 180 looks, a second apart"; return 1; }
        [ $((n % 10)) -eq 0 ] && say "waiting for the hibernate request ($n looks)"
        sleep 1
    done
    say "hibernate request: result=$(unit_prop thaw-hibernate-request.service Result) status=$(unit_prop thaw-hibernate-request.service ExecMainStatus)"
}

# rival: a swap file at thaw's priority (thaw provision's 32767, the highest), turned on.
rival() {
    if ! { dd if=/dev/zero of=/swap.rival bs=1M count=16 status=none &&
        chmod 0600 /swap.rival && mkswap /swap.rival > /dev/null &&
        swapon --priority 32767 /swap.rival; }; then
        say "rival swap: could not turn /swap.rival on"
        return 1
    fi
    grep '^/' /proc/swaps | tr -s ' \t' ' ' | sed 's/^/THAW-TEST: swap on: /'
}

# again: right after the resume, a second request, as acpid's action or the Hyper-V rule starts
# it (one the cloud sent again, or queued across the hibernation); debounced: once the unit has
# ended (its debounce over, 60 looks a second apart at most), whether thaw hibernate ran again.
again() {
    first_start=$(unit_prop thaw-hibernate-request.service ExecMainStartTimestampMonotonic)
    say "second request: sent while the unit was $(systemctl show -P ActiveState thaw-hibernate-request.service)"
    systemctl --no-block start thaw-hibernate-request.service
}
debounced() {
    n=0
    while [ "$(systemctl show -P ActiveState thaw-hibernate-request.service)" = activating ] && [ "$n" -lt 60 ]; do
        n=$((n + 1))
        sleep 1
    done
    if [ "$(unit_prop thaw-hibernate-request.service ExecMainStartTimestampMonotonic)" = "$first_start" ]; then
        say "second request: thaw hibernate did not run again (the unit $(systemctl show -P ActiveState thaw-hibernate-request.service) after $n looks)"
    else
        say "second request: thaw hibernate ran again"
    fi
}

# request AFTER: the workload, the sleep button's request and what came after it: the same boot
# is said as "same boot after the request (AFTER)", then the workload is checked.
request() {
    boot_id=$(cat /proc/sys/kernel/random/boot_id)
    rm -f /run/thaw-test-ready
    /usr/local/bin/workload "$(arg thaw.mib)" "$(arg thaw.seed)" /run/thaw-test-ready &
    wl=$!
    while [ ! -e /run/thaw-test-ready ] && kill -0 "$wl" 2> /dev/null; do sleep 0.5; done
    [ -e /run/thaw-test-ready ] && say "workload ready, press the sleep button"
    wait_request || return 1
    if [ "$(cat /proc/sys/kernel/random/boot_id)" = "$boot_id" ]; then
        say "same boot after the request ($1)"
    else
        say "another boot id after the request"
    fi
    if [ "$1" = resumed ]; then again; fi
    kill -USR1 "$wl"
    wait "$wl"
    say "workload exit $?"
    if [ "$1" = resumed ]; then debounced; fi
    thaw status 2>&1 | sed 's/^/THAW-TEST: status: /'
}

step=$(arg thaw.step)
report
case $step in
sleep)
    request resumed
    ;;
refuse)
    if rival && request refused; then
        journalctl -b -u thaw-hibernate-request.service -o cat --no-pager | sed 's/^/THAW-TEST: journal: /'
    fi
    ;;
esac
say "powering off"
systemctl --no-block poweroff

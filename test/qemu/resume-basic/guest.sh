# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=sh
# resume-basic's guest code (sourced by guest-init.sh, sent as fw_cfg opt/test/guest): mappings of
# the container thaw hibernate must refuse.

# hook_swap (hibernate step, the swap on, dmsetup added by the scenario): /dev/vdb's data area mapped
# read-only in the clear (cipher_null, as a header switched to cipher_null makes libcryptsetup map
# it) and as linear: thaw hibernate must refuse both before freezing anything, and this system
# keeps running; then a stale header pin, which thaw hibernate must refuse too.
hook_swap() {
    dev=$(cat /sys/block/vdb/dev)
    seg=$(cryptsetup luksDump /dev/vdb | sed -n 's/^[[:space:]]*offset: \([0-9]*\) \[bytes\].*/\1/p' | head -n1)
    dmsetup create --noudevsync --readonly thaw-null \
        --table "0 16384 crypt cipher_null-ecb - 0 $dev $((seg / 512))" || say "badmap: dmsetup failed"
    dmsetup create --noudevsync --readonly thaw-lin --table "0 16384 linear $dev $((seg / 512))" ||
        say "badmap: dmsetup failed"
    for m in thaw-null thaw-lin; do
        say "live table $m: $(dmsetup table "$m")"
        thaw hibernate --name "$m" --mode shutdown > /tmp/badmap 2>&1
        rc=$?
        sed "s/^/THAW-TEST: badmap $m: /" /tmp/badmap
        say "badmap $m: exit $rc"
    done
    dmsetup remove thaw-null
    dmsetup remove thaw-lin
    # A stale pin (the header changed, thaw.conf not re-pinned): the next boot would refuse the header.
    if grep -q '^header=' /etc/thaw/thaw.conf 2> /dev/null; then
        cp /etc/thaw/thaw.conf /tmp/thaw.conf.good
        sed -i 's/^header=.*/header=sha256:'"$(printf '%064d' 0)"'/' /etc/thaw/thaw.conf
        thaw hibernate --dry-run > /tmp/badmap 2>&1
        rc=$?
        sed "s/^/THAW-TEST: badmap pin: /" /tmp/badmap
        say "badmap pin: exit $rc"
        cp /tmp/thaw.conf.good /etc/thaw/thaw.conf
    else
        say "badmap pin: no header= in /etc/thaw/thaw.conf"
    fi
    say "badmap: still running"
}

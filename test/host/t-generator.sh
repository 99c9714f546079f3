#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Host tests of the systemd flavour's thaw-generator on a fixture root: it masks
# systemd-hibernate-resume@.service exactly when `thaw resume` will act (rd.thaw.device= or device=
# in thaw.conf, no rd.thaw=0), and says so in the kernel log when resume= is given. thaw.conf is
# read by the real thaw ($THAW, installed in the fixture root where the module installs it), as
# thaw resume will read it; the generator never fails the boot, whatever the file or the binary.
set -u

: "${THAW:?THAW must name the thaw binary}"
# shellcheck source=test/host/lib.sh
. "$(dirname "$0")/lib.sh"
gen=$top/dracut-module/90thaw/thaw-generator.sh
root=$tmp/root
mask=systemd-hibernate-resume@.service

# said TEXT: the kernel log holds TEXT; with TEXT empty, it is empty.
said() {
    if [ -z "$1" ]; then
        [ ! -s "$root/dev/kmsg" ]
    else
        grep -qF -- "$1" "$root/dev/kmsg"
    fi
}

# The thaw in the initramfs: $THAW unless a test sets $bin (a broken one, or "" for none).
bin=$THAW
# generate CMDLINE [THAW.CONF]: the generator in a new initramfs root with that kernel command line
# and thaw.conf (none if not given); its status in $rc.
generate() {
    rm -rf "$root" "$tmp/normal" "$tmp/early" "$tmp/late"
    mkdir -p "$root/etc/thaw" "$root/proc" "$root/dev" "$root/usr/sbin"
    : > "$root/etc/initrd-release"
    : > "$root/dev/kmsg"
    [ -n "$bin" ] && ln -s "$bin" "$root/usr/sbin/thaw"
    echo "$1" > "$root/proc/cmdline"
    [ $# -ge 2 ] && printf '%s\n' "$2" > "$root/etc/thaw/thaw.conf"
    THAW_ROOT=$root sh "$gen" "$tmp/normal" "$tmp/early" "$tmp/late"
    rc=$?
}

# expect_mask NAME MASKED(yes|no) KMSG-TEXT(or "") CMDLINE [THAW.CONF]: the generator's effect.
expect_mask() {
    generate "$4" ${5+"$5"}
    got=no
    [ "$(readlink "$tmp/early/$mask" 2> /dev/null)" = /dev/null ] && got=yes
    if [ "$rc" -eq 0 ] && [ "$got" = "$2" ] && said "$3"; then
        ok "$1"
    else
        not_ok "$1"
        echo "# exit $rc, masked $got (wanted $2), kmsg:"
        sed 's/^/#   /' "$root/dev/kmsg"
    fi
}

masked="thaw: resume=/dev/mapper/thaw-swap on the kernel command line: systemd-hibernate-resume masked"
expect_mask "rd.thaw.device= and resume=: masked, and said" yes "$masked" \
    "root=/dev/vda rd.thaw.device=UUID=1234 resume=/dev/mapper/thaw-swap quiet"
expect_mask "rd.thaw.device= without resume=: masked quietly" yes "" "rd.thaw.device=/dev/vdb"
expect_mask "device= in thaw.conf: masked" yes "$masked" "resume=/dev/mapper/thaw-swap" \
    "device=UUID=1234"
expect_mask "device= in quotes in thaw.conf: masked" yes "" "quiet" '  device = "LABEL=my swap"'
expect_mask "empty device= in thaw.conf, as thaw ignores it: not masked" no "" "resume=/dev/vdb" \
    'device=""'
expect_mask "no thaw device: systemd-hibernate-resume keeps resume=" no "" "resume=/dev/vdb"
expect_mask "rd.thaw=0: not masked" no "" "rd.thaw.device=/dev/vdb resume=/dev/vdb rd.thaw=0"
expect_mask "rd.thaw=0 then rd.thaw=1: the last wins, masked" yes "thaw: resume=/dev/vdb" \
    "rd.thaw=0 rd.thaw.device=/dev/vdb resume=/dev/vdb rd.thaw=1"
expect_mask "empty rd.thaw.device=, as thaw ignores it: not masked" no "" "rd.thaw.device= resume=/dev/vdb"
expect_mask "a glob in the command line is not expanded" yes "thaw: resume=/dev/*" \
    "rd.thaw.device=/dev/vd* resume=/dev/*"

# thaw.conf as a person writes it, or as an attacker would, read by thaw as thaw resume will.
expect_mask "blanks around = and a quoted value: masked" yes "" "quiet" '   device   =   "UUID=1234"   '
expect_mask "a commented-out # device=: not masked" no "" "resume=/dev/vdb" \
    "$(printf '# device=UUID=1234\n\t#device=/dev/vdb\ntimeout=10')"
expect_mask "an empty device= after a good one keeps it, as thaw does: masked" yes "" "quiet" \
    "$(printf 'device=/dev/vdb\ndevice=')"
big=$(printf 'device=/dev/vdb\n%17000s' '' | tr ' ' '#')
expect_mask "thaw.conf over thaw's 16 KiB cap: thaw reads none of it, not masked" no "" "resume=/dev/vdb" "$big"
expect_mask "garbage thaw.conf: not masked, and the boot goes on" no "" "resume=/dev/vdb" \
    "$(printf '\177ELF\002\001\001\001device\001=/dev/vdb\n\377\376 = ')"
expect_mask "garbage thaw.conf, device on the command line: masked" yes "" "rd.thaw.device=/dev/vdb" \
    "$(printf '\377\376\375')"
# thaw.conf a directory: thaw cannot read it, nor can thaw resume.
generate "resume=/dev/vdb"
rm -rf "$tmp/early"
mkdir "$root/etc/thaw/thaw.conf"
if THAW_ROOT=$root sh "$gen" "$tmp/normal" "$tmp/early" "$tmp/late" && [ ! -e "$tmp/early/$mask" ]; then
    ok "an unreadable thaw.conf (a directory): not masked"
else
    not_ok "an unreadable thaw.conf (a directory): not masked"
fi

# No thaw binary: without thaw.conf, the command line decides as ever; with one, thaw cannot tell
# and the file counts as naming a device (masked, and said). A thaw killed by a signal, the same.
bin=''
expect_mask "no thaw.conf, no thaw: rd.thaw.device= masks quietly" yes "" "rd.thaw.device=/dev/vdb"
expect_mask "no thaw.conf, no thaw: nothing configured, not masked" no "" "resume=/dev/vdb"
expect_mask "thaw.conf but no thaw: masked, and said" yes "gave no answer (exit 127)" "quiet" "device=UUID=1234"
expect_mask "thaw.conf but no thaw, rd.thaw=0: not masked" no "" "rd.thaw=0" "device=UUID=1234"
printf '#!/bin/sh\nkill -PIPE $$\n' > "$tmp/crash"
chmod +x "$tmp/crash"
bin=$tmp/crash
expect_mask "thaw.conf and a thaw killed by a signal: masked, and said" yes "gave no answer" "resume=/dev/vdb" \
    "# no device here"
bin=$THAW

# A host-only image's /etc/cmdline.d, read before /proc/cmdline as thaw resume reads it.
expect_cmdline_d() {
    rm -rf "$tmp/early"
    : > "$root/dev/kmsg"
    : > "$root/etc/initrd-release"
    rm -f "$root/etc/thaw/thaw.conf"
    mkdir -p "$root/etc/cmdline.d"
    printf '%s\n' "$3" > "$root/etc/cmdline.d/90thaw.conf"
    echo "$4" > "$root/proc/cmdline"
    THAW_ROOT=$root sh "$gen" "$tmp/normal" "$tmp/early" "$tmp/late"
    got=no
    [ "$(readlink "$tmp/early/$mask" 2> /dev/null)" = /dev/null ] && got=yes
    if [ "$got" = "$2" ]; then
        ok "$1"
    else
        not_ok "$1 (masked $got, wanted $2)"
    fi
    rm -rf "$root/etc/cmdline.d"
}
expect_cmdline_d "rd.thaw.device= in /etc/cmdline.d: masked" yes " rd.thaw.device=UUID=1234 rd.thaw.key=fwcfg:k" \
    "root=/dev/vda resume=/dev/mapper/thaw-swap"
expect_cmdline_d "rd.thaw=0 on the command line wins over /etc/cmdline.d: not masked" no \
    "rd.thaw.device=UUID=1234" "resume=/dev/vdb rd.thaw=0"
expect_cmdline_d "resume= only in /etc/cmdline.d is not systemd's: masked without a word" yes \
    "rd.thaw.device=UUID=1234 resume=UUID=5678" "quiet"
if [ -s "$root/dev/kmsg" ]; then
    failed=$((failed + 1))
    echo "# but the generator spoke of a resume= systemd does not read"
fi

# thaw-resume.service's start timeout: 2 x rd.thaw.timeout= + 120 s in a drop-in, read as thaw
# reads the timeout (thaw.conf, /etc/cmdline.d, the command line; the last valid one wins); no
# drop-in without a timeout (the unit's own 180 s).
dropin=$tmp/normal/thaw-resume.service.d/timeout.conf
# expect_timeout NAME SECONDS(or "" for no drop-in) CMDLINE [THAW.CONF]
expect_timeout() {
    generate "$3" ${4+"$4"}
    got=''
    [ -f "$dropin" ] && got=$(sed -n 's/^TimeoutStartSec=//p' "$dropin")
    if [ "$got" = "$2" ] && { [ -z "$2" ] || grep -qx '\[Service\]' "$dropin"; }; then
        ok "$1"
    else
        not_ok "$1 (TimeoutStartSec '$got', wanted '$2')"
    fi
}
expect_timeout "default timeout: no drop-in, the unit's 180 s" "" "rd.thaw.device=/dev/vdb"
expect_timeout "rd.thaw.timeout=30: 180 s" 180 "rd.thaw.device=/dev/vdb rd.thaw.timeout=30"
expect_timeout "rd.thaw.timeout=0: 120 s" 120 "rd.thaw.device=/dev/vdb rd.thaw.timeout=0"
expect_timeout "rd.thaw.timeout=3600: 7320 s" 7320 "rd.thaw.device=/dev/vdb rd.thaw.timeout=3600"
expect_timeout "leading zeros are decimal: 0010 is 10" 140 "rd.thaw.device=/dev/vdb rd.thaw.timeout=0010"
expect_timeout "timeout= in thaw.conf" 300 "quiet" "$(printf 'device=/dev/vdb\ntimeout = 90')"
expect_timeout "the command line wins over thaw.conf" 160 "rd.thaw.timeout=20" \
    "$(printf 'device=/dev/vdb\ntimeout=90')"
expect_timeout "a value thaw refuses (over 3600) keeps the one before" 160 \
    "rd.thaw.device=/dev/vdb rd.thaw.timeout=20 rd.thaw.timeout=3601"
expect_timeout "a value thaw refuses (not a number) keeps the default" "" \
    "rd.thaw.device=/dev/vdb rd.thaw.timeout=1e9 rd.thaw.timeout=-5 rd.thaw.timeout=99999999999999999999"
expect_timeout "thaw not configured: no drop-in" "" "rd.thaw.timeout=10"
expect_timeout "timeout= in thaw.conf, the device on the command line" 300 "rd.thaw.device=/dev/vdb" "timeout=90"
expect_timeout "a quoted timeout= with blanks" 210 "quiet" "$(printf 'device=/dev/vdb\n  timeout = "45" ')"
expect_timeout "a later timeout= over 3600 keeps the one before, as thaw does" 240 "quiet" \
    "$(printf 'device=/dev/vdb\ntimeout=60\ntimeout=4000')"
expect_timeout "a later empty timeout= keeps the one before, as thaw does" 240 "quiet" \
    "$(printf 'device=/dev/vdb\ntimeout=60\ntimeout=')"
expect_timeout "a commented-out # timeout=: thaw's default 30 s, 180 s" 180 "quiet" \
    "$(printf 'device=/dev/vdb\n# timeout=90')"
bin=''
expect_timeout "thaw.conf but no thaw: no timeout from it, no drop-in" "" "quiet" \
    "$(printf 'device=/dev/vdb\ntimeout=90')"
bin=$THAW

# The unit's own value is the generator's for the default timeout (30 s), and finite.
unit=$(dirname "$gen")/thaw-resume.service
if [ "$(sed -n 's/^TimeoutStartSec=//p' "$unit")" = $((2 * 30 + 120)) ]; then
    ok "thaw-resume.service: TimeoutStartSec=180, as the generator's for 30 s"
else
    not_ok "thaw-resume.service: TimeoutStartSec is not 180"
fi

# Outside an initramfs (no /etc/initrd-release) it does nothing.
rm -rf "$tmp/early"
rm -f "$root/etc/initrd-release"
echo "rd.thaw.device=/dev/vdb" > "$root/proc/cmdline"
THAW_ROOT=$root sh "$gen" "$tmp/normal" "$tmp/early" "$tmp/late"
if [ ! -e "$tmp/early/$mask" ]; then
    ok "not in an initramfs: nothing masked"
else
    not_ok "not in an initramfs: nothing masked"
fi

echo "# $n generator cases, $failed failed"
[ "$failed" -eq 0 ]

#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Host tests of `thaw config` on fixture roots: what the dracut module asks of thaw.conf (the module
# parses none of it itself): --get NAME, --key-types and --cmdline, read as thaw reads the file,
# and the exit statuses its scripts act on (0, 1: no device or no value, 2: no such setting).
set -u

: "${THAW:?THAW must name the thaw binary}"
# shellcheck source=test/host/lib.sh
. "$(dirname "$0")/lib.sh"
root=$tmp/root
mkdir -p "$root/etc/thaw"

# conf TEXT: thaw.conf holds TEXT (printf's %b: \n between lines).
conf() { printf '%b\n' "$1" > "$root/etc/thaw/thaw.conf"; }
# says NAME TEXT: stdout of the last expect is exactly TEXT.
says() {
    if [ "$(cat "$tmp/out")" = "$2" ]; then
        ok "$1"
    else
        not_ok "$1 (printed '$(cat "$tmp/out")', wanted '$2')"
    fi
}
# silent NAME: the last expect said nothing on stdout or stderr.
silent() {
    if [ ! -s "$tmp/out" ] && [ ! -s "$tmp/err" ]; then
        ok "$1"
    else
        not_ok "$1"
    fi
}

conf 'device=UUID=1234\nkey=fwcfg:opt/thaw/key,tpm2\ntimeout=45'
expect "--get device" 0 "" "$THAW" config --get device --root "$root"
says "--get device: the device" "UUID=1234"
expect "--get timeout" 0 "" "$THAW" config --get timeout --root "$root"
says "--get timeout: the value" "45"
expect "--get key" 0 "" "$THAW" config --get key --root "$root"
says "--get key: the chain" "fwcfg:opt/thaw/key,tpm2"
expect "--get name: unset, the default" 0 "" "$THAW" config --get name --root "$root"
says "--get name: thaw-swap" "thaw-swap"

# Written as a person would: blanks around "=", quotes, comments, a bad line after a good one.
conf '# device=UUID=old\n  device = "LABEL=my swap"  \n\ttimeout= "60"\ntimeout=4000\ntimeout=\n#timeout=9'
expect "blanks and quotes" 0 "" "$THAW" config --get device --root "$root"
says "blanks and quotes: the value without them" "LABEL=my swap"
expect "a bad timeout= keeps the one before" 0 "" "$THAW" config --get timeout --root "$root"
says "a bad timeout= keeps the one before: 60" "60"

conf '# device=UUID=1234\nkey=tpm2'
expect "a commented-out device=: no device, exit 1" 1 "" "$THAW" config --get device --root "$root"
silent "no value: nothing said, the status answers"
expect "--get timeout without a device: the default" 0 "" "$THAW" config --get timeout --root "$root"
says "--get timeout without a device: 30" "30"
expect "--key-types without a device: exit 1" 1 "names no device" "$THAW" config --key-types --root "$root"
says "--key-types without a device: the types all the same" "tpm2"
expect "--cmdline without a device: exit 1" 1 "names no device" "$THAW" config --cmdline --root "$root"
says "--cmdline without a device: nothing printed" ""

conf 'device=/dev/vdb\nkey=keyfile:/etc/tpm2.key,fwcfg:k,keyfile:/k'
expect "--key-types" 0 "" "$THAW" config --key-types --root "$root"
says "--key-types: each type once, a path naming tpm2 is not a tpm2 source" "$(printf 'keyfile\nfwcfg')"

conf 'device=""'
expect 'device="": no device' 1 "" "$THAW" config --get device --root "$root"

# Files thaw cannot read: exit 1, and said.
rm -f "$root/etc/thaw/thaw.conf"
expect "no thaw.conf: exit 1" 1 "cannot read $root/etc/thaw/thaw.conf" "$THAW" config --get timeout --root "$root"
mkdir "$root/etc/thaw/thaw.conf"
expect "thaw.conf a directory: exit 1" 1 "cannot read" "$THAW" config --get device --root "$root"
rmdir "$root/etc/thaw/thaw.conf"
{
    echo "device=/dev/vdb"
    head -c 17000 /dev/zero | tr '\0' '#'
    echo
} > "$root/etc/thaw/thaw.conf"
expect "thaw.conf over 16 KiB: exit 1, none of it read" 1 "cannot read" "$THAW" config --get device --root "$root"
printf '\177ELF\002\001\001\000device\000=/dev/vdb\n\377\376 = \n' > "$root/etc/thaw/thaw.conf"
expect "garbage thaw.conf: no device" 1 "" "$THAW" config --get device --root "$root"

# Usage.
conf 'device=/dev/vdb'
expect "--get of a setting thaw.conf lacks: exit 2" 2 "no such setting" "$THAW" config --get color --root "$root"
expect "--get of a command line name: exit 2" 2 "" "$THAW" config --get rd.thaw.device --root "$root"
expect "--get without NAME: exit 2" 2 "" "$THAW" config --get
expect "--help names --get" 0 "--get NAME" "$THAW" config --help
finish

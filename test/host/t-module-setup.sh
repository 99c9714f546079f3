#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Host tests of 90thaw/module-setup.sh on a fixture sysroot: a host-only initramfs gets the TPM2
# driver and TCTI whenever thaw.conf's key chain names tpm2 or systemd-tpm2, the network when it
# names imds:, the drivers of the sources it names, and thaw.conf as rd.thaw.* arguments, however
# the file is written: the module asks the real thaw ($THAW, as dracut's THAW_BINARY) through
# `thaw config` and parses none of it. A thaw that gives no answer is said, and the image gets
# what an image for any host gets. module-setup.sh is bash (dracut sources it); run.sh starts tests
# with sh.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

: "${THAW:?THAW must name the thaw binary}"
# shellcheck source=test/host/lib.sh
. "$(dirname "$0")/lib.sh"
# dracut's check() from module-setup.sh takes the place of lib.sh's: this test uses is() below.
# shellcheck source=/dev/null
. "$top/dracut-module/90thaw/module-setup.sh"
# What dracut gives module-setup.sh; derror's lines are kept to be checked.
# shellcheck disable=SC2034 # read by module-setup.sh
dracutsysrootdir=$tmp
# shellcheck disable=SC2034
hostonly=yes
# shellcheck disable=SC2034
kernel_cmdline=''
export THAW_BINARY=$THAW
derror() { echo "$*" >> "$tmp/derror"; }
mkdir -p "$tmp/etc/thaw"

# ask FUNC: FUNC's answer (yes or no) in a new dracut run (a subshell: nothing cached from the one
# before); derror's lines are added to $tmp/derror.
ask() {
    if ("$@"); then got=yes; else got=no; fi
}
# expect_tpm2 NAME NEEDS(yes|no) THAW.CONF-LINE
expect_tpm2() {
    printf '%s\n' "$3" > "$tmp/etc/thaw/thaw.conf"
    ask thaw_needs_tpm2
    if [ "$got" = "$2" ]; then
        ok "$1"
    else
        not_ok "$1 (thaw_needs_tpm2 said $got for '${3:0:60}')"
    fi
}
diag() { show "$tmp/derror"; }
# is NAME WANT(yes|no) CMD...: CMD, asked as above, answers WANT.
is() {
    is_name=$1 is_want=$2
    shift 2
    ask "$@"
    if [ "$got" = "$is_want" ]; then
        ok "$is_name"
    else
        not_ok "$is_name (said $got)"
    fi
}

expect_tpm2 "key=tpm2" yes 'key=tpm2'
expect_tpm2 "tpm2 later in the chain, with options" yes 'key=keyfile:/k,tpm2:pcrs=7,bank=sha256'
expect_tpm2 "systemd-tpm2" yes 'key=systemd-tpm2'
expect_tpm2 "systemd-tpm2 later in the chain" yes 'key=fwcfg:opt/thaw/key,systemd-tpm2'
expect_tpm2 "blanks around = and a quoted value" yes '  key = "tpm2,passphrase"'
expect_tpm2 "no TPM2 source" no 'key=fwcfg:opt/thaw/key,passphrase'
expect_tpm2 "a commented-out line" no '# key=tpm2'
# As thaw reads thaw.conf, where a grep would have guessed.
expect_tpm2 "tpm2 only in a path is no tpm2 source" no 'key=keyfile:/etc/tpm2.key'
expect_tpm2 "tpm2 only in a comment after the chain: not a chain thaw takes" no \
    'key=fwcfg:opt/thaw/key # was tpm2'
expect_tpm2 "a later key= wins, as in thaw" no "$(printf 'key=tpm2\nkey=fwcfg:opt/thaw/key')"
expect_tpm2 "an empty key= after a good one keeps it, as in thaw" yes "$(printf 'key=tpm2\nkey=')"
expect_tpm2 "key=tpm2 without device=: the device may come from the command line" yes \
    "$(printf '# device=UUID=1234\nkey=tpm2')"
expect_tpm2 "a garbage thaw.conf: no TPM2" no "$(printf '\177ELF\002\001key\001=tpm2\n\377')"
big=$(printf 'key=tpm2\n%17000s' '' | tr ' ' '#')
expect_tpm2 "thaw.conf over thaw's 16 KiB cap: the boot reads none of it, no TPM2" no "$big"
# shellcheck disable=SC2034
hostonly=''
expect_tpm2 "not host-only: always" yes 'key=fwcfg:opt/thaw/key'
# shellcheck disable=SC2034
hostonly=yes
rm -f "$tmp/etc/thaw/thaw.conf"
is "host-only without thaw.conf: the chain can only be the command line's, TPM2 in" yes thaw_needs_tpm2

# The other key sources' drivers, the network, and the arguments stored in the image.
printf '%s\n' 'device=UUID=1234' '  key = "imds:aws:/latest/user-data,drive:config-2:/k"' 'timeout=9' \
    > "$tmp/etc/thaw/thaw.conf"
is "thaw_uses drive" yes thaw_uses drive
is "thaw_uses imds" yes thaw_uses imds
is "thaw_uses fwcfg: not named" no thaw_uses fwcfg
is "an imds: source in thaw.conf: the network" yes thaw_wants_network
args=" rd.thaw.device=UUID=1234 rd.thaw.key=imds:aws:/latest/user-data,drive:config-2:/k rd.thaw.timeout=9"
is "cmdline(): thaw.conf as rd.thaw.* arguments" yes test "$(cmdline)" = "$args"
printf '%s\n' 'device=UUID=1234' '# key=imds:aws:/latest/user-data' 'key=fwcfg:opt/thaw/key' \
    > "$tmp/etc/thaw/thaw.conf"
is "imds: only in a comment: no network" no thaw_wants_network
printf '%s\n' '# device=UUID=1234' 'key=fwcfg:opt/thaw/key' > "$tmp/etc/thaw/thaw.conf"
is "cmdline(): no device, nothing stored" yes test -z "$(cmdline)"
is "while thaw answers, nothing is said" yes test ! -s "$tmp/derror"

# A thaw that gives no answer (here: none at the path given): said; every source's drivers and
# the TPM2 pieces go in, no network and no arguments (the image's thaw reads the copied thaw.conf).
printf '%s\n' 'device=UUID=1234' 'key=imds:aws:/latest/user-data' > "$tmp/etc/thaw/thaw.conf"
THAW_BINARY=$tmp/no-thaw
is "thaw cannot answer: thaw_uses fwcfg all the same" yes thaw_uses fwcfg
is "thaw cannot answer: said, with what the build does instead" yes \
    grep -qs "gave no answer (exit 127.*the drivers of every key source go in" "$tmp/derror"
rm -f "$tmp/derror"
is "thaw cannot answer: the TPM2 pieces" yes thaw_needs_tpm2
is "thaw cannot answer: no network (it needs busybox), unless thaw_network=yes" no thaw_wants_network
is "thaw cannot answer: cmdline() prints nothing" yes test -z "$(cmdline)"
is "thaw cannot answer: no arguments stored, said" yes grep -qs "no rd.thaw.\* arguments stored" "$tmp/derror"
THAW_BINARY=$THAW
finish

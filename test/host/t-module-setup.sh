#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Host tests of 90thaw/module-setup.sh's thaw_needs_tpm2: a host-only initramfs gets the TPM2
# driver and TCTI whenever thaw.conf's key chain names tpm2 or systemd-tpm2, however it is written.
# module-setup.sh is bash (dracut sources it); run.sh starts tests with sh.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

# shellcheck source=test/host/lib.sh
. "$(dirname "$0")/lib.sh"
# dracut's check() from module-setup.sh takes the place of lib.sh's, which this test does not use.
# shellcheck source=/dev/null
. "$top/dracut-module/90thaw/module-setup.sh"
# shellcheck disable=SC2034 # read by module-setup.sh
dracutsysrootdir=$tmp
# shellcheck disable=SC2034
hostonly=yes
mkdir -p "$tmp/etc/thaw"

# expect_tpm2 NAME NEEDS(yes|no) THAW.CONF-LINE
expect_tpm2() {
	printf '%s\n' "$3" > "$tmp/etc/thaw/thaw.conf"
	got=no
	thaw_needs_tpm2 && got=yes
	if [ "$got" = "$2" ]; then
		ok "$1"
	else
		not_ok "$1 (thaw_needs_tpm2 said $got for '$3')"
	fi
}

echo "1..8"
expect_tpm2 "key=tpm2" yes 'key=tpm2'
expect_tpm2 "tpm2 later in the chain, with options" yes 'key=keyfile:/k,tpm2:pcrs=7,bank=sha256'
expect_tpm2 "systemd-tpm2" yes 'key=systemd-tpm2'
expect_tpm2 "systemd-tpm2 later in the chain" yes 'key=fwcfg:opt/thaw/key,systemd-tpm2'
expect_tpm2 "blanks around = and a quoted value" yes '  key = "tpm2,passphrase"'
expect_tpm2 "no TPM2 source" no 'key=fwcfg:opt/thaw/key,passphrase'
expect_tpm2 "a commented-out line" no '# key=tpm2'
# shellcheck disable=SC2034
hostonly=''
expect_tpm2 "not host-only: always" yes 'key=fwcfg:opt/thaw/key'
[ "$failed" -eq 0 ]

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Host tests of 90thaw/module-setup.sh's thaw_needs_tpm2: a host-only initramfs gets the TPM2
# driver and TCTI whenever thaw.conf's key chain names tpm2 or systemd-tpm2, however it is written.
# module-setup.sh is bash (dracut sources it); run.sh starts tests with sh.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

setup=$(cd "$(dirname "$0")/../.." && pwd)/dracut-module/90thaw/module-setup.sh
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=/dev/null
. "$setup"
# shellcheck disable=SC2034 # read by module-setup.sh
dracutsysrootdir=$tmp
# shellcheck disable=SC2034
hostonly=yes
mkdir -p "$tmp/etc/thaw"

n=0
failed=0
# expect NAME NEEDS(yes|no) THAW.CONF-LINE
expect() {
	n=$((n + 1))
	printf '%s\n' "$3" > "$tmp/etc/thaw/thaw.conf"
	got=no
	thaw_needs_tpm2 && got=yes
	if [ "$got" = "$2" ]; then
		echo "ok $n - $1"
	else
		echo "not ok $n - $1 (thaw_needs_tpm2 said $got for '$3')"
		failed=$((failed + 1))
	fi
}

echo "1..8"
expect "key=tpm2" yes 'key=tpm2'
expect "tpm2 later in the chain, with options" yes 'key=keyfile:/k,tpm2:pcrs=7,bank=sha256'
expect "systemd-tpm2" yes 'key=systemd-tpm2'
expect "systemd-tpm2 later in the chain" yes 'key=fwcfg:opt/thaw/key,systemd-tpm2'
expect "blanks around = and a quoted value" yes '  key = "tpm2,passphrase"'
expect "no TPM2 source" no 'key=fwcfg:opt/thaw/key,passphrase'
expect "a commented-out line" no '# key=tpm2'
# shellcheck disable=SC2034
hostonly=''
expect "not host-only: always" yes 'key=fwcfg:opt/thaw/key'
[ "$failed" -eq 0 ]

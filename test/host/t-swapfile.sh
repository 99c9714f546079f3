#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Host tests of `thaw setup --swapfile`: the file system holding the file is made to look, through a
# fixture /sys, like one on a LUKS2 mapping whose container is an image file (no device-mapper
# needed). Checks what an administrator would: the printed command line (resume_offset= agrees with
# filefrag), the swap header, thaw.conf, the new keyslot and token in the container, and refusals
# that leave no file behind.
set -u

: "${THAW:?THAW must name the thaw binary}"
# shellcheck source=test/host/lib.sh
. "$(dirname "$0")/lib.sh"
need cryptsetup filefrag stat fallocate python3

fiemap_dir t-swapfile
root=$tmp/root
mkdir -p "$root/etc" "$root/dev"
devnum=$(stat -c '%Hd:%Ld' "$fs")
sysdm=$root/sys/dev/block/$devnum
head -c 32 /dev/urandom > "$root/key"
head -c 32 /dev/urandom > "$root/installkey"
head -c 32 /dev/urandom > "$root/otherkey"
luks_image "$root/dev/vdb" 32M "$root/installkey" || exit 1
uuid=$(cryptsetup luksUUID "$root/dev/vdb")
fixture() {
    rm -rf "$root/sys"
    mkdir -p "$sysdm/dm" "$sysdm/slaves/vdb"
    echo "$1" > "$sysdm/dm/uuid"
    echo "luks-$uuid" > "$sysdm/dm/name"
}
fixture "CRYPT-LUKS2-$(echo "$uuid" | tr -d -)-luks-$uuid"

# result STATUS NAME: a check that passed if STATUS is 0.
result() {
    if [ "$1" -eq 0 ]; then ok "$2"; else not_ok "$2"; fi
}
setup() { "$THAW" setup --root "$root" "$@" > "$tmp/out" 2> "$tmp/err"; }

# A key the container does not take yet, and no --unlock: refused, nothing left.
setup --swapfile "$fs/swapfile" --size 8M --key keyfile:/key
rc=$?
[ "$rc" -eq 1 ] && grep -q "a key does not unlock it yet: give --unlock" "$tmp/err" && [ ! -e "$fs/swapfile" ]
result $? "a key the container does not take, without --unlock: refused, no file left"

setup --swapfile "$fs/swapfile" --size 8M --key keyfile:/key --unlock keyfile:/otherkey
rc=$?
[ "$rc" -eq 1 ] && grep -q "no --unlock source unlocks it" "$tmp/err" && [ ! -e "$fs/swapfile" ]
result $? "a wrong --unlock: refused, no file left"

setup --swapfile "$fs/swapfile" --size 8M --key keyfile:/key --unlock keyfile:/installkey
rc=$?
result "$rc" "setup --swapfile with --unlock succeeds"
# The first block as filefrag sees it (file system blocks), in 4096-byte pages.
bs=$(stat -f -c %S "$fs")
first=$(filefrag -v "$fs/swapfile" | awk '$1 == "0:" {sub(/\.\..*/, "", $4); print $4}')
offset=$((first * bs / 4096))
hdr=$(sed -n 's/^header=//p' "$root/etc/thaw/thaw.conf")
want="rd.thaw.device=UUID=$uuid rd.thaw.key=keyfile:/key rd.thaw.name=luks-$uuid rd.thaw.header=$hdr resume_offset=$offset"
[ "$(cat "$tmp/out")" = "$want" ]
result $? "it prints the kernel arguments, resume_offset=$offset as filefrag says"
[ "$(stat -c '%s %a' "$fs/swapfile")" = "8388608 600" ]
result $? "the swap file has 8 MiB, mode 600"
[ "$(dd if="$fs/swapfile" bs=1 skip=4086 count=10 2> /dev/null)" = SWAPSPACE2 ]
result $? "the swap file starts with a swap header"
grep -q "allocated without holes in [0-9]* piece(s), header at page $offset of the device" "$tmp/err"
result $? "it says the file has no holes and where its header is"
grep -qx "offset=$offset" "$root/etc/thaw/thaw.conf" && grep -qx "name=luks-$uuid" "$root/etc/thaw/thaw.conf" \
    && grep -qx "device=UUID=$uuid" "$root/etc/thaw/thaw.conf"
result $? "thaw.conf records the device, the mapping name and the offset"
cryptsetup open --test-passphrase --key-file "$root/key" "$root/dev/vdb" 2> "$tmp/err"
result $? "the new key unlocks the root's container"
cryptsetup luksDump "$root/dev/vdb" > "$tmp/dump"
[ "$(grep -c 'thaw-keyfile' "$tmp/dump")" -eq 1 ]
result $? "one thaw-keyfile token names the source"

# Made again with the key already enrolled: no --unlock needed, no second token.
rm -f "$fs/swapfile"
setup --swapfile "$fs/swapfile" --size 8M --key keyfile:/key
rc=$?
cryptsetup luksDump "$root/dev/vdb" > "$tmp/dump"
[ "$rc" -eq 0 ] && [ "$(grep -c 'thaw-keyfile' "$tmp/dump")" -eq 1 ] \
    && [ "$(grep -cE '^  [0-9]+: luks2' "$tmp/dump")" -eq 2 ]
result $? "again with the key enrolled: no --unlock needed, no new keyslot or token"

setup --swapfile "$fs/swapfile" --size 8M --key keyfile:/key
rc=$?
[ "$rc" -eq 1 ] && grep -q "it exists; remove it" "$tmp/err"
result $? "an existing file: refused"
rm -f "$fs/swapfile"

fixture "LVM-abcdef"
setup --swapfile "$fs/swapfile" --size 8M --key keyfile:/key
rc=$?
[ "$rc" -eq 1 ] && grep -q "a mapping, but not LUKS2" "$tmp/err" && [ ! -e "$fs/swapfile" ]
result $? "a file system on LVM: refused, no file made"
rm -rf "$root/sys"
setup --swapfile "$fs/swapfile" --size 8M --key keyfile:/key
rc=$?
[ "$rc" -eq 1 ] && grep -q "not a device-mapper device" "$tmp/err" && [ ! -e "$fs/swapfile" ]
result $? "a file system on a plain disk: refused, no file made"
setup --swapfile "$fs/swapfile" --size 1x --key keyfile:/key
[ $? -eq 2 ]
result $? "a bad --size: usage error"

# An imds:URL source on an origin --allow-url allows: the enrolment's own fetch may use it (as for
# a device), and thaw.conf records the origin for the boot.
fixture "CRYPT-LUKS2-$(echo "$uuid" | tr -d -)-luks-$uuid"
start_imds
setup --swapfile "$fs/swapfile" --size 8M --key "$src" --unlock keyfile:/key
rc=$?
[ "$rc" -eq 1 ] && grep -q "neither link-local nor an allowed origin" "$tmp/err" && [ ! -e "$fs/swapfile" ]
result $? "an imds:URL source without --allow-url: refused, no file left"
setup --swapfile "$fs/swapfile" --size 8M --key "$src" --allow-url "$origin" \
    --unlock keyfile:/key
result $? "setup --swapfile --allow-url: the enrolment fetches from the allowed origin"
grep -qx "allow-url=$origin" "$root/etc/thaw/thaw.conf"
result $? "thaw.conf has allow-url=$origin"
cryptsetup open --test-passphrase --disable-external-tokens --key-file "$tmp/served" "$root/dev/vdb" 2> "$tmp/err"
result $? "the served key unlocks the root's container"
rm -f "$fs/swapfile"

finish

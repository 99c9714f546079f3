#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Host tests of `thaw provision` on a fixture root: the plan it prints for a partition (an image
# file) and for a swap file on a root made to look, through a fixture /sys, like a file system on a
# LUKS2 mapping (as t-swapfile.sh); the first setup of the swap file carried out, a boot with
# nothing to change that changes nothing, a grow with more memory, an image on the swap never
# touched, a grow cut short put right. No device-mapper: a partition's setup is not carried out.
set -u

: "${THAW:?THAW must name the thaw binary}"
# shellcheck source=test/host/lib.sh
. "$(dirname "$0")/lib.sh"
need cryptsetup filefrag stat fallocate sha256sum

fiemap_dir t-provision
root=$fs/root
mkdir -p "$root/etc/thaw" "$root/dev" "$root/proc"
chmod 0755 "$fs" "$root" # thaw provision refuses a swap file in a directory others can write
: > "$root/proc/swaps"
head -c 32 /dev/urandom > "$root/installkey"
head -c 32 /dev/urandom > "$root/key"

# mem MIB: the machine's memory.
mem() {
    printf 'MemTotal: %s kB\nMemAvailable: 1000 kB\nAnonPages: 1000 kB\nShmem: 100 kB\n' $(($1 * 1024)) \
        > "$root/proc/meminfo"
}
conf() { printf '%s\n' "$@" > "$root/etc/thaw/provision.conf"; }
# prov STATUS NAME TEXT [OPTION...]: thaw provision exits STATUS and prints or logs TEXT.
prov() {
    prov_status=$1 prov_name=$2 prov_text=$3
    shift 3
    "$THAW" provision --root "$root" "$@" > "$tmp/out" 2> "$tmp/err"
    prov_rc=$?
    if [ "$prov_rc" -eq "$prov_status" ] && grep -qF -- "$prov_text" "$tmp/out" "$tmp/err"; then
        ok "$prov_name"
    else
        not_ok "$prov_name (exit $prov_rc)"
        diag
    fi
}
# result STATUS NAME: a check that passed if STATUS is 0.
result() {
    if [ "$1" -eq 0 ]; then ok "$2"; else not_ok "$2"; fi
}
sums() { sha256sum "$root/etc/thaw/thaw.conf" "$root/swapfile" "$root/dev/vdb" 2> /dev/null; }

mem 64
prov 0 "no provision.conf: nothing to do" "nothing to provision"
conf "device=/dev/vdb" "key=keyfile:/key" "size=ram+10" "min=1X"
prov 1 "a bad provision.conf: refused with its line" "line 4: min=1X is not a size" --dry-run

# A partition (an image file here).
conf "device=/dev/vdb" "key=keyfile:/key" "size=ram"
prov 1 "a device that is not there: refused" "device=/dev/vdb is not there" --dry-run
truncate -s 96M "$root/dev/vdb"
before=$(sums)
prov 0 "a blank partition, no thaw.conf: first setup" \
    "first setup: format /dev/vdb as LUKS2 swap (80 MiB; the size rule asks for 64 MiB)" --dry-run
[ "$(sums)" = "$before" ]
result $? "--dry-run changes nothing"
# A tag: resolved once, and what the setup is given is the device it names.
mkdir -p "$root/dev/disk/by-partlabel"
ln -s ../../vdb "$root/dev/disk/by-partlabel/swap"
conf "device=PARTLABEL=swap" "key=keyfile:/nokey" "size=ram"
prov 0 "device=PARTLABEL=swap: the plan names the partition it resolves to" \
    "first setup: format /dev/vdb (PARTLABEL=swap) as LUKS2 swap (80 MiB" --dry-run
prov 1 "device=PARTLABEL=swap: the setup gets /dev/vdb, and stops at the missing key before writing" \
    "keyfile:/nokey"
! grep -qF "PARTLABEL=swap" "$tmp/err" && [ "$(sums)" = "$before" ]
result $? "the setup was never given the unresolved spec, and nothing was written"
conf "device=/dev/vdb" "key=keyfile:/key" "size=ram"
mem 100
prov 1 "a partition smaller than the size rule: refused" \
    "refused: no room: /dev/vdb gives 80 MiB of swap, the size rule asks for 100 MiB" --dry-run
mem 64
luks_image "$root/dev/vdb" 96M "$root/installkey" || exit 1
prov 1 "a partition that holds LUKS2 and no thaw.conf: never formatted" "/dev/vdb holds LUKS2" --dry-run
uuid=$(cryptsetup luksUUID "$root/dev/vdb")
printf 'device=UUID=%s\nkey=keyfile:/key\nname=thaw-swap\n' "$uuid" > "$root/etc/thaw/thaw.conf"
before=$(sums)
prov 0 "set up (thaw.conf names its LUKS2 UUID): nothing to change" "nothing to change: /dev/vdb gives 80 MiB"
[ "$(sums)" = "$before" ]
result $? "a boot with nothing to change changes nothing"
mem 128
prov 1 "more memory than the partition takes: refused, it cannot grow" "a partition cannot grow here"
# Refused for room, it is still thaw's swap: a change an earlier boot did not carry into the
# initramfs is carried now (with --root: said, not built), and the swap is turned on (not here).
mkdir -p "$root/var/lib/thaw"
echo "thaw.conf changed" > "$root/var/lib/thaw/initramfs-stale"
prov 1 "refused for room with the initramfs behind thaw.conf: the initramfs step runs all the same" \
    "with --root: no initramfs is built; /var/lib/thaw/initramfs-stale stays"
rm "$root/var/lib/thaw/initramfs-stale"
printf 'device=UUID=0000\nkey=keyfile:/key\n' > "$root/etc/thaw/thaw.conf"
prov 1 "a thaw.conf set up by hand for another device: refused" "names device=UUID=0000, which is not /dev/vdb"

# A swap file on the root, whose file system looks like one on the LUKS2 container /dev/vdb.
rm "$root/etc/thaw/thaw.conf"
devnum=$(stat -c '%Hd:%Ld' "$root")
sysdm=$root/sys/dev/block/$devnum
mkdir -p "$sysdm/dm" "$sysdm/slaves/vdb"
echo "CRYPT-LUKS2-$(echo "$uuid" | tr -d -)-luks-$uuid" > "$sysdm/dm/uuid"
echo "luks-$uuid" > "$sysdm/dm/name"
mem 16
# This root has no TPM2 (no /dev/tpmrm0, no ACPI TPM2 table): key='s tpm2 sources are left out of
# the first setup, and a key= of tpm2 alone is refused, as nothing would bring the key to the next boot.
conf "swapfile=/swapfile" "key=tpm2" "unlock=keyfile:/installkey" "size=ram" "min=8M"
prov 1 "key=tpm2 alone, no TPM2 here: refused" \
    "refused: key=tpm2 needs a TPM2 and this instance has none (no /dev/tpmrm0, no ACPI TPM2 table)"
[ ! -e "$root/swapfile" ] && [ ! -e "$root/swapfile.thaw-new" ] && [ ! -e "$root/etc/thaw/thaw.conf" ] &&
    [ ! -e "$root/var/lib/thaw/initramfs-stale" ]
result $? "refused, it made nothing (no swap file, no thaw.conf, no initramfs-stale)"
conf "swapfile=/swapfile" "key=tpm2:pcrs=7,keyfile:/key" "unlock=keyfile:/installkey" "size=ram" "min=8M"
prov 0 "no swap file yet: first setup planned, without key='s tpm2 (no TPM2 here)" \
    "first setup: make /swapfile with 16 MiB, enroll key=keyfile:/key in the root's LUKS2 container (this instance has no TPM2" \
    --dry-run
[ ! -e "$root/swapfile" ] && [ ! -e "$root/etc/thaw/thaw.conf" ]
result $? "--dry-run makes nothing"
# What a power cut in an earlier first setup left: the temporary name, removed.
fallocate -l 1M "$root/swapfile.thaw-new"
prov 0 "the first setup is carried out" "with --root: no initramfs is built"
[ ! -e "$root/swapfile.thaw-new" ] && grep -qF "removed $root/swapfile.thaw-new" "$tmp/err"
result $? "it removed the .thaw-new file a stopped setup left, and made the swap file under that name"
grep -qF "ticket key is derived from the root's LUKS2 volume key, which every instance started from this image shares" \
    "$tmp/err"
result $? "a swap file's first setup warns that instances of one image share the root's volume key"
grep -qF "this instance has no TPM2: key=tpm2:pcrs=7,keyfile:/key is enrolled without its tpm2 sources (key=keyfile:/key)" \
    "$tmp/err"
result $? "it warns that key='s tpm2 was left out, for good"
[ "$(stat -c %s "$root/swapfile" 2> /dev/null)" = 16777216 ] && grep -qx "device=UUID=$uuid" "$root/etc/thaw/thaw.conf"
result $? "it made a 16 MiB swap file and thaw.conf"
grep -qx "key=keyfile:/key" "$root/etc/thaw/thaw.conf" && [ "$(cryptsetup luksDump "$root/dev/vdb" | grep -c 'thaw-tpm2')" = 0 ]
result $? "thaw.conf's key= is the chain without tpm2, and the container has no thaw-tpm2 token"
cryptsetup open --test-passphrase --key-file "$root/key" "$root/dev/vdb" 2> "$tmp/err"
result $? "key= unlocks the root's container"
first=$(filefrag -v "$root/swapfile" | awk '$1 == "0:" {sub(/\.\..*/, "", $4); print $4}')
offset=$((first * $(stat -f -c %S "$root") / 4096))
grep -qx "offset=$offset" "$root/etc/thaw/thaw.conf"
result $? "thaw.conf's offset= is where filefrag says the file starts ($offset)"

[ -f "$root/var/lib/thaw/initramfs-stale" ]
result $? "thaw.conf changed: /var/lib/thaw/initramfs-stale says the initramfs does not carry it yet"
prov 0 "while it is there, the plan rebuilds the initramfs" \
    "but the initramfs does not carry /etc/thaw/thaw.conf yet (/var/lib/thaw/initramfs-stale)" --dry-run
prov 0 "with --no-initramfs the plan says it stays" "initramfs: not rebuilt (--no-initramfs)" \
    --dry-run --no-initramfs
rm "$root/var/lib/thaw/initramfs-stale"
before=$(sums)
prov 0 "the next boot: nothing to change" "nothing to change: /swapfile has 16 MiB, the size rule asks for 16 MiB"
[ "$(sums)" = "$before" ]
result $? "the second boot changes neither the swap file nor thaw.conf"
mem 8
prov 0 "less memory: never shrunk" "nothing to change"

# Started with an image on the swap and more memory: not touched.
mem 32
cp "$root/swapfile" "$tmp/swapfile.plain"
# As the kernel marks it: the swap signature moved to orig_sig, S1SUSPEND in its place.
printf 'SWAPSPACE2S1SUSPEND\000' | dd of="$root/swapfile" bs=1 seek=4076 conv=notrunc 2> /dev/null
before=$(sums)
prov 1 "more memory, an image on the swap file: refused" "holds a hibernation image: not touched"
[ "$(sums)" = "$before" ]
result $? "the swap file with the image is not touched"
grep -qF "given up (boot once with rd.thaw.mismatch=discard" "$tmp/err"
result $? "and it says how to give the image up"
# The same memory, an image kept on the swap file: no swap this boot, so said, and exit 1.
mem 16
prov 1 "an image kept on the swap file: a warning and exit 1" \
    "/swapfile holds a hibernation image this boot did not resume (thaw status says why)"
grep -qF "rd.thaw.mismatch=discard" "$tmp/err"
result $? "the warning names rd.thaw.mismatch=discard"
[ "$(sums)" = "$before" ]
result $? "and the swap file is not touched"
mem 32
dd if="$tmp/swapfile.plain" of="$root/swapfile" bs=4096 count=1 conv=notrunc 2> /dev/null

# More memory, no image: grown.
conf_rest=$(grep -v '^offset=' "$root/etc/thaw/thaw.conf")
# What a power cut in an earlier grow left: the half-made new file, removed first.
fallocate -l 3M "$root/swapfile.thaw-new"
prov 0 "more memory: grow planned" "grow the swap file: /swapfile has 16 MiB, the size rule asks for 32 MiB" --dry-run
grep -qF "first removing the .thaw-new file a stopped grow left, 3 MiB" "$tmp/out"
result $? "the plan says the .thaw-new file a stopped grow left is removed first"
prov 0 "more memory: the swap file is grown" "grew $root/swapfile to 32 MiB"
grep -qF "removed $root/swapfile.thaw-new, which a stopped grow left" "$tmp/err"
result $? "it removed that file before making the new one"
first=$(filefrag -v "$root/swapfile" | awk '$1 == "0:" {sub(/\.\..*/, "", $4); print $4}')
offset=$((first * $(stat -f -c %S "$root") / 4096))
[ "$(stat -c %s "$root/swapfile")" = 33554432 ] && grep -qx "offset=$offset" "$root/etc/thaw/thaw.conf" &&
    [ "$(dd if="$root/swapfile" bs=1 skip=4086 count=10 2> /dev/null)" = SWAPSPACE2 ] &&
    [ ! -e "$root/swapfile.thaw-new" ] && [ "$(grep -v '^offset=' "$root/etc/thaw/thaw.conf")" = "$conf_rest" ]
result $? "32 MiB of swap now, thaw.conf's offset= follows it ($offset), its other lines kept"

# A power cut between the new file and thaw.conf: the next boot corrects the offset.
sed -i "s/^offset=.*/offset=12345/" "$root/etc/thaw/thaw.conf"
prov 0 "thaw.conf's offset= not where the file starts: corrected" "wrote offset=$offset"
prov 0 "then nothing to change" "nothing to change"

# Set up, and more memory, but at the path a link or a file that is not swap: never grown over.
mem 64
mv "$root/swapfile" "$root/swapfile.real"
echo "precious" > "$root/target"
ln -s /target "$root/swapfile"
prov 1 "a symbolic link at swapfile=: refused" "/swapfile is not a regular file (a symbolic link"
[ "$(cat "$root/target")" = precious ] && [ -L "$root/swapfile" ] && [ ! -e "$root/swapfile.thaw-new" ]
result $? "neither the link nor what it points at is touched"
rm "$root/swapfile"
{ echo "precious"; head -c 8192 /dev/zero; } > "$root/swapfile"
sha=$(sha256sum < "$root/swapfile")
prov 1 "a file that is not swap where thaw.conf's swap file was: refused" "/swapfile is not swap"
[ "$(sha256sum < "$root/swapfile")" = "$sha" ] && [ ! -e "$root/swapfile.thaw-new" ]
result $? "and not grown over"
mv "$root/swapfile.real" "$root/swapfile"
# A directory on the path that others can write: refused.
mkdir -m 0777 "$root/open"
conf "swapfile=/open/swapfile" "key=keyfile:/key" "unlock=keyfile:/installkey" "size=ram" "min=8M"
prov 1 "a swap file in a directory others can write: refused" \
    "/open/swapfile: /open is not a root-owned directory that only root can write" --dry-run
rmdir "$root/open"
conf "swapfile=/swapfile" "key=keyfile:/key" "unlock=keyfile:/installkey" "size=ram" "min=8M"
mem 32
prov 0 "back to thaw's swap file: nothing to change" "nothing to change"

# A file at the path that is not swap, and no thaw.conf: never removed.
rm "$root/etc/thaw/thaw.conf"
echo "precious" > "$root/swapfile"
prov 1 "a file that is not swap at swapfile=: refused" "/swapfile exists and is not swap"
[ "$(cat "$root/swapfile")" = precious ]
result $? "and left as it was"
# A file whose first page is zero (a disk image, a database) and no thaw.conf: never taken for a
# setup's leftover.
{ head -c 4096 /dev/zero; echo "data after a zero header"; } > "$root/swapfile"
sha=$(sha256sum < "$root/swapfile")
prov 1 "a file with a zero first page at swapfile=: refused" "/swapfile exists and is not swap"
[ "$(sha256sum < "$root/swapfile")" = "$sha" ]
result $? "and left byte for byte as it was"

finish

#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Host tests of `thaw inspect` on a synthetic image (built here) against a fixture machine, and of
# `thaw status` reading a state file.
set -u

: "${THAW:?THAW must name the thaw binary}"

# shellcheck source=test/host/lib.sh
. "$(dirname "$0")/lib.sh"
root=$tmp/root
img=$tmp/swap.img
mkdir -p "$root/proc/sys/kernel" "$root/run/thaw"
echo 6.1.0-57-amd64 > "$root/proc/sys/kernel/osrelease"
printf 'Node 0, zone DMA32\n        present  196478\n' > "$root/proc/zoneinfo"
echo "root=/dev/vda" > "$root/proc/cmdline"

# put64 OFFSET VALUE: a little-endian u64 into the image.
put64() {
    v=$2 i=0 s=""
    while [ $i -lt 8 ]; do
        s="$s\\0$(printf '%03o' $((v & 255)))"
        v=$((v >> 8))
        i=$((i + 1))
    done
    printf '%b' "$s" | dd of="$img" bs=1 seek="$1" conv=notrunc 2> /dev/null
}
puts() { printf '%s' "$2" | dd of="$img" bs=1 seek="$1" conv=notrunc 2> /dev/null; }

# Header at page 0, map page at 1 listing 2..4, x86_64 header page at 2: uncompressed, 1 data page.
truncate -s 64K "$img"
put64 4064 1
put64 4072 2 # flags is a u32: the signatures after it overwrite the upper half
puts 4076 SWAPSPACE2
puts 4086 S1SUSPEND
put64 4096 2
put64 4104 3
put64 4112 4
put64 $((8192 + 24)) $((0x23456789ABCDEF02))
put64 $((8192 + 32)) $((0x1a2b3c4d))
put64 $((8192 + 400)) 196478
put64 $((8192 + 416)) 1
put64 $((8192 + 424)) 3
put64 $((8192 + 432)) 12288

# says NAME TEXT: the last command's output has TEXT.
says() {
    if grep -qF -- "$2" "$tmp/out"; then ok "$1"; else not_ok "$1: no \"$2\" in:"; fi
}
# status NAME GOT WANT: the last command exited WANT.
status() {
    if [ "$2" -eq "$3" ]; then ok "$1"; else not_ok "$1: exit $2, not $3"; fi
}

"$THAW" inspect --root "$root" "$img" > "$tmp/out" 2>&1
status "inspect: resumable image exits 0" $? 0
says "inspect: flags" "flags:          0x2 (nocompress)"
says "inspect: memory" "memory:         made with 768 MiB (196478 pages), this machine has 768 MiB"
says "inspect: e820 unknown without memmap" "e820 checksum:  image 1a2b3c4d, this machine unknown"
says "inspect: verdict" "resumable here: yes"

"$THAW" inspect --verify --root "$root" "$img" > "$tmp/out" 2>&1
status "inspect --verify: an uncompressed image exits 0" $? 0
says "inspect --verify: every page read, no checksum" "verified:       yes: all 2 pages read; uncompressed images carry no checksum"
"$THAW" inspect --verify --json --root "$root" "$img" > "$tmp/out" 2>&1
says "inspect --verify --json: verify" '"ok":true'
says "inspect --json: first map block" '"first_map_block":1'

printf 'Node 0, zone DMA32\n        present  262014\n' > "$root/proc/zoneinfo"
"$THAW" inspect --root "$root" "$img" > "$tmp/out" 2>&1
status "inspect: memory mismatch exits 1" $? 1
says "inspect: says why" "resumable here: no: image was made with 768 MiB of memory, this machine has 1024 MiB"

"$THAW" inspect --json --root "$root" "$img" > "$tmp/out" 2>&1
says "inspect --json: resumable" '"resumable":false'
says "inspect --json: check" '"check":"memory"'
says "inspect --json: image memory" '"num_physpages":196478'
says "inspect --json: compression" '"compression":"none"'

put64 $((4096 + 4088)) 1
"$THAW" inspect --root "$root" "$img" > "$tmp/out" 2>&1
says "inspect: a looping chain is named" "the swap-map chain loops back to block 1 after 1 map pages"

"$THAW" inspect --root "$root" --offset 1 "$img" > "$tmp/out" 2>&1
status "inspect: no image at offset 1 exits 1" $? 1
says "inspect: no image" "no hibernation image (neither swap nor a hibernation image) at offset 1"

"$THAW" status --root "$root" > "$tmp/out" 2>&1
status "status: no state file exits 1" $? 1
says "status: says so" "thaw resume left no record at this boot"
printf 'outcome=mismatch-kept\nreason=memory\ndevice=/dev/mapper/thaw-swap\nmessage=not resuming: why\n' \
    > "$root/run/thaw/state"
"$THAW" status --root "$root" > "$tmp/out" 2>&1
status "status: exits 0" $? 0
says "status: in words" "At boot, thaw resume: an image this machine cannot resume was kept; the swap is not in use."
says "status: the check" "Failed check: memory"
says "status: the message" "Details: not resuming: why"
for o in bad-header bad-mapping; do
    printf 'outcome=%s\ndevice=/dev/vdb\n' "$o" > "$root/run/thaw/state"
    "$THAW" status --root "$root" > "$tmp/out" 2>&1
    status "status: $o exits 0" $? 0
    case $o in
    bad-header) says "status: $o in words" "the LUKS2 header is not one thaw wrote (or not the pinned one); no key was tried" ;;
    bad-mapping) says "status: $o in words" "the mapping was not encrypted as its LUKS2 header says; it was closed unread" ;;
    esac
done

finish

#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Writes the fuzzers' seed corpus: small hibernation images (uncompressed, one LZ4 chunk, one LZO
# chunk, each stored by hand: literal runs only) into DIR/image, command lines and thaw.conf texts
# (CMDLINE NUL CONF) into DIR/args.
# Usage: test/fuzz/make-corpus.sh DIR
set -eu

dir=${1:?usage: make-corpus.sh DIR}
mkdir -p "$dir/image" "$dir/args"

# put64 FILE OFFSET VALUE: a little-endian u64 (only the low 32 bits may be set here)
put64() {
    v=$3 i=0 s=""
    while [ $i -lt 8 ]; do
        s="$s\\0$(printf '%03o' $((v & 255)))"
        v=$((v >> 8))
        i=$((i + 1))
    done
    printf '%b' "$s" | dd of="$1" bs=1 seek="$2" conv=notrunc 2> /dev/null
}
puts() { printf '%s' "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc 2> /dev/null; }
# bytes FILE OFFSET OCTAL...: raw bytes
bytes() {
    f=$1 o=$2
    shift 2
    s=""
    for b in "$@"; do s="$s\\0$b"; done
    printf '%b' "$s" | dd of="$f" bs=1 seek="$o" conv=notrunc 2> /dev/null
}

# image FILE FLAGS STORED: header at page 0, map page 1 listing pages 2.., the x86_64 header page
# at 2 (one data page: pages = 3), STORED stream pages in all.
image() {
    f=$1
    rm -f "$f"
    truncate -s $(((2 + $3 + 1) * 4096)) "$f"
    put64 "$f" 4064 1
    put64 "$f" 4072 "$2"
    puts "$f" 4076 SWAPSPACE2
    puts "$f" 4086 S1SUSPEND
    n=0 # put64 uses i
    while [ $n -lt "$3" ]; do
        put64 "$f" $((4096 + 8 * n)) $((2 + n))
        n=$((n + 1))
    done
    bytes "$f" $((8192 + 24)) 002 357 315 253 211 147 105 043 # 0x23456789ABCDEF02
    put64 "$f" $((8192 + 400)) 196478
    put64 "$f" $((8192 + 416)) 1
    put64 "$f" $((8192 + 424)) 3
    put64 "$f" $((8192 + 432)) 12288
}

image "$dir/image/plain" 2 3

# One chunk of 8192 bytes (the meta page and the data page, zeros), stored as literals only: 8 bytes
# cmp_len, the stream, over three pages (stream pages 3..5 after the header page at 2).
# LZ4 block: token 0xF0 (15 literals and more, no match), 8192 - 15 = 32 * 255 + 17, the literals.
image "$dir/image/lz4" $((4 | 16)) 4
put64 "$dir/image/lz4" 12288 $((1 + 32 + 1 + 8192))
bytes "$dir/image/lz4" $((12288 + 8)) 360
head -c 32 /dev/zero | tr '\0' '\377' | dd of="$dir/image/lz4" bs=1 seek=$((12288 + 9)) conv=notrunc 2> /dev/null
bytes "$dir/image/lz4" $((12288 + 41)) 021
# The same without the CRC32 flag (no checksum to match: the fuzzer reaches the end).
cp "$dir/image/lz4" "$dir/image/lz4-nocrc"
put64 "$dir/image/lz4-nocrc" 4072 16
puts "$dir/image/lz4-nocrc" 4076 SWAPSPACE2

# LZO1X: instruction 0, 32 zero bytes and 14 (18 + 32 * 255 + 14 = 8192 literals), the literals,
# then the end-of-stream marker 0x11 0 0.
image "$dir/image/lzo" 4 4
put64 "$dir/image/lzo" 12288 $((1 + 32 + 1 + 8192 + 3))
bytes "$dir/image/lzo" $((12288 + 8 + 33)) 016
bytes "$dir/image/lzo" $((12288 + 8 + 34 + 8192)) 021 000 000
cp "$dir/image/lzo" "$dir/image/lzo-nocrc"
put64 "$dir/image/lzo-nocrc" 4072 0
puts "$dir/image/lzo-nocrc" 4076 SWAPSPACE2

# CMDLINE NUL CONF
args() { printf '%s\0%s' "$2" "$3" > "$dir/args/$1"; }
args typical "BOOT_IMAGE=/vmlinuz root=/dev/vda ro rd.thaw.device=UUID=1234 rd.thaw.key=fwcfg:opt/thaw/key,keyfile:/k rd.thaw.timeout=7 resume_offset=34816 quiet" \
    "# thaw.conf
device=UUID=abcd
key=\"tpm2,passphrase\"
name=thaw-swap
timeout=12
offset=8
mismatch=keep
verify=1
"
args flags 'noresume hibernate=nocompress acpi_sleep=s3_bios,s4_hwsig rd.thaw=0 rd.thaw.verify=1 rd.thaw.mismatch=discard -- rd.thaw.device=x' ''
args quotes 'rd.thaw.name="a b" "rd.thaw.key=keyfile:/x y" rd.thaw.unknown=1 rd.thaw.timeout=99999' 'bad line
=empty key
timeout = 3600 '
# The image ticket's token (fuzz_keysrc parses each input as one too).
args ticket '{"type":"thaw-ticket","keyslots":[],"thaw-ticket":1,"id":"000102030405060708090a0b0c0d0e0f","time":1700000000,"boot-id":"0f6f3c1e-5b2a-4c1d-9e8f-112233445566","kernel":"6.1.0-28-amd64","writer":"thaw","fs":[{"uuid":"d6b0c3a2-1f2e-4b3c-8d4e-5f6a7b8c9d0e","type":"ext4","known":true,"mnt-count":7,"mtime":1699999000,"wtime":1699999500,"kbytes-written":123456789,"journal":true,"journal-seq":4242,"generation":0}],"tpm-counter":99,"mac":"09e7b33a875be07de10af7119ff5e45673d4a676dfe705c2d61c404775537a85","state":"consumed","state-time":1700000100,"state-why":"resumed"}' ''

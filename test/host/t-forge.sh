#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Host tests of test/luks2-forge.py, the attacker's tool of the evil-* QEMU scenarios: each forgery
# of a header made by thaw setup loads in libcryptsetup (both copies, checksums right) and says
# what it forged; the forged cipher_null keyslot takes any passphrase where this host lets
# libcryptsetup run cipher_null (AF_ALG; else evil-null-keyslot shows it in the guest).
set -u

: "${THAW:?THAW must name the thaw binary}"
# shellcheck source=test/host/lib.sh
. "$(dirname "$0")/lib.sh"
forge=$top/test/luks2-forge.py
need cryptsetup python3 truncate
fixture_root

# dumped NAME IMG TEXT...: luksDump of IMG loads and shows every TEXT.
dumped() {
    name=$1 dump=$2
    shift 2
    if ! cryptsetup luksDump "$dump" > "$tmp/out" 2>&1; then
        not_ok "$name (luksDump failed)"
        return
    fi
    for t in "$@"; do
        if ! grep -qF -- "$t" "$tmp/out"; then
            echo "# no \"$t\" in luksDump"
            not_ok "$name"
            return
        fi
    done
    ok "$name"
}
epoch() { cryptsetup luksDump "$1" | sed -n 's/^Epoch:[[:space:]]*//p'; }

img=$tmp/swap.img
thaw_image "$img" 32M --yes || abort "thaw setup --format-only"
e0=$(epoch "$img")

cp "$img" "$tmp/null-seg.img"
check "--segment-cipher cipher_null-ecb" python3 "$forge" "$tmp/null-seg.img" --segment-cipher cipher_null-ecb
dumped "the forged header loads and its segment is cipher_null-ecb" "$tmp/null-seg.img" "cipher: cipher_null-ecb"
if [ "$(epoch "$tmp/null-seg.img")" -eq $((e0 + 1)) ]; then ok "the sequence id (Epoch) went up by one"; else
    : > "$tmp/out"
    not_ok "the sequence id (Epoch) went up by one"
fi
# Without the primary's magic libcryptsetup reads the secondary copy: it was rewritten too.
cp "$tmp/null-seg.img" "$tmp/second.img"
printf 'XXXX' | dd of="$tmp/second.img" bs=1 conv=notrunc 2> /dev/null
dumped "the secondary copy alone loads and is forged the same" "$tmp/second.img" "cipher: cipher_null-ecb"
check "the real key still passes keyslot 0 (keyslots untouched)" \
    cryptsetup open --test-passphrase --key-file "$root/key" -S 0 "$tmp/null-seg.img"
check "--print-data-offset names the data area" sh -c \
    "[ \"\$(python3 '$forge' '$tmp/null-seg.img' --print-data-offset)\" = 16777216 ]"

cp "$img" "$tmp/cost.img"
check "--digest-iterations 4294967295" python3 "$forge" "$tmp/cost.img" --digest-iterations 4294967295
dumped "the forged header loads with the digest's iterations at 2^32-1" "$tmp/cost.img" "Iterations: 4294967295"

cp "$img" "$tmp/null-slot.img"
check "--null-keyslot" python3 "$forge" "$tmp/null-slot.img" --null-keyslot "$tmp/vk"
dumped "the forged header loads with a cipher_null keyslot 1 and a copied token" "$tmp/null-slot.img" \
    "1: luks2" "Cipher:     cipher_null-ecb" "1: thaw-keyfile" "Keyslot:    1"
if [ "$(wc -c < "$tmp/vk")" -eq 64 ]; then ok "the attacker's volume key is 512 bits"; else
    : > "$tmp/out"
    not_ok "the attacker's volume key is 512 bits"
fi
if cryptsetup open --test-passphrase --key-file "$root/key" -S 0 "$tmp/null-slot.img" > "$tmp/out" 2>&1; then
    not_ok "the digest is the attacker's: the real key through keyslot 0 no longer passes it"
else
    ok "the digest is the attacker's: the real key through keyslot 0 no longer passes it"
fi
printf 'any passphrase at all' > "$tmp/junk"
if python3 -c 'import socket; socket.socket(socket.AF_ALG, socket.SOCK_SEQPACKET, 0)' 2> /dev/null; then
    check "CVE-2025-59054: any passphrase opens the forged keyslot (libcryptsetup $(cryptsetup --version | cut -d' ' -f2))" \
        cryptsetup open --test-passphrase --key-file "$tmp/junk" -S 1 "$tmp/null-slot.img"
else
    ok "any passphrase opens the forged keyslot # SKIP no AF_ALG here for libcryptsetup's cipher_null (evil-null-keyslot checks it in the guest)"
fi

finish

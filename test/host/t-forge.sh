#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Host tests of test/luks2-forge.py, the attacker's tool of the evil-* QEMU scenarios: each forgery
# of a header made by thaw setup loads in libcryptsetup (both copies, checksums right) and says
# what it forged; the forged cipher_null keyslot takes any passphrase where this host lets
# libcryptsetup run cipher_null (AF_ALG; else evil-null-keyslot shows it in the guest).
set -u

: "${THAW:?THAW must name the thaw binary}"
here=$(cd "$(dirname "$0")" && pwd)
forge=$here/../luks2-forge.py
for tool in cryptsetup python3 truncate; do
        command -v "$tool" > /dev/null 2>&1 || { echo "# SKIP: $tool missing"; exit 77; }
done

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
mkdir -p "$root/proc/self" "$root/etc"
: > "$root/proc/self/mounts"
: > "$root/proc/swaps"
(umask 077 && head -c 32 /dev/urandom > "$root/key")

n=0
failed=0
ok() {
        n=$((n + 1))
        echo "ok $n - $1"
}
not_ok() {
        n=$((n + 1))
        failed=$((failed + 1))
        echo "not ok $n - $1"
        sed 's/^/#   /' "$tmp/out"
}
# check NAME CMD...: CMD succeeds (its output in $tmp/out).
check() {
        name=$1
        shift
        if "$@" > "$tmp/out" 2>&1; then ok "$name"; else not_ok "$name"; fi
}
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
truncate -s 32M "$img"
if ! "$THAW" setup --device "$img" --key keyfile:/key --format-only --yes --root "$root" > "$tmp/out" 2>&1; then
        not_ok "thaw setup --format-only"
        echo "1..$n"
        exit 1
fi
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
        n=$((n + 1))
        echo "ok $n - any passphrase opens the forged keyslot # SKIP no AF_ALG here for libcryptsetup's cipher_null (evil-null-keyslot checks it in the guest)"
fi

echo "1..$n"
[ "$failed" -eq 0 ]

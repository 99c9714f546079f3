#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Host tests of the LUKS2 header pin on image files: thaw setup pins the header it wrote, a keyslot
# added afterwards by cryptsetup is refused by the pin before any key is tried (thaw enroll, thaw
# inspect say so), and thaw enroll --repin pins the header as it is now.
set -u

: "${THAW:?THAW must name the thaw binary}"
# shellcheck source=test/host/lib.sh
. "$(dirname "$0")/lib.sh"
need cryptsetup
fixture_root
img=$tmp/swap.img
head -c 32 /dev/urandom > "$tmp/other"
run() { "$@" > "$tmp/out" 2> "$tmp/err"; }

check "setup --format-only" thaw_image "$img" 32M --yes
pin=$(sed -n 's/^header=//p' "$root/etc/thaw/thaw.conf")
check "thaw.conf pins the header (header=sha256:...)" sh -c "echo '$pin' | grep -qE '^sha256:[0-9a-f]{64}$'"
check "setup prints the same pin as rd.thaw.header=" grep -qF "rd.thaw.header=$pin" "$tmp/out"
check "inspect: the pinned header is accepted" run "$THAW" inspect "$img" --root "$root"
check "(inspect shows the fingerprint)" grep -qF "fingerprint:    $pin" "$tmp/out"
check "(and the verdict)" grep -qF "header policy:  accepted (thaw profile)" "$tmp/out"
check "enroll --check: the key opens the pinned header" run "$THAW" enroll --device "$img" --check keyfile:/key --root "$root"

# Another tool adds a keyslot after pinning: a cheap PBKDF2 one the policy itself would accept.
cryptsetup luksAddKey -q --pbkdf pbkdf2 --pbkdf-force-iterations 1000 --key-file "$root/key" "$img" "$tmp/other" ||
    { echo "# cryptsetup luksAddKey failed"; exit 1; }
short=$(echo "$pin" | cut -c1-23)
check "enroll --check: refused by the pin before any key" sh -c "! '$THAW' enroll --device '$img' --check keyfile:/key --root '$root' > '$tmp/out' 2> '$tmp/err'"
check "(named: differs from the pinned $short)" grep -qF "differs from the pinned $short (rd.thaw.header=): not the header thaw set up" "$tmp/err"
check "(and how to re-pin)" grep -qF -- "--repin" "$tmp/err"
check "enroll --key: refused too" sh -c "! '$THAW' enroll --device '$img' --key keyfile:/etc/thaw/thaw.conf --unlock keyfile:/key --root '$root' > '$tmp/out' 2> '$tmp/err'"
check "(for the pin, not for another failure)" grep -qF "differs from the pinned $short (rd.thaw.header=): not the header thaw set up" "$tmp/err"
check "inspect: refused, with the reason" sh -c "! '$THAW' inspect '$img' --root '$root' > '$tmp/out' 2> '$tmp/err'"
check "(inspect names the pin)" grep -qF "header policy:  refused: header fingerprint" "$tmp/out"
check "inspect --json: accepted false" sh -c "'$THAW' inspect '$img' --json --root '$root' | grep -q '\"accepted\":false'"

check "enroll --repin" run "$THAW" enroll --device "$img" --repin --root "$root"
new=$(sed -n 's/^header=//p' "$root/etc/thaw/thaw.conf")
check "(a new pin, printed and in thaw.conf)" sh -c "[ '$new' != '$pin' ] && grep -qF 'rd.thaw.header=$new' '$tmp/out'"
check "(one header= line)" test "$(grep -c '^header=' "$root/etc/thaw/thaw.conf")" -eq 1
check "inspect: accepted after --repin" run "$THAW" inspect "$img" --root "$root"
check "enroll --check: opens after --repin" run "$THAW" enroll --device "$img" --check keyfile:/key --root "$root"

# thaw.conf names another device (a /dev path): its pin is not this container's, and enroll says so.
cp "$root/etc/thaw/thaw.conf" "$tmp/conf"
sed -i 's|^device=.*|device=/dev/vdz|' "$root/etc/thaw/thaw.conf"
check "enroll --check with thaw.conf's device= another" run "$THAW" enroll --device "$img" --check keyfile:/key --root "$root"
check "(says the pin is neither checked nor updated)" grep -qF "device=/dev/vdz is not UUID= of $img: its header= pin is neither checked nor updated here" "$tmp/out" "$tmp/err"
cp "$tmp/conf" "$root/etc/thaw/thaw.conf"

finish

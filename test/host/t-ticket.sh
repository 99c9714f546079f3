#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Host tests of the image ticket's token beside thaw's own on an image file: thaw enroll --list shows
# it as the image ticket (or why it is malformed, escaped), it is never taken for a key source, and
# the header policy and its pin take a header that carries one.
set -u

: "${THAW:?THAW must name the thaw binary}"
# shellcheck source=test/host/lib.sh
. "$(dirname "$0")/lib.sh"
need cryptsetup
fixture_root
img=$tmp/swap.img
run() { "$@" > "$tmp/out" 2>&1; }

thaw_image "$img" 20M --yes || { show "$tmp/out" "$tmp/err"; echo "# thaw setup --format-only failed"; exit 1; }
pin=$(sed -n 's/^header=//p' "$root/etc/thaw/thaw.conf")

mac=09e7b33a875be07de10af7119ff5e45673d4a676dfe705c2d61c404775537a85
ticket='{"type":"thaw-ticket","keyslots":[],"thaw-ticket":1,"id":"000102030405060708090a0b0c0d0e0f",'
ticket=$ticket'"time":1700000000,"boot-id":"0f6f3c1e-5b2a-4c1d-9e8f-112233445566","kernel":"6.1.0-28-amd64",'
ticket=$ticket'"writer":"thaw","fs":[],"mac":"'$mac'","state":"fresh"}'
printf '%s' "$ticket" | cryptsetup token import --token-id 5 "$img" || { echo "# cryptsetup token import failed"; exit 1; }

check "enroll --list" run "$THAW" enroll --device "$img" --list
check "(the ticket is the image ticket, with its state and time)" \
    grep -qE '^5 +thaw-ticket +keyslot - +image ticket: fresh, made 2023-11-14 22:13:20 UTC$' "$tmp/out"
check "(the keyfile token is still listed)" grep -qE '^0 +thaw-keyfile +keyslot 0 +keyfile:/key$' "$tmp/out"
check "inspect: the pinned header with a ticket is accepted" run "$THAW" inspect "$img" --root "$root"
check "(the fingerprint is the pinned one)" grep -qF "fingerprint:    $pin" "$tmp/out"
check "enroll --check: the key opens it" run "$THAW" enroll --device "$img" --check keyfile:/key --root "$root"

# A consumed one, then one an attacker wrote: the reason is shown escaped.
printf '%s' "$ticket" | sed 's/"state":"fresh"/"state":"consumed","state-time":1700000100,"state-why":"resumed"/' |
    cryptsetup token import --token-id 5 --token-replace "$img" || { echo "# token import failed"; exit 1; }
check "enroll --list: consumed" run "$THAW" enroll --device "$img" --list
check "(consumed)" grep -qE '^5 +thaw-ticket +keyslot - +image ticket: consumed, made 2023-11-14 22:13:20 UTC$' "$tmp/out"
printf '%s' "$ticket" | sed 's/"fs":\[\]/"fs":[],"x\\u001b[2J":1/' |
    cryptsetup token import --token-id 5 --token-replace "$img" || { echo "# token import failed"; exit 1; }
check "enroll --list: a malformed ticket" run "$THAW" enroll --device "$img" --list
check "(named, escaped)" grep -qF '(malformed image ticket: unknown field "x\x1b[2J")' "$tmp/out"
check "(no raw ESC)" sh -c "! grep -q \"\$(printf '\\033')\" '$tmp/out'"
check "enroll --check: still only the keyfile source" run "$THAW" enroll --device "$img" --check keyfile:/key --root "$root"

finish

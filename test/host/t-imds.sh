#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Host tests of imds:URL sources in the commands, against test/host/imds-server.py on 127.0.0.1 (not
# link-local, so each command needs --allow-url): thaw enroll fetches the key once and adds a
# keyslot whose token names only the source; thaw setup --format-only records allow-url= in
# thaw.conf; without --allow-url nothing is requested and nothing written.
set -u

: "${THAW:?THAW must name the thaw binary}"
# shellcheck source=test/host/lib.sh
. "$(dirname "$0")/lib.sh"
need cryptsetup python3 base64 truncate
fixture_root
mkdir -p "$root/etc/thaw" "$root/dev"
start_imds || exit 1 # the key it hands out: $tmp/served

requests() {
    [ -e "$tmp/requests" ] || { echo 0; return; }
    grep -c "^GET /custom/raw 200$" "$tmp/requests"
}

img=$tmp/swap.img
luks_image "$img" 20M "$root/key" || exit 1

# Not link-local and not allowed: refused before any request, nothing enrolled.
expect "enroll without --allow-url is refused, saying why" 1 \
    "$origin is neither link-local nor an allowed origin" \
    "$THAW" enroll --device "$img" --key "$src" --unlock keyfile:/key --root "$root"
check "no request reached the service" test "$(requests)" -eq 0
expect "and no token was added" 0 "" "$THAW" enroll --device "$img" --list
check "(the device has no thaw-imds token)" sh -c "! grep -q thaw-imds '$tmp/out'"
expect "--allow-url with a path is a usage error" 2 "is not an origin" \
    "$THAW" enroll --device "$img" --key "$src" --allow-url "$origin/custom" --unlock keyfile:/key --root "$root"

# Allowed: fetched once, the keyslot takes the served key, the token names the source only.
expect "enroll $src with --allow-url" 0 "enrolled imds:$origin/custom/raw" \
    "$THAW" enroll --device "$img" --key "$src" --allow-url http://192.0.2.1 --allow-url "$origin" \
    --unlock keyfile:/key --root "$root"
check "the key was fetched once" test "$(requests)" -eq 1
check "the served key opens the device (cryptsetup)" \
    cryptsetup open --test-passphrase --disable-external-tokens --key-file "$tmp/served" "$img"
expect "--list shows the thaw-imds token and its source" 0 "thaw-imds" "$THAW" enroll --device "$img" --list
check "(with the source, headers included)" grep -qF -- "${src#imds:}" "$tmp/out"
cryptsetup luksDump --dump-json-metadata "$img" > "$tmp/luks.json" 2> /dev/null ||
    cryptsetup luksDump "$img" > "$tmp/luks.json"
check "no token holds the key (raw base64 or hex)" sh -c \
    "! grep -qF -e '$(base64 -w0 < "$tmp/served")' -e '$(od -An -tx1 -v "$tmp/served" | tr -d ' \n')' '$tmp/luks.json'"
expect "--check: the key from $src opens it" 0 "opens" \
    "$THAW" enroll --device "$img" --check "$src" --allow-url "$origin" --root "$root"

# thaw setup records the allowed origin for the boot.
img2=$tmp/swap2.img
truncate -s 20M "$img2"
expect "setup --format-only without --allow-url writes nothing" 1 "neither link-local nor an allowed origin" \
    "$THAW" setup --device "$img2" --key "$src" --format-only --root "$root"
check "(no thaw.conf)" test ! -e "$root/etc/thaw/thaw.conf"
expect "setup --format-only with --allow-url" 0 "" \
    "$THAW" setup --device "$img2" --key "$src" --allow-url "$origin" --format-only --root "$root"
check "thaw.conf has allow-url=$origin" grep -qx "allow-url=$origin" "$root/etc/thaw/thaw.conf"
check "the served key opens the new device" \
    cryptsetup open --test-passphrase --disable-external-tokens --key-file "$tmp/served" "$img2"

finish

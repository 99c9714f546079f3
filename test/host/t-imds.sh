#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Host tests of imds:URL sources in the commands, against test/host/imds-server.py on 127.0.0.1 (not
# link-local, so each command needs --allow-url): thaw enroll fetches the key once and adds a
# keyslot whose token names only the source; thaw setup --format-only records allow-url= in
# thaw.conf; without --allow-url nothing is requested and nothing written.
set -u

: "${THAW:?THAW must name the thaw binary}"
for tool in cryptsetup python3 base64 truncate; do
        command -v "$tool" > /dev/null 2>&1 || { echo "# SKIP: $tool missing"; exit 77; }
done
here=$(cd "$(dirname "$0")" && pwd)

tmp=$(mktemp -d) || exit 1
server=""
trap '[ -n "$server" ] && kill "$server" 2> /dev/null; rm -rf "$tmp"' EXIT

root=$tmp/root
mkdir -p "$root/etc/thaw" "$root/dev" "$root/proc/self"
: > "$root/proc/self/mounts"
: > "$root/proc/swaps"
head -c 32 /dev/urandom > "$root/key"
head -c 32 /dev/urandom > "$tmp/served" # the key the metadata service hands out
# The interpreter itself, not a wrapper that may fork (pyenv's shim): $! must be the server.
py=$(python3 -c 'import sys; print(sys.executable)')
"$py" "$here/imds-server.py" "$tmp/port" 120 127.0.0.1 0 "$tmp/requests" "$tmp/served" &
server=$!
i=0
while [ ! -s "$tmp/port" ] && [ "$i" -lt 100 ]; do
        sleep 0.1
        i=$((i + 1))
done
[ -s "$tmp/port" ] || { echo "# the metadata server did not start"; exit 1; }
origin=http://127.0.0.1:$(cat "$tmp/port")
src="imds:$origin/custom/raw;header=Authorization:Bearer%20Oracle;header=X-Thaw:a%20b%2Cc%3Bd%25"

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
        sed 's/^/#   /' "$tmp/out" "$tmp/err" 2> /dev/null
}
check() {
        name=$1
        shift
        if "$@"; then ok "$name"; else not_ok "$name"; fi
}

# expect NAME STATUS TEXT CMD...: CMD exits STATUS and says TEXT on stdout or stderr.
expect() {
        name=$1 want=$2 text=$3
        shift 3
        "$@" > "$tmp/out" 2> "$tmp/err"
        rc=$?
        if [ "$rc" -eq "$want" ] && cat "$tmp/out" "$tmp/err" | grep -qF -- "$text"; then
                ok "$name"
        else
                echo "# exit $rc, wanted $want and \"$text\""
                not_ok "$name"
        fi
}
requests() {
        [ -e "$tmp/requests" ] || { echo 0; return; }
        grep -c "^GET /custom/raw 200$" "$tmp/requests"
}

img=$tmp/swap.img
truncate -s 20M "$img"
cryptsetup luksFormat -q --type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000 \
        --key-file "$root/key" "$img" || { echo "# cannot format $img"; exit 1; }

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

echo "1..$n"
[ "$failed" -eq 0 ]

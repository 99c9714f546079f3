#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Host tests of the TPM2 anti-rollback counter against swtpm: the library's define, read, increment
# and refusals (test_tpm2_counter with THAW_TEST_TCTI), then thaw enroll: tpm2 defines the
# counter with thaw's attributes, --tpm-counter is idempotent, the owner can read but not increment
# it, a wrong auth is refused, a device without a thaw-tpm2 token and an owner password are refused.
set -u

: "${THAW:?THAW must name the thaw binary}"
for tool in swtpm cryptsetup python3 tpm2_nvreadpublic tpm2_nvread tpm2_nvincrement tpm2_changeauth; do
        command -v "$tool" > /dev/null 2>&1 || { echo "# SKIP: $tool missing"; exit 77; }
done
unit=$(dirname "$THAW")/test/unit/test_tpm2_counter
[ -x "$unit" ] || { echo "# SKIP: $unit not built"; exit 77; }

tmp=$(mktemp -d) || exit 1
trap 'stop_tpm; rm -rf "$tmp"' EXIT
# shellcheck source=test/host/swtpm.sh
. "$(dirname "$0")/swtpm.sh"

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
        sed 's/^/#   /' "$tmp/err" "$tmp/out"
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

tpm() { TPM2TOOLS_TCTI=$tcti "$@"; }

# format IMG: a LUKS2 image file opened by $root/key.
format() {
        truncate -s 20M "$1"
        cryptsetup luksFormat -q --type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000 \
                --key-file "$root/key" "$1" || { echo "# cannot format $1"; exit 1; }
}

root=$tmp/root
mkdir -p "$root/etc/thaw" "$root/dev"
head -c 32 /dev/urandom > "$root/key"
img=$tmp/swap.img
format "$img"
printf 'device=%s\nkey=keyfile:/key\n' "$img" > "$root/etc/thaw/thaw.conf"

start_tpm "$tmp/tpm-lib" || { echo "# swtpm did not start"; exit 1; }
expect "library: define, read, increment, idempotent define, wrong auth refused (NO_DA)" 0 "PASSED" \
        env THAW_TEST_TCTI="$tcti" "$unit"
if grep -q SKIPPED "$tmp/out" "$tmp/err"; then
        echo "# the TPM tests were skipped"
        not_ok "library tests ran against the swtpm"
fi

start_tpm "$tmp/tpm-a" || { echo "# swtpm did not start"; exit 1; }
expect "--tpm-counter refused without a thaw-tpm2 token" 1 "has no thaw-tpm2 token" \
        "$THAW" enroll --device "$img" --tpm-counter --tcti "$tcti" --root "$root"
expect "enroll tpm2 defines the counter" 0 "TPM2 counter of $img at NV index 0x01b4" \
        "$THAW" enroll --device "$img" --key tpm2 --tcti "$tcti" --root "$root"
idx=$(sed -n 's/.*at NV index \(0x[0-9a-f]*\), value \([0-9]*\).*/\1/p' "$tmp/err" "$tmp/out" | head -n 1)
value=$(sed -n 's/.*at NV index \(0x[0-9a-f]*\), value \([0-9]*\).*/\2/p' "$tmp/err" "$tmp/out" | head -n 1)
echo "# index $idx, value $value"

tpm tpm2_nvreadpublic "$idx" > "$tmp/pub" 2>&1
if grep -q "friendly: authwrite|nt=0x1|ownerread|authread|no_da|written" "$tmp/pub" &&
        grep -q "size: 8" "$tmp/pub"; then
        ok "attributes: counter, AUTHWRITE, AUTHREAD, OWNERREAD, NO_DA, written, 8 bytes"
else
        sed 's/^/#   /' "$tmp/pub"
        not_ok "attributes: counter, AUTHWRITE, AUTHREAD, OWNERREAD, NO_DA, written, 8 bytes"
fi
got=$(tpm tpm2_nvread -C o "$idx" 2> /dev/null | od -An -tu8 --endian=big | tr -d ' ')
if [ -n "$value" ] && [ "$got" = "$value" ]; then
        ok "the owner reads it ($got)"
else
        echo "# owner read \"$got\", thaw said \"$value\""
        not_ok "the owner reads it"
fi
expect "--tpm-counter again: the same index, the value untouched" 0 "at NV index $idx, value $value:" \
        "$THAW" enroll --device "$img" --tpm-counter --tcti "$tcti" --root "$root"
expect "the owner cannot increment it" 1 "" tpm tpm2_nvincrement -C o "$idx"
expect "a wrong auth value cannot increment it" 1 "" tpm tpm2_nvincrement -C "$idx" -P hex:00112233 "$idx"
got=$(tpm tpm2_nvread -C o "$idx" 2> /dev/null | od -An -tu8 --endian=big | tr -d ' ')
if [ -n "$value" ] && [ "$got" = "$value" ]; then
        ok "the refused increments left it at $got"
else
        not_ok "the refused increments left it at $value (it is \"$got\")"
fi

# An owner password (a TPM an administrator took ownership of): thaw says so and defines nothing.
# The thaw-tpm2 token is copied over (no keyslot): tpm2 itself cannot seal under that owner either.
img2=$tmp/swap2.img
format "$img2"
cryptsetup token export --token-id 0 "$img" > "$tmp/token.json" &&
        python3 -c 'import json, sys; t = json.load(open(sys.argv[1])); t["keyslots"] = []; print(json.dumps(t))' \
                "$tmp/token.json" > "$tmp/token2.json" &&
        cryptsetup token import --json-file "$tmp/token2.json" "$img2" || echo "# cannot copy the token"
tpm tpm2_changeauth -c o ownerpass > /dev/null 2>&1 || echo "# tpm2_changeauth failed"
expect "an owner password: the counter is refused with the reason" 1 \
        "the owner hierarchy has a password: thaw defines its counter only under an empty owner authorization" \
        "$THAW" enroll --device "$img2" --tpm-counter --unlock keyfile:/key --tcti "$tcti" --root "$root"

echo "1..$n"
[ "$failed" -eq 0 ]

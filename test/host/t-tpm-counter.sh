#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Host tests of the TPM2 anti-rollback counter against swtpm: the library's define, read, increment
# and refusals (test_tpm2_counter with THAW_TEST_TCTI), then thaw enroll: tpm2 defines the
# counter with thaw's attributes, --tpm-counter is idempotent, the owner can read but not increment
# it, a wrong auth is refused, a device without a thaw-tpm2 token and an owner password are refused.
set -u

: "${THAW:?THAW must name the thaw binary}"
# shellcheck source=test/host/lib.sh
. "$(dirname "$0")/lib.sh"
need swtpm cryptsetup python3 tpm2_nvreadpublic tpm2_nvread tpm2_nvincrement tpm2_changeauth
unit=$(dirname "$THAW")/test/unit/test_tpm2_counter
[ -x "$unit" ] || skip "$unit not built"

tpm() { TPM2TOOLS_TCTI=$tcti "$@"; }

root=$tmp/root
mkdir -p "$root/etc/thaw" "$root/dev"
head -c 32 /dev/urandom > "$root/key"
img=$tmp/swap.img
luks_image "$img" 20M "$root/key" || exit 1
printf 'device=%s\nkey=keyfile:/key\n' "$img" > "$root/etc/thaw/thaw.conf"

start_tpm "$tmp/tpm-lib" || exit 1
expect "library: define, read, increment, idempotent define, wrong auth refused (NO_DA)" 0 "PASSED" \
    env THAW_TEST_TCTI="$tcti" "$unit"
if grep -q SKIPPED "$tmp/out" "$tmp/err"; then
    echo "# the TPM tests were skipped"
    not_ok "library tests ran against the swtpm"
fi

start_tpm "$tmp/tpm-a" || exit 1
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
luks_image "$img2" 20M "$root/key" || exit 1
cryptsetup token export --token-id 0 "$img" > "$tmp/token.json" &&
    python3 -c 'import json, sys; t = json.load(open(sys.argv[1])); t["keyslots"] = []; print(json.dumps(t))' \
        "$tmp/token.json" > "$tmp/token2.json" &&
    cryptsetup token import --json-file "$tmp/token2.json" "$img2" || echo "# cannot copy the token"
tpm tpm2_changeauth -c o ownerpass > /dev/null 2>&1 || echo "# tpm2_changeauth failed"
expect "an owner password: the counter is refused with the reason" 1 \
    "the owner hierarchy has a password: thaw defines its counter only under an empty owner authorization" \
    "$THAW" enroll --device "$img2" --tpm-counter --unlock keyfile:/key --tcti "$tcti" --root "$root"

finish

#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Host tests of the systemd-tpm2 key source against swtpm over its socket TCTI, on a LUKS2 image file
# made by thaw setup and enrolled by the real systemd-cryptenroll (systemd 252): thaw unseals
# systemd's token and its key opens the device; a moved PCR, a fresh TPM and a PIN token are
# refused with the reason. (systemd's own token plugin cannot be the control here: it wants a
# TPM under /sys/class/tpmrm.)
set -u

: "${THAW:?THAW must name the thaw binary}"
for tool in swtpm cryptsetup python3 systemd-cryptenroll tpm2_pcrextend; do
        command -v "$tool" > /dev/null 2>&1 || { echo "# SKIP: $tool missing"; exit 77; }
done

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
        sed 's/^/#   /' "$tmp/out"
}

# expect NAME STATUS TEXT CMD...: CMD exits STATUS and says TEXT (on stdout or stderr).
expect() {
        name=$1 want=$2 text=$3
        shift 3
        "$@" > "$tmp/out" 2>&1
        rc=$?
        if [ "$rc" -eq "$want" ] && grep -qF -- "$text" "$tmp/out"; then
                ok "$name"
        else
                echo "# exit $rc, wanted $want and \"$text\""
                not_ok "$name"
        fi
}

root=$tmp/root
mkdir -p "$root/proc/self" "$root/etc"
: > "$root/proc/self/mounts"
: > "$root/proc/swaps"
(umask 077 && head -c 32 /dev/urandom > "$root/key")

# format IMG: a thaw device (keyfile key) on a new image file.
format() {
        rm -f "$1"
        truncate -s 32M "$1"
        "$THAW" setup --device "$1" --key keyfile:/key --format-only --root "$root" > "$tmp/out" 2>&1
}

img=$tmp/swap.img
start_tpm "$tmp/tpm" || { echo "# swtpm did not start"; exit 1; }
if ! format "$img" || ! systemd-cryptenroll --unlock-key-file="$root/key" --tpm2-device="$tcti" \
        --tpm2-pcrs=7 "$img" > "$tmp/out" 2>&1; then
        not_ok "systemd-cryptenroll enrolls the thaw device"
        echo "1..$n"
        exit 1
fi
ok "systemd-cryptenroll enrolls the thaw device"

# thaw setup pinned the header; systemd-cryptenroll changed it: refused until re-pinned (its
# keyslot passes the header policy, only the pin differs).
expect "the header changed by systemd-cryptenroll is refused by the pin" 1 \
        "differs from the pinned" "$THAW" enroll --device "$img" --check systemd-tpm2 --tcti "$tcti" --root "$root"
expect "thaw enroll --repin pins it" 0 "pinned the LUKS2 header" "$THAW" enroll --device "$img" --repin --root "$root"

expect "thaw unseals the systemd-tpm2 token and its key opens the device" 0 \
        "the key from systemd-tpm2 opens $img" \
        "$THAW" enroll --device "$img" --check systemd-tpm2 --tcti "$tcti" --root "$root"
# Twice: nothing is locked or used up (systemd's tokens have no lock PCR).
expect "and again" 0 "opens $img" "$THAW" enroll --device "$img" --check systemd-tpm2 --tcti "$tcti" --root "$root"

# A device without a systemd-tpm2 token.
other=$tmp/other.img
format "$other"
expect "a device without a systemd-tpm2 token is told apart" 1 "no systemd-tpm2 token on the device" \
        "$THAW" enroll --device "$other" --check systemd-tpm2 --tcti "$tcti" --root "$root"

# A PIN token: systemd 252 binds the PIN with PolicyAuthValue; thaw refuses it, and says so.
pin=$tmp/pin.img
format "$pin"
if NEWPIN=1234 systemd-cryptenroll --unlock-key-file="$root/key" --tpm2-device="$tcti" --tpm2-pcrs=7 \
        --tpm2-with-pin=yes "$pin" > "$tmp/out" 2>&1 &&
        "$THAW" enroll --device "$pin" --repin --root "$root" > "$tmp/out" 2>&1; then
        expect "a PIN token is refused with the reason" 1 "it needs a PIN (enrolled with --tpm2-with-pin=yes)" \
                "$THAW" enroll --device "$pin" --check systemd-tpm2 --tcti "$tcti" --root "$root"
else
        not_ok "systemd-cryptenroll --tpm2-with-pin=yes enrolls"
fi

# PCR 7 moves (another boot chain): the policy fails and thaw says which PCRs.
if TPM2TOOLS_TCTI=$tcti tpm2_pcrextend \
        7:sha256=0000000000000000000000000000000000000000000000000000000000000001 > "$tmp/out" 2>&1; then
        expect "a moved PCR 7 is refused with the reason" 1 \
                "PCR mismatch: PCRs 7 (sha256) differ from the enrollment in systemd-tpm2 token" \
                "$THAW" enroll --device "$img" --check systemd-tpm2 --tcti "$tcti" --root "$root"
else
        not_ok "tpm2_pcrextend moves PCR 7"
fi

# A fresh TPM (the VM came back on another host): the blob does not load.
start_tpm "$tmp/tpm-new" || { echo "# swtpm did not start"; exit 1; }
expect "a fresh TPM is refused with the reason" 1 "was sealed by another TPM" \
        "$THAW" enroll --device "$img" --check systemd-tpm2 --tcti "$tcti" --root "$root"

echo "1..$n"
[ "$failed" -eq 0 ]

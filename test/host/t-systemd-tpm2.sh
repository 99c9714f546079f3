#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Host tests of the systemd-tpm2 key source against swtpm over its socket TCTI, on a LUKS2 image file
# made by thaw setup and enrolled by the real systemd-cryptenroll (systemd 252): thaw unseals
# systemd's token and its key opens the device; a moved PCR, a fresh TPM and a PIN token are
# refused with the reason. (systemd's own token plugin cannot be the control here: it wants a
# TPM under /sys/class/tpmrm.)
set -u

: "${THAW:?THAW must name the thaw binary}"
# shellcheck source=test/host/lib.sh
. "$(dirname "$0")/lib.sh"
need swtpm cryptsetup python3 systemd-cryptenroll tpm2_pcrextend
fixture_root

img=$tmp/swap.img
start_tpm "$tmp/tpm" || exit 1
if ! thaw_image "$img" 32M || ! systemd-cryptenroll --unlock-key-file="$root/key" --tpm2-device="$tcti" \
    --tpm2-pcrs=7 "$img" > "$tmp/out" 2>&1; then
    abort "systemd-cryptenroll enrolls the thaw device"
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
thaw_image "$other" 32M
expect "a device without a systemd-tpm2 token is told apart" 1 "no systemd-tpm2 token on the device" \
    "$THAW" enroll --device "$other" --check systemd-tpm2 --tcti "$tcti" --root "$root"

# A PIN token: systemd 252 binds the PIN with PolicyAuthValue; thaw refuses it, and says so.
pin=$tmp/pin.img
thaw_image "$pin" 32M
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
start_tpm "$tmp/tpm-new" || exit 1
expect "a fresh TPM is refused with the reason" 1 "was sealed by another TPM" \
    "$THAW" enroll --device "$img" --check systemd-tpm2 --tcti "$tcti" --root "$root"

finish

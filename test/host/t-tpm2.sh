#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Host tests of tpm2 key sources and thaw enroll against swtpm over its socket TCTI, on a LUKS2 image
# file: seal and unseal, the lock PCR, a moved policy PCR, a fresh TPM, malformed tokens, --list and
# --remove, and a non-TPM source enrolled the same way.
set -u

: "${THAW:?THAW must name the thaw binary}"
# shellcheck source=test/host/lib.sh
. "$(dirname "$0")/lib.sh"
need swtpm cryptsetup python3 tpm2_pcrextend tpm2_policypcr

img=$tmp/swap.img
root=$tmp/root
mkdir -p "$root/etc/thaw" "$root/dev"
head -c 32 /dev/urandom > "$root/key"
head -c 32 /dev/urandom > "$root/key2"
luks_image "$img" 20M "$root/key" || exit 1
printf 'device=%s\nkey=keyfile:/key\n' "$img" > "$root/etc/thaw/thaw.conf"

start_tpm "$tmp/tpm-a" || exit 1
expect "enroll tpm2 (the unlock key from thaw.conf's chain)" 0 "enrolled tpm2 on" \
    "$THAW" enroll --device "$img" --key tpm2 --tcti "$tcti" --root "$root"
expect "--list shows the thaw-tpm2 token and its policy" 0 \
    "thaw-tpm2      keyslot 1      tpm2  (policy: PCRs 7+15 of sha256, lock PCR 15 at reset value)" \
    "$THAW" enroll --device "$img" --list

# The policy computed in software equals what a TPM trial session computes for PCR 7's present
# value and PCR 15 at zero.
cryptsetup token export --token-id 0 "$img" > "$tmp/token.json"
want=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["tpm2-policy-hash"])' "$tmp/token.json")
TPM2TOOLS_TCTI=$tcti tpm2_pcrread -Q -o "$tmp/pcr7.bin" sha256:7 &&
    { cat "$tmp/pcr7.bin"; head -c 32 /dev/zero; } > "$tmp/pcrs.bin" &&
    TPM2TOOLS_TCTI=$tcti tpm2_startauthsession -Q -S "$tmp/s.ctx" &&
    TPM2TOOLS_TCTI=$tcti tpm2_policypcr -Q -S "$tmp/s.ctx" -l sha256:7,15 -f "$tmp/pcrs.bin" \
        -L "$tmp/policy.bin" > /dev/null 2> "$tmp/err"
TPM2TOOLS_TCTI=$tcti tpm2_flushcontext "$tmp/s.ctx" > /dev/null 2>&1
got=$(od -An -tx1 -v "$tmp/policy.bin" 2> /dev/null | tr -d ' \n')
if [ -n "$want" ] && [ "$got" = "$want" ]; then
    ok "the token's policy digest is the TPM's PolicyPCR digest ($want)"
else
    echo "# token $want, TPM trial session $got"
    : > "$tmp/out"
    not_ok "the token's policy digest is the TPM's PolicyPCR digest"
fi

expect "unseal: the TPM key opens the device" 0 "the key from tpm2 opens" \
    "$THAW" enroll --device "$img" --check tpm2 --tcti "$tcti"
expect "lock: a second unseal in the same boot is refused (lock PCR 15 moved)" 1 \
    "cannot get the key from tpm2 (PCR mismatch: PCRs 7+15 (sha256) differ from the enrollment" \
    "$THAW" enroll --device "$img" --check tpm2 --tcti "$tcti"

# A new TPM process on the same state: a reboot of the same machine; PCRs are back at reset.
start_tpm "$tmp/tpm-a"
expect "after a TPM reset the key unseals again" 0 "the key from tpm2 opens" \
    "$THAW" enroll --device "$img" --check tpm2 --tcti "$tcti"
start_tpm "$tmp/tpm-a"
TPM2TOOLS_TCTI=$tcti tpm2_pcrextend \
    7:sha256=0000000000000000000000000000000000000000000000000000000000000001 2> "$tmp/err" ||
    echo "# tpm2_pcrextend failed"
expect "a changed policy PCR (7) refuses the unseal" 1 "PCR mismatch: PCRs 7+15 (sha256)" \
    "$THAW" enroll --device "$img" --check tpm2 --tcti "$tcti"

cp -a "$tmp/tpm-a" "$tmp/tpm-copy"
start_tpm "$tmp/tpm-copy"
expect "the TPM state copied to a new process (a migrated vTPM) unseals" 0 "the key from tpm2 opens" \
    "$THAW" enroll --device "$img" --check tpm2 --tcti "$tcti"
start_tpm "$tmp/tpm-fresh"
expect "a fresh TPM: told apart from a PCR mismatch (its storage primary key is not the token's)" 1 \
    "token 0 was sealed by another TPM: this TPM's storage primary key is not the enrollment's" \
    "$THAW" enroll --device "$img" --check tpm2 --tcti "$tcti"

# The storage primary key's name is pinned in the token and checked before the key is used: a
# token naming another primary is refused on the very TPM that sealed it. A token from before the
# name was kept (no tpm2-primary-name) is used as before: it unseals on its TPM, and on another
# one its blob does not load.
python3 - "$tmp/token.json" "$tmp" << 'EOF'
import json, sys
t = json.load(open(sys.argv[1]))
assert len(t["tpm2-primary-name"]) == 68 and t["tpm2-primary-name"].startswith("000b"), t
t["keyslots"] = []
name = t["tpm2-primary-name"]
other = dict(t, **{"tpm2-primary-name": name[:-1] + ("0" if name[-1] != "0" else "1")})
old = {k: v for k, v in t.items() if k != "tpm2-primary-name"}
open(f"{sys.argv[2]}/other-primary.json", "w").write(json.dumps(other))
open(f"{sys.argv[2]}/old-token.json", "w").write(json.dumps(old))
EOF
for c in other-primary old-token; do
    cp "$img" "$tmp/$c.img"
    cryptsetup token remove --token-id 0 "$tmp/$c.img"
    cryptsetup token import --json-file "$tmp/$c.json" --token-id 0 --key-slot 1 "$tmp/$c.img" ||
        echo "# import $c failed"
done
expect "old token without tpm2-primary-name, fresh TPM: its blob does not load" 1 \
    "token 0 was sealed by another TPM: its key does not load on this one (a different or fresh TPM)" \
    "$THAW" enroll --device "$tmp/old-token.img" --check tpm2 --tcti "$tcti"
start_tpm "$tmp/tpm-a"
expect "a token naming another storage primary key is refused on its own TPM" 1 \
    "token 0 was sealed by another TPM: this TPM's storage primary key is not the enrollment's" \
    "$THAW" enroll --device "$tmp/other-primary.img" --check tpm2 --tcti "$tcti"
start_tpm "$tmp/tpm-a"
expect "old token without tpm2-primary-name still unseals on its TPM" 0 "the key from tpm2 opens" \
    "$THAW" enroll --device "$tmp/old-token.img" --check tpm2 --tcti "$tcti"
expect "pcrs= naming a resettable PCR (16-23) is refused at enrollment" 1 \
    "pcrs= names a PCR of 16-23, which software can reset" \
    "$THAW" enroll --device "$img" --key tpm2:pcrs=7+16 --tcti "$tcti" --root "$root"
stop_tpm
expect "no TPM at all: said so, within the wait" 1 "no TPM2 device (/dev/tpmrm0) appeared within the timeout" \
    "$THAW" enroll --device "$img" --check tpm2 --root "$root"

# pty_tpm OUT ARGS...: test/host/pty-tpm.py ARGS in the background, its pty's path into OUT.
pty_tpm() {
    out=$1
    shift
    python3 "$here/pty-tpm.py" "$@" > "$out" 2> "$tmp/err" &
    pty_pid=$!
    wait_for "$out"
}

# The boot's TCTI (device:, as on /dev/tpmrm0) on a swtpm character device behind a pty: each answer
# goes through the bounded wait (polled for, its size asked first, 10-byte answers read whole).
pty_tpm "$tmp/pty" swtpm "$tmp/tpm-pty" 300
luks_image "$tmp/pty.img" 20M "$root/key"
dev_tcti="device:$(head -n 1 "$tmp/pty")"
expect "device TCTI: enroll tpm2" 0 "enrolled tpm2 on" \
    timeout 240 "$THAW" enroll --device "$tmp/pty.img" --key tpm2 --tcti "$dev_tcti" --root "$root"
expect "device TCTI: the key unseals" 0 "the key from tpm2 opens" \
    timeout 240 "$THAW" enroll --device "$tmp/pty.img" --check tpm2 --tcti "$dev_tcti"
expect "device TCTI: then the lock PCR refuses it" 1 "PCR mismatch: PCRs 7+15 (sha256)" \
    timeout 240 "$THAW" enroll --device "$tmp/pty.img" --check tpm2 --tcti "$dev_tcti"
kill "$pty_pid" 2> /dev/null

# A TPM that stops answering: a pty that answers the device TCTI's probe, then nothing more. Each
# TPM command is bounded: the unseal gives up, says so, and the boot would go on to the next source.
# (timeout(1) only keeps a regression from hanging the suite; no time is asserted.)
pty_tpm "$tmp/silent" silent 300
expect "a TPM that never answers: the unseal gives up and says so" 1 \
    "the TPM stopped answering on token 0 (creating the storage primary key: no answer within" \
    timeout 240 "$THAW" enroll --device "$img" --check tpm2 --tcti "device:$(head -n 1 "$tmp/silent")"
kill "$pty_pid" 2> /dev/null

start_tpm "$tmp/tpm-a"
expect "the boot's lock PCR must be the token's" 1 "was sealed with lock PCR 15, but this boot locks PCR 14" \
    "$THAW" enroll --device "$img" --check tpm2:lock=14 --tcti "$tcti"

# Malformed tokens are refused with a reason, and never crash the reader.
python3 - "$tmp/token.json" "$tmp" << 'EOF'
import json, sys
t = json.load(open(sys.argv[1]))
t["keyslots"] = []
cases = {
    "missing": {k: v for k, v in t.items() if k != "tpm2-blob"},
    "type": dict(t, **{"tpm2-lock-pcr": "15"}),
    "big": dict(t, **{"tpm2-blob": "A" * 2000}),
    "extra": dict(t, **{"tpm2-extra": 1}),
}
for name, obj in cases.items():
    open(f"{sys.argv[2]}/bad-{name}.json", "w").write(json.dumps(obj))
EOF
for c in missing:"tpm2-blob missing" type:"tpm2-lock-pcr missing or not a number" \
    big:"tpm2-blob is not a string or is longer than 1368 characters" extra:"unknown field"; do
    bad=${c%%:*}
    cp "$img" "$tmp/bad.img"
    # Only the malformed token: the good one would unseal.
    cryptsetup token remove --token-id 0 "$tmp/bad.img"
    cryptsetup token import --json-file "$tmp/bad-$bad.json" "$tmp/bad.img" || echo "# import $bad failed"
    expect "malformed token ($bad) refused with a reason" 1 "is malformed (${c#*:})" \
        "$THAW" enroll --device "$tmp/bad.img" --check tpm2 --tcti "$tcti"
    expect "--list marks the malformed token ($bad)" 0 "(malformed: ${c#*:})" \
        "$THAW" enroll --device "$tmp/bad.img" --list
done

# Any source enrolls the same way: a keyfile source, authorized by --unlock.
expect "enroll keyfile:/key2 (authorized by --unlock)" 0 "enrolled keyfile:/key2" \
    "$THAW" enroll --device "$img" --key keyfile:/key2 --unlock keyfile:/key --root "$root"
expect "its key opens the device" 0 "the key from keyfile:/key2 opens" \
    "$THAW" enroll --device "$img" --check keyfile:/key2 --root "$root"
expect "--list shows the thaw-keyfile token" 0 "thaw-keyfile   keyslot 2      keyfile:/key2" \
    "$THAW" enroll --device "$img" --list
expect "a wrong unlock key enrolls nothing" 1 "no key of the unlock chain opens" \
    "$THAW" enroll --device "$img" --key keyfile:/key2 --unlock keyfile:/key2x --root "$root"

expect "--remove the tpm2 token" 0 "removed token 0" "$THAW" enroll --device "$img" --remove 0
expect "it is gone from --list" 1 "0" sh -c "'$THAW' enroll --device '$img' --list | grep -c thaw-tpm2"
expect "the tpm2 source finds no token any more" 1 "no thaw-tpm2 token" \
    "$THAW" enroll --device "$img" --check tpm2 --tcti "$tcti"
# The token gone says nothing of its keyslot (the source needs the token's blob): the header must
# have lost keyslot 1, the one --list showed for the tpm2 token, too.
expect "its keyslot (1) is gone from the header" 1 "0" \
    sh -c "cryptsetup luksDump '$img' | grep -c '^  1: luks2'"
cryptsetup luksKillSlot -q --key-file "$root/key2" "$img" 0 2> "$tmp/err" || echo "# luksKillSlot failed"
expect "--remove of the last keyslot's token is refused" 1 "holds the last keyslot" \
    "$THAW" enroll --device "$img" --remove 1
expect "--remove of an absent token" 1 "has no token 7" "$THAW" enroll --device "$img" --remove 7

finish

#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Host tests of libcryptsetup-token-thaw.so with the real cryptsetup on a LUKS2 image file made by
# `thaw setup`: open --token-only --test-passphrase through the plugin, luksDump shows the source,
# and `cryptsetup token import` of malformed thaw tokens is refused with the reason. cryptsetup 2.6
# loads plugins only from its compiled-in directory, so each cryptsetup runs in a private mount
# namespace where build/tokens is bind-mounted over it: the host's directory is never changed.
set -u

: "${THAW:?THAW must name the thaw binary}"
# make check passes THAW_TOKENS (build/tokens); a plugin missing there is a failure, not a skip.
# shellcheck source=test/host/lib.sh
. "$(dirname "$0")/lib.sh"
tokens=${THAW_TOKENS:-$top/build/tokens}
need cryptsetup unshare mount truncate
if [ ! -e "$tokens/libcryptsetup-token-thaw.so" ]; then
    echo "# no plugin in $tokens"
    [ -n "${THAW_TOKENS:-}" ] && exit 1
    exit 77
fi
tokdir=$(cryptsetup --help | sed -n 's/^LUKS2 external token plugin path: \(.*\)\.$/\1/p')
if [ -z "$tokdir" ] || [ ! -d "$tokdir" ]; then
    skip "cryptsetup has no external token support"
fi
# unshare -m makes / private: in a chroot whose / is not a mount point that fails (EINVAL).
if ! why=$(unshare -m true 2>&1); then
    skip "cannot make a mount namespace (not root, or a chroot whose / is no mount point?): $why"
fi

tokens=$(cd "$tokens" && pwd)
fixture_root
# thaw setup reads the key under --root; the plugin reads the path the token names, on this host.
mkdir -p "$root$tmp"
cp "$root/key" "$tmp/key"
cp "$tmp/key" "$root$tmp/key"
img=$tmp/swap.img
truncate -s 32M "$img"

# cs ARGS...: cryptsetup with our plugin directory in place of the system's, in a private mount
# namespace. Killed after $limit seconds: a KDF the plugin should have refused would run for hours.
limit=120
# shellcheck disable=SC2016 # expanded by the inner shell
echo 'mount --bind "$1" "$2" && shift 2 && exec cryptsetup "$@"' > "$tmp/cs"
cs() { timeout "$limit" unshare -m sh "$tmp/cs" "$tokens" "$tokdir" "$@"; }

# A fw_cfg source first, there for setup (under --root) but not on this host: the plugin says the
# source is not here and cryptsetup goes on to the next token.
mkdir -p "$root/sys/firmware/qemu_fw_cfg/by_name/opt/thaw/gone"
head -c 32 /dev/urandom > "$root/sys/firmware/qemu_fw_cfg/by_name/opt/thaw/gone/raw"
if ! "$THAW" setup --device "$img" --key "fwcfg:opt/thaw/gone,keyfile:$tmp/key" --format-only \
    --root "$root" > "$tmp/out" 2>&1; then
    abort "thaw setup --format-only formats the image"
fi
ok "thaw setup --format-only formats the image"

expect "open --token-only --test-passphrase unlocks through the plugin, past the missing fw_cfg" 0 \
    "thaw token 0: cannot read the key from fwcfg:opt/thaw/gone (not found)" \
    cs open -v --token-only --test-passphrase "$img"
# Without plugins the same command has no usable token: the plugin did the unlocking above.
expect "without the plugin no token unlocks it" fail "" \
    cs open --disable-external-tokens --token-only --token-id 1 --test-passphrase "$img"
expect "one token by type, through its own link name" 0 "" \
    cs open --token-only --token-type thaw-keyfile --test-passphrase "$img"

expect "luksDump shows each token's source" 0 "thaw-source: keyfile:$tmp/key" cs luksDump "$img"
if grep -qF "thaw-source: fwcfg:opt/thaw/gone" "$tmp/out" && grep -q "^  1: thaw-keyfile" "$tmp/out"; then
    ok "luksDump lists the fw_cfg token and the keyfile token by type"
else
    not_ok "luksDump lists the fw_cfg token and the keyfile token by type"
fi

head -c 32 /dev/urandom > "$tmp/key"
expect "a wrong key in the file does not unlock" fail "" \
    cs open --token-only --token-id 1 --test-passphrase "$img"
rm -f "$tmp/key"
expect "a missing key file is reported" fail \
    "cannot read the key from keyfile:$tmp/key (not found)" \
    cs open -v --token-only --token-id 1 --test-passphrase "$img"

# token import: the plugin's validate() refuses what thaw itself would refuse, and says why.
bad() {
    printf '%s' "$2" > "$tmp/token.json"
    expect "token import refuses $1" fail "thaw token refused: $3" \
        cs token import --json-file "$tmp/token.json" "$img"
}
bad "a token without thaw-source" '{"type":"thaw-keyfile","keyslots":[]}' '"thaw-source" is missing'
bad "a number as thaw-source" '{"type":"thaw-keyfile","keyslots":[],"thaw-source":7}' \
    '"thaw-source" is not a string'
long=$(head -c 300 /dev/zero | tr '\0' a)
bad "an oversized thaw-source" "{\"type\":\"thaw-keyfile\",\"keyslots\":[],\"thaw-source\":\"keyfile:/$long\"}" \
    '"thaw-source" is longer than 255 bytes'
bad "a type that does not match the source" \
    '{"type":"thaw-fwcfg","keyslots":[],"thaw-source":"keyfile:/k"}' \
    'type "thaw-fwcfg" does not match source "keyfile:/k"'
bad "a malformed source" '{"type":"thaw-fwcfg","keyslots":[],"thaw-source":"fwcfg:../x"}' \
    '"thaw-source" "fwcfg:../x" is not a key source'
bad "an unknown field" \
    '{"type":"thaw-keyfile","keyslots":[],"thaw-source":"keyfile:/k","key":"c2VjcmV0"}' \
    'unknown field "key"'
printf '%s' '{"type":"thaw-keyfile","keyslots":[],"thaw-source":"keyfile:/etc/thaw/key"}' > "$tmp/token.json"
expect "token import takes a well-formed thaw token" 0 "" \
    cs token import --json-file "$tmp/token.json" "$img"
expect "the imported token is dumped" 0 "thaw-source: keyfile:/etc/thaw/key" cs luksDump "$img"

# A malformed token written past the plugin (cryptsetup without plugins does not validate it) and
# bound to the keyfile's keyslot: the plugin refuses it at open, although its key would unlock.
cp "$root$tmp/key" "$tmp/key"
json='{"type":"thaw-keyfile","keyslots":["1"],"thaw-source":"keyfile:'$tmp/key'"'
printf '%s,"x":1}' "$json" > "$tmp/token.json"
expect "a malformed token can be written without the plugin" 0 "" \
    cs token import --disable-external-tokens --token-id 7 --json-file "$tmp/token.json" "$img"
expect "open refuses the malformed token" fail "" cs open --token-only --token-id 7 --test-passphrase "$img"
expect "luksDump says what is wrong with it" 0 'thaw-source: (malformed: unknown field "x")' cs luksDump "$img"
printf '%s}' "$json" > "$tmp/token.json"
expect "the same token, well-formed, can replace it" 0 "" \
    cs token import --token-replace --token-id 7 --json-file "$tmp/token.json" "$img"
expect "and unlocks" 0 "" cs open --token-only --token-id 7 --test-passphrase "$img"

# A thaw-passphrase token: libcryptsetup asks for a PIN, the plugin hands it over as the passphrase.
mkdir -p "$root/dev"
ln -sf /dev/tty "$root/dev/tty"
pw="plugin passphrase"
if python3 "$here/pty-answer.py" "passphrase: " "$pw" "$THAW" enroll --device "$img" --key passphrase \
    --unlock "keyfile:$tmp/key" --root "$root" > "$tmp/out" 2>&1; then
    ok "a passphrase keyslot and its thaw-passphrase token"
else
    not_ok "a passphrase keyslot and its thaw-passphrase token"
fi
# typed_cs ANSWER ARGS...: cs on a terminal where ANSWER is typed at the PIN prompt.
typed_cs() {
    answer=$1
    shift
    python3 "$here/pty-answer.py" "PIN: " "$answer" timeout "$limit" unshare -m sh "$tmp/cs" "$tokens" "$tokdir" \
        "$@" > "$tmp/out" 2>&1
}
if typed_cs "$pw" open --token-only --token-type thaw-passphrase --test-passphrase "$img"; then
    ok "open --token-only asks for the PIN and the passphrase opens it"
else
    not_ok "open --token-only asks for the PIN and the passphrase opens it"
fi
if ! typed_cs "not it" open --token-only --token-type thaw-passphrase --test-passphrase "$img" &&
    grep -q "PIN" "$tmp/out"; then
    ok "a wrong PIN does not"
else
    not_ok "a wrong PIN does not"
fi

# Forged headers (test/luks2-forge.py, as an attacker who can write the disk): the plugin refuses the
# token before it reads any key or hands over the PIN. Each must be refused within seconds.
forge=$top/test/luks2-forge.py
limit=20
# json_of IMG EXPR: EXPR (python, over the header's JSON as m) printed.
json_of() {
    python3 "$forge" "$1" --print-json | python3 -c 'import json, sys; m = json.load(sys.stdin); print('"$2"')'
}
pwtok=$(json_of "$img" '[t for t, v in m["tokens"].items() if v["type"] == "thaw-passphrase"][0]')
pwslot=$(json_of "$img" 'm["tokens"]["'"$pwtok"'"]["keyslots"][0]')

# CVE-2025-59054: a cipher_null keyslot and a copy of the thaw-passphrase token bound to it would take
# any PIN on libcryptsetup < 2.8.1. open() asks for the PIN; open_pin() refuses the header. (This host
# may lack AF_ALG, so cipher_null could not open here anyway: what counts is the refusal.)
cp "$img" "$tmp/null.img"
python3 "$forge" "$tmp/null.img" --null-keyslot "$tmp/vk" --token "$pwtok" > "$tmp/out" 2>&1
nulltok=$(json_of "$tmp/null.img" 'max(int(t) for t, v in m["tokens"].items() if v["type"] == "thaw-passphrase")')
nullslot=$(json_of "$tmp/null.img" 'm["tokens"]["'"$nulltok"'"]["keyslots"][0]')
if ! typed_cs "any PIN at all" open --token-only --token-id "$nulltok" --test-passphrase "$tmp/null.img" &&
    grep -q "PIN" "$tmp/out" &&
    grep -qF "thaw token $nulltok: LUKS2 header refused before any key was tried: keyslot $nullslot area encryption is cipher_null-ecb" "$tmp/out"; then
    ok "open_pin refuses a forged cipher_null keyslot with a copied thaw-passphrase token"
else
    not_ok "open_pin refuses a forged cipher_null keyslot with a copied thaw-passphrase token"
fi

# A keyfile token's keyslot forged to 2,000,000,000 PBKDF2 iterations: hours per try, inside
# systemd-cryptsetup. The key file is not there either: the plugin must refuse before it looks.
cp "$img" "$tmp/iter.img"
python3 "$forge" "$tmp/iter.img" --keyslot-kdf 1:iterations=2000000000 > "$tmp/out" 2>&1
mv "$tmp/key" "$tmp/key.away"
expect "a token bound to a 2e9-iteration keyslot is refused before its key is read" fail \
    "thaw token 7: keyslot 1 is inactive or costs more than thaw would try (cheap PBKDF2 only): token refused before its key was read" \
    cs open -v --token-only --token-id 7 --test-passphrase "$tmp/iter.img"
if grep -qF "cannot read the key" "$tmp/out" "$tmp/err"; then
    not_ok "and the plugin never tried to read the key file"
else
    ok "and the plugin never tried to read the key file"
fi
mv "$tmp/key.away" "$tmp/key"
expect "the same token on the unforged header still unlocks" 0 "" \
    cs open --token-only --token-id 7 --test-passphrase "$img"

# The passphrase's argon2id keyslot forged to 8 GiB (twice the work thaw allows, whatever the RAM):
# the OOM killer's, not a boot's. Refused at open_pin, the PIN never handed over.
cp "$img" "$tmp/argon.img"
python3 "$forge" "$tmp/argon.img" --keyslot-kdf "$pwslot:memory=8388608" > "$tmp/out" 2>&1
if ! typed_cs "$pw" open --token-only --token-id "$pwtok" --test-passphrase "$tmp/argon.img" &&
    grep -qF "thaw token $pwtok: keyslot $pwslot is inactive or costs more than thaw would try (cheap PBKDF2 or argon2 within half the RAM): token refused before its key was read" "$tmp/out"; then
    ok "open_pin refuses a thaw-passphrase token bound to an 8 GiB argon2 keyslot"
else
    not_ok "open_pin refuses a thaw-passphrase token bound to an 8 GiB argon2 keyslot"
fi
limit=120

# libcryptsetup may open tokens of several devices at once (one context per thread): the plugin's
# own code keeps no per-call state in writable static storage (.data or .bss).
obj=$(dirname "$tokens")/pic/obj/crypto/token_plugin.o
if [ -f "$obj" ] && nm "$obj" > "$tmp/out" 2>&1 && ! grep -E ' [bBdD] ' "$tmp/out" > "$tmp/statics"; then
    ok "the plugin keeps no static per-call state"
else
    cp "$tmp/statics" "$tmp/out" 2> /dev/null
    not_ok "the plugin keeps no static per-call state"
fi

# The plugin runs inside someone else's process (cryptsetup, systemd-cryptsetup): it changes none
# of that process's state - no environment, umask, signal disposition or working directory.
if nm -D --undefined-only "$tokens/libcryptsetup-token-thaw.so" > "$tmp/undef" 2>&1 &&
    ! grep -Ew '(setenv|putenv|unsetenv|clearenv|umask|signal|sigaction|chdir|fchdir|setlocale)' \
        "$tmp/undef" > "$tmp/out"; then
    ok "the plugin calls nothing that changes process-wide state (setenv, umask, signals, cwd)"
else
    not_ok "the plugin calls nothing that changes process-wide state (setenv, umask, signals, cwd)"
fi

finish

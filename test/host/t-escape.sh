#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Host tests: text from a LUKS2 header (token types and fields) and from thaw's state file never
# reaches the terminal raw. Tokens with escape sequences are imported into a container made by
# `thaw setup --format-only`; `thaw enroll --list`, `thaw inspect`, `thaw status` and thaw's
# messages must print them as \xNN.
set -u

: "${THAW:?THAW must name the thaw binary}"
# shellcheck source=test/host/lib.sh
. "$(dirname "$0")/lib.sh"
need cryptsetup
fixture_root
mkdir -p "$root/run/thaw"

# clean FILE: FILE holds no control byte but newlines, and no 8-bit CSI (0x9b) or other C1 byte
# (the outputs here are ASCII when escaped).
clean() {
    ! LC_ALL=C tr -d '\n' < "$1" | LC_ALL=C grep -q "$(printf '[\001-\037\177\200-\237]')"
}
# A failed check shows no output: it holds raw control bytes (run shows it through od).
diag() { :; }
# run WHAT CMD...: CMD's stdout and stderr both clean, and the escaped ESC is there.
run() {
    what=$1
    shift
    "$@" > "$tmp/out" 2>&1
    check "$what: no raw control byte" clean "$tmp/out"
    check "$what: the ESC shown as \\x1b" grep -qF '\x1b' "$tmp/out"
    if ! clean "$tmp/out"; then
        od -c "$tmp/out" | sed 's/^/#   /' | head -20
    fi
}

img=$tmp/swap.img
thaw_image "$img" 20M --yes || { show "$tmp/out" "$tmp/err"; echo "# thaw setup --format-only failed"; exit 1; }

# An attacker's tokens: an escape sequence in the type, in thaw's own field, and C1/invalid bytes.
import() {
    printf '%s' "$1" | cryptsetup token import "$img" ||
        { echo "# cryptsetup token import refused $1"; exit 1; }
}
import '{"type":"thaw-\u001b[2Jevil\u0007","keyslots":["0"],"thaw-source":"keyfile:/key"}'
import '{"type":"thaw-keyfile","keyslots":["0"],"thaw-source":"keyfile:/k\u001b]0;owned\u0007ey"}'
import '{"type":"x\u009b2J\u001b[1A","keyslots":[]}'

run "thaw enroll --list" "$THAW" enroll --device "$img" --list
check "thaw enroll --list: the tokens are listed" grep -qF 'thaw-\x1b[2Jevil\x07' "$tmp/out"
"$THAW" inspect "$img" --root "$root" > "$tmp/out" 2>&1
check "thaw inspect: no raw control byte" clean "$tmp/out"
# The LUKS2 UUID is the header's text too: 40 bytes of the binary header that nothing checks.
cp "$img" "$tmp/uuid.img"
if python3 "$top/test/luks2-forge.py" "$tmp/uuid.img" --uuid '\e[2Jevil\e]0;x' > "$tmp/out" 2>&1; then
    run "thaw inspect of a forged UUID" "$THAW" inspect "$tmp/uuid.img" --root "$root"
else
    check "luks2-forge.py --uuid" false
fi
# thaw's messages quote the header's text (a key source from a token) through one log function.
run "thaw enroll --check" "$THAW" enroll --device "$img" --check "$(printf 'keyfile:/k\033]0;owned')" --root "$root"

# The state file thaw resume leaves for the real system can quote the header's text too.
printf 'outcome=no-key\nreason=x\033[2J\ndevice=/dev/vd\033[31mb\nmessage=no key from thaw-\033]0;x\007 (\302\233)\n' \
    > "$root/run/thaw/state"
run "thaw status" "$THAW" status --root "$root"

finish

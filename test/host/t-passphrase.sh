#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Host tests of the recovery passphrase on a LUKS2 image file, typed on a pseudo-terminal: thaw enroll
# --key passphrase (twice, argon2id keyslot), --check passphrase as thaw resume would (the console
# with a screen; a serial-only console refused unless passphrase:console; an argon2 keyslot over half
# of MemTotal refused with its cost, from a fixture /proc/meminfo).
set -u

: "${THAW:?THAW must name the thaw binary}"
# shellcheck source=test/host/lib.sh
. "$(dirname "$0")/lib.sh"
need cryptsetup python3 truncate
fixture_root
mkdir -p "$root/dev" "$root/sys/class/tty/console"
# The console and the administrator's terminal are the pseudo-terminal pty-answer.py runs thaw on.
ln -s /dev/tty "$root/dev/console"
ln -s /dev/tty "$root/dev/tty"
echo "tty1" > "$root/sys/class/tty/console/active"
meminfo() {
    printf 'MemTotal: %s kB\nMemFree: 1000 kB\nAnonPages: 1000 kB\nShmem: 100 kB\n' "$1" > "$root/proc/meminfo"
}
meminfo 4000000

# typed NAME STATUS TEXT PROMPT ANSWER CMD...: CMD, on a terminal where ANSWER is typed at each
# PROMPT, exits STATUS and says TEXT.
typed() {
    typed_name=$1 typed_want=$2 typed_text=$3 prompt=$4 answer=$5
    shift 5
    expect "$typed_name" "$typed_want" "$typed_text" python3 "$here/pty-answer.py" "$prompt" "$answer" "$@"
}

img=$tmp/swap.img
thaw_image "$img" 32M || abort "thaw setup --format-only"

pw="correct horse battery"
typed "enroll --key passphrase asks twice and adds a keyslot" 0 "enrolled passphrase on $img" \
    "passphrase: " "$pw" "$THAW" enroll --device "$img" --key passphrase --unlock keyfile:/key --root "$root"
if cryptsetup luksDump "$img" > "$tmp/out" 2>&1 && grep -q "argon2id" "$tmp/out" &&
    grep -q "Memory: *65536" "$tmp/out" && grep -q "thaw-passphrase" "$tmp/out" && ! grep -qF "$pw" "$tmp/out"; then
    ok "its keyslot is argon2id at 64 MiB, with a thaw-passphrase token and no passphrase in the header"
else
    not_ok "its keyslot is argon2id at 64 MiB, with a thaw-passphrase token and no passphrase in the header"
fi
typed "two different passphrases enroll nothing" 1 "the two passphrases differ" "passphrase: " "$(printf 'one\ntwo')" \
    "$THAW" enroll --device "$img" --key passphrase --unlock keyfile:/key --root "$root"
if [ "$(cryptsetup luksDump "$img" | grep -c 'argon2id')" -eq 1 ]; then
    ok "and no keyslot was added"
else
    not_ok "and no keyslot was added"
fi

typed "the passphrase opens the device, prompted on the console" 0 "the key from passphrase opens $img" \
    "s): " "$pw" "$THAW" enroll --device "$img" --check passphrase --root "$root"
typed "a wrong passphrase does not" 1 "does not open $img (no keyslot takes it)" \
    "s): " "wrong horse" "$THAW" enroll --device "$img" --check passphrase --root "$root"

meminfo 100000
typed "an argon2 keyslot over half of MemTotal is not tried, and the line says why" 1 \
    "keyslot 1 (argon2id) needs 65536 KiB of memory, more than half of the RAM (50000 KiB): not tried" \
    "s): " "$pw" "$THAW" enroll --device "$img" --check passphrase --root "$root"
meminfo 4000000

echo "ttyS0" > "$root/sys/class/tty/console/active"
typed "a serial-only console (a headless VM) is not prompted" 1 "the console is serial only" \
    "s): " "$pw" "$THAW" enroll --device "$img" --check passphrase --root "$root"
if grep -q "Passphrase for" "$tmp/out"; then
    not_ok "not even a prompt was shown"
else
    ok "not even a prompt was shown"
fi
typed "passphrase:console prompts there all the same" 0 "the key from passphrase:console opens $img" \
    "s): " "$pw" "$THAW" enroll --device "$img" --check passphrase:console --root "$root"

finish

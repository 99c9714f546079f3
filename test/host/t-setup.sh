#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Host tests of `thaw setup` refusals on image files: nothing is ever written to a device that is
# mounted, active swap, or holds a signature (without --yes), and a missing key writes nothing.
set -u

: "${THAW:?THAW must name the thaw binary}"
# shellcheck source=test/host/lib.sh
. "$(dirname "$0")/lib.sh"
need blkid mkfs.ext4 mkswap truncate
fixture_root

# untouched NAME IMG TYPE: blkid still reports TYPE ("" for none) and no conf was written.
untouched() {
    type=$(blkid -p -o value -s TYPE "$2" 2> /dev/null)
    if [ "$type" = "$3" ] && [ ! -e "$root/etc/thaw/thaw.conf" ]; then
        ok "$1"
    else
        echo "# TYPE now '$type', wanted '$3'"
        : > "$tmp/err"
        not_ok "$1"
    fi
}

blank() {
    rm -f "$1"
    truncate -s 64M "$1"
}

img=$tmp/swap.img

expect_err "setup without arguments is a usage error" 2 "--device and --key" "$THAW" setup
expect_err "setup with a bad key chain is a usage error" 2 "not a key source chain" \
    "$THAW" setup --device "$img" --key nosuch:x --root "$root"
expect_err "setup with a bad name is a usage error" 2 "not a usable device-mapper name" \
    "$THAW" setup --device "$img" --key keyfile:/key --name a/b --root "$root"
expect_err "setup of a missing device fails" 1 "cannot check $tmp/nodev" \
    "$THAW" setup --device "$tmp/nodev" --key keyfile:/key --root "$root"

blank "$img"
echo "$img /mnt ext4 rw,relatime 0 0" > "$root/proc/self/mounts"
expect_err "setup refuses a mounted device" 1 "refusing to format $img: it is mounted" \
    "$THAW" setup --device "$img" --key keyfile:/key --root "$root"
expect_err "--yes does not override a mount" 1 "it is mounted" \
    "$THAW" setup --device "$img" --key keyfile:/key --yes --root "$root"
untouched "a mounted device is left untouched" "$img" ""
: > "$root/proc/self/mounts"

# /proc/swaps escapes spaces as \040, as the kernel does.
spaced="$tmp/my swap.img"
blank "$spaced"
printf 'Filename\tType\tSize\tUsed\tPriority\n%s\tfile\t65532\t0\t-2\n' \
    "$(printf '%s' "$spaced" | sed 's/ /\\040/g')" > "$root/proc/swaps"
expect_err "setup refuses active swap" 1 "it is active swap" \
    "$THAW" setup --device "$spaced" --key keyfile:/key --root "$root"
untouched "active swap is left untouched" "$spaced" ""
: > "$root/proc/swaps"

mkfs.ext4 -q -F "$img" > /dev/null 2>&1
expect_err "setup refuses a file system" 1 "it holds a signature (ext4)" \
    "$THAW" setup --device "$img" --key keyfile:/key --root "$root"
untouched "the file system is left untouched" "$img" ext4

# --yes gets past the signature check; the missing key then stops it before anything is written.
expect_err "--yes overrides the signature check" 1 "cannot read the key from keyfile:/nokey (not found)" \
    "$THAW" setup --device "$img" --key keyfile:/key,keyfile:/nokey --yes --root "$root"
untouched "a missing key writes nothing" "$img" ext4

blank "$img"
mkswap "$img" > /dev/null 2>&1
expect_err "setup refuses a swap signature" 1 "it holds a signature (swap)" \
    "$THAW" setup --device "$img" --key keyfile:/key --root "$root"
untouched "the swap signature is left untouched" "$img" swap

if command -v cryptsetup > /dev/null 2>&1; then
    if luks_image "$img" 64M "$root/key"; then
        expect_err "setup refuses a LUKS container" 1 "it holds a signature (crypto_LUKS)" \
            "$THAW" setup --device "$img" --key keyfile:/key --root "$root"
        untouched "the LUKS container is left untouched" "$img" crypto_LUKS
    else
        ok "setup refuses a LUKS container # SKIP cryptsetup luksFormat failed"
    fi
else
    ok "setup refuses a LUKS container # SKIP no cryptsetup"
fi

# The device gets mounted while setup waits for a late key source (the fw_cfg driver loading):
# the in-use check runs again right before formatting.
blank "$img"
(
    # The mount comes once setup sleeps in its wait for the fw_cfg driver, after its first in-use
    # check, however long a loaded host takes to get it there (a fixed "sleep 1" was once too short).
    i=0
    while [ "$i" -lt 100 ]; do
        pid=$(pgrep -f -- "setup --device $img --key fwcfg:opt/k" | head -n 1)
        # nanosleep (35) or clock_nanosleep (230): clock_sleep_ms() in the poll loop.
        case $(cut -d' ' -f1 "/proc/$pid/syscall" 2> /dev/null) in 35 | 230) break ;; esac
        sleep 0.1
        i=$((i + 1))
    done
    echo "$img /mnt ext4 rw,relatime 0 0" > "$root/proc/self/mounts"
    mkdir -p "$tmp/late/qemu_fw_cfg/by_name/opt/k"
    cp "$root/key" "$tmp/late/qemu_fw_cfg/by_name/opt/k/raw"
    mkdir -p "$root/sys/firmware"
    mv "$tmp/late/qemu_fw_cfg" "$root/sys/firmware/" # the driver's tree appears at once
) &
expect_err "a device mounted while the key is fetched is refused" 1 \
    "refusing to format $img (checked again after fetching the keys): it is mounted" \
    "$THAW" setup --device "$img" --key fwcfg:opt/k --root "$root"
wait
untouched "the device mounted meanwhile is left untouched" "$img" ""
: > "$root/proc/self/mounts"
rm -rf "$root/sys"

blank "$img"
expect_err "a missing key on a blank device writes nothing" 1 "nothing written to $img" \
    "$THAW" setup --device "$img" --key keyfile:/nokey --root "$root"
untouched "the blank device stays blank" "$img" ""

blank "$img"
mkdir -p "$root/etc"
rm -rf "$root/etc/thaw"
: > "$root/etc/thaw" # /etc/thaw cannot become a directory: thaw.conf could not be written
expect_err "an unwritable /etc/thaw is refused before formatting" 1 "nothing written to $img" \
    "$THAW" setup --device "$img" --key keyfile:/key --yes --root "$root"
rm -f "$root/etc/thaw"
untouched "the device stays blank when /etc/thaw is unwritable" "$img" ""

expect_err "--integrity with --format-only is a usage error" 2 "cannot go with --format-only" \
    "$THAW" setup --device "$img" --key keyfile:/key --integrity --format-only --root "$root"
untouched "--integrity with --format-only writes nothing" "$img" ""

finish

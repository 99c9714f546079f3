# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=sh
# tamper-integrity's guest code (sourced by guest-init.sh, sent as fw_cfg opt/test/guest): one byte
# of the image's ciphertext changed on the raw disk of an --integrity container.

# rd8 DEV BYTE / rd16 DEV BYTE: one byte, a little-endian u16.
rd8() {
    dd if="$1" bs=1 skip="$2" count=1 2> /dev/null | od -An -tu1 | tr -d ' '
}
rd16() {
    dd if="$1" bs=1 skip="$2" count=2 2> /dev/null | od -An -tu2 | tr -d ' '
}

# tamper: on an --integrity container, flip one byte of the ciphertext of the image's first data
# page on the raw disk, as someone with the disk but not the key could. Where dm-integrity keeps a
# data sector: drivers/md/dm-integrity.c, get_data_sector() and calculate_device_limits() (6.1).
tamper() {
    dev=$1
    realkey=/sys/firmware/qemu_fw_cfg/by_name/opt/test/realkey/raw
    # Opened writable once, so dm-integrity replays its journal into place, then closed.
    cryptsetup open --key-file "$realkey" --keyfile-size 32 "$dev" thaw-tamper || fail "cannot open $dev"
    map=$(rd32 /dev/mapper/thaw-tamper 4064)
    blk=$(rd32 /dev/mapper/thaw-tamper $((map * 4096 + 8)))
    cryptsetup close thaw-tamper
    seg=$(cryptsetup luksDump "$dev" | sed -n 's/^[[:space:]]*offset: \([0-9]*\) \[bytes\].*/\1/p' | head -n1)
    magic=$(dd if="$dev" bs=1 skip="$seg" count=7 2> /dev/null)
    [ "$magic" = integrt ] || fail "no dm-integrity superblock at byte $seg of $dev"
    li=$(rd8 "$dev" $((seg + 9)))
    tag=$(rd16 "$dev" $((seg + 10)))
    js=$(rd32 "$dev" $((seg + 12)))
    flags=$(rd32 "$dev" $((seg + 24)))
    lspb=$(rd8 "$dev" $((seg + 28)))
    space=504
    [ $((flags & 1)) -eq 0 ] || space=496
    entry=$(((8 + 8 * (1 << lspb) + tag + 7) / 8 * 8))
    per_sector=$((space / entry))
    initial=$((8 + js * ((per_sector * 8 << lspb) + 8)))
    pad=131072
    [ $((flags & 8)) -eq 0 ] || pad=4096
    run=$((((tag << (li - lspb)) + pad - 1) / pad))
    run=$((run * pad / 512))
    sector=$((blk * 8))
    raw=$((seg / 512 + initial + ((sector >> li) + 1) * run + sector))
    off=$((raw * 512 + 64))
    v=$(rd8 "$dev" "$off")
    # shellcheck disable=SC2059 # the format is the octal escape
    printf "$(printf '\\%03o' $((v ^ 1)))" | dd of="$dev" bs=1 seek="$off" conv=notrunc 2> /dev/null
    sync
    say "tampered: byte $off of $dev (first data page, block $blk) was $v"
    cryptsetup open --readonly --key-file "$realkey" --keyfile-size 32 "$dev" thaw-tamper || fail "cannot open $dev"
    if dd if=/dev/mapper/thaw-tamper of=/dev/null bs=4096 skip="$blk" count=1 2> /tmp/dd; then
        say "tampered block reads without error"
    else
        say "tampered block reads: $(tail -n1 /tmp/dd)"
    fi
    cryptsetup close thaw-tamper
}

# hook_inspect (inspect step), thaw.tamper=DISK (with noresume): change the ciphertext of the
# --integrity container on that disk (a copy of the image's, so that this boot's superseding of
# /dev/vdb does not touch it).
hook_inspect() {
    t=$(arg thaw.tamper)
    [ -n "$t" ] && tamper "/dev/$t"
}

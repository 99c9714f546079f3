# SPDX-License-Identifier: LGPL-2.1-or-later
# Real hibernation images made into bad ones, shared by the lz4-mismatch, garbage-header,
# chain-loop, truncated, verify, stale-*, replay-after-resume, ticket-forged and evil-* scenarios.
# shellcheck shell=bash
#
# One hibernate boot makes a real image (with thaw.after=write: a system resumed from it writes
# files, as a real one would); its swap disk is copied as it is, with its fresh ticket
# (swap-pristine.img). Then one noresume boot opens further copies with the real key (the test-only
# fw_cfg entry) and crafts one defect into each (guest-init.sh's craft(); "plain" is the image
# decrypted in place, evil-cipher-null's attacker's image). That boot goes on with the image on
# /dev/vdb present, so it supersedes swap.img's ticket: swap.img is kept as that boot left it, and
# is never resumable. All are cached in $TQ_CACHE/images/KEY, KEY from every input of the image, so
# a run of the scenarios pays for them once.
# Source after lib.sh, call after tq_prepare and tq_workdir.

TQ_CRAFTS=(lz4 garbage loop plain flip uts)

# Makes the cache entry in $1 ($TQ_WORK is $1 meanwhile, so the boots' logs stay there too).
tq_crafted_build() {
    local dir=$1 work=$TQ_WORK fails=$TQ_FAILS i craft=() disks=() extra=() letters=(c d e f g h i)
    local guest=$TQ_GUEST
    rm -rf "$dir"
    mkdir -p "$dir"
    cp --sparse=always "$work/root.img" "$work/swap.img" "$work/key" "$dir/"
    TQ_WORK=$dir
    # The images are shared: whichever scenario makes them, its own guest code is not sent.
    TQ_GUEST=
    tq_hibernate_boot hibernate thaw.after=write
    cp --sparse=always "$dir/swap.img" "$dir/swap-pristine.img"
    tq_check "hibernate: the image's ticket is on the swap disk, fresh" \
        test "$(tq_ticket_get "$dir/swap-pristine.img" state)" = fresh
    tq_log "hibernate: $(grep -F 'thaw: wrote the image' "$dir/hibernate.log" | sed 's/.*thaw: //' | head -n1)"
    for i in "${!TQ_CRAFTS[@]}"; do
        cp --sparse=always "$dir/swap.img" "$dir/swap-${TQ_CRAFTS[i]}.img"
        disks+=(-drive "file=$dir/swap-${TQ_CRAFTS[i]}.img,if=virtio,format=raw")
        # vda is the root, vdb the image, the copies follow in order.
        craft+=("vd${letters[i]}:${TQ_CRAFTS[i]}")
    done
    extra=("${TQ_QEMU_EXTRA[@]}")
    TQ_QEMU_EXTRA=("${disks[@]}")
    tq_boot_checked craft inspect "$dir/key" noresume "thaw.craft=$(IFS=,; echo "${craft[*]}")"
    TQ_QEMU_EXTRA=("${extra[@]}")
    for i in "${TQ_CRAFTS[@]}"; do
        tq_check "craft: $i crafted on a copy of the image" tq_has craft "THAW-TEST: crafted $i on"
    done
    tq_check "craft: no craft said it failed" tq_lacks craft "THAW-TEST: craft: "
    TQ_WORK=$work
    TQ_GUEST=$guest
    if ((TQ_FAILS == fails)); then
        touch "$dir/.done"
    else
        # The next scenario starts the cache afresh: the scenario's own logs keep what went wrong.
        cp "$dir"/*.log "$work/"
    fi
}

# tq_crafted_image KIND: $TQ_WORK's root.img, key and swap.img become those of the cached image,
# the swap disk crafted as KIND (one of TQ_CRAFTS, or "pristine" for the image as written, its
# ticket fresh). TQ_CRAFTED is the cache entry (craft.log says what the crafting boot saw).
tq_crafted_image() {
    local kind=$1 key dir swap
    # The image's inputs: this file, the guest's init, harness.sh (its boots make the image: the
    # kernel's arguments, QEMU's devices), the initramfs and the root image (named by their own
    # keys, cache.sh among their inputs) and the boots' settings.
    key=$(tq_hash "${BASH_SOURCE[0]}" "$TQ_REPO/test/qemu/guest-init.sh" "$TQ_REPO/test/qemu/harness.sh" \
        <(echo "$TQ_INITRD $TQ_ROOT_BASE $TQ_MEM $TQ_SMP $TQ_CPU $TQ_SWAP_MIB $TQ_WORKLOAD_MIB ${TQ_CRAFTS[*]}"))
    dir=$TQ_CACHE/images/$key
    # shellcheck disable=SC2034 # read by the scenarios
    TQ_CRAFTED=$dir
    mkdir -p "$TQ_CACHE/images"
    exec 9> "$TQ_CACHE/images/.lock"
    flock 9
    if [[ -e $dir/.done ]]; then
        tq_log "image from the cache ($dir)"
    else
        find "$TQ_CACHE/images" -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} +
        tq_log "making the shared image and its crafted copies (cached in $dir)"
        tq_crafted_build "$dir"
    fi
    swap=$dir/swap-$kind.img
    [[ $kind == pristine ]] && swap=$dir/swap-pristine.img
    if [[ -e $dir/.done ]]; then
        cp --sparse=always "$dir/root.img" "$dir/key" "$TQ_WORK/"
        cp --sparse=always "$swap" "$TQ_WORK/swap.img"
    fi
    exec 9>&-
    [[ -e $dir/.done ]] || { tq_log "no image to craft from"; tq_finish; }
}

# tq_refused NAME TEXT: boot NAME (step inspect) refused the image before the handoff with TEXT in
# its one-line reason, did not crash, kept the image, and the real system's thaw status says so.
tq_refused() {
    local n=$1 why=$2
    tq_check "$n: thaw refused before handoff: $why" \
        tq_has "$n" "thaw: not resuming the image on /dev/mapper/thaw-swap: $why"
    tq_check "$n: the message says the image is kept and the boot goes on" \
        tq_has "$n" "image kept, mapping closed, boot continues without resume"
    tq_check "$n: no handoff" tq_lacks "$n" "thaw: resuming from"
    tq_check "$n: the kernel never saw the image" tq_lacks "$n" "PM: hibernation: resume from hibernation"
    tq_check "$n: thaw resume exited normally (no crash)" tq_lacks "$n" "thaw resume exited with status"
    tq_check "$n: the boot went on to the real init" tq_has "$n" "THAW-TEST: fresh boot step=inspect"
    tq_check "$n: the mapping is not open" tq_has "$n" "THAW-TEST: mapping absent"
    tq_check "$n: the image is still on disk (S1SUSPEND)" tq_has "$n" "THAW-TEST: image signature: S1SUSPEND"
    tq_check "$n: thaw status in the real system: the image was kept" \
        tq_has "$n" "THAW-TEST: status: At boot, thaw resume: an image this machine cannot resume was kept"
    # The boot went on with the image there: never resumable from now on.
    tq_check "$n: the image's ticket was superseded by this boot" tq_superseded "$n" '[^)]+'
    tq_log "$n: $(grep -F 'thaw: not resuming' "$TQ_WORK/$n.log" | sed 's/.*thaw: //' | head -n1)"
}

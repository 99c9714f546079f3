# SPDX-License-Identifier: LGPL-2.1-or-later
# Attacks on the LUKS2 header of the swap disk, made offline with test/luks2-forge.py by someone who
# can write the disk but has no key; shared by the evil-* scenarios.
# shellcheck shell=bash
#
# Source after lib.sh (and crafted.sh). tq_forge edits $TQ_WORK/swap.img; tq_evil_boot boots it once
# (step inspect) and tq_header_refused checks what a user would: thaw's one refusal line, nothing
# unlocked or resumed, the boot went on, thaw status says bad-header, the disk not written.

TQ_FORGE=${TQ_FORGE:-$TQ_REPO/test/luks2-forge.py}

# tq_forge ARGS...: luks2-forge.py on this run's swap disk; the forged header must still load.
tq_forge() {
    python3 "$TQ_FORGE" "$TQ_WORK/swap.img" "$@" || tq_die "luks2-forge.py $* failed"
    cryptsetup luksDump "$TQ_WORK/swap.img" > "$TQ_WORK/forged.dump" 2>&1 \
        || tq_die "the forged header does not load in cryptsetup: $(tail -n1 "$TQ_WORK/forged.dump")"
}

tq_disk_sum() { sha256sum < "$TQ_WORK/swap.img" | cut -c1-64; }

# tq_evil_boot NAME KEYFILE [EXTRA-CMDLINE...]: one boot (step inspect) of the forged disk; records
# the disk's hash before and after in TQ_SUM_BEFORE / TQ_SUM_AFTER.
tq_evil_boot() {
    local name=$1 key=$2
    shift 2
    TQ_SUM_BEFORE=$(tq_disk_sum)
    tq_boot_checked "$name" inspect "$key" "$@"
    TQ_SUM_AFTER=$(tq_disk_sum)
}

# tq_header_refused NAME WHY: thaw refused the header before any key was tried, naming WHY, and
# nothing happened to the disk or the boot.
tq_header_refused() {
    local n=$1 why=$2
    tq_check "$n: thaw refused the header before any key was tried: $why" \
        tq_has "$n" "refused before any key was tried: $why"
    tq_check "$n: the line says nothing was unlocked and the boot goes on" \
        tq_has "$n" "; nothing unlocked, boot continues without resume"
    tq_check "$n: no key unlocked the device" tq_lacks "$n" "thaw: unlocked "
    tq_check "$n: no mapping in the booted system" tq_has "$n" "THAW-TEST: mapping absent"
    tq_check "$n: no handoff" tq_lacks "$n" "thaw: resuming from"
    tq_check "$n: the kernel never saw an image" tq_lacks "$n" "PM: hibernation: resume from hibernation"
    tq_check "$n: no restored system" tq_lacks "$n" "Restarting tasks"
    tq_check "$n: thaw resume exited normally (no crash)" tq_lacks "$n" "thaw resume exited with status"
    tq_check "$n: the boot went on to the real init" tq_has "$n" "THAW-TEST: fresh boot step=inspect"
    tq_check "$n: no swap in use in the booted system" tq_lacks "$n" "THAW-TEST: swaps in use: 1"
    tq_check "$n: thaw status: the outcome is bad-header" tq_has "$n" "THAW-TEST: state: outcome=bad-header"
    tq_check "$n: thaw status shows the refusal" \
        tq_has "$n" "THAW-TEST: status: Details: LUKS2 header of /dev/vdb refused before any key was tried"
    tq_check "$n: thaw wrote nothing to the forged disk (sha256 before and after the boot)" \
        test "$TQ_SUM_BEFORE" = "$TQ_SUM_AFTER"
    tq_log "$n: $(grep -F 'refused before any key was tried' "$TQ_WORK/$n.log" | grep -v THAW-TEST |
        sed 's/.*thaw: //' | head -n1)"
    tq_log "$n: thaw's lines: $(grep -F 'thaw: ' "$TQ_WORK/$n.log" | grep -v THAW-TEST | sed 's/.*thaw: //' |
        head -n4 | tr '\n' '|')"
}

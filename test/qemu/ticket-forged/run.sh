#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ticket-forged: someone with the disk but not the key edits the image's ticket offline (its time,
# an authenticated field, an hour earlier), with cryptsetup on the host as anyone could. The
# ticket's MAC no longer verifies: thaw must refuse the image, hand nothing over, drop it and let
# the boot go on.
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=test/qemu/crafted.sh
. "$(dirname "$0")/../crafted.sh"

tq_prepare
tq_workdir ticket-forged
tq_crafted_image pristine

img=$TQ_WORK/swap.img
id=$(tq_ticket_id "$img")
time=$(tq_ticket_get "$img" time)
tq_check "the image has a thaw-ticket token (${id:-none}), with a time (${time:-none})" test -n "$id" -a -n "$time"
cryptsetup token export --token-id "${id:-0}" "$img" > "$TQ_WORK/ticket.json" 2> "$TQ_WORK/forge.log"
python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))
t["time"] -= 3600
json.dump(t, open(sys.argv[2], "w"), separators=(",", ":"))' "$TQ_WORK/ticket.json" "$TQ_WORK/forged.json" \
    2>> "$TQ_WORK/forge.log"
cryptsetup token import --token-id "${id:-0}" --token-replace --json-file "$TQ_WORK/forged.json" "$img" \
    >> "$TQ_WORK/forge.log" 2>&1
tq_check "forged: the ticket's time is an hour earlier, everything else as it was" \
    test -n "$time" -a "$(tq_ticket_get "$img" time)" = "$((${time:-0} - 3600))" \
    -a "$(tq_ticket_get "$img" mac)" = "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["mac"])' \
        "$TQ_WORK/ticket.json" 2> /dev/null)"
tq_check "forged: the ticket still says fresh" test "$(tq_ticket_get "$img" state)" = fresh
[[ -s $TQ_WORK/forge.log ]] && sed 's/^/#   forge: /' "$TQ_WORK/forge.log" >&2

tq_boot_checked forged inspect "$TQ_WORK/key"
tq_stale forged "its ticket does not verify \(edited, or not made with this volume's key\)"
tq_finish

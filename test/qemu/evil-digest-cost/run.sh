#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# evil-digest-cost: no header can stall the boot. Offline, the digest of the swap disk's LUKS2 header
# asks for 2^32-1 PBKDF2 iterations (minutes to hours per key tried under TCG). thaw must refuse
# the header, naming the digest, within seconds and well within rd.thaw.timeout=, and the boot go on.
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=test/qemu/crafted.sh
. "$(dirname "$0")/../crafted.sh"
# shellcheck source=test/qemu/evil.sh
. "$(dirname "$0")/../evil.sh"

# Without the policy the boot hangs in the digest: stop it after 150 s, not the usual 300.
TQ_BOOT_TIMEOUT=150
tq_prepare
tq_workdir evil-digest-cost
tq_crafted_image pristine
tq_forge --digest-iterations 4294967295
tq_check "forged: the digest asks for 2^32-1 iterations" grep -qF "Iterations: 4294967295" "$TQ_WORK/forged.dump"
# Its guest.sh: no look with cryptsetup and the real key, which would hang in the digest too.
tq_evil_boot cost "$TQ_WORK/key" rd.thaw.timeout=60
tq_header_refused cost "digest 0 asks for 4294967295 PBKDF2 iterations"
start=$(tq_time cost "running thaw resume")
refused=$(tq_time cost "refused before any key was tried")
secs=$(awk -v a="${start:-0}" -v b="${refused:-999}" 'BEGIN { printf "%.2f", b - a }')
tq_check "cost: refused ${secs} s after thaw resume started (under 5 s; rd.thaw.timeout=60)" \
    awk -v s="$secs" 'BEGIN { exit !(s >= 0 && s < 5) }'
tq_finish

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# tpm-new-host: the VM comes back on a host with a fresh TPM. The TPM key and the fw_cfg key are
# enrolled. With only tpm2 in the chain (no fallback), the TPM refuses with a clear line, the boot
# goes on and the image is kept; that boot went on with the image there, so thaw supersedes its
# ticket (no key needed) and says so. With fw_cfg after tpm2, the TPM is refused with the same line
# and the fw_cfg key unlocks, but the image must now be refused as superseded, dropped, and the boot
# go on with the swap ready (a resume after a boot that went on without it could corrupt the file
# systems it had mounted).
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"

timeout=10
tq_prepare
tq_workdir tpm-new-host
TQ_TPM_STATE=$TQ_WORK/tpm-host-a
# A fresh TPM's storage primary key is not the one the token pins: refused before the blob is tried.
refused="token 0 was sealed by another TPM: this TPM's storage primary key is not the enrollment's (a \
different or fresh TPM, or something answering in its place)"

tq_hibernate_boot hibernate "thaw.setupkey=tpm2,fwcfg:opt/thaw/key" "rd.thaw.key=tpm2"
tq_check "hibernate: setup enrolled tpm2 and fwcfg" tq_lacks hibernate "cannot read the key from"

TQ_TPM_STATE=$TQ_WORK/tpm-host-b
tq_boot_checked alone inspect "$TQ_WORK/key" "rd.thaw.key=tpm2" "rd.thaw.timeout=$timeout"
tq_check "alone: the TPM refusal says it is another TPM" tq_has alone "$refused"
tq_check "alone: no key source unlocked the device" tq_has alone "thaw: no key source unlocked"
tq_check "alone: no handoff" tq_lacks alone "thaw: resuming from"
tq_check "alone: the boot went on to the real init" tq_has alone "THAW-TEST: fresh boot step=inspect"
tq_check "alone: the mapping is not open" tq_has alone "THAW-TEST: mapping absent"
tq_check "alone: the image is still on disk (S1SUSPEND)" tq_has alone "THAW-TEST: image signature: S1SUSPEND"
tq_check "alone: thaw superseded the image's ticket (no key obtained)" tq_superseded alone no-key
# No key was unsealed, yet the lock PCR moves: nothing after thaw may unseal a thaw-tpm2 key.
tq_check "alone: lock PCR 15 extended although no key was unsealed" \
    tq_has alone "thaw: TPM2 lock PCR 15 extended: no thaw-tpm2 key unseals for the rest of this boot"

rm -rf "$TQ_WORK/tpm-host-b"
tq_boot_checked stale inspect "$TQ_WORK/key" "rd.thaw.key=tpm2,fwcfg:opt/thaw/key"
tq_check "stale: the TPM refused in one line, then fw_cfg was tried" \
    tq_has stale "thaw: cannot get the key from tpm2 ($refused): trying fwcfg:opt/thaw/key"
tq_check "stale: unlocked with the fw_cfg key" tq_has stale "/dev/mapper/thaw-swap with fwcfg:opt/thaw/key"
tq_check "stale: lock PCR 15 extended (another source's key)" \
    tq_has stale "thaw: TPM2 lock PCR 15 extended: no thaw-tpm2 key unseals for the rest of this boot"
tq_stale stale "image of $TQ_DATE_RE was superseded by the boot of $TQ_DATE_RE \(no-key\): resuming it would \
corrupt file systems it had mounted"
tq_finish

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# imds-resume: the key reaches the guest only from an instance metadata service (AWS IMDSv2, token
# flow) on 169.254.169.254. QEMU runs in a network namespace of the test's own (imds-net.sh: a tap
# device that carries the gateway and 169.254.169.254, busybox udhcpd on that tap only, and
# test/host/imds-server.py; no other interface, no route out). fw_cfg's
# opt/thaw/key holds a wrong key. The resume boot brings the link up in the initramfs (DHCP), thaw
# fetches imds:aws:/latest/raw, unlocks, and the system resumes with nothing lost.
set -u
# shellcheck source=test/qemu/lib.sh
. "$(dirname "$0")/../lib.sh"

# shellcheck source=test/qemu/imds-net.sh
. "$(dirname "$0")/../imds-net.sh"

TQ_INITRAMFS_NET=1
tq_prepare
tq_workdir imds-resume
tq_imds_start "$TQ_WORK/key"
TQ_FWCFG_KEY=$TQ_WORK/wrong-key
src=imds:aws:/latest/raw

# setup enrolls the real key (fw_cfg opt/test/realkey); the resume boot names only the imds: source.
tq_hibernate_boot hibernate "thaw.setupkey=fwcfg:opt/test/realkey"
tq_check "hibernate: no network brought up without an imds: source" tq_lacks hibernate "configured by DHCP"
tq_check "hibernate: the metadata service saw no request" test ! -s "$TQ_IMDS_LOG"
tq_resume_boot resume "rd.thaw.key=$src"
tq_check "resume: the initramfs got a DHCP lease" tq_has resume "configured by DHCP for the imds: key source"
tq_check "resume: unlocked with $src" tq_has resume "with $src"
tq_check "resume: the guest took an IMDSv2 token (PUT with a TTL)" grep -qx "PUT /latest/api/token 200" \
    "$TQ_IMDS_LOG"
tq_check "resume: the guest fetched the key with it" grep -qx "GET /latest/raw 200" "$TQ_IMDS_LOG"
tq_log "metadata service requests: $(tr '\n' ';' < "$TQ_IMDS_LOG")"
tq_finish

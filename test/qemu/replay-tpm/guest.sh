# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=sh
# replay-tpm's guest code (sourced by guest-init.sh, sent as fw_cfg opt/test/guest): a second
# hibernation from the resumed system, then the TPM key tried where it must fail.

# hook_resumed: hibernate once more from the resumed system (the second image); its resume comes
# back here and goes on to verify the workload.
hook_resumed() {
    say "hibernating again"
    thaw hibernate --mode shutdown
    say "rehibernate exit $?"
}

# hook_verified, thaw.aftercheck=SRC: in the resumed system, try the key of SRC against /dev/vdb (a
# tpm2 source must fail there: the resume boot locked it).
hook_verified() {
    src=$(arg thaw.aftercheck)
    [ -n "$src" ] || return 0
    thaw enroll --device /dev/vdb --check "$src" > /tmp/aftercheck 2>&1
    rc=$?
    sed 's/^/THAW-TEST: aftercheck: /' /tmp/aftercheck
    say "aftercheck exit $rc"
}

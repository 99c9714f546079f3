# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=sh
# stale-noresume's guest code (sourced by guest-init.sh, sent as fw_cfg opt/test/guest): the step
# write, a boot that goes on as a real one.

# step_write: the root read-write (its journal replayed), a few files written and synced, then the
# root remounted read-only (a clean shutdown).
step_write() {
    mapping_state
    thaw status 2>&1 | sed 's/^/THAW-TEST: status: /'
    [ -r /run/thaw/state ] && sed -n 's/^outcome=/THAW-TEST: state: outcome=/p' /run/thaw/state
    write_files boot
    # As a real shutdown does: the journal checkpointed, the file system clean on disk.
    mount -o remount,ro / && say "root remounted read-only"
}

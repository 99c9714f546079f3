# SPDX-License-Identifier: LGPL-2.1-or-later
# The QEMU harness, the one file its users source: what its two halves share, then the two.
# shellcheck shell=bash
#
# Sourced by test/qemu/*/run.sh, test/qemu/run.sh, test/bench/ (the benchmarks, the soak, the demo),
# kernel/bench/run.sh and test/host/t-harness.sh. cache.sh: what is downloaded and built once and
# kept in $TQ_CACHE (default .cache/qemu in the repository, git-ignored): Debian's kernel and dracut
# (unpacked, never installed), the workload, the initramfs and root images, the Debian package.
# harness.sh: a run: its disks and keys, boots with a hard timeout, the hang watcher and retries,
# swtpm, and the checks read from the serial logs. Nothing here installs a kernel or dracut or
# touches the host's boot.

TQ_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TQ_CACHE=${TQ_CACHE:-$TQ_REPO/.cache/qemu}
TQ_THAW=${TQ_THAW:-$TQ_REPO/build/thaw}
TQ_SKIP=77

tq_log() { printf '# %s\n' "$*" >&2; }
tq_die() { printf '# error: %s\n' "$*" >&2; exit 1; }
tq_skip() { printf '# skip: %s\n' "$*" >&2; exit "$TQ_SKIP"; }

# shellcheck source=test/qemu/cache.sh
. "$TQ_REPO/test/qemu/cache.sh"
# shellcheck source=test/qemu/harness.sh
. "$TQ_REPO/test/qemu/harness.sh"

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Builds Debian's linux-source-6.1 twice for make bench-kernel: as it is (it has the swapoff
# readahead fix) and with kernel/patches/0002 (the fix taken out). One object tree, so the second
# build recompiles mm/swapfile.c and relinks; the two bzImages are cached in .cache/kbench/ under
# a key of the config fragment, the patch, the tree's version and the compiler.
#
# Prints two lines: "fix PATH" and "nofix PATH". Builds run under nice -n 19 (shared machine).
# The source tree is never changed: the build works on a hard-link copy of it, and mm/swapfile.c
# is replaced (not written through the link) before 0002 is applied.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
cache=${KBENCH_CACHE:-$repo/.cache/kbench}
ksrc=${THAW_KERNEL_SRC:-$repo/.cache/kernel-src/linux-source-6.1}
frag=$repo/kernel/bench/qemu.config
revert=$(ls "$repo"/kernel/patches/0002-*.patch)
jobs=${KBENCH_JOBS:-2}

log() { printf '# kbench: %s\n' "$*" >&2; }
die() { printf '# kbench: error: %s\n' "$*" >&2; exit 1; }

# Debian's linux-source-6.1, downloaded (never installed) and unpacked, when it is not there yet.
fetch_source() {
    local dir deb tarball
    [[ -f $ksrc/Makefile ]] && return 0
    dir=$(dirname "$ksrc")
    mkdir -p "$dir/debs"
    log "downloading Debian's linux-source-6.1 (not installing it)"
    if ! (cd "$dir/debs" && apt-get download -q -o APT::Sandbox::User=root linux-source-6.1 >&2); then
        apt-get update -q >&2
        (cd "$dir/debs" && apt-get download -q -o APT::Sandbox::User=root linux-source-6.1 >&2) ||
            die "apt-get download linux-source-6.1 failed"
    fi
    deb=$(find "$dir/debs" -name 'linux-source-6.1_*.deb' -printf '%T@ %p\n' | sort -rn | head -n 1 | cut -d' ' -f2-)
    rm -rf "$dir/deb-root"
    dpkg-deb -x "$deb" "$dir/deb-root" || die "cannot unpack $deb"
    tarball=$(find "$dir/deb-root/usr/src" -name 'linux-source-6.1.tar.*' | head -n 1)
    log "unpacking $(basename "$tarball")"
    tar -xf "$tarball" -C "$dir" || die "cannot unpack $tarball"
    rm -rf "$dir/deb-root"
    [[ -f $ksrc/Makefile ]] || die "$tarball did not give $ksrc"
}

kversion() { sed -n 's/^\(VERSION\|PATCHLEVEL\|SUBLEVEL\) = //p' "$ksrc/Makefile" | paste -sd.; }

fetch_source
key=$( { cat "$frag" "$revert"; kversion; "${CC:-gcc}" --version | head -n 1; } | sha256sum | cut -c1-16)
fix=$cache/bzImage-fix-$key
nofix=$cache/bzImage-nofix-$key
if [[ -s $fix && -s $nofix ]]; then
    log "cached kernels $key ($(kversion))"
    echo "fix $fix"
    echo "nofix $nofix"
    exit 0
fi

mkdir -p "$cache"
src=$cache/src
obj=$cache/obj
# The hard-link copy and the object tree belong to one source tree.
if [[ $(cat "$cache/src.from" 2> /dev/null) != "$(readlink -f "$ksrc") $(kversion)" ]]; then
    log "hard-link copy of $ksrc"
    rm -rf "$src" "$obj" "$cache/src.from"
    cp -al "$ksrc" "$src" 2> /dev/null || cp -a "$ksrc" "$src"
    echo "$(readlink -f "$ksrc") $(kversion)" > "$cache/src.from"
fi
mkdir -p "$obj"

kmake() { nice -n 19 make -C "$src" O="$obj" ARCH=x86_64 -j"$jobs" "$@"; }

# mm/swapfile.c as Debian ships it (a new file, not a write through the hard link); a new mtime
# whenever it changes, so make rebuilds it.
restore_swapfile() {
    cmp -s "$ksrc/mm/swapfile.c" "$src/mm/swapfile.c" ||
        cp --remove-destination "$ksrc/mm/swapfile.c" "$src/mm/swapfile.c"
}

restore_swapfile
if [[ $(cat "$obj/.kbench-key" 2> /dev/null) != "$key" ]]; then
    log "configuring: allnoconfig + kernel/bench/qemu.config"
    kmake -s allnoconfig > "$cache/config.log" 2>&1 || die "allnoconfig failed (see $cache/config.log)"
    "$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$frag" >> "$cache/config.log" 2>&1 ||
        die "merge_config.sh failed (see $cache/config.log)"
    kmake -s olddefconfig >> "$cache/config.log" 2>&1 || die "olddefconfig failed (see $cache/config.log)"
    # Every line of the fragment must have survived (a dependency may have dropped one).
    while IFS= read -r line; do
        case $line in
        CONFIG_*=*) grep -qxF "$line" "$obj/.config" || die "$line did not stick (see $obj/.config)" ;;
        "# CONFIG_"*" is not set")
            opt=${line#\# }
            opt=${opt%% *}
            ! grep -q "^$opt=" "$obj/.config" || die "$opt is set (see $obj/.config)" ;;
        esac
    done < "$frag"
    echo "$key" > "$obj/.kbench-key"
fi

build() {
    local what=$1 out=$2 t0=$SECONDS
    log "building $what (nice -n 19, -j$jobs; log: $cache/build-$what.log)"
    kmake bzImage > "$cache/build-$what.log" 2>&1 || die "kernel build ($what) failed (see $cache/build-$what.log)"
    cp "$obj/arch/x86/boot/bzImage" "$out.tmp"
    cp "$obj/System.map" "$cache/System.map-$what-$key"
    mv "$out.tmp" "$out"
    log "built $what in $((SECONDS - t0)) s"
}

build fix "$fix"
cp --remove-destination "$ksrc/mm/swapfile.c" "$src/mm/swapfile.c"
patch -s -p1 -d "$src" < "$revert" || die "kernel/patches/0002 does not apply to $ksrc"
build nofix "$nofix"
restore_swapfile
cp "$obj/.config" "$cache/config-$key"
echo "fix $fix"
echo "nofix $nofix"

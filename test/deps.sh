#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Installs what building thaw and running its tests need, from Debian's packages (Debian 12).
# Installs no kernel and no dracut: the QEMU tests download and unpack those into .cache/.
# flex, bison, bc and libelf-dev build make bench-kernel's kernels.
# systemd: dracut's systemd flavour (test/qemu/systemd-resume) takes the host's.
# mmdebstrap: test/cloud's Debian 12 root (its scenarios run in make check-qemu and make test).
# build-essential: t-package's dpkg-buildpackage checks the build dependencies (dpkg-checkbuilddeps),
# which always include it; fakeroot lets a non-root user build the package. ca-certificates:
# apt-get download (kernel, dracut) over https sources. A debootstrap'ed bookworm root (a fresh
# cloud image) has none of these; git and make come first, by hand (README: The two commands).
# A second run, with everything present, is fast and needs no network.

set -eu

PKGS="gcc libc6-dev make pkg-config libcryptsetup-dev libkeyutils-dev libjson-c-dev libblkid-dev
libcmocka-dev zlib1g-dev qemu-system-x86 busybox-static cpio kmod udev dmsetup e2fsprogs zstd xz-utils
shellcheck cryptsetup-bin liblzo2-dev liblz4-dev dosfstools mtools genisoimage
libcurl4-openssl-dev python3 clang libclang-rt-14-dev
libtss2-dev libssl-dev swtpm swtpm-tools tpm2-tools
flex bison bc libelf-dev
systemd iproute2 procps debhelper dpkg-dev build-essential fakeroot ca-certificates mmdebstrap"

missing=""
for p in $PKGS; do
    status=$(dpkg-query -W -f '${Status}' "$p" 2> /dev/null || true)
    [ "$status" = "install ok installed" ] || missing="$missing $p"
done

if [ -z "$missing" ]; then
    echo "deps: all present"
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "deps: missing:$missing; run 'make deps' as root to install them" >&2
    exit 1
fi

echo "deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086 # one word per package
apt-get install -y -q --no-install-recommends $missing

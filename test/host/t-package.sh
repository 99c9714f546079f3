#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The Debian package: built from a copy of the tree with dpkg-buildpackage -us -uc -b, installed,
# upgraded to a newer version and removed in a throwaway dpkg root (dpkg --root), so the host's
# own package database is never touched. Checks what an administrator would: files in place,
# thaw runs, dpkg knows the version, and nothing is left behind after dpkg -r.
set -u

# shellcheck source=test/host/lib.sh
. "$(dirname "$0")/lib.sh"
need dpkg-buildpackage dh dpkg-deb dpkg
[ -d "$top/debian" ] || { echo "# no debian/ in $top"; exit 1; }

# A copy of the tracked (and new, not ignored) files: the build must not need build/ or .cache/.
mkdir "$tmp/src"
if git -C "$top" rev-parse --git-dir > /dev/null 2>&1; then
    (cd "$top" && git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$tmp/src")
else
    (cd "$top" && tar --exclude=./build --exclude=./.cache -cf - .) | (cd "$tmp/src" && tar -xf -)
fi
version=$(cd "$tmp/src" && dpkg-parsechangelog -S Version)
check "dpkg-buildpackage -us -uc -b builds thaw $version" \
    sh -c "cd '$tmp/src' && dpkg-buildpackage -us -uc -b > '$tmp/build.log' 2>&1 || { tail -n 30 '$tmp/build.log'; exit 1; }"
deb=$(find "$tmp" -maxdepth 1 -name "thaw_${version}_*.deb" | head -n1)
[ -n "$deb" ] || abort "no thaw_${version}_*.deb was built"

# The files an administrator relies on, as the package lists them; the token plugin where
# libcryptsetup looks for it.
tokendir=$(pkg-config --variable=libdir libcryptsetup)/cryptsetup
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' > "$tmp/contents"
for f in /usr/sbin/thaw /usr/lib/dracut/modules.d/90thaw/module-setup.sh \
    /usr/lib/dracut/modules.d/90thaw/thaw-resume.sh /usr/share/man/man8/thaw.8.gz \
    /usr/share/man/man5/thaw.conf.5.gz /usr/share/man/man7/thaw.cmdline.7.gz \
    /usr/share/doc/thaw/copyright "$tokendir/libcryptsetup-token-thaw.so" \
    "$tokendir/libcryptsetup-token-thaw-fwcfg.so" /usr/share/man/man5/thaw-provision.conf.5.gz \
    /usr/lib/systemd/system/thaw-provision.service /usr/lib/systemd/system/thaw-hibernate-request.service \
    /usr/share/thaw/cloud/90-thaw-hyperv-hibernate.rules /usr/share/thaw/cloud/thaw-sleep-button.conf \
    /usr/share/thaw/cloud/thaw-sleep-button; do
    check "the package ships $f" grep -qx -- "$f" "$tmp/contents"
done
check "the package depends on libcryptsetup (shlibs)" sh -c "dpkg-deb -f '$deb' Depends | grep -q libcryptsetup"

# A throwaway dpkg root: its own database; dependencies are the host's libraries, not its packages.
root=$tmp/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/var/log"
: > "$root/var/lib/dpkg/status"
: > "$root/var/lib/dpkg/available"
dp() { dpkg --root="$root" --force-depends --force-script-chrootless "$@"; }

check "dpkg -i installs $version" dp -i "$deb"
check "dpkg -s says thaw $version is installed" \
    sh -c "dpkg --root='$root' -s thaw | grep -qx 'Status: install ok installed' && dpkg --root='$root' -s thaw | grep -qx 'Version: $version'"
check "the installed thaw runs: thaw --version" sh -c "'$root/usr/sbin/thaw' --version | grep -qx 'thaw ${version%%[-+]*}'"
check "the dracut module is executable" test -x "$root/usr/lib/dracut/modules.d/90thaw/module-setup.sh"
dpkg --root="$root" -L thaw > "$tmp/listed"
check "dpkg -L lists /usr/sbin/thaw" grep -qx /usr/sbin/thaw "$tmp/listed"
# Shipped, not enabled: the image builder enables thaw-provision.service and puts the triggers in /etc.
check "installing enables no unit and puts no trigger in /etc" sh -c \
    "[ ! -e '$root/etc/systemd/system/sysinit.target.wants/thaw-provision.service' ] &&
     [ ! -e '$root/etc/udev/rules.d/90-thaw-hyperv-hibernate.rules' ] && [ ! -e '$root/etc/systemd/logind.conf.d' ]"

# A newer version of the same package: the built one with a higher version in its control file.
new="$version+upgrade1"
dpkg-deb -R "$deb" "$tmp/newpkg"
sed -i "s/^Version: .*/Version: $new/" "$tmp/newpkg/DEBIAN/control"
dpkg-deb -b "$tmp/newpkg" "$tmp/thaw_new.deb" > /dev/null
check "dpkg -i of $new upgrades" dp -i "$tmp/thaw_new.deb"
check "dpkg -s says $new after the upgrade" sh -c "dpkg --root='$root' -s thaw | grep -qx 'Version: $new'"
check "the files are still in place after the upgrade" sh -c \
    "for f in \$(cat '$tmp/listed'); do [ -e '$root'\$f ] || { echo missing \$f; exit 1; }; done"

# Remove: every file the package installed is gone, and nothing else is left outside dpkg's own
# database and log.
check "dpkg -r removes thaw" dp -r thaw
check "dpkg -s says thaw is no longer installed" \
    sh -c "! dpkg --root='$root' -s thaw 2>/dev/null | grep -q '^Status: install ok installed'"
check "no file of the package is left" sh -c \
    "for f in \$(cat '$tmp/listed'); do [ -d '$root'\$f ] || [ ! -e '$root'\$f ] && [ ! -L '$root'\$f ] || { echo left \$f; exit 1; }; done"
check "nothing but dpkg's database and log is left in the root" sh -c \
    "left=\$(cd '$root' && find . -path ./var/lib/dpkg -prune -o -path ./var/log -prune -o ! -type d -print); [ -z \"\$left\" ] || { echo \"\$left\"; exit 1; }"
check "the dracut module directory is gone" test ! -e "$root/usr/lib/dracut/modules.d/90thaw"

finish

#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Checks every shell script in dracut-module/, test/, kernel/ and .ci/ with shellcheck and the shell's -n.

set -u
cd "$(dirname "$0")/.." || exit 1

command -v shellcheck > /dev/null || { echo "lint: shellcheck missing (run make deps)" >&2; exit 1; }

fails=0
count=0
for f in $(find dracut-module test kernel .ci -type f \( -name '*.sh' -o -path .ci/run -o -path kernel/check-tree \) | sort); do
	first=$(head -n 1 "$f")
	case "$first" in
	'#!/bin/sh'*) shell="sh" ;;
	*bash*) shell=bash ;;
	*) if grep -q '^# shellcheck shell=bash' "$f"; then shell="bash"; else shell="sh"; fi ;;
	esac
	count=$((count + 1))
	if ! "$shell" -n "$f"; then
		echo "lint: $f: $shell -n failed" >&2
		fails=$((fails + 1))
	fi
	if ! shellcheck -s "$shell" -x "$f"; then
		fails=$((fails + 1))
	fi
done
echo "lint: $count shell scripts checked, $fails problems"
[ "$fails" -eq 0 ]

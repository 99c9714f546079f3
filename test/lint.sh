#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Checks every shell script in dracut-module/, test/, kernel/ and .ci/ with shellcheck and the shell's -n
# and for the one indentation (4 spaces, no line starts with a tab: .editorconfig), and the C layering: which folders each folder's #include "..." may name.

set -u
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
cd "$(dirname "$0")/.." || exit 1

command -v shellcheck > /dev/null || { echo "lint: shellcheck missing (run make deps)" >&2; exit 1; }

# lint.sh --one FILE: one script: the shell's -n, shellcheck, no tab indents; its name goes to
# $LINT_FAILED if any fails. The loop below runs it for every script side by side, one per core
# (xargs -P): shellcheck takes seconds on the larger ones.
if [ "${1:-}" = --one ]; then
    f=$2
    case "$(head -n 1 "$f")" in
    '#!/bin/sh'*) shell="sh" ;;
    *bash*) shell=bash ;;
    *) if grep -q '^# shellcheck shell=bash' "$f"; then shell="bash"; else shell="sh"; fi ;;
    esac
    bad=0
    if ! "$shell" -n "$f"; then
        echo "lint: $f: $shell -n failed" >&2
        bad=1
    fi
    shellcheck -s "$shell" -x "$f" || bad=1
    if grep -n "$(printf '^\t')" "$f" | head -n 3 | sed "s|^|lint: $f:|;s|\$| (a tab indents: shell takes 4 spaces)|" | grep . >&2; then
        bad=1
    fi
    [ "$bad" -eq 0 ] || echo "$f" >> "$LINT_FAILED"
    exit 0
fi

LINT_FAILED=$(mktemp) || exit 1
export LINT_FAILED
trap 'rm -f "$LINT_FAILED" "$LINT_FAILED.list"' EXIT
find dracut-module test kernel .ci -type f \( -name '*.sh' -o -path .ci/run -o -path kernel/check-tree \) | sort > "$LINT_FAILED.list"
count=$(grep -c . "$LINT_FAILED.list")
xargs -P "$(nproc)" -n 1 sh "$self" --one < "$LINT_FAILED.list"
rm -f "$LINT_FAILED.list"
fails=$(grep -c . "$LINT_FAILED")
echo "lint: $count shell scripts checked, $fails with problems"

# Layering. A quoted include names resume/FOLDER/x.h by its folder ("image/format.h"), or
# crypto/x.h, resume/args.h or test/unit/x.h by name alone. Who may include what:
# - resume/base/ (the basics) includes only base/;
# - resume/image/ (the swsusp format) includes only base/ and image/;
# - crypto/ includes only base/, dev/ (device specs, mappings, file-system markers) and crypto/;
#   its token plugin (token_plugin.c) is a program, like resume/cmd/, and is not held to it;
# - nothing outside resume/cmd/ includes resume/cmd/.
layer_fails=0
layer_count=0
for f in $(find resume crypto test/unit test/fuzz -type f -name '*.[ch]' | sort); do
    layer_count=$((layer_count + 1))
    case $f in
    resume/*/*) from=${f#resume/}; from=${from%%/*} ;;
    resume/*) from=top ;;
    crypto/token_plugin.c) from=plugin ;;
    crypto/*) from=crypto ;;
    *) from=tests ;;
    esac
    incs=$(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
    for inc in $incs; do
        case $inc in
        */*) [ -f "resume/$inc" ] && to=${inc%%/*} || to=missing ;;
        *) if [ -f "crypto/$inc" ]; then to=crypto
           elif [ -f "resume/$inc" ]; then to=top
           elif [ "$from" = tests ] && [ -f "test/unit/$inc" ]; then to=tests
           else to=missing; fi ;;
        esac
        why=""
        case $from:$to in
        *:missing) why="no resume/$inc, crypto/$inc (resume/ headers are named by folder: \"image/image.h\")" ;;
        cmd:cmd) ;;
        *:cmd) why="only resume/cmd/ includes the commands' headers" ;;
        base:base) ;;
        base:*) why="resume/base/ includes only base/" ;;
        image:base | image:image) ;;
        image:*) why="resume/image/ (the swsusp format) includes only base/ and image/" ;;
        crypto:base | crypto:dev | crypto:crypto) ;;
        crypto:*) why="crypto/ includes only base/, dev/ and crypto/" ;;
        esac
        if [ -n "$why" ]; then
            echo "lint: $f includes \"$inc\": $why" >&2
            layer_fails=$((layer_fails + 1))
        fi
    done
done
echo "lint: $layer_count C files' includes checked, $layer_fails layering problems"

# Unit tests mirror the code: test/unit/test_FOO.c tests FOO.c of resume/ or crypto/, FOLDER_FOO
# when FOO.c is in two folders (test_boot_resume.c); test_FOO-WHAT.c is a second program for FOO.c.
name_fails=0
name_count=0
for t in $(find test/unit -type f -name 'test_*.c' | sort); do
    name_count=$((name_count + 1))
    n=${t#test/unit/test_}
    n=${n%.c}
    n=${n%%-*}
    [ "$(find resume crypto -name "$n.c" | wc -l)" -eq 1 ] && continue
    dir=${n%%_*}
    base=${n#*_}
    if [ "$dir" != "$n" ] && [ -f "resume/$dir/$base.c" ] && [ "$(find resume crypto -name "$base.c" | wc -l)" -gt 1 ]; then
        continue
    fi
    echo "lint: $t names no one source file (test_FOO.c tests FOO.c; test_FOLDER_FOO.c where FOO.c is in two folders)" >&2
    name_fails=$((name_fails + 1))
done
echo "lint: $name_count unit test files' names checked, $name_fails not named after the file they test"
[ "$fails" -eq 0 ] && [ "$layer_fails" -eq 0 ] && [ "$name_fails" -eq 0 ]

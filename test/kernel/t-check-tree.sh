#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# kernel/check-tree (TAP): 6.1's unuse_pte_range() has the fix; with kernel/patches/0002 applied
# it lacks it; versions decide without a tree. Offline: the tree is a fixture excerpt of 6.1's
# mm/swapfile.c, plus Debian's whole 6.1 tree when `make bench-kernel` unpacked it into .cache/.
set -u

repo=$(cd "$(dirname "$0")/../.." && pwd)
ct=$repo/kernel/check-tree
revert=$(ls "$repo"/kernel/patches/0002-*.patch)
fixture=$repo/test/fixtures/kernel/swapfile-6.1-unuse_pte_range.c
full=${THAW_KERNEL_SRC:-$repo/.cache/kernel-src/linux-source-6.1}

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

n=0 fails=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $*"; }
skip() { n=$((n + 1)); echo "ok $n - $* # SKIP"; }

# expect STATUS TEXT DESCRIPTION -- COMMAND...: COMMAND exits STATUS and prints TEXT.
expect() {
    want=$1 text=$2 desc=$3
    shift 4
    out=$("$@" 2>&1)
    rc=$?
    if [ "$rc" -eq "$want" ] && printf '%s\n' "$out" | grep -qF -- "$text"; then
        ok "$desc"
    else
        notok "$desc (exit $rc, want $want: $out)"
    fi
}

# tree NAME SWAPFILE: a fake kernel tree $tmp/NAME with that mm/swapfile.c.
tree() {
    mkdir -p "$tmp/$1/mm"
    cp "$2" "$tmp/$1/mm/swapfile.c"
}

tree has "$fixture"
expect 0 "has the fix: unuse_pte_range() calls swap_cache_get_folio() before swapin_readahead()" \
    "6.1 excerpt has the fix" -- "$ct" "$tmp/has"

tree lacks "$fixture"
if (cd "$tmp/lacks" && patch -p1 -s < "$revert"); then
    ok "kernel/patches/0002 applies to the 6.1 excerpt"
else
    notok "kernel/patches/0002 applies to the 6.1 excerpt"
fi
expect 1 "lacks the fix" "6.1 excerpt with 0002 applied lacks it" -- "$ct" "$tmp/lacks"
expect 1 "" "-q: the status alone" -- "$ct" -q "$tmp/lacks"
if [ -z "$("$ct" -q "$tmp/lacks")" ]; then ok "-q prints nothing"; else notok "-q prints nothing"; fi

# The 5.8-5.19 form of the fix (page-based lookup) counts too.
tree page "$fixture"
sed -i 's/folio = swap_cache_get_folio(/page = lookup_swap_cache(/' "$tmp/page/mm/swapfile.c"
expect 0 "calls lookup_swap_cache() before" "lookup_swap_cache() form has the fix" -- "$ct" "$tmp/page"

# A lookup after the readahead call, or only in a comment, is not the fix.
tree late "$tmp/lacks/mm/swapfile.c"
sed -i 's|folio = NULL;|folio = NULL; /* swap_cache_get_folio(entry, vma, addr) */|' "$tmp/late/mm/swapfile.c"
expect 1 "lacks the fix" "a lookup only in a comment does not count" -- "$ct" "$tmp/late"

mkdir -p "$tmp/empty/mm"
expect 2 "no mm/swapfile.c" "not a kernel tree: cannot tell" -- "$ct" "$tmp/empty"
echo 'int x;' > "$tmp/empty/mm/swapfile.c"
expect 2 "no unuse_pte_range()" "no unuse_pte_range(): cannot tell" -- "$ct" "$tmp/empty"
expect 2 "Usage" "two trees: usage" -- "$ct" "$tmp/has" "$tmp/lacks"
expect 2 "Usage" "unknown option: usage" -- "$ct" --frobnicate

# By version.
expect 0 "has the fix" "6.1.0-57-amd64 has it" -- "$ct" --release 6.1.0-57-amd64
expect 0 "has the fix" "5.8 has it" -- "$ct" -r 5.8
expect 0 "backported to 5.4.232" "5.4.232 has it" -- "$ct" -r 5.4.232
expect 1 "lacks the fix" "5.4.231 lacks it" -- "$ct" -r 5.4.231-generic
expect 1 "lacks the fix" "5.7.19 lacks it" -- "$ct" -r 5.7.19
expect 2 "cannot tell" "4.19.300: cannot tell by version" -- "$ct" -r 4.19.300
expect 2 "not a kernel version" "garbage version: cannot tell" -- "$ct" -r linux
rc=0
"$ct" -q || rc=$?
if [ "$rc" -le 2 ]; then ok "running kernel $(uname -r): exit $rc"; else notok "running kernel: exit $rc"; fi

# Debian's whole 6.1 tree, when a previous run of make bench-kernel (or a person) unpacked it.
if [ -f "$full/mm/swapfile.c" ]; then
    expect 0 "has the fix" "Debian's full 6.1 tree has the fix" -- "$ct" "$full"
    tree full-lacks "$full/mm/swapfile.c"
    if (cd "$tmp/full-lacks" && patch -p1 -s < "$revert"); then
        ok "kernel/patches/0002 applies to Debian's full 6.1 mm/swapfile.c"
    else
        notok "kernel/patches/0002 applies to Debian's full 6.1 mm/swapfile.c"
    fi
    expect 1 "lacks the fix" "full 6.1 mm/swapfile.c with 0002 applied lacks it" -- "$ct" "$tmp/full-lacks"
else
    skip "Debian's full 6.1 tree: $full not unpacked"
fi

echo "1..$n"
[ "$fails" -eq 0 ]

# SPDX-License-Identifier: LGPL-2.1-or-later
# What the host tests share, sourced by each test/host/t-*.sh (sh or bash): the TAP checks, a private
# $tmp, the skips, a fixture root, LUKS2 image files, swtpm and the fake metadata service.
# shellcheck shell=sh
# shellcheck disable=SC2034 # here, top, root, rc, tcti, origin and src are for the tests

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

# $tmp: the test's own directory, removed at exit after what at_exit was given (last given, first run).
tmp=$(mktemp -d) || exit 1
lib_at_exit=:
trap 'eval "$lib_at_exit"; rm -rf "$tmp"' EXIT
# at_exit CMD: CMD (shell text) runs when the test exits, whatever the reason.
at_exit() { lib_at_exit="$1; $lib_at_exit"; }

# skip WHY: the whole test is skipped (exit 77, the one skip code of the suite).
skip() {
    echo "# SKIP: $1"
    exit 77
}

# need TOOL...: every TOOL is installed (test/deps.sh installs them all), or the test is skipped.
need() {
    for lib_tool in "$@"; do
        command -v "$lib_tool" > /dev/null 2>&1 || skip "$lib_tool missing (make deps)"
    done
}

# fiemap_dir NAME: $fs, a new directory NAME.XXXXXX on a file system with FIEMAP (a swap file needs
# a disk file system: /tmp is often tmpfs, which has none; then the repository's build/ directory,
# which is on a disk wherever the tree was checked out), removed at exit; or the test is skipped.
fiemap_dir() {
    fs=""
    # shellcheck disable=SC2016 # expanded at exit
    at_exit '[ -z "$fs" ] || rm -rf "$fs"'
    for lib_base in "$tmp" "$top/build"; do
        mkdir -p "$lib_base" 2> /dev/null
        fs=$(mktemp -d "$lib_base/$1.XXXXXX" 2> /dev/null) || { fs=""; continue; }
        if fallocate -l 65536 "$fs/probe" 2> /dev/null && filefrag -v "$fs/probe" 2> /dev/null | grep -q '^ *0:'; then
            rm -f "$fs/probe"
            return 0
        fi
        rm -rf "$fs"
        fs=""
    done
    skip "no directory on a file system with FIEMAP (${TMPDIR:-/tmp} and build/ are not on one)"
}

# TAP: one line per check, numbered by $n; $failed counts the failures; finish ends the test.
n=0
failed=0
# show FILE...: the FILEs there are, as TAP comments.
show() {
    for lib_file in "$@"; do
        [ -f "$lib_file" ] && sed 's/^/#   /' "$lib_file"
    done
    return 0
}
ok() {
    n=$((n + 1))
    echo "ok $n - $1"
}
# not_ok NAME: a failed check, and diag below it.
not_ok() {
    n=$((n + 1))
    failed=$((failed + 1))
    echo "not ok $n - $1"
    diag
}
# diag: what a failed check shows: the last command's output ($tmp/out, $tmp/err). A test whose
# commands leave it elsewhere defines its own.
diag() { show "$tmp/out" "$tmp/err"; }
# abort NAME: a failed check that the rest of the test needs: the plan so far, and exit 1.
abort() {
    not_ok "$1"
    echo "1..$n"
    exit 1
}
# finish: the plan, and the test's status.
finish() {
    echo "1..$n"
    [ "$failed" -eq 0 ]
}

# check NAME CMD...: CMD succeeds. Its own output goes to $tmp/check, shown if it fails.
check() {
    lib_name=$1
    shift
    if "$@" > "$tmp/check" 2>&1; then
        ok "$lib_name"
    else
        not_ok "$lib_name"
        show "$tmp/check"
    fi
}

# expect NAME STATUS TEXT CMD...: CMD exits STATUS ("fail": any failure) and says TEXT ("": anything)
# on stdout or stderr, kept in $tmp/out and $tmp/err; its status in $rc.
expect() { lib_expect "$tmp/out" "$@"; }
# expect_err NAME STATUS TEXT CMD...: the same, with TEXT on stderr.
expect_err() { lib_expect /dev/null "$@"; }
lib_expect() {
    lib_in=$1 lib_name=$2 lib_want=$3 lib_text=$4
    shift 4
    "$@" > "$tmp/out" 2> "$tmp/err"
    rc=$?
    case $lib_want in
    fail) lib_good=$((rc != 0)) ;;
    *) lib_good=$((rc == lib_want)) ;;
    esac
    if [ "$lib_good" -eq 1 ] && { [ -z "$lib_text" ] || cat "$lib_in" "$tmp/err" | grep -qF -- "$lib_text"; }; then
        ok "$lib_name"
    else
        echo "# exit $rc, wanted $lib_want and \"$lib_text\""
        not_ok "$lib_name"
    fi
}

# wait_for FILE [TENTHS]: until FILE has something in it, for TENTHS tenths of a second at most (100).
wait_for() {
    lib_i=0
    while [ ! -s "$1" ] && [ "$lib_i" -lt "${2:-100}" ]; do
        sleep 0.1
        lib_i=$((lib_i + 1))
    done
    [ -s "$1" ]
}

# fixture_root: $root, a machine with nothing mounted, no swap, and a random key in /key.
fixture_root() {
    root=$tmp/root
    mkdir -p "$root/proc/self" "$root/etc"
    : > "$root/proc/self/mounts"
    : > "$root/proc/swaps"
    (umask 077 && head -c 32 /dev/urandom > "$root/key")
}

# luks_image IMG SIZE KEYFILE: a new LUKS2 image file opened by KEYFILE, as an installer would make
# it (a cheap PBKDF2 only to keep the tests fast).
luks_image() {
    rm -f "$1"
    truncate -s "$2" "$1"
    cryptsetup luksFormat -q --type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000 \
        --key-file "$3" "$1" || { echo "# cannot format $1"; return 1; }
}

# thaw_image IMG SIZE [SETUP-ARG...]: a new image file that thaw setup --format-only made a thaw
# device with $root/key (keyfile:/key); its output in $tmp/out and $tmp/err.
thaw_image() {
    lib_img=$1
    rm -f "$lib_img"
    truncate -s "$2" "$lib_img"
    shift 2
    "$THAW" setup --device "$lib_img" --key keyfile:/key --format-only --root "$root" "$@" > "$tmp/out" 2> "$tmp/err"
}

# start_tpm DIR: a swtpm on the state DIR (made if new) on $tcti, in place of the one before (a
# reboot); stopped at exit.
lib_tpm_pid=$tmp/swtpm.pid
start_tpm() {
    stop_tpm
    if [ -z "${tcti:-}" ]; then
        lib_tpm_port || { echo "# no free port pair for swtpm"; return 1; }
        tcti="swtpm:host=127.0.0.1,port=$lib_port"
        at_exit stop_tpm
    fi
    mkdir -p "$1"
    swtpm socket --tpm2 --server "type=tcp,port=$lib_port,bindaddr=127.0.0.1" \
        --ctrl "type=tcp,port=$((lib_port + 1)),bindaddr=127.0.0.1" --flags not-need-init,startup-clear \
        --tpmstate "dir=$1" --pid "file=$lib_tpm_pid" --daemon || { echo "# swtpm did not start"; return 1; }
    wait_for "$lib_tpm_pid" 50 || :
}
stop_tpm() {
    lib_pid=$(cat "$lib_tpm_pid" 2> /dev/null)
    [ -n "$lib_pid" ] || return 0
    kill "$lib_pid" 2> /dev/null
    # Until it has gone: the next swtpm takes the same ports.
    lib_i=0
    while kill -0 "$lib_pid" 2> /dev/null && [ "$lib_i" -lt 50 ]; do
        sleep 0.1
        lib_i=$((lib_i + 1))
    done
    rm -f "$lib_tpm_pid"
}
# Two free ports in a row: the swtpm TCTI finds the control port at the server port + 1.
lib_tpm_port() {
    lib_port=$(python3 -c '
import socket
for _ in range(100):
    a = socket.socket(); a.bind(("127.0.0.1", 0)); p = a.getsockname()[1]
    b = socket.socket()
    try:
        b.bind(("127.0.0.1", p + 1)); print(p); break
    except OSError:
        pass
') && [ -n "$lib_port" ]
}

# start_imds: test/host/imds-server.py on 127.0.0.1 serving a new random key ($tmp/served), stopped
# at exit: its $origin; $src, a key source there with the headers the server asks for on
# /custom/raw; in $tmp/requests a line per request.
start_imds() {
    head -c 32 /dev/urandom > "$tmp/served"
    # The interpreter itself, not a wrapper that may fork (pyenv's shim): $! must be the server.
    lib_py=$(python3 -c 'import sys; print(sys.executable)')
    "$lib_py" "$here/imds-server.py" "$tmp/port" 120 127.0.0.1 0 "$tmp/requests" "$tmp/served" &
    at_exit "kill $! 2> /dev/null"
    wait_for "$tmp/port"
    origin=http://127.0.0.1:$(cat "$tmp/port" 2> /dev/null)
    src="imds:$origin/custom/raw;header=Authorization:Bearer%20Oracle;header=X-Thaw:a%20b%2Cc%3Bd%25"
    [ -s "$tmp/port" ] || { echo "# the metadata server did not start"; return 1; }
}

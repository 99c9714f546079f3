# SPDX-License-Identifier: LGPL-2.1-or-later
# swtpm for host tests, sourced after $tmp exists: $port/$tcti of a free port pair, start_tpm DIR, stop_tpm.
# shellcheck shell=sh
# shellcheck disable=SC2154,SC2034 # $tmp comes from the test that sources this; $tcti is for it
pidfile=$tmp/swtpm.pid
stop_tpm() {
        pid=$(cat "$pidfile" 2> /dev/null)
        [ -n "$pid" ] || return 0
        kill "$pid" 2> /dev/null
        # Until it has gone: the next swtpm takes the same ports.
        i=0
        while kill -0 "$pid" 2> /dev/null && [ "$i" -lt 50 ]; do
                sleep 0.1
                i=$((i + 1))
        done
        rm -f "$pidfile"
}

# Two free ports in a row: the swtpm TCTI finds the control port at the server port + 1.
port=$(python3 -c '
import socket
for _ in range(100):
    a = socket.socket(); a.bind(("127.0.0.1", 0)); p = a.getsockname()[1]
    b = socket.socket()
    try:
        b.bind(("127.0.0.1", p + 1)); print(p); break
    except OSError:
        pass
') || exit 1
tcti="swtpm:host=127.0.0.1,port=$port"

# start_tpm DIR: a swtpm on state DIR (made if new), listening on $port.
start_tpm() {
        stop_tpm
        mkdir -p "$1"
        swtpm socket --tpm2 --server "type=tcp,port=$port,bindaddr=127.0.0.1" \
                --ctrl "type=tcp,port=$((port + 1)),bindaddr=127.0.0.1" --flags not-need-init,startup-clear \
                --tpmstate "dir=$1" --pid "file=$pidfile" --daemon || return 1
        i=0
        while [ ! -s "$pidfile" ] && [ "$i" -lt 50 ]; do
                sleep 0.1
                i=$((i + 1))
        done
}

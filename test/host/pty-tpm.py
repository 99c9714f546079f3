#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# A TPM character device on a raw pty, for the device TCTI that the boot uses on /dev/tpmrm0; its
# path is printed on stdout, and it goes away after LIFETIME seconds.
#   pty-tpm.py swtpm STATEDIR LIFETIME: swtpm (chardev mode) answers every command.
#   pty-tpm.py silent LIFETIME: the TCTI's probe (its first command) gets a bare success header, so
#       that the TCTI opens; every later command gets nothing, as from a TPM that hangs.
import os
import pty
import select
import subprocess
import sys
import time
import tty

master, slave = pty.openpty()
tty.setraw(slave)
tty.setraw(master)
if sys.argv[1] == "swtpm":
    os.makedirs(sys.argv[2], exist_ok=True)
    proc = subprocess.Popen(["swtpm", "chardev", "--tpm2", "--fd", str(master), "--tpmstate",
                             "dir=" + sys.argv[2], "--flags", "not-need-init,startup-clear"],
                            pass_fds=[master])
    # Ready once it answers (the TCTI's own probe waits 1 s only): GetRandom(8), its answer read here.
    os.write(slave, bytes.fromhex("80010000000c0000017b0008"))
    if select.select([slave], [], [], 60.0)[0]:
        os.read(slave, 4096)
    print(os.ttyname(slave), flush=True)
    try:
        proc.wait(timeout=float(sys.argv[3]))
    except subprocess.TimeoutExpired:
        proc.terminate()
    sys.exit(0)

print(os.ttyname(slave), flush=True)
answered = False
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    ready, _, _ = select.select([master], [], [], 1.0)
    if not ready:
        continue
    try:
        os.read(master, 4096)
    except OSError:
        continue
    if not answered:
        os.write(master, bytes.fromhex("80010000000a00000000"))  # TPM_ST_NO_SESSIONS, size 10, success
        answered = True

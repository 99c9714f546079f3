#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# A TPM character device that stops answering: a raw pty whose path is printed on stdout. The
# tpm2-tss device TCTI's probe (its first command) gets a bare success header, so that the TCTI
# opens; every later command gets nothing, as from a TPM that hangs. Exits after LIFETIME seconds.
import os
import pty
import select
import sys
import time
import tty

LIFETIME = float(sys.argv[1]) if len(sys.argv) > 1 else 120.0

master, slave = pty.openpty()
tty.setraw(slave)
print(os.ttyname(slave), flush=True)
answered = False
end = time.monotonic() + LIFETIME
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

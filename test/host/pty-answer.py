#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""pty-answer.py PROMPT ANSWER CMD...: run CMD on a new pseudo-terminal (its controlling terminal),
type ANSWER and a line end each time PROMPT appears in its output (an empty ANSWER: never), copy
its output to stdout and exit with its status. A person at a console, for the passphrase tests;
60 s at most, then CMD is killed."""
import os
import pty
import select
import signal
import sys
import time


def main():
    prompt, answer, cmd = sys.argv[1].encode(), sys.argv[2].encode(), sys.argv[3:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(cmd[0], cmd)
    seen, answered, deadline = b"", 0, time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if not ready:
            continue
        try:
            data = os.read(fd, 4096)
        except OSError:  # EIO: the command closed the terminal (exited)
            break
        if not data:
            break
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        seen += data
        # The prompt is written after the terminal was set up (typed-ahead input flushed): answer now.
        while answer and seen.count(prompt) > answered:
            answered += 1
            os.write(fd, answer + b"\n")
    else:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    sys.exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 125)


main()

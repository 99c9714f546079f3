#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""pty-answer.py PROMPT ANSWERS CMD...: run CMD on a new pseudo-terminal (its controlling terminal),
type a line each time PROMPT appears in its output: the n-th line of ANSWERS at the n-th prompt,
its last line after that (an empty ANSWERS: never). Copies the output to stdout and exits with
CMD's status. A person at a console, for the passphrase tests; 60 s at most, then CMD is killed."""
import os
import pty
import select
import signal
import sys
import termios
import time


def main():
    prompt, answers, cmd = sys.argv[1].encode(), sys.argv[2].encode().split(b"\n"), sys.argv[3:]
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
        while answers != [b""] and seen.count(prompt) > answered:
            # A password prompt turns echo off and flushes typed-ahead input; some (cryptsetup's)
            # only after writing the prompt: type once echo is off (or after 10 s, for one that echoes).
            wait = time.monotonic() + 10
            while termios.tcgetattr(fd)[3] & termios.ECHO and time.monotonic() < wait:
                time.sleep(0.05)
            os.write(fd, answers[min(answered, len(answers) - 1)] + b"\n")
            answered += 1
    else:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    sys.exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 125)


main()

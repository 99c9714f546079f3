/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading a passphrase from a terminal: no echo, a deadline, the terminal restored on every path. */
#pragma once
#include <stdint.h>
#include "secret.h"

#define PROMPT_PASSPHRASE_MAX 512 /* as cryptsetup's interactive passphrase limit */

/*
 * Write prompt to the terminal fd, read one line with echo off until deadline_ms (CLOCK_MONOTONIC)
 * and restore the terminal. Typed-ahead input is discarded first. 0 and *out (without the line
 * end), or -ENOTTY fd is not a terminal, -ETIMEDOUT no line by the deadline (no prompt at all if it
 * has passed), -ENODATA an empty line or end of input, -EMSGSIZE longer than
 * PROMPT_PASSPHRASE_MAX, other -errno.
 */
int prompt_passphrase(int fd, const char *prompt, int64_t deadline_ms, struct secret **out);

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Strict base64 (RFC 4648, standard alphabet, padded) decoding straight into a caller's buffer. */
#pragma once
#include <stddef.h>
#include <stdint.h>

/*
 * Decode len characters of in into out (cap bytes). Strict: length a multiple of 4, only the
 * standard alphabet, '=' only as the last one or two characters, zero pad bits, no whitespace.
 * Returns the decoded length, -EINVAL on malformed input, -EMSGSIZE if it does not fit in cap.
 * On failure out may hold partial output: the caller wipes it (it is key material).
 */
int base64_decode(const char *in, size_t len, uint8_t *out, size_t cap);

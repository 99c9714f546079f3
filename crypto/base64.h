/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Strict base64 (RFC 4648, standard alphabet, padded) decoding and encoding in a caller's buffer. */
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

/*
 * Encode len bytes of in as padded standard base64, NUL-terminated, into out (cap bytes, at least
 * 4 * ceil(len / 3) + 1). Returns the encoded length, -EMSGSIZE if it does not fit.
 */
int base64_encode(const uint8_t *in, size_t len, char *out, size_t cap);

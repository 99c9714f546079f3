/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The anti-rollback counter of a thaw volume: a TPM2 NV counter index, incremented at each
 * hibernation (its value goes into the image ticket) and at each resume, so that an image is
 * resumed only while the counter still holds the value its ticket records.
 *
 * One index per volume, in the TCG registry's owner range (0x01800000-0x01BFFFFF; 0x01000000-
 * 0x013FFFFF is the TPM manufacturer's, 0x01400000-0x017FFFFF the platform manufacturer's):
 * TPM2_COUNTER_BASE | the first 16 bits of SHA-256(LUKS2 UUID), away from systemd's
 * 0x01800400-0x018005FF. Defined under the owner hierarchy with an empty owner authorization (as
 * swtpm and cloud vTPMs have). Its auth value is HMAC-SHA256(ticket key, "thaw-tpm-counter-v1"):
 * only whoever holds the volume key can increment it, and a read in a session under that auth
 * authenticates the answer (the TPM's response HMAC), so nothing between thaw and the TPM can
 * claim another value. A TPM counter never goes down, not even when its index is undefined and
 * defined again (it starts at the highest count the TPM has held), so nobody can roll it back.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "secret.h"
#include "tpm2.h"

#define TPM2_COUNTER_BASE 0x01B40000u
#define TPM2_COUNTER_LABEL "thaw-tpm-counter-v1"
#define TPM2_COUNTER_AUTH_SIZE 32

/*
 * Failures (besides tpm2.h's -ENODEV, -ENOPKG, -ETIMEDOUT, -EIO with tpm2_error()):
 *   -ENOENT   no index there: never defined on this TPM (another TPM, or enrolled before counters)
 *   -EEXIST   an index is there with other attributes, size or policy: not ours, left alone
 *   -EACCES   the index refuses this auth value (another volume's, or defined by someone else);
 *             from define: the owner hierarchy has a password or is disabled
 *   -ENOSPC   the TPM's NV memory is full
 */

/* The index of the volume with this LUKS2 UUID. */
uint32_t tpm2_counter_index(const char *luks_uuid);
/* Its auth value, derived from the volume's ticket key. */
int tpm2_counter_auth(const struct secret *ticket_key, struct secret **out);

/*
 * Define the counter index with auth (or find it there, defined as thaw defines it, and check that
 * auth opens it), and make sure it has been written once so that it can be read: its value into
 * *value, *created true if this call defined it (either may be NULL). Each TPM answer awaited
 * until deadline_ms (tpm2_set_deadline()).
 */
int tpm2_counter_define(struct tpm2 *t, uint32_t index, const struct secret *auth, int64_t deadline_ms,
                        uint64_t *value, bool *created);
/* The counter's value, read under auth. */
int tpm2_counter_read(struct tpm2 *t, uint32_t index, const struct secret *auth, int64_t deadline_ms,
                      uint64_t *value);
/* Increment it under auth; its new value into *value (may be NULL). */
int tpm2_counter_increment(struct tpm2 *t, uint32_t index, const struct secret *auth, int64_t deadline_ms,
                           uint64_t *value);

enum tpm2_counter_op { TPM2_COUNTER_READ, TPM2_COUNTER_INCREMENT, TPM2_COUNTER_DEFINE };

/*
 * One operation on the counter of the volume with this UUID, whose ticket key is ticket_key: the
 * TPM opened as the tpm2 source opens it (tpm2_use_tcti()'s, or ROOT/dev/tpmrm0, waiting until
 * deadline_ms for a late device). The value into *value; on failure, why says what in one line.
 */
int tpm2_counter_volume(const char *root, const char *luks_uuid, const struct secret *ticket_key,
                        enum tpm2_counter_op op, int64_t deadline_ms, uint64_t *value, char *why, size_t size);

struct luks_tokens;
struct luks_policy;
/* true if tokens hold a thaw-tpm2 token: then the volume's images carry the counter. */
bool tpm2_counter_wanted(const struct luks_tokens *tokens);
/*
 * Define the counter of the LUKS2 device dev (enrollment): its ticket key from the volume key that
 * key recovers (luks_ticket_key()), or with key NULL from root's keyring. The index into *index,
 * its value into *value; why says what failed in one line.
 */
int tpm2_counter_enroll(const char *root, const char *dev, const struct secret *key, const struct luks_policy *p,
                        int64_t deadline_ms, uint32_t *index, uint64_t *value, char *why, size_t size);

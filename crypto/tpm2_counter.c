/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The anti-rollback NV counter of a thaw volume in the TPM2 (tpm2_counter.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <tss2/tss2_esys.h>

#include "key_provider.h"
#include "luks.h"
#include "ticket.h"
#include "tpm2_token.h"
#include "tpm2_counter.h"
#include "tpm2_esys.h"

#define COUNTER_SIZE 8
#define OWNER_PASSWORD "the owner hierarchy has a password: thaw defines its counter only under an empty owner " \
                       "authorization (as swtpm and cloud vTPMs have)"
/*
 * Security, and the choice of attributes:
 * - NT_COUNTER: only TPM2_NV_Increment changes it, and never downwards.
 * - AUTHWRITE: only the auth value (derived from the volume key) increments it; not the owner, so
 *   a process with the (empty) owner authorization cannot make a fresh image look old. It can
 *   undefine the index, which refuses every image after: a denial of service, never a rollback.
 * - AUTHREAD: thaw reads it under the auth, so the TPM's answer carries an HMAC under that auth.
 *   OWNERREAD as well, so that an administrator can read it with tpm2_nvread (the value is no secret).
 * - NO_DA: the auth value is 256 bits from the volume key, out of reach of guessing, so the
 *   dictionary-attack lockout protects nothing here; without NO_DA, a wrong auth (a colliding
 *   index of another volume) would count towards the TPM's lockout, and a TPM in lockout mode
 *   (someone else's PIN guessed wrong too often) would block every hibernation and resume.
 * - not ORDERLY: each increment reaches NV memory at once, whatever happens to the power after.
 */
#define COUNTER_ATTRS ((TPM2_NT_COUNTER << TPMA_NV_TPM2_NT_SHIFT) | TPMA_NV_AUTHWRITE | TPMA_NV_AUTHREAD | \
                       TPMA_NV_OWNERREAD | TPMA_NV_NO_DA)

uint32_t tpm2_counter_index(const char *luks_uuid)
{
        uint8_t d[EVP_MAX_MD_SIZE];
        unsigned n = 0;

        if (!luks_uuid || !EVP_Digest(luks_uuid, strlen(luks_uuid), d, &n, EVP_sha256(), NULL) || n < 2)
                return TPM2_COUNTER_BASE;
        return TPM2_COUNTER_BASE | ((uint32_t)d[0] << 8) | d[1];
}

int tpm2_counter_auth(const struct secret *ticket_key, struct secret **out)
{
        struct secret *s = NULL;
        unsigned n = 0;
        int r;

        if (!ticket_key || ticket_key->len == 0 || !out)
                return -EINVAL;
        r = secret_new(EVP_MAX_MD_SIZE, &s);
        if (r < 0)
                return r;
        if (!HMAC(EVP_sha256(), ticket_key->data, (int)ticket_key->len, (const uint8_t *)TPM2_COUNTER_LABEL,
                  strlen(TPM2_COUNTER_LABEL), s->data, &n) || n != TPM2_COUNTER_AUTH_SIZE) {
                secret_free(s);
                return -EIO;
        }
        s->len = n;
        *out = s;
        return 0;
}

static void close_tr(struct tpm2 *t, ESYS_TR *h)
{
        if (*h != ESYS_TR_NONE)
                Esys_TR_Close(tpm2_esys(t), h);
        *h = ESYS_TR_NONE;
}

static void flush_tr(struct tpm2 *t, ESYS_TR *h)
{
        if (*h != ESYS_TR_NONE)
                Esys_FlushContext(tpm2_esys(t), *h);
        *h = ESYS_TR_NONE;
}

/* An ESYS handle of index with its public area as the TPM reports it; -ENOENT if there is none. */
static int open_index(struct tpm2 *t, uint32_t index, ESYS_TR *out, TPMS_NV_PUBLIC *pub)
{
        TPM2B_NV_PUBLIC *p = NULL;
        TSS2_RC rc;

        rc = Esys_TR_FromTPMPublic(tpm2_esys(t), index, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, out);
        if (rc != TSS2_RC_SUCCESS) {
                int r = tpm2_fail(t, "reading the counter's public area", rc);

                return r == -EIO && tpm2_rc_base(rc) == TPM2_RC_HANDLE ? -ENOENT : r;
        }
        rc = Esys_NV_ReadPublic(tpm2_esys(t), *out, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &p, NULL);
        if (rc != TSS2_RC_SUCCESS) {
                close_tr(t, out);
                return tpm2_fail(t, "reading the counter's public area", rc);
        }
        *pub = p->nvPublic;
        Esys_Free(p);
        return 0;
}

/* Security: an index not made as thaw makes it (another program's, or a trap) is never used. */
static int check_public(struct tpm2 *t, const TPMS_NV_PUBLIC *pub)
{
        char msg[160];

        if ((pub->attributes & ~(TPMA_NV)TPMA_NV_WRITTEN) == COUNTER_ATTRS && pub->nameAlg == TPM2_ALG_SHA256 &&
            pub->authPolicy.size == 0 && pub->dataSize == COUNTER_SIZE)
                return 0;
        snprintf(msg, sizeof(msg), "NV index 0x%08x is defined with attributes 0x%08x, name algorithm 0x%04x, "
                 "%u-byte policy, %u bytes: not thaw's counter", pub->nvIndex, (unsigned)pub->attributes,
                 pub->nameAlg, pub->authPolicy.size, pub->dataSize);
        tpm2_set_error(t, msg);
        return -EEXIST;
}

/*
 * An HMAC session without salt or bind: the auth value never crosses the bus (only HMACs keyed with
 * it do), and 256 bits of it are out of reach of an offline search of what does.
 */
static int hmac_session(struct tpm2 *t, ESYS_TR *out)
{
        static const TPMT_SYM_DEF none = { .algorithm = TPM2_ALG_NULL };
        TSS2_RC rc;

        rc = Esys_StartAuthSession(tpm2_esys(t), ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
                                   ESYS_TR_NONE, NULL, TPM2_SE_HMAC, &none, TPM2_ALG_SHA256, out);
        if (rc != TSS2_RC_SUCCESS)
                return tpm2_fail(t, "starting a session", rc);
        rc = Esys_TRSess_SetAttributes(tpm2_esys(t), *out, TPMA_SESSION_CONTINUESESSION, 0xff);
        if (rc != TSS2_RC_SUCCESS) {
                flush_tr(t, out);
                return tpm2_fail(t, "setting session attributes", rc);
        }
        return 0;
}

static int set_auth(struct tpm2 *t, ESYS_TR h, const struct secret *auth)
{
        TPM2B_AUTH a = { .size = (UINT16)auth->len };
        TSS2_RC rc;

        memcpy(a.buffer, auth->data, auth->len);
        rc = Esys_TR_SetAuth(tpm2_esys(t), h, &a);
        explicit_bzero(&a, sizeof(a));
        return rc == TSS2_RC_SUCCESS ? 0 : tpm2_fail(t, "setting the counter's auth value", rc);
}

/* A failure of a command authorized with the counter's auth. */
static int auth_fail(struct tpm2 *t, const char *what, TSS2_RC rc)
{
        int r = tpm2_fail(t, what, rc);
        TSS2_RC base = tpm2_rc_base(rc);

        if (r != -EIO)
                return r;
        if (base == TPM2_RC_AUTH_FAIL || base == TPM2_RC_BAD_AUTH || base == TPM2_RC_NV_AUTHORIZATION)
                return -EACCES;
        if (base == TPM2_RC_NV_UNINITIALIZED)
                return -ENODATA;
        if (base == TPM2_RC_HANDLE)
                return -ENOENT;
        return -EIO;
}

static int do_read(struct tpm2 *t, ESYS_TR idx, ESYS_TR sess, uint64_t *value)
{
        TPM2B_MAX_NV_BUFFER *data = NULL;
        uint64_t v = 0;
        TSS2_RC rc;

        rc = Esys_NV_Read(tpm2_esys(t), idx, idx, sess, ESYS_TR_NONE, ESYS_TR_NONE, COUNTER_SIZE, 0, &data);
        if (rc != TSS2_RC_SUCCESS)
                return auth_fail(t, "reading the counter", rc);
        if (data->size != COUNTER_SIZE) {
                Esys_Free(data);
                tpm2_set_error(t, "the counter's value is not 8 bytes");
                return -EIO;
        }
        for (unsigned i = 0; i < COUNTER_SIZE; i++)
                v = v << 8 | data->buffer[i];
        Esys_Free(data);
        if (value)
                *value = v;
        return 0;
}

static int do_increment(struct tpm2 *t, ESYS_TR idx, ESYS_TR sess)
{
        TSS2_RC rc = Esys_NV_Increment(tpm2_esys(t), idx, idx, sess, ESYS_TR_NONE, ESYS_TR_NONE);

        return rc == TSS2_RC_SUCCESS ? 0 : auth_fail(t, "incrementing the counter", rc);
}

enum step { STEP_READ, STEP_INCREMENT };

/* What every use of the counter starts with: an auth value that fits, the deadline, no old error. */
static int start(struct tpm2 *t, const struct secret *auth, int64_t deadline_ms)
{
        if (!t || !auth || auth->len == 0 || auth->len > sizeof(((TPM2B_AUTH *)0)->buffer))
                return -EINVAL;
        tpm2_set_deadline(t, deadline_ms);
        tpm2_set_error(t, "");
        return 0;
}

/* Open index, check it is thaw's, and read it or increment it (then read it) under auth. */
static int use(struct tpm2 *t, uint32_t index, const struct secret *auth, int64_t deadline_ms, enum step s,
               uint64_t *value)
{
        ESYS_TR idx = ESYS_TR_NONE, sess = ESYS_TR_NONE;
        TPMS_NV_PUBLIC pub;
        int r = start(t, auth, deadline_ms);

        if (r < 0)
                return r;
        r = open_index(t, index, &idx, &pub);
        if (r == 0)
                r = check_public(t, &pub);
        if (r == 0)
                r = set_auth(t, idx, auth);
        if (r == 0)
                r = hmac_session(t, &sess);
        if (r == 0 && s == STEP_INCREMENT)
                r = do_increment(t, idx, sess);
        if (r == 0)
                r = do_read(t, idx, sess, value);
        flush_tr(t, &sess);
        close_tr(t, &idx);
        return r;
}

int tpm2_counter_read(struct tpm2 *t, uint32_t index, const struct secret *auth, int64_t deadline_ms,
                      uint64_t *value)
{
        return use(t, index, auth, deadline_ms, STEP_READ, value);
}

int tpm2_counter_increment(struct tpm2 *t, uint32_t index, const struct secret *auth, int64_t deadline_ms,
                           uint64_t *value)
{
        return use(t, index, auth, deadline_ms, STEP_INCREMENT, value);
}

/*
 * NV_DefineSpace under the owner's (empty) authorization, in a session salted with the storage
 * primary key that encrypts the first parameter: the auth value crosses the bus encrypted.
 */
static int define(struct tpm2 *t, uint32_t index, const struct secret *auth)
{
        TPM2B_NV_PUBLIC pub = {
                .nvPublic = { .nvIndex = index, .nameAlg = TPM2_ALG_SHA256, .attributes = COUNTER_ATTRS,
                              .dataSize = COUNTER_SIZE },
        };
        ESYS_TR sess = ESYS_TR_NONE, idx = ESYS_TR_NONE;
        TPM2B_AUTH a = { .size = (UINT16)auth->len };
        TSS2_RC rc, base;
        int r;

        r = tpm2_salted_session(t, TPM2_SE_HMAC, TPMA_SESSION_DECRYPT | TPMA_SESSION_CONTINUESESSION, &sess);
        if (r == -EACCES)
                tpm2_set_error(t, OWNER_PASSWORD);
        if (r < 0)
                return r;
        memcpy(a.buffer, auth->data, auth->len);
        rc = Esys_NV_DefineSpace(tpm2_esys(t), ESYS_TR_RH_OWNER, sess, ESYS_TR_NONE, ESYS_TR_NONE, &a, &pub, &idx);
        explicit_bzero(&a, sizeof(a));
        flush_tr(t, &sess);
        close_tr(t, &idx);
        if (rc == TSS2_RC_SUCCESS)
                return 0;
        r = tpm2_fail(t, "defining the counter", rc);
        base = tpm2_rc_base(rc);
        if (r != -EIO)
                return r;
        if (base == TPM2_RC_NV_DEFINED)
                return -EEXIST;
        if (base == TPM2_RC_NV_SPACE)
                return -ENOSPC;
        if (base == TPM2_RC_AUTH_FAIL || base == TPM2_RC_BAD_AUTH || base == TPM2_RC_HIERARCHY ||
            base == TPM2_RC_LOCKOUT) {
                tpm2_set_error(t, base == TPM2_RC_HIERARCHY ? "the owner hierarchy is disabled" : OWNER_PASSWORD);
                return -EACCES;
        }
        return -EIO;
}

int tpm2_counter_define(struct tpm2 *t, uint32_t index, const struct secret *auth, int64_t deadline_ms,
                        uint64_t *value, bool *created)
{
        ESYS_TR idx = ESYS_TR_NONE;
        TPMS_NV_PUBLIC pub;
        bool made = false;
        int r = start(t, auth, deadline_ms);

        if (r < 0)
                return r;
        r = open_index(t, index, &idx, &pub);
        close_tr(t, &idx);
        if (r == -ENOENT) {
                r = define(t, index, auth);
                made = r == 0;
                if (r == 0)
                        r = open_index(t, index, &idx, &pub);
                close_tr(t, &idx);
        }
        if (r == 0)
                r = check_public(t, &pub);
        /* Once written, it can be read; an index thaw defined earlier with another auth fails here. */
        if (r == 0)
                r = (pub.attributes & TPMA_NV_WRITTEN) ? tpm2_counter_read(t, index, auth, deadline_ms, value) :
                                                          tpm2_counter_increment(t, index, auth, deadline_ms, value);
        if (r == 0 && created)
                *created = made;
        return r;
}

/* The one line for a failure of op on index. */
static void say_why(struct tpm2 *tpm, uint32_t index, enum tpm2_counter_op op, int r, char *why, size_t size)
{
        static const char *const verbs[] = { "read", "increment", "define" };
        const char *e = tpm2_error(tpm);

        switch (r) {
        case -ENOENT:
                snprintf(why, size, "this TPM has no counter of the volume (NV index 0x%08x): another TPM, or it was "
                         "never defined (thaw enroll --device DEV --tpm-counter)", index);
                break;
        case -EACCES:
                snprintf(why, size, "cannot %s the TPM counter at NV index 0x%08x: %s", verbs[op], index,
                         op == TPM2_COUNTER_DEFINE && *e && strstr(e, "owner") ? e :
                         "it refuses this volume's auth value (another volume's index, or defined by someone "
                         "else)");
                break;
        case -EEXIST:
                snprintf(why, size, "%s", e);
                break;
        case -ENOSPC:
                snprintf(why, size, "cannot define the TPM counter: the TPM's NV memory is full");
                break;
        default:
                snprintf(why, size, "cannot %s the TPM counter at NV index 0x%08x (%s)", verbs[op], index,
                         *e ? e : strerror(-r));
        }
}

int tpm2_counter_volume(const char *root, const char *luks_uuid, const struct secret *ticket_key,
                        enum tpm2_counter_op op, int64_t deadline_ms, uint64_t *value, char *why, size_t size)
{
        char detail[256] = "";
        struct keysrc_ctx kc = { .root = root ? root : "", .deadline_ms = deadline_ms, .detail = detail,
                                 .detail_size = sizeof(detail) };
        uint32_t index = tpm2_counter_index(luks_uuid);
        struct secret *auth = NULL;
        struct tpm2 *tpm = NULL;
        int r;

        if (why && size)
                why[0] = '\0';
        if (!luks_uuid || !ticket_key || !value)
                return -EINVAL;
        r = tpm2_open_boot(&kc, &tpm);
        if (r < 0) {
                if (why && size)
                        snprintf(why, size, "%s", *detail ? detail : r == -ENODEV ? "no TPM2 device" : strerror(-r));
                return r;
        }
        r = tpm2_counter_auth(ticket_key, &auth);
        if (r == 0) {
                if (op == TPM2_COUNTER_DEFINE)
                        r = tpm2_counter_define(tpm, index, auth, deadline_ms, value, NULL);
                else if (op == TPM2_COUNTER_INCREMENT)
                        r = tpm2_counter_increment(tpm, index, auth, deadline_ms, value);
                else
                        r = tpm2_counter_read(tpm, index, auth, deadline_ms, value);
        }
        if (r < 0 && why && size)
                say_why(tpm, index, op, r, why, size);
        secret_free(auth);
        tpm2_close(tpm);
        return r;
}

bool tpm2_counter_wanted(const struct luks_tokens *tokens)
{
        for (size_t i = 0; tokens && i < tokens->n; i++) {
                if (strcmp(tokens->t[i].type, TPM2_TOKEN_TYPE) == 0)
                        return true;
        }
        return false;
}

int tpm2_counter_enroll(const char *root, const char *dev, const struct secret *key, const struct luks_policy *p,
                        int64_t deadline_ms, uint32_t *index, uint64_t *value, char *why, size_t size)
{
        struct secret *tk = NULL;
        char uuid[64];
        int r;

        if (why && size)
                why[0] = '\0';
        r = luks_uuid(dev, uuid, sizeof(uuid));
        if (r < 0) {
                if (why && size)
                        snprintf(why, size, "cannot read the LUKS2 UUID of %s (%s)", dev, strerror(-r));
                return r;
        }
        r = key ? luks_ticket_key(dev, key, p, &tk) : ticket_key_load(uuid, &tk);
        if (r < 0) {
                if (why && size)
                        snprintf(why, size, key ? "cannot recover the volume key of %s (%s)" :
                                 "no ticket key of %s in root's keyring (%s)", dev, strerror(-r));
                return r;
        }
        r = tpm2_counter_volume(root, uuid, tk, TPM2_COUNTER_DEFINE, deadline_ms, value, why, size);
        secret_free(tk);
        if (r == 0 && index)
                *index = tpm2_counter_index(uuid);
        return r;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A TPM2 through tpm2-tss ESAPI: seal and unseal a key under a PCR policy, read and extend PCRs. */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>
#include "base/clock.h"
#include "tpm2.h"
#include "tpm2_esys.h"

/*
 * A TPM that never answers must not hold the boot: ESYS's synchronous calls wait for ever (they set
 * the TCTI timeout to "block" whatever Esys_SetTimeout() says), so ESYS talks to the TPM through a
 * TCTI of ours that polls the real one's handles before each receive, until the deadline (but at
 * least TPM2_CMD_MIN_MS, so that the lock after a spent deadline still gets its chance, and at most
 * TPM2_CMD_MAX_MS). After one timeout the TPM is given up for good.
 */
#define TPM2_CMD_MIN_MS 2000
#define TPM2_CMD_MAX_MS 30000
#define BOUNDED_MAGIC 0x7468617774706d32ULL /* "thawtpm2" */

struct tpm2 {
        TSS2_TCTI_CONTEXT_COMMON_V2 bounded; /* first: what ESYS is given */
        TSS2_TCTI_CONTEXT *tcti;             /* the real TCTI */
        ESYS_CONTEXT *esys;
        int64_t deadline_ms;                 /* CLOCK_MONOTONIC; 0: none */
        int waited_ms;                       /* the wait that ran out */
        bool answer_due;                     /* a command went out; its answer not yet waited for */
        bool hung;
        char error[160];
};

static struct tpm2 *of_tcti(TSS2_TCTI_CONTEXT *c)
{
        return (struct tpm2 *)(void *)c;
}

static int wait_ms(const struct tpm2 *t)
{
        int64_t left = t->deadline_ms ? t->deadline_ms - clock_now_ms() : TPM2_CMD_MAX_MS;

        if (left < TPM2_CMD_MIN_MS)
                left = TPM2_CMD_MIN_MS;
        if (left > TPM2_CMD_MAX_MS)
                left = TPM2_CMD_MAX_MS;
        return (int)left;
}

static TSS2_RC bounded_transmit(TSS2_TCTI_CONTEXT *c, size_t size, const uint8_t *cmd)
{
        struct tpm2 *t = of_tcti(c);

        TSS2_RC rc;

        if (t->hung)
                return TSS2_TCTI_RC_IO_ERROR;
        rc = Tss2_Tcti_Transmit(t->tcti, size, cmd);
        t->answer_due = rc == TSS2_RC_SUCCESS;
        return rc;
}

static TSS2_RC bounded_receive(TSS2_TCTI_CONTEXT *c, size_t *size, uint8_t *buf, int32_t timeout)
{
        struct tpm2 *t = of_tcti(c);
        TSS2_TCTI_POLL_HANDLE fds[4];
        size_t n = sizeof(fds) / sizeof(fds[0]);

        (void)timeout; /* ESYS asks to block for ever */
        if (t->hung)
                return TSS2_TCTI_RC_IO_ERROR;
        /*
         * The device TCTI has a handle to poll; a TCTI without one (swtpm's, in tests) is waited for.
         * Only the first receive after a command waits: SAPI may then ask for the size (NULL buf) and
         * read the rest, and a 10-byte answer is whole once its header is read (nothing left to poll).
         */
        if (t->answer_due && Tss2_Tcti_GetPollHandles(t->tcti, fds, &n) == TSS2_RC_SUCCESS && n > 0) {
                int ms = wait_ms(t), ready;

                for (size_t i = 0; i < n; i++) {
                        fds[i].events = POLLIN;
                        fds[i].revents = 0;
                }
                do
                        ready = poll(fds, n, ms);
                while (ready < 0 && errno == EINTR);
                if (ready == 0) {
                        t->hung = true;
                        t->waited_ms = ms;
                        return TSS2_TCTI_RC_IO_ERROR;
                }
        }
        t->answer_due = false;
        return Tss2_Tcti_Receive(t->tcti, size, buf, TSS2_TCTI_TIMEOUT_BLOCK);
}

static void bounded_finalize(TSS2_TCTI_CONTEXT *c)
{
        (void)c; /* the real TCTI is tpm2_close()'s to finalize */
}

static TSS2_RC bounded_cancel(TSS2_TCTI_CONTEXT *c)
{
        return Tss2_Tcti_Cancel(of_tcti(c)->tcti);
}

static TSS2_RC bounded_poll_handles(TSS2_TCTI_CONTEXT *c, TSS2_TCTI_POLL_HANDLE *h, size_t *n)
{
        return Tss2_Tcti_GetPollHandles(of_tcti(c)->tcti, h, n);
}

static TSS2_RC bounded_set_locality(TSS2_TCTI_CONTEXT *c, uint8_t locality)
{
        return Tss2_Tcti_SetLocality(of_tcti(c)->tcti, locality);
}

static TSS2_RC bounded_make_sticky(TSS2_TCTI_CONTEXT *c, TPM2_HANDLE *handle, uint8_t sticky)
{
        return Tss2_Tcti_MakeSticky(of_tcti(c)->tcti, handle, sticky);
}

static void bounded_init(struct tpm2 *t)
{
        t->bounded.v1.magic = BOUNDED_MAGIC;
        t->bounded.v1.version = 2;
        t->bounded.v1.transmit = bounded_transmit;
        t->bounded.v1.receive = bounded_receive;
        t->bounded.v1.finalize = bounded_finalize;
        t->bounded.v1.cancel = bounded_cancel;
        t->bounded.v1.getPollHandles = bounded_poll_handles;
        t->bounded.v1.setLocality = bounded_set_locality;
        t->bounded.makeSticky = bounded_make_sticky;
}

void tpm2_set_deadline(struct tpm2 *t, int64_t deadline_ms)
{
        if (t)
                t->deadline_ms = deadline_ms;
}

/*
 * The storage primary key: the TCG Provisioning Guidance's ECC P-256 SRK template (fixed, so it is
 * the same key on every boot of the same TPM and a different one on any other TPM). ECC P-256
 * because CreatePrimary of an RSA key can take seconds on a vTPM.
 */
static const TPM2B_PUBLIC primary_template = {
        .publicArea = {
                .type = TPM2_ALG_ECC,
                .nameAlg = TPM2_ALG_SHA256,
                .objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
                                    TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH |
                                    TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT | TPMA_OBJECT_NODA,
                .parameters.eccDetail = {
                        .symmetric = { .algorithm = TPM2_ALG_AES, .keyBits.aes = 128,
                                       .mode.aes = TPM2_ALG_CFB },
                        .scheme.scheme = TPM2_ALG_NULL,
                        .curveID = TPM2_ECC_NIST_P256,
                        .kdf.scheme = TPM2_ALG_NULL,
                },
        },
};

static const TPMT_SYM_DEF session_sym = {
        .algorithm = TPM2_ALG_AES, .keyBits.aes = 128, .mode.aes = TPM2_ALG_CFB,
};

static const struct {
        const char *name;
        uint16_t alg;
        size_t size;
} banks[] = {
        { "sha1", TPM2_ALG_SHA1, 20 },
        { "sha256", TPM2_ALG_SHA256, 32 },
        { "sha384", TPM2_ALG_SHA384, 48 },
        { "sha512", TPM2_ALG_SHA512, 64 },
};

uint16_t tpm2_bank_from_name(const char *name)
{
        for (size_t i = 0; name && i < sizeof(banks) / sizeof(banks[0]); i++) {
                if (strcmp(banks[i].name, name) == 0)
                        return banks[i].alg;
        }
        return 0;
}

const char *tpm2_bank_name(uint16_t bank)
{
        for (size_t i = 0; i < sizeof(banks) / sizeof(banks[0]); i++) {
                if (banks[i].alg == bank)
                        return banks[i].name;
        }
        return NULL;
}

size_t tpm2_bank_size(uint16_t bank)
{
        for (size_t i = 0; i < sizeof(banks) / sizeof(banks[0]); i++) {
                if (banks[i].alg == bank)
                        return banks[i].size;
        }
        return 0;
}

/* The TPM's own code without the session, handle or parameter number of format-1 codes. */
static TSS2_RC rc_base(TSS2_RC rc)
{
        if ((rc & TSS2_RC_LAYER_MASK) != TSS2_TPM_RC_LAYER)
                return rc;
        return (rc & TPM2_RC_FMT1) ? (rc & (TPM2_RC_FMT1 | 0x3f)) : rc;
}

/* Record rc for tpm2_error() and map it to the errno of an unexpected TPM failure. */
static int fail(struct tpm2 *t, const char *what, TSS2_RC rc)
{
        if (t->hung) {
                snprintf(t->error, sizeof(t->error), "%s: no answer within %d ms", what, t->waited_ms);
                return -ETIMEDOUT;
        }
        snprintf(t->error, sizeof(t->error), "%s: %s", what, Tss2_RC_Decode(rc));
        return -EIO;
}

const char *tpm2_error(const struct tpm2 *t)
{
        return t ? t->error : "";
}

ESYS_CONTEXT *tpm2_esys(struct tpm2 *t)
{
        return t->esys;
}

int tpm2_fail(struct tpm2 *t, const char *what, TSS2_RC rc)
{
        return fail(t, what, rc);
}

void tpm2_set_error(struct tpm2 *t, const char *text)
{
        snprintf(t->error, sizeof(t->error), "%s", text);
}

TSS2_RC tpm2_rc_base(TSS2_RC rc)
{
        return rc_base(rc);
}

int tpm2_open(const char *tcti, struct tpm2 **out)
{
        struct tpm2 *t;
        TSS2_RC rc;

        if (!tcti || !out)
                return -EINVAL;
        /* No setenv() here: this code also runs inside libcryptsetup's caller (the token plugin),
         * whose environment is not ours to change. thaw's main() quiets tpm2-tss (TSS2_LOG). */
        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        rc = Tss2_TctiLdr_Initialize(tcti, &t->tcti);
        if (rc != TSS2_RC_SUCCESS) {
                free(t);
                /* tctildr says NOT_SUPPORTED/NOT_IMPLEMENTED when it cannot dlopen the TCTI module. */
                if ((rc & ~TSS2_RC_LAYER_MASK) == TSS2_BASE_RC_NOT_SUPPORTED ||
                    (rc & ~TSS2_RC_LAYER_MASK) == TSS2_BASE_RC_NOT_IMPLEMENTED)
                        return -ENOPKG;
                return -ENODEV;
        }
        bounded_init(t);
        rc = Esys_Initialize(&t->esys, (TSS2_TCTI_CONTEXT *)(void *)&t->bounded, NULL);
        if (rc != TSS2_RC_SUCCESS) {
                Tss2_TctiLdr_Finalize(&t->tcti);
                free(t);
                return -ENODEV;
        }
        *out = t;
        return 0;
}

void tpm2_close(struct tpm2 *t)
{
        if (!t)
                return;
        Esys_Finalize(&t->esys);
        Tss2_TctiLdr_Finalize(&t->tcti);
        free(t);
}

static void flush(struct tpm2 *t, ESYS_TR *h)
{
        if (*h != ESYS_TR_NONE)
                Esys_FlushContext(t->esys, *h);
        *h = ESYS_TR_NONE;
}

/*
 * The primary keys systemd 252 makes for systemd-cryptenroll's systemd-tpm2 tokens (tpm2_make_primary()
 * in its src/shared/tpm2-util.c): the same seed gives the same key only from exactly these
 * templates. ECC unless the token says "rsa"; no noDA, unlike ours.
 */
static const TPM2B_PUBLIC systemd_primary_ecc = {
        .size = sizeof(TPMT_PUBLIC),
        .publicArea = {
                .type = TPM2_ALG_ECC,
                .nameAlg = TPM2_ALG_SHA256,
                .objectAttributes = TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT | TPMA_OBJECT_FIXEDTPM |
                                    TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN |
                                    TPMA_OBJECT_USERWITHAUTH,
                .parameters.eccDetail = {
                        .symmetric = { .algorithm = TPM2_ALG_AES, .keyBits.aes = 128,
                                       .mode.aes = TPM2_ALG_CFB },
                        .scheme.scheme = TPM2_ALG_NULL,
                        .curveID = TPM2_ECC_NIST_P256,
                        .kdf.scheme = TPM2_ALG_NULL,
                },
        },
};

static const TPM2B_PUBLIC systemd_primary_rsa = {
        .size = sizeof(TPMT_PUBLIC),
        .publicArea = {
                .type = TPM2_ALG_RSA,
                .nameAlg = TPM2_ALG_SHA256,
                .objectAttributes = TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT | TPMA_OBJECT_FIXEDTPM |
                                    TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN |
                                    TPMA_OBJECT_USERWITHAUTH,
                .parameters.rsaDetail = {
                        .symmetric = { .algorithm = TPM2_ALG_AES, .keyBits.aes = 128,
                                       .mode.aes = TPM2_ALG_CFB },
                        .scheme.scheme = TPM2_ALG_NULL,
                        .keyBits = 2048,
                },
        },
};

static int primary_from(struct tpm2 *t, const TPM2B_PUBLIC *tmpl, ESYS_TR *out)
{
        TPM2B_SENSITIVE_CREATE sens = { 0 };
        TPML_PCR_SELECTION none = { 0 };
        TPM2B_DATA outside = { 0 };
        TSS2_RC rc;

        rc = Esys_CreatePrimary(t->esys, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
                                &sens, tmpl, &outside, &none, out, NULL, NULL, NULL, NULL);
        return rc == TSS2_RC_SUCCESS ? 0 : fail(t, "creating the storage primary key", rc);
}

static int primary(struct tpm2 *t, ESYS_TR *out)
{
        return primary_from(t, &primary_template, out);
}

/* The name ESYS computed from the public area the TPM returned for h. */
static int name_of(struct tpm2 *t, ESYS_TR h, struct tpm2_name *out)
{
        TPM2B_NAME *name = NULL;
        TSS2_RC rc;
        int r = 0;

        rc = Esys_TR_GetName(t->esys, h, &name);
        if (rc != TSS2_RC_SUCCESS)
                return fail(t, "reading the storage primary key's name", rc);
        if (name->size == 0 || name->size > sizeof(out->name))
                r = -EIO;
        else {
                memcpy(out->name, name->name, name->size);
                out->len = name->size;
        }
        Esys_Free(name);
        return r;
}

/*
 * Security: the primary key salts the session that carries the unsealed key back. A primary whose
 * name is not the enrollment's is another TPM's, or a key something on the way to the TPM made up
 * to read that key: not used at all.
 */
static int check_primary(struct tpm2 *t, ESYS_TR prim, const struct tpm2_name *want)
{
        struct tpm2_name got;
        int r;

        if (!want || want->len == 0)
                return 0;
        r = name_of(t, prim, &got);
        if (r < 0)
                return r;
        if (got.len != want->len || CRYPTO_memcmp(got.name, want->name, got.len) != 0) {
                snprintf(t->error, sizeof(t->error), "the storage primary key is not the one the key was "
                         "sealed under");
                return -EXDEV;
        }
        return 0;
}

/*
 * A session salted with the primary key, so what crosses the bus to and from the TPM (the key being
 * sealed, the unsealed key) is encrypted: a vTPM's transport is the host's to read.
 */
static int session(struct tpm2 *t, ESYS_TR prim, TPM2_SE type, TPMA_SESSION attrs, ESYS_TR *out)
{
        TSS2_RC rc;

        rc = Esys_StartAuthSession(t->esys, prim, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
                                   NULL, type, &session_sym, TPM2_ALG_SHA256, out);
        if (rc != TSS2_RC_SUCCESS)
                return fail(t, "starting a session", rc);
        rc = Esys_TRSess_SetAttributes(t->esys, *out, attrs, 0xff);
        if (rc != TSS2_RC_SUCCESS) {
                flush(t, out);
                return fail(t, "setting session attributes", rc);
        }
        return 0;
}

static void selection(uint16_t bank, uint32_t mask, TPML_PCR_SELECTION *sel)
{
        memset(sel, 0, sizeof(*sel));
        sel->count = 1;
        sel->pcrSelections[0].hash = bank;
        sel->pcrSelections[0].sizeofSelect = 3;
        for (unsigned i = 0; i < 3; i++)
                sel->pcrSelections[0].pcrSelect[i] = (uint8_t)(mask >> (8 * i));
}

int tpm2_pcr_read(struct tpm2 *t, uint16_t bank, unsigned pcr, uint8_t *out)
{
        TPML_PCR_SELECTION sel, *got = NULL;
        TPML_DIGEST *values = NULL;
        size_t size = tpm2_bank_size(bank);
        TSS2_RC rc;
        int r = 0;

        if (!t || !out || pcr >= TPM2_PCR_COUNT || size == 0)
                return -EINVAL;
        selection(bank, 1u << pcr, &sel);
        rc = Esys_PCR_Read(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &sel, NULL, &got, &values);
        if (rc != TSS2_RC_SUCCESS)
                return fail(t, "reading a PCR", rc);
        /* A bank the TPM does not keep comes back empty. */
        if (values->count != 1 || values->digests[0].size != size)
                r = -EOPNOTSUPP;
        else
                memcpy(out, values->digests[0].buffer, size);
        Esys_Free(got);
        Esys_Free(values);
        return r;
}

int tpm2_pcr_extend(struct tpm2 *t, unsigned pcr, const char *what)
{
        TPM2B_EVENT ev = { 0 };
        TPML_DIGEST_VALUES *digests = NULL;
        TSS2_RC rc;

        if (!t || !what || pcr >= TPM2_PCR_COUNT || strlen(what) > sizeof(ev.buffer))
                return -EINVAL;
        ev.size = (UINT16)strlen(what);
        memcpy(ev.buffer, what, ev.size);
        rc = Esys_PCR_Event(t->esys, ESYS_TR_PCR0 + pcr, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &ev,
                            &digests);
        Esys_Free(digests);
        return rc == TSS2_RC_SUCCESS ? 0 : fail(t, "extending a PCR", rc);
}

static int digest(const EVP_MD *md, const void *a, size_t alen, const void *b, size_t blen,
                  const void *c, size_t clen, uint8_t *out)
{
        EVP_MD_CTX *ctx = EVP_MD_CTX_new();
        int ok;

        if (!ctx)
                return -ENOMEM;
        ok = EVP_DigestInit_ex(ctx, md, NULL) && EVP_DigestUpdate(ctx, a, alen) &&
             (blen == 0 || EVP_DigestUpdate(ctx, b, blen)) && (clen == 0 || EVP_DigestUpdate(ctx, c, clen)) &&
             EVP_DigestFinal_ex(ctx, out, NULL);
        EVP_MD_CTX_free(ctx);
        return ok ? 0 : -EIO;
}

int tpm2_policy_pcr(uint16_t bank, uint32_t mask, const uint8_t values[][TPM2_DIGEST_MAX],
                    uint8_t policy[TPM2_POLICY_SIZE])
{
        uint8_t concat[TPM2_PCR_COUNT * TPM2_DIGEST_MAX], pcr_digest[TPM2_POLICY_SIZE];
        uint8_t zeros[TPM2_POLICY_SIZE] = { 0 }, head[4 + sizeof(TPML_PCR_SELECTION)];
        size_t size = tpm2_bank_size(bank), used = 0, off = 4;
        TPML_PCR_SELECTION sel;
        int r;

        if (!values || !policy || size == 0 || mask == 0 || mask >= (1u << TPM2_PCR_COUNT))
                return -EINVAL;
        for (unsigned pcr = 0; pcr < TPM2_PCR_COUNT; pcr++) {
                if (mask & (1u << pcr)) {
                        memcpy(concat + used, values[pcr], size);
                        used += size;
                }
        }
        /* pcrDigest uses the policy's hash (SHA-256, the sealed object's nameAlg), whatever the bank. */
        r = digest(EVP_sha256(), concat, used, NULL, 0, NULL, 0, pcr_digest);
        if (r < 0)
                return r;
        head[0] = (uint8_t)(TPM2_CC_PolicyPCR >> 24);
        head[1] = (uint8_t)(TPM2_CC_PolicyPCR >> 16);
        head[2] = (uint8_t)(TPM2_CC_PolicyPCR >> 8);
        head[3] = (uint8_t)TPM2_CC_PolicyPCR;
        selection(bank, mask, &sel);
        if (Tss2_MU_TPML_PCR_SELECTION_Marshal(&sel, head, sizeof(head), &off) != TSS2_RC_SUCCESS)
                return -EINVAL;
        return digest(EVP_sha256(), zeros, sizeof(zeros), head, off, pcr_digest, sizeof(pcr_digest), policy);
}

static int blob_split(const uint8_t *blob, size_t len, TPM2B_PRIVATE *priv, TPM2B_PUBLIC *pub)
{
        size_t off = 0;

        memset(priv, 0, sizeof(*priv));
        memset(pub, 0, sizeof(*pub));
        if (!blob || len == 0 || len > TPM2_BLOB_MAX)
                return -EINVAL;
        if (Tss2_MU_TPM2B_PRIVATE_Unmarshal(blob, len, &off, priv) != TSS2_RC_SUCCESS ||
            Tss2_MU_TPM2B_PUBLIC_Unmarshal(blob, len, &off, pub) != TSS2_RC_SUCCESS || off != len)
                return -EINVAL;
        /* Only what tpm2_seal() makes: a keyed-hash sealed object with a SHA-256 policy. */
        if (pub->publicArea.type != TPM2_ALG_KEYEDHASH || pub->publicArea.nameAlg != TPM2_ALG_SHA256 ||
            pub->publicArea.authPolicy.size != TPM2_POLICY_SIZE)
                return -EINVAL;
        return 0;
}

int tpm2_blob_policy(const uint8_t *blob, size_t blob_len, uint8_t policy[TPM2_POLICY_SIZE])
{
        TPM2B_PRIVATE priv;
        TPM2B_PUBLIC pub;
        int r = blob_split(blob, blob_len, &priv, &pub);

        if (r == 0)
                memcpy(policy, pub.publicArea.authPolicy.buffer, TPM2_POLICY_SIZE);
        return r;
}

static int create_sealed(struct tpm2 *t, ESYS_TR prim, ESYS_TR sess, const TPM2B_PUBLIC *tmpl,
                         TPM2B_SENSITIVE_CREATE *sens, uint8_t *blob, size_t size, size_t *len)
{
        TPM2B_PRIVATE *priv = NULL;
        TPM2B_PUBLIC *pub = NULL;
        TPML_PCR_SELECTION none = { 0 };
        TPM2B_DATA outside = { 0 };
        size_t off = 0;
        TSS2_RC rc;
        int r = 0;

        rc = Esys_Create(t->esys, prim, sess, ESYS_TR_NONE, ESYS_TR_NONE, sens, tmpl, &outside, &none, &priv,
                         &pub, NULL, NULL, NULL);
        if (rc != TSS2_RC_SUCCESS)
                return fail(t, "sealing", rc);
        if (Tss2_MU_TPM2B_PRIVATE_Marshal(priv, blob, size, &off) != TSS2_RC_SUCCESS ||
            Tss2_MU_TPM2B_PUBLIC_Marshal(pub, blob, size, &off) != TSS2_RC_SUCCESS)
                r = -EMSGSIZE;
        else
                *len = off;
        Esys_Free(priv);
        Esys_Free(pub);
        return r;
}

int tpm2_seal(struct tpm2 *t, const uint8_t policy[TPM2_POLICY_SIZE], const struct secret *data,
              uint8_t *blob, size_t blob_size, size_t *blob_len, struct tpm2_name *primary_name)
{
        /* No userWithAuth: the empty password never unseals it, only the policy does. */
        TPM2B_PUBLIC tmpl = {
                .publicArea = {
                        .type = TPM2_ALG_KEYEDHASH,
                        .nameAlg = TPM2_ALG_SHA256,
                        .objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_NODA,
                        .parameters.keyedHashDetail.scheme.scheme = TPM2_ALG_NULL,
                        .authPolicy.size = TPM2_POLICY_SIZE,
                },
        };
        TPM2B_SENSITIVE_CREATE *sens = NULL;
        ESYS_TR prim = ESYS_TR_NONE, sess = ESYS_TR_NONE;
        struct secret *hold = NULL;
        int r;

        if (!t || !policy || !data || data->len == 0 || data->len > TPM2_SEALED_MAX || !blob || !blob_len)
                return -EINVAL;
        memcpy(tmpl.publicArea.authPolicy.buffer, policy, TPM2_POLICY_SIZE);
        /* The key is copied into the TPM2 structure in locked memory, wiped on the way out. */
        r = secret_new(sizeof(*sens), &hold);
        if (r < 0)
                return r;
        sens = (TPM2B_SENSITIVE_CREATE *)(void *)hold->data;
        sens->sensitive.data.size = (UINT16)data->len;
        memcpy(sens->sensitive.data.buffer, data->data, data->len);
        r = primary(t, &prim);
        if (r == 0 && primary_name)
                r = name_of(t, prim, primary_name);
        if (r == 0)
                r = session(t, prim, TPM2_SE_HMAC, TPMA_SESSION_DECRYPT | TPMA_SESSION_CONTINUESESSION, &sess);
        if (r == 0)
                r = create_sealed(t, prim, sess, &tmpl, sens, blob, blob_size, blob_len);
        flush(t, &sess);
        flush(t, &prim);
        secret_free(hold);
        return r;
}

/* Load the sealed object; a blob that does not load was sealed by another TPM (or another seed). */
static int load(struct tpm2 *t, ESYS_TR prim, const uint8_t *blob, size_t len, ESYS_TR *out)
{
        TPM2B_PRIVATE priv;
        TPM2B_PUBLIC pub;
        TSS2_RC rc, base;
        int r;

        r = blob_split(blob, len, &priv, &pub);
        if (r < 0)
                return r;
        rc = Esys_Load(t->esys, prim, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &priv, &pub, out);
        if (rc == TSS2_RC_SUCCESS)
                return 0;
        base = rc_base(rc);
        /* Its integrity is checked with a key derived from this TPM's storage seed: another TPM's blob,
         * or this TPM's after a clear, fails that check. */
        fail(t, "loading the sealed key", rc);
        if (base == TPM2_RC_INTEGRITY || base == TPM2_RC_BINDING || base == TPM2_RC_SIZE ||
            base == TPM2_RC_KEY || base == TPM2_RC_VALUE)
                return -EXDEV;
        return -EIO;
}

static int policy_unseal(struct tpm2 *t, ESYS_TR sess, ESYS_TR obj, uint16_t bank, uint32_t mask,
                         struct secret **out)
{
        TPM2B_DIGEST empty = { 0 };
        TPM2B_SENSITIVE_DATA *data = NULL;
        TPML_PCR_SELECTION sel;
        struct secret *s = NULL;
        TSS2_RC rc, base;
        int r;

        selection(bank, mask, &sel);
        /* An empty pcrDigest: the TPM uses the PCRs' current values; a mismatch fails the unseal. */
        rc = Esys_PolicyPCR(t->esys, sess, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &empty, &sel);
        if (rc != TSS2_RC_SUCCESS) {
                fail(t, "PolicyPCR", rc);
                return rc_base(rc) == TPM2_RC_VALUE ? -EKEYREJECTED : -EIO;
        }
        rc = Esys_Unseal(t->esys, obj, sess, ESYS_TR_NONE, ESYS_TR_NONE, &data);
        if (rc != TSS2_RC_SUCCESS) {
                base = rc_base(rc);
                fail(t, "unsealing", rc);
                return base == TPM2_RC_POLICY_FAIL || base == TPM2_RC_VALUE ? -EKEYREJECTED : -EIO;
        }
        r = secret_new(data->size ? data->size : 1, &s);
        if (r == 0 && data->size == 0)
                r = -ENODATA;
        if (r == 0) {
                memcpy(s->data, data->buffer, data->size);
                s->len = data->size;
        }
        explicit_bzero(data, sizeof(*data));
        Esys_Free(data);
        if (r < 0) {
                secret_free(s);
                return r;
        }
        *out = s;
        return 0;
}

static int unseal_under(struct tpm2 *t, const TPM2B_PUBLIC *tmpl, const struct tpm2_name *want,
                        uint16_t bank, uint32_t mask, const uint8_t *blob, size_t blob_len, struct secret **out)
{
        ESYS_TR prim = ESYS_TR_NONE, obj = ESYS_TR_NONE, sess = ESYS_TR_NONE;
        int r;

        if (!t || !out || tpm2_bank_size(bank) == 0 || mask == 0 || mask >= (1u << TPM2_PCR_COUNT))
                return -EINVAL;
        t->error[0] = '\0';
        r = primary_from(t, tmpl, &prim);
        if (r == 0)
                r = check_primary(t, prim, want);
        if (r == 0)
                r = load(t, prim, blob, blob_len, &obj);
        /* ENCRYPT: the TPM encrypts the unsealed key in its response. */
        if (r == 0)
                r = session(t, prim, TPM2_SE_POLICY, TPMA_SESSION_ENCRYPT, &sess);
        if (r == 0)
                r = policy_unseal(t, sess, obj, bank, mask, out);
        if (r < 0 && t->hung)
                r = -ETIMEDOUT; /* whatever step it was: the TPM stopped answering */
        flush(t, &sess);
        flush(t, &obj);
        flush(t, &prim);
        return r;
}

int tpm2_unseal(struct tpm2 *t, uint16_t bank, uint32_t mask, const uint8_t *blob, size_t blob_len,
                const struct tpm2_name *primary_name, struct secret **out)
{
        return unseal_under(t, &primary_template, primary_name, bank, mask, blob, blob_len, out);
}

int tpm2_unseal_systemd(struct tpm2 *t, bool rsa, uint16_t bank, uint32_t mask, const uint8_t *blob,
                        size_t blob_len, struct secret **out)
{
        return unseal_under(t, rsa ? &systemd_primary_rsa : &systemd_primary_ecc, NULL, bank, mask, blob,
                            blob_len, out);
}

int tpm2_salted_session(struct tpm2 *t, TPM2_SE type, TPMA_SESSION attrs, ESYS_TR *out)
{
        ESYS_TR prim = ESYS_TR_NONE;
        int r = primary(t, &prim);

        /* The owner's authorization is the empty password; a TPM whose owner set one refuses it. */
        if (r == -EIO && strstr(t->error, "authorization failure"))
                r = -EACCES;

        if (r == 0)
                r = session(t, prim, type, attrs, out);
        flush(t, &prim);
        return r;
}

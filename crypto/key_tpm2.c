/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Key provider "tpm2[:pcrs=7+11][,bank=sha256][,lock=15]": a key sealed to the TPM2, in a thaw-tpm2 token. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>
#include "base/clock.h"
#include "key_provider.h"
#include "luks.h"
#include "tpm2.h"
#include "tpm2_token.h"
#include "base/util.h"

#define TPM2_POLL_MS 100
#define TPM2_GRACE_MS 1000 /* a driver that is there has made its device by then */
#define TPM2_KEY_SIZE 32
#define LOCK_EVENT "thaw: TPM2 key unsealed; locked for the rest of this boot"

static char tcti_override[256];

int tpm2_use_tcti(const char *tcti)
{
        if (!tcti || !*tcti || strlen(tcti) >= sizeof(tcti_override))
                return -EINVAL;
        snprintf(tcti_override, sizeof(tcti_override), "%s", tcti);
        return 0;
}

static int tpm2_check(const char *arg)
{
        struct tpm2_opts o;

        return tpm2_opts_parse(arg, &o);
}

/* 1 if a TPM driver (TIS or CRB, built in or loaded) is there: it has probed, or is probing. */
static int driver_present(const char *root)
{
        static const char *const drivers[] = { "/sys/module/tpm_tis", "/sys/module/tpm_crb" };
        char path[4096];

        for (size_t i = 0; i < sizeof(drivers) / sizeof(drivers[0]); i++) {
                int n = snprintf(path, sizeof(path), "%s%s", root, drivers[i]);

                if (n > 0 && (size_t)n < sizeof(path) && access(path, F_OK) == 0)
                        return 1;
        }
        return 0;
}

/*
 * The TPM, waiting until the deadline for a driver that is late to make /dev/tpmrm0. Once a driver
 * is there, a missing device is final after a short grace: a VM on a host without a vTPM must not
 * hold back the next source for the whole timeout.
 */
int tpm2_open_boot(const struct keysrc_ctx *ctx, struct tpm2 **out)
{
        int64_t deadline = ctx->deadline_ms;
        bool driver_seen = false;
        char tcti[4096 + 16];
        int n, r;

        if (tcti_override[0]) {
                r = tpm2_open(tcti_override, out);
                if (r == 0)
                        tpm2_set_deadline(*out, ctx->deadline_ms);
                return r;
        }
        n = snprintf(tcti, sizeof(tcti), "device:%s/dev/tpmrm0", ctx->root);
        if (n < 0 || (size_t)n >= sizeof(tcti))
                return -ENAMETOOLONG;
        for (;;) {
                int64_t left;

                r = tpm2_open(tcti, out);
                if (r != -ENODEV)
                        break;
                if (!driver_seen && driver_present(ctx->root)) {
                        driver_seen = true;
                        if (deadline > clock_now_ms() + TPM2_GRACE_MS)
                                deadline = clock_now_ms() + TPM2_GRACE_MS;
                }
                left = deadline - clock_now_ms();
                if (left <= 0)
                        break;
                clock_sleep_ms(left < TPM2_POLL_MS ? left : TPM2_POLL_MS);
        }
        if (r == 0)
                tpm2_set_deadline(*out, ctx->deadline_ms);
        if (r == -ENODEV && driver_seen)
                util_why(ctx->detail, ctx->detail_size, 0, "no TPM2 device (/dev/tpmrm0): the TPM driver found none");
        else if (r == -ENODEV)
                util_why(ctx->detail, ctx->detail_size, 0, "no TPM2 device (/dev/tpmrm0) appeared within the timeout");
        else if (r == -ENOPKG)
                util_why(ctx->detail, ctx->detail_size, 0,
                        "the TPM2 TCTI library (libtss2-tcti-device.so.0) is not installed");
        return r;
}

/* The one line that says why a token did not give its key. */
static void unseal_detail(const struct keysrc_ctx *ctx, int id, const struct tpm2_token *t, int r,
                          const struct tpm2 *tpm)
{
        char pcrs[80];

        tpm2_pcrs_format(t->pcrs, pcrs, sizeof(pcrs));
        if (r == -EKEYREJECTED)
                util_why(ctx->detail, ctx->detail_size, 0,
                        "PCR mismatch: PCRs %s (%s) differ from the enrollment in token %d (another boot "
                        "chain, or lock PCR %u moved: the key was unsealed already in this boot)",
                        pcrs, tpm2_bank_name(t->bank), id, t->lock);
        else if (r == -EXDEV && t->primary.len && strncmp(tpm2_error(tpm), "the storage primary", 19) == 0)
                util_why(ctx->detail, ctx->detail_size, 0,
                        "token %d was sealed by another TPM: this TPM's storage primary key is not the "
                        "enrollment's (a different or fresh TPM, or something answering in its place)", id);
        else if (r == -EXDEV)
                util_why(ctx->detail, ctx->detail_size, 0,
                        "token %d was sealed by another TPM: its key does not load on this one (a "
                        "different or fresh TPM)", id);
        else if (r == -ETIMEDOUT)
                util_why(ctx->detail, ctx->detail_size, 0,
                        "the TPM stopped answering on token %d (%s)", id, tpm2_error(tpm));
        else
                util_why(ctx->detail, ctx->detail_size, 0,
                        "TPM error on token %d: %s", id, r == -EIO ? tpm2_error(tpm) : strerror(-r));
}

/* Which failure to report when no token gave a key: the most telling one. */
static int rank(int r)
{
        switch (r) {
        case -ENOKEY: return 0;
        case -EKEYREJECTED: return 4;
        case -EIO: return 3;
        case -EXDEV: return 2;
        default: return 1;
        }
}

/*
 * Security: the token is outside input. It supplies only the sealed blob (the TPM checks its
 * integrity and policy); the source itself came from the chain. The session's PCR selection is the
 * token's, so a successful unseal proves the sealed policy covered exactly those PCRs: requiring
 * the lock PCR among them proves this boot's lock will stop a second unseal.
 */
static int try_token(struct tpm2 *tpm, const struct tpm2_opts *want, const struct luks_token_info *ti,
                     const struct keysrc_ctx *ctx, struct secret **out)
{
        struct tpm2_token t;
        char why[128], pcrs[80];
        int r;

        r = tpm2_token_parse(ti->json, &t, why, sizeof(why));
        if (r < 0) {
                util_why(ctx->detail, ctx->detail_size, 0, "thaw-tpm2 token %d is malformed (%s)", ti->id, why);
                return r;
        }
        if (t.lock != want->lock) {
                util_why(ctx->detail, ctx->detail_size, 0,
                        "thaw-tpm2 token %d was sealed with lock PCR %u, but this boot locks PCR %u "
                        "(lock=): not unsealing a key that would stay unsealable", ti->id, t.lock, want->lock);
                return -EINVAL;
        }
        if (t.bank != want->bank || (t.pcrs & want->pcrs) != want->pcrs) {
                tpm2_pcrs_format(want->pcrs, pcrs, sizeof(pcrs));
                util_why(ctx->detail, ctx->detail_size, 0,
                        "thaw-tpm2 token %d is not sealed to PCRs %s of bank %s, as the source asks",
                        ti->id, pcrs, tpm2_bank_name(want->bank));
                return -EINVAL;
        }
        r = tpm2_unseal(tpm, t.bank, t.pcrs, t.blob, t.blob_len, &t.primary, out);
        if (r < 0)
                unseal_detail(ctx, ti->id, &t, r, tpm);
        return r;
}

static int tpm2_fetch(const char *arg, const struct keysrc_ctx *ctx, struct secret **out)
{
        struct tpm2_opts want;
        struct tpm2 *tpm = NULL;
        struct secret *key = NULL;
        char saved[512] = "";
        int r, best = -ENOKEY;

        if (tpm2_opts_parse(arg, &want) < 0)
                return -EINVAL;
        if (!ctx->tokens) {
                util_why(ctx->detail, ctx->detail_size, 0,
                        "no thaw-tpm2 token on the device (its header was not read)");
                return -ENOKEY;
        }
        for (size_t i = 0; i < ctx->tokens->n && !key; i++) {
                const struct luks_token_info *ti = &ctx->tokens->t[i];

                if (strcmp(ti->type, TPM2_TOKEN_TYPE) != 0)
                        continue;
                if (!tpm) {
                        r = tpm2_open_boot(ctx, &tpm);
                        if (r < 0)
                                return r;
                }
                r = try_token(tpm, &want, ti, ctx, &key);
                if (r < 0 && rank(r) > rank(best)) {
                        best = r;
                        snprintf(saved, sizeof(saved), "%s", ctx->detail ? ctx->detail : "");
                }
        }
        if (!key) {
                tpm2_close(tpm);
                if (best == -ENOKEY)
                        util_why(ctx->detail, ctx->detail_size, 0, "no thaw-tpm2 token on the device");
                else if (saved[0])
                        util_why(ctx->detail, ctx->detail_size, 0, "%s", saved);
                return best;
        }
        /* Lock after use, before the key is used: if the PCR cannot be moved, the key is not used. */
        r = tpm2_pcr_extend(tpm, want.lock, LOCK_EVENT);
        if (r < 0) {
                util_why(ctx->detail, ctx->detail_size, 0,
                        "cannot extend lock PCR %u after unsealing (%s): key not used", want.lock,
                        tpm2_error(tpm));
                secret_free(key);
                tpm2_close(tpm);
                return r;
        }
        tpm2_close(tpm);
        *out = key;
        return 0;
}

/* The policy over the PCRs' present values, with the lock PCR at its reset value (zero). */
static int enroll_policy(struct tpm2 *tpm, const struct tpm2_opts *o, uint8_t policy[TPM2_POLICY_SIZE])
{
        uint8_t values[TPM2_PCR_COUNT][TPM2_DIGEST_MAX];
        int r;

        memset(values, 0, sizeof(values));
        for (unsigned pcr = 0; pcr < TPM2_PCR_COUNT; pcr++) {
                if (!(o->pcrs & (1u << pcr)))
                        continue;
                r = tpm2_pcr_read(tpm, o->bank, pcr, values[pcr]);
                if (r < 0)
                        return r;
        }
        /* Not its present value: after a TPM unlock at this boot, the lock PCR is extended already. */
        memset(values[o->lock], 0, sizeof(values[o->lock]));
        return tpm2_policy_pcr(o->bank, o->pcrs | (1u << o->lock), values, policy);
}

static int tpm2_enroll(const char *arg, const struct keysrc_ctx *ctx, struct secret **key,
                       struct json_object *token)
{
        struct tpm2_token t = { 0 };
        struct tpm2 *tpm = NULL;
        struct secret *k = NULL;
        int r;

        r = tpm2_opts_parse(arg, &t.opts);
        if (r < 0)
                return r;
        t.bank = t.opts.bank;
        t.lock = t.opts.lock;
        t.pcrs = t.opts.pcrs | (1u << t.lock);
        r = tpm2_open_boot(ctx, &tpm);
        if (r < 0)
                return r;
        r = enroll_policy(tpm, &t.opts, t.policy);
        if (r == -EOPNOTSUPP)
                util_why(ctx->detail, ctx->detail_size, 0,
                        "the TPM does not keep the %s PCR bank", tpm2_bank_name(t.bank));
        if (r == 0)
                r = secret_random(TPM2_KEY_SIZE, &k);
        if (r == 0)
                r = tpm2_seal(tpm, t.policy, k, t.blob, sizeof(t.blob), &t.blob_len, &t.primary);
        if (r == -EIO || r == -ETIMEDOUT)
                util_why(ctx->detail, ctx->detail_size, 0, "%s", tpm2_error(tpm));
        if (r == 0)
                r = tpm2_token_fields(&t, token);
        tpm2_close(tpm);
        if (r < 0) {
                secret_free(k);
                return r;
        }
        *key = k;
        return 0;
}

const struct key_provider key_tpm2_provider = {
        .name = "tpm2",
        .check = tpm2_check,
        .fetch = tpm2_fetch,
        .enroll = tpm2_enroll,
};

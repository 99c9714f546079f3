/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Key provider "systemd-tpm2": the key systemd 252's systemd-cryptenroll sealed to the TPM2. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "base64.h"
#include "key_provider.h"
#include "luks.h"
#include "systemd_tpm2_token.h"
#include "tpm2.h"
#include "tpm2_token.h"
#include "base/util.h"

static int sd_check(const char *arg)
{
        return arg[0] == '\0' ? 0 : -EINVAL;
}

/*
 * systemd-cryptsetup does not use the unsealed bytes as they are: it base64-encodes them (for
 * homed, and so a person could type them) and that text is the keyslot's passphrase.
 */
static int to_passphrase(const struct secret *raw, struct secret **out)
{
        struct secret *s = NULL;
        int r;

        r = secret_new((raw->len + 2) / 3 * 4 + 1, &s);
        if (r < 0)
                return r;
        r = base64_encode(raw->data, raw->len, (char *)s->data, s->cap);
        if (r < 0) {
                secret_free(s);
                return r;
        }
        s->len = (size_t)r;
        *out = s;
        return 0;
}

static void unseal_detail(const struct keysrc_ctx *ctx, int id, const struct systemd_tpm2_token *t, int r,
                          const struct tpm2 *tpm)
{
        char pcrs[80];

        tpm2_pcrs_format(t->pcrs, pcrs, sizeof(pcrs));
        if (r == -EKEYREJECTED)
                util_why(ctx->detail, ctx->detail_size, 0,
                        "PCR mismatch: PCRs %s (%s) differ from the enrollment in systemd-tpm2 token %d",
                        pcrs, t->bank, id);
        else if (r == -EXDEV)
                util_why(ctx->detail, ctx->detail_size, 0,
                        "systemd-tpm2 token %d was sealed by another TPM: its key does not load on this "
                        "one (a different or fresh TPM)", id);
        else
                util_why(ctx->detail, ctx->detail_size, 0, "TPM error on systemd-tpm2 token %d: %s", id,
                         r == -EIO ? tpm2_error(tpm) : strerror(-r));
}

static int rank(int r)
{
        switch (r) {
        case -ENOKEY: return 0;
        case -EKEYREJECTED: return 5;
        case -EIO: return 4;
        case -EXDEV: return 3;
        case -EOPNOTSUPP: return 2;
        default: return 1;
        }
}

/*
 * Security: the token is outside input and supplies only the sealed blob and how it was sealed;
 * the TPM checks the blob's integrity and policy. The source came from the chain.
 */
static int try_token(struct tpm2 **tpm, const struct luks_token_info *ti, const struct keysrc_ctx *ctx,
                     struct secret **out)
{
        struct systemd_tpm2_token t;
        struct secret *raw = NULL;
        char why[160];
        int r;

        r = systemd_tpm2_token_parse(ti->json, &t, why, sizeof(why));
        if (r < 0) {
                util_why(ctx->detail, ctx->detail_size, 0, "systemd-tpm2 token %d %s: %s", ti->id,
                         r == -EOPNOTSUPP ? "is not supported" : "is malformed", why);
                return r;
        }
        if (!*tpm) {
                r = tpm2_open_boot(ctx, tpm);
                if (r < 0)
                        return r;
        }
        r = tpm2_unseal_systemd(*tpm, t.primary == SYSTEMD_TPM2_PRIMARY_RSA, tpm2_bank_from_name(t.bank),
                                t.pcrs, t.blob, t.blob_len, &raw);
        if (r < 0) {
                unseal_detail(ctx, ti->id, &t, r, *tpm);
                return r;
        }
        r = to_passphrase(raw, out);
        secret_free(raw);
        return r;
}

static int sd_fetch(const char *arg, const struct keysrc_ctx *ctx, struct secret **out)
{
        struct tpm2 *tpm = NULL;
        struct secret *key = NULL;
        char saved[512] = "";
        int r, best = -ENOKEY;

        (void)arg;
        for (size_t i = 0; ctx->tokens && i < ctx->tokens->n && !key; i++) {
                const struct luks_token_info *ti = &ctx->tokens->t[i];

                if (strcmp(ti->type, SYSTEMD_TPM2_TYPE) != 0)
                        continue;
                r = try_token(&tpm, ti, ctx, &key);
                if (r == -ENODEV || r == -ENOPKG) {
                        best = r; /* no TPM: no other token can do better */
                        break;
                }
                if (r < 0 && rank(r) > rank(best)) {
                        best = r;
                        snprintf(saved, sizeof(saved), "%s", ctx->detail ? ctx->detail : "");
                }
        }
        tpm2_close(tpm);
        if (key) {
                *out = key;
                return 0;
        }
        if (best == -ENOKEY)
                util_why(ctx->detail, ctx->detail_size, 0, "no systemd-tpm2 token on the device");
        else if (saved[0])
                util_why(ctx->detail, ctx->detail_size, 0, "%s", saved);
        return best;
}

/* systemd-cryptenroll enrolls these; a second keyslot with the same key would only add confusion. */
static int sd_enroll(const char *arg, const struct keysrc_ctx *ctx, struct secret **key,
                     struct json_object *token)
{
        (void)arg;
        (void)key;
        (void)token;
        util_why(ctx->detail, ctx->detail_size, 0,
                "systemd-cryptenroll --tpm2-device= enrolls it; thaw only unseals it at boot");
        return -EOPNOTSUPP;
}

const struct key_provider key_systemd_tpm2_provider = {
        .name = "systemd-tpm2",
        .check = sd_check,
        .fetch = sd_fetch,
        .enroll = sd_enroll,
};

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The TPM2 lock at the end of `thaw resume`: extend the lock PCRs whatever the outcome. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "key_provider.h"
#include "luks.h"
#include "tpm2.h"
#include "tpm2_lock.h"
#include "tpm2_token.h"

#define LOCK_EVENT "thaw: resume helper done; TPM2 keys locked for the rest of this boot"

uint32_t tpm2_lock_pcrs(const struct keychain *chain, const struct luks_tokens *tokens)
{
        uint32_t pcrs = 0;

        for (size_t i = 0; chain && i < chain->n; i++) {
                struct tpm2_opts o;

                if (chain->src[i].type == KEYSRC_TPM2 && tpm2_opts_parse(chain->src[i].arg, &o) == 0)
                        pcrs |= 1u << o.lock;
        }
        /*
         * A thaw-tpm2 token the chain does not name (rd.thaw.key= changed, or another source first)
         * still holds a key that this boot's later stages could unseal. The header is unauthenticated:
         * a forged token can make this extend another PCR of 8-15 and so spoil a later unseal that
         * expects it (systemd's PCR 11 phases, say); that denial of service is no more than writing
         * the disk gives already, and no PCR outside 8-15 is ever touched.
         */
        for (size_t i = 0; tokens && i < tokens->n; i++) {
                struct tpm2_token *t;

                if (strcmp(tokens->t[i].type, TPM2_TOKEN_TYPE) != 0 || !(t = calloc(1, sizeof(*t))))
                        continue;
                if (tpm2_token_parse(tokens->t[i].json, t, NULL, 0) == 0)
                        pcrs |= 1u << t->lock;
                free(t);
        }
        return pcrs;
}

int tpm2_lock_boot(const char *root, uint32_t pcrs, int64_t deadline_ms, char *why, size_t size)
{
        struct keysrc_ctx kc = { .root = root, .deadline_ms = deadline_ms, .detail = why, .detail_size = size };
        struct tpm2 *tpm = NULL;
        int r;

        if (why && size)
                why[0] = '\0';
        if (pcrs == 0 || (pcrs & ~(((1u << (TPM2_LOCK_PCR_MAX + 1)) - 1) & ~((1u << TPM2_LOCK_PCR_MIN) - 1))))
                return -EINVAL;
        r = tpm2_open_boot(&kc, &tpm);
        if (r < 0)
                return r;
        /* Every lock PCR is tried, even after one failed: each one extended locks its tokens. */
        for (unsigned pcr = TPM2_LOCK_PCR_MIN; pcr <= TPM2_LOCK_PCR_MAX; pcr++) {
                int e;

                if (!(pcrs & (1u << pcr)))
                        continue;
                e = tpm2_pcr_extend(tpm, pcr, LOCK_EVENT);
                if (e < 0 && r == 0) {
                        r = e;
                        if (why && size)
                                snprintf(why, size, "PCR %u: %s", pcr,
                                         e == -EIO || e == -ETIMEDOUT ? tpm2_error(tpm) : strerror(-e));
                }
        }
        tpm2_close(tpm);
        return r;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer harness: the key source parsers fed from outside (SMBIOS type 11 entries, base64, chains) and the image ticket. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "key_provider.h"
#include "keysrc.h"
#include "ticket.h"
#include "tpm2_token.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The thaw-ticket token too: whatever the parse takes, the format writes and the parse reads back the same. */
static void ticket_round_trip(const char *json)
{
        static struct ticket t, back;
        static char buf[TICKET_JSON_MAX + 1];
        char why[160];

        memset(&t, 0, sizeof(t));
        memset(&back, 0, sizeof(back));
        if (ticket_parse(json, &t, why, sizeof(why)) < 0)
                return;
        if (ticket_format(&t, buf, sizeof(buf)) < 0 || ticket_parse(buf, &back, why, sizeof(why)) < 0 ||
            memcmp(&t, &back, sizeof(t)) != 0)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static uint8_t out[SECRET_MAX];
        struct secret *k = NULL;
        struct keychain c;
        char *spec;

        /* A raw entry as dmi-sysfs hands it over (capped as the provider caps it). */
        if (size <= SECRET_SCRATCH_MAX && smbios_find_credential(data, size, "k", &k) == 0)
                secret_free(k);
        (void)base64_decode((const char *)data, size, out, sizeof(out));
        spec = malloc(size + 1);
        if (spec) {
                memcpy(spec, data, size);
                spec[size] = '\0';
                struct tpm2_token *t = malloc(sizeof(*t));
                struct tpm2_opts o;
                char why[160];

                /* The thaw-tpm2 token is read from the unauthenticated header. */
                if (t)
                        (void)tpm2_token_parse(spec, t, why, sizeof(why));
                free(t);
                ticket_round_trip(spec);
                (void)tpm2_opts_parse(spec, &o);
                if (keychain_parse(spec, &c) == 0) {
                        char buf[KEYCHAIN_SPEC_MAX];

                        (void)keychain_format(&c, buf, sizeof(buf));
                }
                free(spec);
        }
        return 0;
}

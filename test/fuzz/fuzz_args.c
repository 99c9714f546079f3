/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer harness: the command line and thaw.conf parsers, and args_get(); input is CMDLINE NUL CONF. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A NUL-terminated copy of at most cap - 1 bytes, as resume_load_args() caps what it reads. */
static char *text(const uint8_t *p, size_t n, size_t cap)
{
        char *s;

        if (n >= cap)
                n = cap - 1;
        s = malloc(n + 1);
        if (s) {
                memcpy(s, p, n);
                s[n] = '\0';
        }
        return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const uint8_t *nul = memchr(data, '\0', size);
        size_t n = nul ? (size_t)(nul - data) : size;
        char *cmdline = text(data, n, ARGS_CMDLINE_MAX);
        char *conf = nul ? text(nul + 1, size - n - 1, ARGS_CONF_MAX) : NULL;
        static const char *const keys[] = { "device", "key", "name", "offset", "timeout", "mismatch", "verify",
                                            "header", "allow-url", "image_size", "swapin", "writer", "" };
        struct thaw_args a;
        char bad[ARGS_TOKEN_MAX], tok[64];
        const char *p;

        args_init(&a);
        if (conf)
                args_parse_conf(conf, &a, bad, sizeof(bad));
        if (cmdline) {
                args_parse_cmdline(cmdline, &a, bad, sizeof(bad));
                /* The tokenizer alone, with a buffer smaller than most tokens. */
                p = cmdline;
                while (args_next_token(&p, tok, sizeof(tok)) != 0)
                        ;
                args_name_valid(cmdline);
        }
        /* thaw config --get: every setting as parsed, into a buffer smaller than some values. */
        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
                args_get(&a, keys[i], tok, sizeof(tok));
        free(cmdline);
        free(conf);
        return 0;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer harness: provision.conf's parser and, for what it accepts, the size rule and the plan. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "provision/provconf.h"
#include "provision/provplan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        /* One byte over the cap, as provconf_load() reads it: the parser must refuse that too. */
        size_t n = size > PROVCONF_MAX + 1 ? PROVCONF_MAX + 1 : size;
        char *text = malloc(n + 1), why[PROVCONF_WHY_MAX];
        static const uint64_t mems[] = { 0, 1, 524288, 4020000, UINT64_MAX / 1024, UINT64_MAX };
        struct provconf c;
        struct provstate s = { 0 };
        struct provplan p;
        uint64_t b = 0;

        if (!text)
                return 0;
        memcpy(text, data, n);
        text[n] = '\0';
        if (provconf_parse(text, &c, why, sizeof(why)) == 0) {
                for (size_t i = 0; i < sizeof(mems) / sizeof(*mems); i++) {
                        s.mem_total_kib = mems[i];
                        if (provplan_size(&c.size, mems[i], &b) == 0 && (b % PROVPLAN_MIB != 0 || b < c.size.min))
                                abort(); /* whole MiB, at least min= */
                        (void)provplan_decide(&c, &s, &p);
                        s.configured = !s.configured;
                        s.exists = !s.exists;
                        s.bytes = b;
                }
        }
        free(text);
        return 0;
}

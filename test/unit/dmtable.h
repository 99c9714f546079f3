/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A live dm-crypt table parsed from a string: dm_crypt_parse() wipes its input, so a copy of it. */
#pragma once
#include <stdio.h>

#include "dev/dm.h"

static inline int parse(const char *text, struct dm_crypt *c)
{
        char buf[4096];

        snprintf(buf, sizeof(buf), "%s", text);
        return dm_crypt_parse(buf, c);
}

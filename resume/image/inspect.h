/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A hibernation image and this machine's verdict on it, as JSON (`thaw inspect --json`). */
#pragma once
#include <json-c/json.h>

#include "image/image.h"
#include "image/imgcheck.h"
#include "image/machine.h"

/* A new JSON object describing img, m and c; NULL if out of memory. The caller puts it. */
struct json_object *inspect_json(const struct image_info *img, const struct machine_info *m,
                                 const struct imgcheck *c);
/* "platform,crc32,…" for the flag bits set, "unknown" bits as hex; "none" if none. */
void inspect_flag_names(unsigned flags, char *buf, size_t size);

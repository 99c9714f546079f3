/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A sample image ticket, its key (derived from a known volume key), and its JSON changed one member at a time. */
#pragma once
#include <stdlib.h>
#include <string.h>
#include <json.h>
#include "ticket.h"

#define UUID "86ef0599-941f-4d25-80e6-68a97b7d5ffd"
#define BOOT "0f6f3c1e-5b2a-4c1d-9e8f-112233445566"
#define FS_UUID "d6b0c3a2-1f2e-4b3c-8d4e-5f6a7b8c9d0e"

static struct secret *key;

static inline void sample(struct ticket *t)
{
        memset(t, 0, sizeof(*t));
        for (int i = 0; i < TICKET_ID_SIZE; i++)
                t->id[i] = (uint8_t)i;
        t->time = 1700000000;
        strcpy(t->boot_id, BOOT);
        strcpy(t->kernel, "6.1.0-28-amd64");
        t->writer = TICKET_WRITER_THAW;
        t->n_fs = 1;
        strcpy(t->fs[0].type, "ext4");
        strcpy(t->fs[0].uuid, FS_UUID);
        t->fs[0].known = true;
        t->fs[0].mnt_count = 7;
        t->fs[0].mtime = 1699999000;
        t->fs[0].wtime = 1699999500;
        t->fs[0].kbytes_written = 123456789;
        t->fs[0].has_journal = true;
        t->fs[0].journal_seq = 4242;
        t->has_tpm_counter = true;
        t->tpm_counter = 99;
        t->has_image_mac = true;
        for (int i = 0; i < TICKET_MAC_SIZE; i++)
                t->image_mac[i] = (uint8_t)(32 + i);
        t->state = TICKET_FRESH;
}

static inline int setup_key(void **state)
{
        uint8_t vk[64];

        (void)state;
        for (int i = 0; i < 64; i++)
                vk[i] = (uint8_t)i;
        return ticket_key_derive(vk, sizeof(vk), UUID, &key);
}

static inline int teardown_key(void **state)
{
        (void)state;
        secret_freep(&key);
        return 0;
}

static inline void round_trip(const struct ticket *t)
{
        char json[TICKET_JSON_MAX + 1];
        struct ticket back;

        assert_int_equal(ticket_format(t, json, sizeof(json)), 0);
        memset(&back, 0, sizeof(back));
        assert_int_equal(ticket_parse(json, &back, NULL, 0), 0);
        assert_memory_equal(&back, t, sizeof(back));
}

/* The sealed sample's JSON with the member at path ("fs/0/mtime", array items by index) set to value (NULL: removed). */
static inline char *with(const char *base, const char *path, const char *value)
{
        struct json_object *h = json_tokener_parse(base), *o = h;
        char buf[128], *save = NULL, *part, *last = NULL, *out;

        assert_non_null(h);
        snprintf(buf, sizeof(buf), "%s", path);
        for (part = strtok_r(buf, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
                if (last)
                        o = json_object_is_type(o, json_type_array) ? json_object_array_get_idx(o, (size_t)atoi(last))
                                                                    : json_object_object_get(o, last);
                assert_non_null(o);
                last = part;
        }
        if (value) {
                struct json_object *v = json_tokener_parse(value);

                assert_true(v || strcmp(value, "null") == 0); /* JSON null is json-c's NULL */
                json_object_object_add(o, last, v);
        } else {
                json_object_object_del(o, last);
        }
        out = strdup(json_object_to_json_string_ext(h, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(h);
        assert_non_null(out);
        return out;
}

static inline const char *sample_json(void)
{
        static char json[TICKET_JSON_MAX + 1];
        struct ticket t;

        sample(&t);
        assert_int_equal(ticket_seal(&t, key), 0);
        assert_int_equal(ticket_format(&t, json, sizeof(json)), 0);
        return json;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The image ticket's token JSON: written in one fixed form, read back strictly (the disk is outside input). */
#include "jsontext.h"
#include "ticket.h"
#include "base/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#define NAME_MAX_ 48 /* "fs[15].kbytes-written" */

static void hex_encode(const uint8_t *in, size_t len, char *out)
{
        static const char digits[] = "0123456789abcdef";

        for (size_t i = 0; i < len; i++) {
                out[2 * i] = digits[in[i] >> 4];
                out[2 * i + 1] = digits[in[i] & 15];
        }
        out[2 * len] = '\0';
}

static int nibble(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        return -1; /* lower case only: what we write */
}

static int hex_decode(const char *in, size_t in_len, uint8_t *out, size_t len)
{
        if (in_len != 2 * len)
                return -EINVAL;
        for (size_t i = 0; i < len; i++) {
                int hi = nibble(in[2 * i]), lo = nibble(in[2 * i + 1]);

                if (hi < 0 || lo < 0)
                        return -EINVAL;
                out[i] = (uint8_t)(hi << 4 | lo);
        }
        return 0;
}

/* Text that goes into a field of size bytes, as it stands (whatever it holds: the parse judges it). */
static struct json_object *text(const char *s, size_t size)
{
        return json_object_new_string_len(s, (int)strnlen(s, size));
}

static struct json_object *fs_entry(const struct fsmark *f)
{
        struct json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_object_object_add(o, "uuid", text(f->uuid, sizeof(f->uuid)));
        json_object_object_add(o, "type", text(f->type, sizeof(f->type)));
        json_object_object_add(o, "known", json_object_new_boolean(f->known));
        json_object_object_add(o, "mnt-count", json_object_new_int64(f->mnt_count));
        json_object_object_add(o, "mtime", json_object_new_int64(f->mtime));
        json_object_object_add(o, "wtime", json_object_new_int64(f->wtime));
        json_object_object_add(o, "kbytes-written", json_object_new_uint64(f->kbytes_written));
        json_object_object_add(o, "journal", json_object_new_boolean(f->has_journal));
        json_object_object_add(o, "journal-seq", json_object_new_int64(f->journal_seq));
        json_object_object_add(o, "generation", json_object_new_uint64(f->generation));
        return o;
}

static struct json_object *build(const struct ticket *t)
{
        char hex[2 * TICKET_MAC_SIZE + 1];
        struct json_object *o = json_object_new_object(), *fs = json_object_new_array();

        if (!o || !fs) {
                json_object_put(o);
                json_object_put(fs);
                return NULL;
        }
        json_object_object_add(o, "type", json_object_new_string(TICKET_TOKEN_TYPE));
        /* Bound to no keyslot: the ticket opens nothing, and no keyslot removal may take it along. */
        json_object_object_add(o, "keyslots", json_object_new_array());
        json_object_object_add(o, TICKET_TOKEN_TYPE, json_object_new_int(TICKET_VERSION));
        hex_encode(t->id, sizeof(t->id), hex);
        json_object_object_add(o, "id", json_object_new_string(hex));
        json_object_object_add(o, "time", json_object_new_int64(t->time));
        json_object_object_add(o, "boot-id", text(t->boot_id, sizeof(t->boot_id)));
        json_object_object_add(o, "kernel", text(t->kernel, sizeof(t->kernel)));
        json_object_object_add(o, "writer", json_object_new_string(ticket_writer_name(t->writer)));
        for (size_t i = 0; i < t->n_fs; i++)
                json_object_array_add(fs, fs_entry(&t->fs[i]));
        json_object_object_add(o, "fs", fs);
        if (t->has_tpm_counter)
                json_object_object_add(o, "tpm-counter", json_object_new_uint64(t->tpm_counter));
        if (t->has_image_mac) {
                hex_encode(t->image_mac, sizeof(t->image_mac), hex);
                json_object_object_add(o, "image-mac", json_object_new_string(hex));
        }
        if (t->has_image_head) {
                json_object_object_add(o, "image-crc32", json_object_new_uint64(t->image_crc32));
                json_object_object_add(o, "image-first-map", json_object_new_uint64(t->image_first_map));
                json_object_object_add(o, "image-pages", json_object_new_uint64(t->image_pages));
        }
        hex_encode(t->mac, sizeof(t->mac), hex);
        json_object_object_add(o, "mac", json_object_new_string(hex));
        json_object_object_add(o, "state", json_object_new_string(ticket_state_name(t->state)));
        if (t->state != TICKET_FRESH) {
                json_object_object_add(o, "state-time", json_object_new_int64(t->state_time));
                if (t->state_boot_id[0])
                        json_object_object_add(o, "state-boot-id", text(t->state_boot_id, sizeof(t->state_boot_id)));
                if (t->state_why[0])
                        json_object_object_add(o, "state-why", text(t->state_why, sizeof(t->state_why)));
        }
        return o;
}

int ticket_format(const struct ticket *t, char *buf, size_t size)
{
        struct json_object *o;
        struct ticket *back;
        const char *s;
        int r = 0;

        if (!t || !buf || t->n_fs > TICKET_FS_MAX || !ticket_writer_name(t->writer) || !ticket_state_name(t->state))
                return -EINVAL;
        o = build(t);
        if (!o)
                return -ENOMEM;
        s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!s)
                r = -ENOMEM;
        else if (strlen(s) >= size)
                r = -ENAMETOOLONG;
        back = r == 0 ? calloc(1, sizeof(*back)) : NULL;
        if (r == 0 && !back)
                r = -ENOMEM;
        /* What thaw writes is what it would read back: a field the parse refuses is not written. */
        if (r == 0)
                r = ticket_parse(s, back, NULL, 0);
        if (r == 0)
                memcpy(buf, s, strlen(s) + 1);
        free(back);
        json_object_put(o);
        return r;
}

/* Outside text: printable ASCII only (the caller still escapes it for display), shorter than size. */
static int printable(const char *s, size_t len)
{
        for (size_t i = 0; i < len; i++) {
                if (s[i] < 0x20 || s[i] > 0x7e)
                        return 0;
        }
        return 1;
}

static const char *const top_fields[] = {
        "type", "keyslots", TICKET_TOKEN_TYPE, "id", "time", "boot-id", "kernel", "writer", "fs",
        "tpm-counter", "image-mac", "image-crc32", "image-first-map", "image-pages", "mac", "state", "state-time", "state-boot-id", "state-why", NULL,
};

static const char *const fs_fields[] = {
        "uuid", "type", "known", "mnt-count", "mtime", "wtime", "kbytes-written", "journal", "journal-seq",
        "generation", NULL,
};

static int only_known(struct json_object *o, const char *const *known, const char *where, char *why, size_t size)
{
        json_object_object_foreach(o, key, val) {
                size_t i;

                (void)val;
                for (i = 0; known[i] && strcmp(known[i], key) != 0; i++)
                        ;
                if (!known[i])
                        return util_why(why, size, -EINVAL, "unknown field \"%.32s\"%s", key, where);
        }
        return 0;
}

/* The member key of o of JSON type type; NULL if absent (why says so when required). */
static struct json_object *member(struct json_object *o, const char *key, const char *name, enum json_type type,
                                  int *r, char *why, size_t size)
{
        static const char *const type_names[] = {
                [json_type_null] = "null", [json_type_boolean] = "a boolean", [json_type_double] = "a number",
                [json_type_int] = "an integer", [json_type_object] = "an object", [json_type_array] = "an array",
                [json_type_string] = "a string",
        };
        struct json_object *v = NULL;

        *r = 0;
        if (!json_object_object_get_ex(o, key, &v))
                return NULL;
        if (!json_object_is_type(v, type)) {
                *r = util_why(why, size, -EINVAL, "\"%s\" is not %s", name, type_names[type]);
                return NULL;
        }
        return v;
}

static int required(struct json_object *o, const char *key, const char *name, enum json_type type,
                    struct json_object **out, char *why, size_t size)
{
        int r;

        *out = member(o, key, name, type, &r, why, size);
        if (r < 0)
                return r;
        if (!*out)
                return util_why(why, size, -EINVAL, "\"%s\" is missing", name);
        return 0;
}

/* A non-negative integer of at most max. */
static int get_uint(struct json_object *o, const char *key, const char *name, uint64_t max, uint64_t *out,
                    char *why, size_t size)
{
        struct json_object *v;
        uint64_t u;
        int r = required(o, key, name, json_type_int, &v, why, size);

        if (r < 0)
                return r;
        /* json-c keeps integers above INT64_MAX as uint64 (get_int64 then clamps to INT64_MAX). */
        if (json_object_get_int64(v) < 0)
                return util_why(why, size, -EINVAL, "\"%s\" is negative", name);
        u = json_object_get_uint64(v);
        if (u > max)
                return util_why(why, size, -EINVAL, "\"%s\" is larger than %" PRIu64, name, max);
        *out = u;
        return 0;
}

static int get_bool(struct json_object *o, const char *key, const char *name, bool *out, char *why, size_t size)
{
        struct json_object *v;
        int r = required(o, key, name, json_type_boolean, &v, why, size);

        if (r == 0)
                *out = json_object_get_boolean(v);
        return r;
}

/* Printable text of at most size - 1 bytes into out (size bytes). */
static int get_text(struct json_object *o, const char *key, const char *name, char *out, size_t out_size,
                    char *why, size_t size)
{
        struct json_object *v;
        const char *s;
        size_t len;
        int r = required(o, key, name, json_type_string, &v, why, size);

        if (r < 0)
                return r;
        s = json_object_get_string(v);
        len = (size_t)json_object_get_string_len(v);
        if (len >= out_size)
                return util_why(why, size, -EINVAL, "\"%s\" is longer than %zu bytes", name, out_size - 1);
        if (!printable(s, len))
                return util_why(why, size, -EINVAL, "\"%s\" holds a byte that is not printable ASCII", name);
        memcpy(out, s, len);
        out[len] = '\0';
        return 0;
}

static int get_uuid(struct json_object *o, const char *key, char out[37], char *why, size_t size)
{
        char buf[37];
        int r = get_text(o, key, key, buf, sizeof(buf), why, size);

        if (r < 0)
                return r;
        if (!ticket_uuid_valid(buf))
                return util_why(why, size, -EINVAL, "\"%s\" is not a UUID", key);
        memcpy(out, buf, sizeof(buf));
        return 0;
}

static int get_hex(struct json_object *o, const char *key, uint8_t *out, size_t len, char *why, size_t size)
{
        struct json_object *v;
        int r = required(o, key, key, json_type_string, &v, why, size);

        if (r < 0)
                return r;
        if (hex_decode(json_object_get_string(v), (size_t)json_object_get_string_len(v), out, len) < 0)
                return util_why(why, size, -EINVAL, "\"%s\" is not %zu lower-case hex digits", key, 2 * len);
        return 0;
}

static int parse_fs_entry(struct json_object *e, size_t i, struct fsmark *f, char *why, size_t size)
{
        char name[NAME_MAX_], where[24];
        uint64_t v[4];
        static const char *const u32_keys[] = { "mnt-count", "mtime", "wtime", "journal-seq" };
        int r;

        if (!json_object_is_type(e, json_type_object))
                return util_why(why, size, -EINVAL, "\"fs\"[%zu] is not an object", i);
        snprintf(where, sizeof(where), " in \"fs\"[%zu]", i);
        r = only_known(e, fs_fields, where, why, size);
#define NAME(key) (snprintf(name, sizeof(name), "fs[%zu].%s", i, key), name)
        if (r == 0)
                r = get_text(e, "uuid", NAME("uuid"), f->uuid, sizeof(f->uuid), why, size);
        if (r == 0)
                r = get_text(e, "type", NAME("type"), f->type, sizeof(f->type), why, size);
        if (r == 0)
                r = get_bool(e, "known", NAME("known"), &f->known, why, size);
        for (size_t k = 0; r == 0 && k < 4; k++)
                r = get_uint(e, u32_keys[k], NAME(u32_keys[k]), UINT32_MAX, &v[k], why, size);
        if (r == 0)
                r = get_uint(e, "kbytes-written", NAME("kbytes-written"), UINT64_MAX, &f->kbytes_written, why, size);
        if (r == 0)
                r = get_bool(e, "journal", NAME("journal"), &f->has_journal, why, size);
        if (r == 0)
                r = get_uint(e, "generation", NAME("generation"), UINT64_MAX, &f->generation, why, size);
#undef NAME
        if (r < 0)
                return r;
        f->mnt_count = (uint32_t)v[0];
        f->mtime = (uint32_t)v[1];
        f->wtime = (uint32_t)v[2];
        f->journal_seq = (uint32_t)v[3];
        return 0;
}

static int parse_fs(struct json_object *o, struct ticket *t, char *why, size_t size)
{
        struct json_object *a;
        size_t n;
        int r = required(o, "fs", "fs", json_type_array, &a, why, size);

        if (r < 0)
                return r;
        n = json_object_array_length(a);
        if (n > TICKET_FS_MAX)
                return util_why(why, size, -EINVAL, "\"fs\" holds %zu entries, more than %d", n, TICKET_FS_MAX);
        for (size_t i = 0; i < n; i++) {
                r = parse_fs_entry(json_object_array_get_idx(a, i), i, &t->fs[i], why, size);
                if (r < 0)
                        return r;
        }
        t->n_fs = n;
        return 0;
}

/* One of names[] (NULL-terminated), as its index. */
static int get_name(struct json_object *o, const char *key, const char *const *names, int *out, char *why,
                    size_t size)
{
        char buf[16];
        int r = get_text(o, key, key, buf, sizeof(buf), why, size);

        if (r < 0)
                return r;
        for (int i = 0; names[i]; i++) {
                if (strcmp(names[i], buf) == 0) {
                        *out = i;
                        return 0;
                }
        }
        return util_why(why, size, -EINVAL, "\"%s\" is \"%s\", not one thaw knows", key, buf);
}

static int parse_head(struct json_object *o, struct ticket *t, char *why, size_t size)
{
        static const char *const writers[] = { "thaw", "kernel", NULL };
        struct json_object *v;
        uint64_t u;
        char type[sizeof(TICKET_TOKEN_TYPE)];
        int r, w;

        r = get_text(o, "type", "type", type, sizeof(type), why, size);
        if (r == 0 && strcmp(type, TICKET_TOKEN_TYPE) != 0)
                r = util_why(why, size, -EINVAL, "\"type\" is not \"" TICKET_TOKEN_TYPE "\"");
        if (r == 0)
                r = required(o, "keyslots", "keyslots", json_type_array, &v, why, size);
        if (r == 0 && json_object_array_length(v) != 0)
                r = util_why(why, size, -EINVAL, "\"keyslots\" is not empty: a ticket is bound to no keyslot");
        if (r == 0)
                r = get_uint(o, TICKET_TOKEN_TYPE, TICKET_TOKEN_TYPE, UINT32_MAX, &u, why, size);
        if (r == 0 && u != TICKET_VERSION)
                r = util_why(why, size, -EINVAL, "\"" TICKET_TOKEN_TYPE "\" is version %" PRIu64 ", not %d", u,
                        TICKET_VERSION);
        if (r == 0)
                r = get_hex(o, "id", t->id, sizeof(t->id), why, size);
        if (r == 0)
                r = get_uint(o, "time", "time", INT64_MAX, &u, why, size);
        if (r == 0)
                t->time = (int64_t)u;
        if (r == 0)
                r = get_uuid(o, "boot-id", t->boot_id, why, size);
        if (r == 0)
                r = get_text(o, "kernel", "kernel", t->kernel, sizeof(t->kernel), why, size);
        if (r == 0 && !t->kernel[0])
                r = util_why(why, size, -EINVAL, "\"kernel\" is empty");
        if (r == 0)
                r = get_name(o, "writer", writers, &w, why, size);
        if (r == 0)
                t->writer = (enum ticket_writer)w;
        return r;
}

static int parse_tail(struct json_object *o, struct ticket *t, char *why, size_t size)
{
        static const char *const states[] = { "fresh", "consumed", "superseded", NULL };
        struct json_object *v;
        uint64_t u;
        int r, s;

        v = member(o, "tpm-counter", "tpm-counter", json_type_int, &r, why, size);
        if (r == 0 && v) {
                t->has_tpm_counter = true;
                r = get_uint(o, "tpm-counter", "tpm-counter", UINT64_MAX, &t->tpm_counter, why, size);
        }
        if (r == 0 && json_object_object_get_ex(o, "image-mac", NULL)) {
                t->has_image_mac = true;
                r = get_hex(o, "image-mac", t->image_mac, sizeof(t->image_mac), why, size);
        }
        if (r == 0 && (json_object_object_get_ex(o, "image-crc32", NULL) ||
                       json_object_object_get_ex(o, "image-first-map", NULL) ||
                       json_object_object_get_ex(o, "image-pages", NULL))) {
                t->has_image_head = true;
                r = get_uint(o, "image-crc32", "image-crc32", UINT32_MAX, &u, why, size);
                if (r == 0)
                        t->image_crc32 = (uint32_t)u;
                if (r == 0)
                        r = get_uint(o, "image-first-map", "image-first-map", UINT64_MAX, &t->image_first_map,
                                     why, size);
                if (r == 0)
                        r = get_uint(o, "image-pages", "image-pages", UINT64_MAX, &t->image_pages, why, size);
        }
        if (r == 0)
                r = get_hex(o, "mac", t->mac, sizeof(t->mac), why, size);
        if (r == 0)
                r = get_name(o, "state", states, &s, why, size);
        if (r < 0)
                return r;
        t->state = (enum ticket_state)s;
        /* The state record belongs to a ticket that is no longer fresh, and only to one. */
        if (t->state == TICKET_FRESH) {
                static const char *const extra[] = { "state-time", "state-boot-id", "state-why" };

                for (size_t i = 0; i < 3; i++) {
                        if (json_object_object_get_ex(o, extra[i], NULL))
                                return util_why(why, size, -EINVAL, "\"%s\" on a fresh ticket", extra[i]);
                }
                return 0;
        }
        r = get_uint(o, "state-time", "state-time", INT64_MAX, &u, why, size);
        if (r < 0)
                return r;
        t->state_time = (int64_t)u;
        if (json_object_object_get_ex(o, "state-boot-id", NULL))
                r = get_uuid(o, "state-boot-id", t->state_boot_id, why, size);
        if (r == 0 && json_object_object_get_ex(o, "state-why", NULL))
                r = get_text(o, "state-why", "state-why", t->state_why, sizeof(t->state_why), why, size);
        return r;
}

int ticket_parse(const char *json, struct ticket *out, char *why, size_t size)
{
        struct json_object *o;
        struct ticket *t;
        int r;

        if (!json || !out)
                return -EINVAL;
        /* The ticket, "fs", an entry: deeper is not a ticket. */
        r = jsontext_object(json, TICKET_JSON_MAX, 4, &o, why, size);
        if (r < 0)
                return r;
        t = calloc(1, sizeof(*t));
        r = t ? only_known(o, top_fields, "", why, size) : -ENOMEM;
        if (r == 0)
                r = parse_head(o, t, why, size);
        if (r == 0)
                r = parse_fs(o, t, why, size);
        if (r == 0)
                r = parse_tail(o, t, why, size);
        if (r == 0)
                *out = *t;
        free(t);
        json_object_put(o);
        return r;
}

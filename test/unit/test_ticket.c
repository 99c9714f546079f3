/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the image ticket: key, MAC, strict JSON, keyring, and its token on a LUKS2 image file. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <json.h>
#include <keyutils.h>
#include <libcryptsetup.h>
#include "faketree.h"
#include "luks.h"
#include "luks_token.h"
#include "ticket.h"

#define UUID "86ef0599-941f-4d25-80e6-68a97b7d5ffd"
#define BOOT "0f6f3c1e-5b2a-4c1d-9e8f-112233445566"
#define FS_UUID "d6b0c3a2-1f2e-4b3c-8d4e-5f6a7b8c9d0e"
#define IMG_SIZE (16u << 20)

/*
 * Computed when the test was written, by two paths: `openssl kdf -keylen 32 -kdfopt digest:SHA256
 * -kdfopt hexkey:000102…3f -kdfopt salt:thaw-ticket-key-v1 -kdfopt info:<UUID> HKDF` and RFC 5869
 * by hand in Python (hmac, hashlib). The volume key is the bytes 0..63.
 */
static const char hkdf_expect[] = "e4f98ec3619dcfbe17683afd864a4ac874da78a74f526e3d835f6b267284a034";
/*
 * The image MAC under that key of "abc" 1000 times with the nonce 00 01 .. 0f: the nonce, then
 * Poly1305 under HMAC-SHA256(key, "thaw-image-mac-v1" || nonce). Computed by two paths: `openssl mac`
 * (HMAC, then POLY1305) and RFC 8439's Poly1305 by hand in Python.
 */
static const char stream_expect[] = "000102030405060708090a0b0c0d0e0fde6c0a259201e09b6d678c72d8c88ff5";
/*
 * The MAC of sample() under that key, over the canonical encoding as Python built it: text as u32
 * length + bytes, integers little-endian (u64 time, u32/u64 markers), u8 flags. It pins the
 * encoding: a ticket written by one thaw must verify under the next.
 */
static const char seal_expect[] = "09e7b33a875be07de10af7119ff5e45673d4a676dfe705c2d61c404775537a85";

static struct secret *key;

static void hex(const uint8_t *p, size_t n, char *out)
{
        for (size_t i = 0; i < n; i++)
                sprintf(out + 2 * i, "%02x", p[i]);
}

static void sample(struct ticket *t)
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

static int setup_key(void **state)
{
        uint8_t vk[64];

        (void)state;
        for (int i = 0; i < 64; i++)
                vk[i] = (uint8_t)i;
        return ticket_key_derive(vk, sizeof(vk), UUID, &key);
}

static int teardown_key(void **state)
{
        (void)state;
        secret_freep(&key);
        return 0;
}

static void test_names(void **state)
{
        (void)state;
        assert_string_equal(ticket_state_name(TICKET_FRESH), "fresh");
        assert_string_equal(ticket_state_name(TICKET_CONSUMED), "consumed");
        assert_string_equal(ticket_state_name(TICKET_SUPERSEDED), "superseded");
        assert_null(ticket_state_name((enum ticket_state)7));
        assert_string_equal(ticket_writer_name(TICKET_WRITER_THAW), "thaw");
        assert_string_equal(ticket_writer_name(TICKET_WRITER_KERNEL), "kernel");
        assert_true(ticket_uuid_valid(UUID));
        assert_true(ticket_uuid_valid("86EF0599-941F-4D25-80E6-68A97B7D5FFD"));
        assert_false(ticket_uuid_valid("86ef0599-941f-4d25-80e6-68a97b7d5ffd0"));
        assert_false(ticket_uuid_valid("86ef0599x941f-4d25-80e6-68a97b7d5ffd"));
        assert_false(ticket_uuid_valid("86ef0599-941f-4d25-80e6-68a97b7d5ffg"));
        assert_false(ticket_uuid_valid("../../etc-941f-4d25-80e6-68a97b7d5ff"));
        assert_false(ticket_uuid_valid(""));
        assert_false(ticket_uuid_valid(NULL));
}

static void test_hkdf_known_answer(void **state)
{
        struct secret *k = NULL;
        uint8_t vk[64];
        char got[65];

        (void)state;
        assert_int_equal(key->len, TICKET_KEY_SIZE);
        hex(key->data, key->len, got);
        assert_string_equal(got, hkdf_expect);
        /* Another volume (UUID) or another volume key: another ticket key. */
        for (int i = 0; i < 64; i++)
                vk[i] = (uint8_t)i;
        assert_int_equal(ticket_key_derive(vk, sizeof(vk), "86ef0599-941f-4d25-80e6-68a97b7d5ffe", &k), 0);
        assert_false(secret_equal(k, key));
        secret_freep(&k);
        vk[0] ^= 1;
        assert_int_equal(ticket_key_derive(vk, sizeof(vk), UUID, &k), 0);
        assert_false(secret_equal(k, key));
        secret_freep(&k);
        assert_int_equal(ticket_key_derive(vk, sizeof(vk), "not-a-uuid", &k), -EINVAL);
        assert_int_equal(ticket_key_derive(vk, 0, UUID, &k), -EINVAL);
        assert_null(k);
}

static void test_mac_stream(void **state)
{
        struct ticket_mac *m = NULL;
        uint8_t out[TICKET_MAC_SIZE], held[TICKET_MAC_SIZE];
        char got[65], text[3000];

        (void)state;
        for (int i = 0; i < 1000; i++)
                memcpy(text + 3 * i, "abc", 3);
        for (int i = 0; i < TICKET_MAC_SIZE; i++)
                held[i] = i < TICKET_MAC_NONCE ? (uint8_t)i : 0xee; /* the tag part is not read */
        assert_int_equal(ticket_mac_begin_check(key, held, &m), 0);
        /* Fed in uneven pieces, as pages and their tails are. */
        assert_int_equal(ticket_mac_update(m, text, 1), 0);
        assert_int_equal(ticket_mac_update(m, text + 1, 0), 0);
        assert_int_equal(ticket_mac_update(m, text + 1, 2047), 0);
        assert_int_equal(ticket_mac_update(m, text + 2048, sizeof(text) - 2048), 0);
        assert_int_equal(ticket_mac_end(m, out), 0);
        hex(out, sizeof(out), got);
        assert_string_equal(got, stream_expect);

        /* Writing: a new random nonce each time, so no one-time key authenticates two images. */
        assert_int_equal(ticket_mac_begin(key, &m), 0);
        assert_int_equal(ticket_mac_update(m, text, sizeof(text)), 0);
        assert_int_equal(ticket_mac_end(m, out), 0);
        assert_int_equal(ticket_mac_begin(key, &m), 0);
        assert_int_equal(ticket_mac_update(m, text, sizeof(text)), 0);
        assert_int_equal(ticket_mac_end(m, held), 0);
        assert_memory_not_equal(out, held, TICKET_MAC_NONCE);
        assert_memory_not_equal(out + TICKET_MAC_NONCE, held + TICKET_MAC_NONCE, TICKET_MAC_SIZE - TICKET_MAC_NONCE);
        /* Checking takes the nonce from what the ticket holds: the same value again. */
        assert_int_equal(ticket_mac_begin_check(key, out, &m), 0);
        assert_int_equal(ticket_mac_update(m, text, sizeof(text)), 0);
        assert_int_equal(ticket_mac_end(m, held), 0);
        assert_memory_equal(out, held, TICKET_MAC_SIZE);
        assert_int_equal(ticket_mac_begin_check(key, NULL, &m), -EINVAL);

        assert_int_equal(ticket_mac_begin(key, &m), 0);
        ticket_mac_free(m); /* abandoned midway: freed, nothing leaks (ASan) */
        ticket_mac_free(NULL);
}

static void test_seal_verify(void **state)
{
        struct ticket t, u;
        struct secret *other = NULL;
        char got[65];

        (void)state;
        sample(&t);
        assert_int_equal(ticket_seal(&t, key), 0);
        hex(t.mac, sizeof(t.mac), got);
        assert_string_equal(got, seal_expect);
        assert_int_equal(ticket_verify(&t, key), 0);

        assert_int_equal(secret_random(TICKET_KEY_SIZE, &other), 0);
        assert_int_equal(ticket_verify(&t, other), -EBADMSG);
        secret_freep(&other);
        for (size_t i = 0; i < TICKET_MAC_SIZE; i += 31) {
                u = t;
                u.mac[i] ^= 0x80;
                assert_int_equal(ticket_verify(&u, key), -EBADMSG);
        }
        /* A text field that does not end inside itself is refused, not read past. */
        u = t;
        memset(u.kernel, 'k', sizeof(u.kernel));
        assert_int_equal(ticket_seal(&u, key), -EINVAL);
        u = t;
        u.n_fs = TICKET_FS_MAX + 1;
        assert_int_equal(ticket_seal(&u, key), -EINVAL);
}

/* One change to an authenticated field each. */
static void change(struct ticket *t, int which)
{
        struct fsmark *f = &t->fs[0];

        switch (which) {
        case 0: t->id[15] ^= 1; break;
        case 1: t->time++; break;
        case 2: t->boot_id[35] = t->boot_id[35] == '6' ? '7' : '6'; break;
        case 3: strcpy(t->kernel, "6.1.0-28-amd65"); break;
        case 4: t->writer = TICKET_WRITER_KERNEL; break;
        case 5: strcpy(f->type, "ext3"); break;
        case 6: f->uuid[0] = 'e'; break;
        case 7: f->known = false; break;
        case 8: f->mnt_count++; break;
        case 9: f->mtime++; break;
        case 10: f->wtime++; break;
        case 11: f->kbytes_written++; break;
        case 12: f->has_journal = false; break;
        case 13: f->journal_seq++; break;
        case 14: f->generation++; break;
        case 15: t->n_fs = 0; break;
        case 16: t->fs[1] = t->fs[0]; t->n_fs = 2; break;
        case 17: t->has_tpm_counter = false; break;
        case 18: t->tpm_counter++; break;
        case 19: t->has_image_mac = false; break;
        case 20: t->image_mac[31] ^= 1; break;
        /* Text moved between fields keeps the bytes but not the lengths. */
        case 21: strcpy(t->kernel, "6.1.0-28-amd6"); strcpy(f->type, "4ext4"); break;
        default: fail();
        }
}

static void test_every_field_authenticated(void **state)
{
        struct ticket t, u, back;
        char json[TICKET_JSON_MAX + 1];

        (void)state;
        sample(&t);
        assert_int_equal(ticket_seal(&t, key), 0);
        for (int which = 0; which <= 21; which++) {
                u = t;
                change(&u, which);
                if (ticket_verify(&u, key) != -EBADMSG)
                        fail_msg("change %d verifies", which);
                /* And the change survives the token: the JSON carries every authenticated field. */
                assert_int_equal(ticket_format(&u, json, sizeof(json)), 0);
                assert_int_equal(ticket_parse(json, &back, NULL, 0), 0);
                if (ticket_verify(&back, key) != -EBADMSG)
                        fail_msg("change %d verifies after format and parse", which);
        }
}

static void test_state_not_authenticated(void **state)
{
        struct ticket t;

        (void)state;
        sample(&t);
        assert_int_equal(ticket_seal(&t, key), 0);
        t.state = TICKET_CONSUMED;
        t.state_time = 1700000100;
        strcpy(t.state_boot_id, UUID);
        strcpy(t.state_why, "resumed");
        assert_int_equal(ticket_verify(&t, key), 0);
        t.state = TICKET_SUPERSEDED;
        assert_int_equal(ticket_verify(&t, key), 0);
}

static void round_trip(const struct ticket *t)
{
        char json[TICKET_JSON_MAX + 1];
        struct ticket back;

        assert_int_equal(ticket_format(t, json, sizeof(json)), 0);
        memset(&back, 0, sizeof(back));
        assert_int_equal(ticket_parse(json, &back, NULL, 0), 0);
        assert_memory_equal(&back, t, sizeof(back));
}

static void test_round_trip(void **state)
{
        struct ticket t;
        char json[TICKET_JSON_MAX + 1], small[64];

        (void)state;
        sample(&t);
        assert_int_equal(ticket_seal(&t, key), 0);
        round_trip(&t);
        assert_int_equal(ticket_format(&t, json, sizeof(json)), 0);
        /* The documented form, in its order. */
        assert_non_null(strstr(json, "{\"type\":\"thaw-ticket\",\"keyslots\":[],\"thaw-ticket\":1,"
                                     "\"id\":\"000102030405060708090a0b0c0d0e0f\",\"time\":1700000000,"
                                     "\"boot-id\":\"" BOOT "\",\"kernel\":\"6.1.0-28-amd64\",\"writer\":\"thaw\","
                                     "\"fs\":[{\"uuid\":\"" FS_UUID "\",\"type\":\"ext4\",\"known\":true,"
                                     "\"mnt-count\":7,\"mtime\":1699999000,\"wtime\":1699999500,"
                                     "\"kbytes-written\":123456789,\"journal\":true,\"journal-seq\":4242,"
                                     "\"generation\":0}],\"tpm-counter\":99,\"image-mac\":\"202122"));
        assert_non_null(strstr(json, "\",\"mac\":\"" "09e7b33a"));
        assert_non_null(strstr(json, "\"state\":\"fresh\"}"));
        assert_null(strstr(json, "state-"));
        assert_int_equal(ticket_format(&t, small, sizeof(small)), -ENAMETOOLONG);

        /* Other shapes: consumed with its record, superseded without a boot id, kernel writer, no extras. */
        t.state = TICKET_CONSUMED;
        t.state_time = 1700000100;
        strcpy(t.state_boot_id, UUID);
        strcpy(t.state_why, "a \"quoted\" \\ why/with slashes");
        round_trip(&t);
        t.state = TICKET_SUPERSEDED;
        memset(t.state_boot_id, 0, sizeof(t.state_boot_id));
        memset(t.state_why, 0, sizeof(t.state_why));
        t.writer = TICKET_WRITER_KERNEL;
        t.has_tpm_counter = false;
        t.tpm_counter = 0;
        t.has_image_mac = false;
        memset(t.image_mac, 0, sizeof(t.image_mac));
        round_trip(&t);
        /* The largest ticket: every entry, every value at its largest, fits the cap. */
        sample(&t);
        t.time = INT64_MAX;
        memset(t.kernel, 'k', sizeof(t.kernel) - 1);
        for (size_t i = 0; i < TICKET_FS_MAX; i++) {
                struct fsmark *f = &t.fs[i];

                memset(f->type, 't', sizeof(f->type) - 1);
                memset(f->uuid, 'u', sizeof(f->uuid) - 1);
                f->mnt_count = f->mtime = f->wtime = f->journal_seq = UINT32_MAX;
                f->kbytes_written = f->generation = UINT64_MAX;
        }
        t.n_fs = TICKET_FS_MAX;
        t.tpm_counter = UINT64_MAX;
        t.state = TICKET_SUPERSEDED;
        t.state_time = INT64_MAX;
        strcpy(t.state_boot_id, UUID);
        memset(t.state_why, 'w', sizeof(t.state_why) - 1);
        assert_int_equal(ticket_seal(&t, key), 0);
        round_trip(&t);

        /* What the parse would refuse is not written. */
        sample(&t);
        strcpy(t.kernel, "6.1\n");
        assert_int_equal(ticket_format(&t, json, sizeof(json)), -EINVAL);
        sample(&t);
        strcpy(t.boot_id, "not a uuid");
        assert_int_equal(ticket_format(&t, json, sizeof(json)), -EINVAL);
        sample(&t);
        memset(t.kernel, 'k', sizeof(t.kernel)); /* no NUL inside: cut at the field, then too long */
        assert_int_equal(ticket_format(&t, json, sizeof(json)), -EINVAL);
        sample(&t);
        t.state = (enum ticket_state)9;
        assert_int_equal(ticket_format(&t, json, sizeof(json)), -EINVAL);
}

/* The sealed sample's JSON with the member at path ("fs/0/mtime", array items by index) set to value (NULL: removed). */
static char *with(const char *base, const char *path, const char *value)
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

static const char *sample_json(void)
{
        static char json[TICKET_JSON_MAX + 1];
        struct ticket t;

        sample(&t);
        assert_int_equal(ticket_seal(&t, key), 0);
        assert_int_equal(ticket_format(&t, json, sizeof(json)), 0);
        return json;
}

static void refused(const char *json, const char *reason)
{
        struct ticket t, before;
        char why[200] = "";

        memset(&t, 0xa5, sizeof(t));
        before = t;
        if (ticket_parse(json, &t, why, sizeof(why)) != -EINVAL)
                fail_msg("accepted: %.300s", json);
        if (!strstr(why, reason))
                fail_msg("why \"%s\" does not say \"%s\" for %.300s", why, reason, json);
        /* Nothing is written on failure. */
        assert_memory_equal(&t, &before, sizeof(t));
}

static void test_malformed_named(void **state)
{
        static const struct {
                const char *path, *value, *reason;
        } cases[] = {
                { "type", "\"thaw-tpm2\"", "\"type\" is not \"thaw-ticket\"" },
                { "type", "5", "\"type\" is not a string" },
                { "type", NULL, "\"type\" is missing" },
                { "keyslots", "[\"0\"]", "\"keyslots\" is not empty" },
                { "keyslots", "{}", "\"keyslots\" is not an array" },
                { "thaw-ticket", "2", "\"thaw-ticket\" is version 2, not 1" },
                { "thaw-ticket", "\"1\"", "\"thaw-ticket\" is not an integer" },
                { "id", NULL, "\"id\" is missing" },
                { "id", "\"0001\"", "\"id\" is not 32 lower-case hex digits" },
                { "id", "\"000102030405060708090A0B0C0D0E0F\"", "\"id\" is not 32" },
                { "id", "\"000102030405060708090a0b0c0d0e0g\"", "\"id\" is not 32" },
                { "id", "[]", "\"id\" is not a string" },
                { "time", "-1", "\"time\" is negative" },
                { "time", "1.5", "\"time\" is not an integer" },
                { "time", "\"1700000000\"", "\"time\" is not an integer" },
                { "time", "null", "\"time\" is not an integer" },
                { "boot-id", "\"not-a-uuid\"", "\"boot-id\" is not a UUID" },
                { "boot-id", "\"0f6f3c1e-5b2a-4c1d-9e8f-1122334455667\"", "\"boot-id\" is longer than 36" },
                { "kernel", "\"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk\"",
                  "\"kernel\" is longer than 64 bytes" },
                { "kernel", "\"6.1\\u001b[2J\"", "\"kernel\" holds a byte that is not printable" },
                { "kernel", "\"6.1\\u00e9\"", "\"kernel\" holds a byte that is not printable" },
                { "kernel", "\"\"", "\"kernel\" is empty" },
                { "writer", "\"root\"", "\"writer\" is \"root\", not one thaw knows" },
                { "writer", "\"thaw-and-some-more\"", "\"writer\" is longer than 15" },
                { "fs", "{}", "\"fs\" is not an array" },
                { "fs", NULL, "\"fs\" is missing" },
                { "fs", "[5]", "\"fs\"[0] is not an object" },
                { "fs/0/mnt-count", "4294967296", "\"fs[0].mnt-count\" is larger than 4294967295" },
                { "fs/0/journal-seq", "-1", "\"fs[0].journal-seq\" is negative" },
                { "fs/0/mtime", "true", "\"fs[0].mtime\" is not an integer" },
                { "fs/0/wtime", NULL, "\"fs[0].wtime\" is missing" },
                { "fs/0/known", "1", "\"fs[0].known\" is not a boolean" },
                { "fs/0/journal", "\"yes\"", "\"fs[0].journal\" is not a boolean" },
                { "fs/0/type", "\"ext4ext4ext4ext4\"", "\"fs[0].type\" is longer than 15 bytes" },
                { "fs/0/uuid", "\"\\n\"", "\"fs[0].uuid\" holds a byte that is not printable" },
                { "fs/0/kbytes-written", "-5", "\"fs[0].kbytes-written\" is negative" },
                { "fs/0/generation", "2.0", "\"fs[0].generation\" is not an integer" },
                { "fs/0/extra", "1", "unknown field \"extra\" in \"fs\"[0]" },
                { "tpm-counter", "\"5\"", "\"tpm-counter\" is not an integer" },
                { "tpm-counter", "-5", "\"tpm-counter\" is negative" },
                { "image-mac", "\"zz\"", "\"image-mac\" is not 64 lower-case hex digits" },
                { "image-mac", "0", "\"image-mac\" is not a string" },
                { "mac", NULL, "\"mac\" is missing" },
                { "mac", "\"09e7b33a875be07de10af7119ff5e45673d4a676dfe705c2d61c404775537a8\"",
                  "\"mac\" is not 64 lower-case hex digits" },
                { "state", "\"stale\"", "\"state\" is \"stale\", not one thaw knows" },
                { "state", NULL, "\"state\" is missing" },
                { "state-time", "5", "\"state-time\" on a fresh ticket" },
                { "state-why", "\"x\"", "\"state-why\" on a fresh ticket" },
                { "extra", "1", "unknown field \"extra\"" },
                { "tpm2-blob", "\"\"", "unknown field \"tpm2-blob\"" },
                { "thaw-source", "\"keyfile:/key\"", "unknown field \"thaw-source\"" },
        };
        const char *base = sample_json();
        char *fs17, *consumed, *json;

        (void)state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                json = with(base, cases[i].path, cases[i].value);
                refused(json, cases[i].reason);
                free(json);
        }
        /* Seventeen entries. */
        fs17 = with(base, "fs", "[{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}]");
        refused(fs17, "\"fs\" holds 17 entries, more than 16");
        free(fs17);
        /* A consumed ticket's record. */
        consumed = with(base, "state", "\"consumed\"");
        refused(consumed, "\"state-time\" is missing");
        json = with(consumed, "state-time", "-1");
        refused(json, "\"state-time\" is negative");
        free(json);
        json = with(consumed, "state-time", "1");
        free(consumed);
        consumed = json;
        {
                struct ticket t;

                assert_int_equal(ticket_parse(consumed, &t, NULL, 0), 0);
                assert_int_equal(t.state, TICKET_CONSUMED);
                assert_int_equal(t.state_time, 1);
        }
        json = with(consumed, "state-why", "\"wwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwww\"");
        refused(json, "\"state-why\" is longer than 63 bytes");
        free(json);
        json = with(consumed, "state-why", "\"bad\\u0007bell\"");
        refused(json, "\"state-why\" holds a byte that is not printable");
        free(json);
        json = with(consumed, "state-boot-id", "\"x\"");
        refused(json, "\"state-boot-id\" is not a UUID");
        free(json);
        free(consumed);
}

static void test_malformed_text(void **state)
{
        char big[TICKET_JSON_MAX + 2];
        struct ticket t;
        char why[200];
        const char *base = sample_json();
        static char trailing[TICKET_JSON_MAX + 8];

        (void)state;
        refused("", "not valid JSON");
        refused("{", "not valid JSON");
        refused("[]", "not a JSON object");
        refused("\"thaw-ticket\"", "not a JSON object");
        refused("{\"fs\":[{\"uuid\":[[[[[]]]]]}]}", "not valid JSON (or nested too deeply)");
        snprintf(trailing, sizeof(trailing), "%s{}", base);
        refused(trailing, "not valid JSON");
        memset(big, ' ', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        big[0] = '{';
        big[sizeof(big) - 2] = '}';
        refused(big, "larger than 8192 bytes");
        /* Whitespace is not the form: a text within the cap with blanks around is still a ticket. */
        assert_int_equal(ticket_parse(base, &t, why, sizeof(why)), 0);
        assert_int_equal(ticket_verify(&t, key), 0);
}

/*
 * json-c keeps the last of a key given twice and cannot say it saw two; libcryptsetup stores
 * the token as json-c parsed it, so what is on disk has one. The MAC covers the value kept.
 */
static void test_duplicate_key_last_wins(void **state)
{
        const char *base = sample_json();
        static char dup[TICKET_JSON_MAX + 64];
        struct ticket t;

        (void)state;
        sprintf(dup, "{\"kernel\":\"6.1.0-99-amd64\",%s", base + 1);
        assert_int_equal(ticket_parse(dup, &t, NULL, 0), 0);
        assert_string_equal(t.kernel, "6.1.0-28-amd64");
        assert_int_equal(ticket_verify(&t, key), 0);
        sprintf(dup, "%.*s,\"kernel\":\"6.1.0-99-amd64\"}", (int)strlen(base) - 1, base);
        assert_int_equal(ticket_parse(dup, &t, NULL, 0), 0);
        assert_string_equal(t.kernel, "6.1.0-99-amd64");
        assert_int_equal(ticket_verify(&t, key), -EBADMSG);
}

static void test_uint64_extremes(void **state)
{
        const char *base = sample_json();
        char *json = with(base, "fs/0/generation", "18446744073709551615");
        struct ticket t;

        (void)state;
        assert_int_equal(ticket_parse(json, &t, NULL, 0), 0);
        assert_true(t.fs[0].generation == UINT64_MAX);
        free(json);
        json = with(base, "time", "9223372036854775807");
        assert_int_equal(ticket_parse(json, &t, NULL, 0), 0);
        assert_true(t.time == INT64_MAX);
        free(json);
        /* Above INT64_MAX, time would turn negative: refused. */
        json = with(base, "time", "9223372036854775808");
        refused(json, "\"time\" is larger than 9223372036854775807");
        free(json);
}

static void test_new(void **state)
{
        struct ticket t, u;
        char boot[37];
        time_t before = time(NULL);

        (void)state;
        ft_puts("/proc/sys/kernel/random/boot_id", BOOT "\n");
        memset(&t, 0, sizeof(t));
        assert_int_equal(ticket_new_at(ft_root, &t), 0);
        assert_string_equal(t.boot_id, BOOT);
        assert_true(t.time >= before && t.time <= time(NULL));
        assert_true(t.kernel[0] != '\0');
        assert_int_equal(t.writer, TICKET_WRITER_THAW);
        assert_int_equal(t.state, TICKET_FRESH);
        assert_int_equal(t.n_fs, 0);
        assert_false(t.has_tpm_counter);
        assert_false(t.has_image_mac);
        assert_int_equal(ticket_new_at(ft_root, &u), 0);
        assert_memory_not_equal(t.id, u.id, sizeof(t.id));
        /* A new ticket, sealed, is one the parse takes. */
        assert_int_equal(ticket_seal(&t, key), 0);
        round_trip(&t);

        ft_puts("/proc/sys/kernel/random/boot_id", "garbage\n");
        assert_int_equal(ticket_new_at(ft_root, &u), -EBADMSG);
        assert_int_equal(ticket_boot_id(ft_root, boot), -EBADMSG);
        assert_int_equal(ticket_new_at("/nonexistent-root", &u), -ENOENT);

        /* The real one, when this kernel has it. */
        if (ticket_boot_id("", boot) == 0) {
                assert_int_equal(ticket_new(&u), 0);
                assert_string_equal(u.boot_id, boot);
        }
}

/* The keyring, when this container has one: a random UUID, unlinked afterwards. */
static void test_keyring(void **state)
{
        struct secret *got = NULL, *other = NULL;
        uint8_t r[16];
        char uuid[37], desc[64], buf[256];
        key_serial_t id;
        int rc;

        (void)state;
        assert_int_equal(getrandom(r, sizeof(r), 0), (ssize_t)sizeof(r));
        snprintf(uuid, sizeof(uuid), "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", r[0], r[1],
                 r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13], r[14], r[15]);
        rc = ticket_key_store(uuid, key);
        if (rc == -EPERM || rc == -ENOSYS || rc == -EACCES || rc == -EDQUOT) {
                fprintf(stderr, "skip: no user keyring here (%s)\n", strerror(-rc));
                skip();
        }
        assert_int_equal(rc, 0);
        snprintf(desc, sizeof(desc), "thaw:ticket:%s", uuid);
        id = (key_serial_t)keyctl_search(KEY_SPEC_USER_KEYRING, "user", desc, 0);
        assert_true(id > 0);
        /* "user;uid;gid;perm;desc": possessor all, owner view/read/write/search/setattr, nothing else. */
        assert_true(keyctl_describe(id, buf, sizeof(buf)) > 0);
        {
                unsigned perm = 0;
                char *p = buf;

                for (int i = 0; i < 3; i++)
                        p = strchr(p, ';') + 1;
                perm = (unsigned)strtoul(p, NULL, 16);
                assert_int_equal(perm, KEY_POS_ALL | KEY_USR_VIEW | KEY_USR_READ | KEY_USR_WRITE | KEY_USR_SEARCH |
                                               KEY_USR_SETATTR);
        }

        assert_int_equal(ticket_key_load(uuid, &got), 0);
        assert_true(secret_equal(got, key));
        secret_freep(&got);
        /* Stored again: the same key is updated in place, not a second one added. */
        assert_int_equal(secret_random(TICKET_KEY_SIZE, &other), 0);
        assert_int_equal(ticket_key_store(uuid, other), 0);
        assert_int_equal((key_serial_t)keyctl_search(KEY_SPEC_USER_KEYRING, "user", desc, 0), id);
        assert_int_equal(ticket_key_load(uuid, &got), 0);
        assert_true(secret_equal(got, other));
        secret_freep(&got);
        secret_freep(&other);

        assert_int_equal(keyctl_unlink(id, KEY_SPEC_USER_KEYRING), 0);
        assert_int_equal(ticket_key_load(uuid, &got), -ENOKEY);
        assert_null(got);
        /* A UUID that is not one never reaches a key description. */
        assert_int_equal(ticket_key_load("x*", &got), -EINVAL);
        assert_int_equal(ticket_key_store("86ef0599-941f-4d25-80e6-68a97b7d5ffd:x", key), -EINVAL);
}

/* A LUKS2 image file with one keyfile token bound to its keyslot, as thaw setup makes it. */
static char dir[256], img[300];

static int luks_setup(void **state)
{
        static char tok[LUKS_TOKEN_JSON_MAX];
        struct keysrc_enrollment e = { 0 };
        struct keychain c;
        struct secret *k = NULL;
        int fd, r;

        (void)state;
        if (setup_key(state) < 0)
                return -1;
        snprintf(dir, sizeof(dir), "%s/thaw-ticket-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        if (!mkdtemp(dir))
                return -1;
        snprintf(img, sizeof(img), "%s/swap.img", dir);
        fd = open(img, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0 || ftruncate(fd, IMG_SIZE) < 0)
                return -1;
        close(fd);
        if (keychain_parse("keyfile:/key", &c) < 0 || luks_token_build(&c.src[0], tok, sizeof(tok)) < 0 ||
            secret_random(32, &k) < 0)
                return -1;
        e.key = k;
        e.token = tok;
        r = luks_format(img, NULL, 1, &e, false, NULL);
        secret_free(k);
        return r == 0 ? 0 : -1;
}

static int luks_teardown(void **state)
{
        char cmd[sizeof(dir) + 16];

        teardown_key(state);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        return system(cmd) == 0 ? 0 : -1;
}

/* Token ids of type on img, as a bit mask; *slots gets the keyslots any of them is bound to. */
static unsigned tokens_of(const char *type, unsigned *slots)
{
        struct crypt_device *cd = NULL;
        unsigned mask = 0;

        if (slots)
                *slots = 0;
        assert_int_equal(crypt_init(&cd, img), 0);
        assert_int_equal(crypt_load(cd, CRYPT_LUKS2, NULL), 0);
        for (int id = 0; id < 32; id++) {
                const char *t = NULL;

                if (crypt_token_status(cd, id, &t) == CRYPT_TOKEN_INACTIVE || !t || strcmp(t, type) != 0)
                        continue;
                mask |= 1u << id;
                for (int slot = 0; slots && slot < 32; slot++) {
                        if (crypt_token_is_assigned(cd, id, slot) == 0)
                                *slots |= 1u << slot;
                }
        }
        crypt_free(cd);
        return mask;
}

static int inject(const char *json)
{
        struct crypt_device *cd = NULL;
        int r;

        assert_int_equal(crypt_init(&cd, img), 0);
        assert_int_equal(crypt_load(cd, CRYPT_LUKS2, NULL), 0);
        r = crypt_token_json_set(cd, CRYPT_ANY_TOKEN, json);
        crypt_free(cd);
        return r;
}

static void test_token_io(void **state)
{
        struct ticket t, back, other;
        struct keychain c;
        char why[200] = "", fp_before[LUKS_FP_SIZE], fp_after[LUKS_FP_SIZE], json[TICKET_JSON_MAX + 1];
        char boot[37];
        unsigned slots, mask;
        time_t before = time(NULL);

        (void)state;
        assert_int_equal(ticket_read(img, &back, why, sizeof(why)), -ENOENT);
        assert_int_equal(ticket_set_state(img, TICKET_SUPERSEDED, "noresume"), -ENOENT);
        assert_int_equal(ticket_read("/nonexistent.img", &back, why, sizeof(why)), -ENODEV);
        assert_int_equal(luks_header_check(img, NULL, fp_before, why, sizeof(why)), 0);

        sample(&t);
        assert_int_equal(ticket_seal(&t, key), 0);
        assert_int_equal(ticket_write(img, &t), 0);
        mask = tokens_of(TICKET_TOKEN_TYPE, &slots);
        assert_int_equal(__builtin_popcount(mask), 1);
        assert_int_equal(slots, 0); /* bound to no keyslot */
        memset(&back, 0, sizeof(back));
        assert_int_equal(ticket_read(img, &back, why, sizeof(why)), 0);
        assert_memory_equal(&back, &t, sizeof(t));
        assert_int_equal(ticket_verify(&back, key), 0);

        /* The header policy takes a header with a ticket, and its fingerprint leaves tokens out. */
        assert_int_equal(luks_header_check(img, NULL, fp_after, why, sizeof(why)), 0);
        assert_string_equal(fp_after, fp_before);
        /* The ticket is no key source: only the keyfile token names one. */
        assert_int_equal(luks_token_sources(img, &c), 0);
        assert_int_equal(c.n, 1);
        assert_int_equal(c.src[0].type, KEYSRC_KEYFILE);
        assert_int_equal(ticket_format(&t, json, sizeof(json)), 0);
        {
                struct keysrc s;

                assert_int_equal(luks_token_check(json, &s, why, sizeof(why)), -EINVAL);
                assert_string_equal(why, "the image ticket, not a key source");
        }

        /* A state change keeps every authenticated field and the MAC; it records when and which boot. */
        assert_int_equal(ticket_set_state(img, TICKET_CONSUMED, "resumed"), 0);
        assert_int_equal(ticket_read(img, &back, why, sizeof(why)), 0);
        assert_int_equal(back.state, TICKET_CONSUMED);
        assert_string_equal(back.state_why, "resumed");
        assert_true(back.state_time >= before && back.state_time <= time(NULL));
        if (ticket_boot_id("", boot) == 0)
                assert_string_equal(back.state_boot_id, boot);
        assert_memory_equal(back.mac, t.mac, sizeof(t.mac));
        assert_int_equal(ticket_verify(&back, key), 0);
        other = back;
        other.state = t.state;
        other.state_time = t.state_time;
        memcpy(other.state_boot_id, t.state_boot_id, sizeof(t.state_boot_id));
        memcpy(other.state_why, t.state_why, sizeof(t.state_why));
        assert_memory_equal(&other, &t, sizeof(t));
        assert_int_equal(tokens_of(TICKET_TOKEN_TYPE, NULL), mask); /* at the same id */

        assert_int_equal(ticket_set_state(img, TICKET_SUPERSEDED, NULL), 0);
        assert_int_equal(ticket_read(img, &back, why, sizeof(why)), 0);
        assert_int_equal(back.state, TICKET_SUPERSEDED);
        assert_string_equal(back.state_why, "");
        assert_int_equal(ticket_set_state(img, TICKET_FRESH, NULL), 0);
        assert_int_equal(ticket_read(img, &back, why, sizeof(why)), 0);
        assert_memory_equal(&back, &t, sizeof(t));
        /* The why is ours to check: printable, capped. */
        assert_int_equal(ticket_set_state(img, TICKET_SUPERSEDED, "bad\nwhy"), -EINVAL);
        assert_int_equal(ticket_set_state(img, TICKET_SUPERSEDED,
                                          "0123456789012345678901234567890123456789012345678901234567890123"),
                         -ENAMETOOLONG);
        assert_int_equal(ticket_set_state(img, (enum ticket_state)5, NULL), -EINVAL);

        /* Two tickets: refused as malformed; the next write leaves one. */
        sample(&other);
        other.time++;
        assert_int_equal(ticket_seal(&other, key), 0);
        assert_int_equal(ticket_format(&other, json, sizeof(json)), 0);
        assert_true(inject(json) >= 0);
        assert_int_equal(__builtin_popcount(tokens_of(TICKET_TOKEN_TYPE, NULL)), 2);
        assert_int_equal(ticket_read(img, &back, why, sizeof(why)), -EINVAL);
        assert_non_null(strstr(why, "2 thaw-ticket tokens"));
        assert_int_equal(ticket_set_state(img, TICKET_CONSUMED, NULL), -EINVAL);
        assert_int_equal(ticket_write(img, &other), 0);
        assert_int_equal(tokens_of(TICKET_TOKEN_TYPE, NULL), mask);
        assert_int_equal(ticket_read(img, &back, why, sizeof(why)), 0);
        assert_memory_equal(&back, &other, sizeof(other));
        /* The keyfile token is untouched by all of it. */
        assert_int_equal(luks_token_sources(img, &c), 0);
        assert_int_equal(c.n, 1);
}

static void test_token_malformed_on_disk(void **state)
{
        struct ticket t;
        char why[200] = "";
        char *bad = with(sample_json(), "kernel", "\"6.1\\u001b]0;owned\\u0007\"");

        (void)state;
        /* Whatever is there goes: a ticket the parse refuses is still replaced by ticket_write. */
        assert_true(inject(bad) >= 0);
        free(bad);
        {
                struct crypt_device *cd = NULL;

                /* Remove the good one written before, so that only the bad one is left. */
                assert_int_equal(crypt_init(&cd, img), 0);
                assert_int_equal(crypt_load(cd, CRYPT_LUKS2, NULL), 0);
                for (int id = 0; id < 32; id++) {
                        const char *json = NULL;

                        if (crypt_token_json_get(cd, id, &json) >= 0 && json && strstr(json, "thaw-ticket") &&
                            !strstr(json, "owned"))
                                assert_int_equal(crypt_token_json_set(cd, id, NULL), id);
                }
                crypt_free(cd);
        }
        assert_int_equal(ticket_read(img, &t, why, sizeof(why)), -EINVAL);
        assert_non_null(strstr(why, "\"kernel\" holds a byte that is not printable"));
        assert_int_equal(ticket_set_state(img, TICKET_SUPERSEDED, "noresume"), -EINVAL);
        sample(&t);
        assert_int_equal(ticket_seal(&t, key), 0);
        assert_int_equal(ticket_write(img, &t), 0);
        assert_int_equal(ticket_read(img, &t, why, sizeof(why)), 0);
        assert_int_equal(__builtin_popcount(tokens_of(TICKET_TOKEN_TYPE, NULL)), 1);
}

int main(void)
{
        const struct CMUnitTest pure[] = {
                cmocka_unit_test(test_names),
                cmocka_unit_test(test_hkdf_known_answer),
                cmocka_unit_test(test_mac_stream),
                cmocka_unit_test(test_seal_verify),
                cmocka_unit_test(test_every_field_authenticated),
                cmocka_unit_test(test_state_not_authenticated),
                cmocka_unit_test(test_round_trip),
                cmocka_unit_test(test_malformed_named),
                cmocka_unit_test(test_malformed_text),
                cmocka_unit_test(test_duplicate_key_last_wins),
                cmocka_unit_test(test_uint64_extremes),
                cmocka_unit_test_setup_teardown(test_new, ft_setup, ft_teardown),
                cmocka_unit_test(test_keyring),
        };
        const struct CMUnitTest disk[] = {
                cmocka_unit_test(test_token_io),
                cmocka_unit_test(test_token_malformed_on_disk),
        };
        int failed = cmocka_run_group_tests_name("ticket", pure, setup_key, teardown_key);

        return failed + cmocka_run_group_tests_name("ticket token", disk, luks_setup, luks_teardown);
}

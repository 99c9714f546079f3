/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the image ticket's token JSON (ticket_json.c): one fixed form written, read back strictly. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <json.h>
#include "faketicket.h"
#include "ticket.h"

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

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_round_trip),
                cmocka_unit_test(test_malformed_named),
                cmocka_unit_test(test_malformed_text),
                cmocka_unit_test(test_duplicate_key_last_wins),
                cmocka_unit_test(test_uint64_extremes),
        };

        return cmocka_run_group_tests_name("ticket json", tests, setup_key, teardown_key);
}

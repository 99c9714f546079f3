/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Host tests of the LUKS2 work (luks.c) on an image file: format, tokens, key checks, and what the header holds. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <json.h>
#include <libcryptsetup.h>
#include "base/clock.h"
#include "luks.h"
#include "luks_token.h"

#define IMG_SIZE (32u << 20)
#define HEADER_SIZE (16u << 20) /* LUKS2 default: metadata and keyslot areas before the data */
#define SPEC "fwcfg:opt/thaw/key,keyfile:/etc/thaw/key"

/* The costly keyslots these tests add are kept, never tried: the FOREIGN profile (a THAW header refuses them). */
static const struct luks_policy foreign_policy = { .profile = LUKS_PROFILE_FOREIGN };

static char dir[256], img[300], blank[300];
static struct keychain chain;
static struct secret *keys[2];

static void make_file(const char *path)
{
        int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        assert_true(fd >= 0);
        assert_int_equal(ftruncate(fd, IMG_SIZE), 0); /* sparse */
        close(fd);
}

/* luks_format() with each source's plain token, as keysrc_enroll() makes it for fetched keys. */
static int format(const char *path, const char *label, const struct keychain *c, struct secret **k)
{
        static char tok[KEYCHAIN_MAX][LUKS_TOKEN_JSON_MAX];
        struct keysrc_enrollment e[KEYCHAIN_MAX] = { { 0 } };

        for (size_t i = 0; i < c->n; i++) {
                if (luks_token_build(&c->src[i], tok[i], sizeof(tok[i])) < 0)
                        return -1;
                e[i].key = k[i];
                e[i].token = tok[i];
        }
        return luks_format(path, label, c->n, e, false, NULL);
}

static int setup(void **state)
{
        (void)state;
        snprintf(dir, sizeof(dir), "%s/thaw-luks-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        if (!mkdtemp(dir))
                return -1;
        snprintf(img, sizeof(img), "%s/swap.img", dir);
        snprintf(blank, sizeof(blank), "%s/blank.img", dir);
        make_file(img);
        make_file(blank);
        if (keychain_parse(SPEC, &chain) < 0 || secret_random(32, &keys[0]) < 0 || secret_random(32, &keys[1]) < 0)
                return -1;
        /* Formatted once: PBKDF2 at 1000 iterations is quick, but the tests share one container. */
        return format(img, "thaw-test", &chain, keys) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
        char cmd[sizeof(dir) + 16];

        (void)state;
        secret_freep(&keys[0]);
        secret_freep(&keys[1]);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        return system(cmd) == 0 ? 0 : -1;
}

static void test_probe(void **state)
{
        char missing[320];

        (void)state;
        snprintf(missing, sizeof(missing), "%s/absent.img", dir);
        assert_int_equal(luks_probe(img), 1);
        assert_int_equal(luks_probe(blank), 0);
        assert_int_equal(luks_probe(missing), -ENOENT);
        assert_int_equal(luks_uuid(missing, missing, sizeof(missing)), -ENOENT);
}

/* luks_init_quiet(): libcryptsetup says nothing on stderr when a header does not load (a library never prints). */
static void test_init_quiet(void **state)
{
        struct crypt_device *cd = NULL;
        char said[320], missing[320];
        int saved, fd;
        struct stat st;

        (void)state;
        snprintf(said, sizeof(said), "%s/stderr.txt", dir);
        snprintf(missing, sizeof(missing), "%s/absent.img", dir);
        fd = open(said, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        fflush(stderr);
        saved = dup(2);
        assert_true(saved >= 0);
        assert_int_equal(dup2(fd, 2), 2);
        assert_int_equal(luks_init_quiet(blank, &cd), 0);
        assert_int_not_equal(crypt_load(cd, CRYPT_LUKS2, NULL), 0); /* no header: libcryptsetup has a word to say */
        crypt_free(cd);
        cd = NULL;
        assert_true(luks_init_quiet(missing, &cd) < 0);
        assert_null(cd);
        fflush(stderr);
        assert_int_equal(dup2(saved, 2), 2);
        close(saved);
        close(fd);
        assert_int_equal(stat(said, &st), 0);
        assert_int_equal(st.st_size, 0);
        unlink(said);
}

static void test_tokens_round_trip(void **state)
{
        struct keychain got = { .n = 99 };
        char spec[KEYCHAIN_SPEC_MAX];

        (void)state;
        assert_int_equal(luks_token_sources(img, &got), 0);
        assert_int_equal(keychain_format(&got, spec, sizeof(spec)), 0);
        assert_string_equal(spec, SPEC);
        assert_true(luks_token_sources(blank, &got) < 0);
}

/* Each token is bound to the keyslot its source unlocks, so a token plugin can find the slot. */
static void test_tokens_bound_to_keyslots(void **state)
{
        struct crypt_device *cd = NULL;
        const char *json = NULL;

        (void)state;
        assert_int_equal(crypt_init(&cd, img), 0);
        assert_int_equal(crypt_load(cd, CRYPT_LUKS2, NULL), 0);
        assert_int_equal(crypt_token_json_get(cd, 0, &json), 0);
        assert_non_null(strstr(json, "\"keyslots\":[\"0\"]"));
        assert_int_equal(crypt_token_json_get(cd, 1, &json), 1);
        assert_non_null(strstr(json, "\"keyslots\":[\"1\"]"));
        assert_non_null(strstr(json, "\"thaw-source\":\"keyfile:/etc/thaw/key\""));
        crypt_free(cd);
}

static void test_check_key(void **state)
{
        struct secret *wrong = NULL;

        (void)state;
        assert_int_equal(luks_check_key(img, keys[0], &foreign_policy), 0);
        assert_int_equal(luks_check_key(img, keys[1], &foreign_policy), 0);
        assert_int_equal(secret_random(32, &wrong), 0);
        assert_int_equal(luks_check_key(img, wrong, &foreign_policy), -EPERM);
        /*
         * A prefix of the right key is a wrong key, unless only zero bytes follow it: PBKDF2's HMAC
         * pads its key with zeros, so "K" and "K\0" open the same keyslot (LUKS's, not thaw's). The
         * prefix ends before the last nonzero byte (with 31 bytes this failed 1 run in 256).
         */
        wrong->len = 31;
        while (wrong->len > 1 && keys[0]->data[wrong->len] == 0)
                wrong->len--;
        memcpy(wrong->data, keys[0]->data, wrong->len);
        assert_int_equal(luks_check_key(img, wrong, &foreign_policy), -EPERM);
        secret_freep(&wrong);
        assert_true(luks_check_key(blank, keys[0], &foreign_policy) < 0);
}

/*
 * A deadline already passed (rd.thaw.timeout=0, or a key that took the whole timeout to fetch)
 * still lets the first allowed keyslot be tried, and only that one: keys[0] opens slot 0, keys[1]
 * (slot 1) gets -ETIME after slot 0's one try. The first try is made with and without a passphrase's
 * argon2 allowance, and with a mapping name NULL (no device-mapper).
 */
static void test_deadline_passed(void **state)
{
        const struct luks_policy late = { .profile = LUKS_PROFILE_FOREIGN, .deadline_ms = 1 };
        const struct luks_policy ahead = { .profile = LUKS_PROFILE_FOREIGN, .deadline_ms = clock_now_ms() + 600000 };
        char why[256];

        (void)state;
        assert_int_equal(luks_activate(img, NULL, keys[0], &late), 0);
        assert_int_equal(luks_check_key(img, keys[0], &late), 0);
        assert_int_equal(luks_activate_passphrase(img, NULL, keys[0], 1024, &late, why, sizeof(why)), 0);
        /* Had slot 1 been tried, keys[1] would open it (0); had none been, keys[0] would not have. */
        assert_int_equal(luks_activate(img, NULL, keys[1], &late), -ETIME);
        assert_int_equal(luks_activate_passphrase(img, NULL, keys[1], 1024, &late, why, sizeof(why)), -ETIME);
        /* Without a deadline, or with one to come, slot 1 is tried. */
        assert_int_equal(luks_activate(img, NULL, keys[1], &foreign_policy), 0);
        assert_int_equal(luks_activate(img, NULL, keys[1], &ahead), 0);
}

/*
 * CPU time of this process (all threads), in ms: what a key derivation costs, whatever else the
 * machine runs (wall-clock bounds failed under a load of 15 with ASan).
 */
static int64_t cpu_ms(void)
{
        struct timespec ts;

        assert_int_equal(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts), 0);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Add a keyslot for key, unlocked through keys[0], with the given KDF; returns the slot. */
static int add_slot(const char *path, const struct crypt_pbkdf_type *pbkdf, const struct secret *key)
{
        struct crypt_device *cd = NULL;
        int slot;

        assert_int_equal(crypt_init(&cd, path), 0);
        assert_int_equal(crypt_load(cd, CRYPT_LUKS2, NULL), 0);
        assert_int_equal(crypt_set_pbkdf_type(cd, pbkdf), 0);
        slot = crypt_keyslot_add_by_passphrase(cd, CRYPT_ANY_SLOT, (const char *)keys[0]->data,
                                               keys[0]->len, (const char *)key->data, key->len);
        assert_true(slot >= 0);
        crypt_free(cd);
        return slot;
}

static uint64_t be64(const uint8_t *p)
{
        uint64_t v = 0;

        for (int i = 0; i < 8; i++)
                v = v << 8 | p[i];
        return v;
}

/* SHA-256 of buf through coreutils' sha256sum (the test links no hash library). */
static void sha256(const uint8_t *buf, size_t len, uint8_t out[32])
{
        char tmp[320], cmd[400], hex[65] = "";
        FILE *f;

        snprintf(tmp, sizeof(tmp), "%s/hdr.bin", dir);
        f = fopen(tmp, "wbe");
        assert_non_null(f);
        assert_int_equal(fwrite(buf, 1, len, f), len);
        fclose(f);
        snprintf(cmd, sizeof(cmd), "sha256sum '%s'", tmp);
        f = popen(cmd, "re");
        assert_non_null(f);
        assert_int_equal(fscanf(f, "%64s", hex), 1);
        pclose(f);
        unlink(tmp);
        for (int i = 0; i < 32; i++)
                assert_int_equal(sscanf(hex + 2 * i, "%2hhx", &out[i]), 1);
}

/*
 * What an attacker with write access to the disk can do without knowing any key: rewrite the
 * unauthenticated LUKS2 JSON so keyslot `slot` claims `iterations` PBKDF2 iterations, and fix up
 * the header checksums (binary header at 0 and its copy at hdr_size; csum at byte 448).
 */
static void craft_kdf(const char *path, int slot, const char *field, int64_t value)
{
        static uint8_t hdr[2][1u << 20];
        struct json_object *root, *ks, *kdf;
        char name[8];
        const char *text;
        uint64_t size;
        int fd = open(path, O_RDWR | O_CLOEXEC);

        assert_true(fd >= 0);
        assert_int_equal(pread(fd, hdr[0], 4096, 0), 4096);
        size = be64(hdr[0] + 8);
        assert_true(size > 4096 && size <= sizeof(hdr[0]));
        for (int c = 0; c < 2; c++)
                assert_int_equal(pread(fd, hdr[c], size, (off_t)(c * size)), (ssize_t)size);
        root = json_tokener_parse((const char *)hdr[0] + 4096);
        assert_non_null(root);
        snprintf(name, sizeof(name), "%d", slot);
        assert_true(json_object_object_get_ex(root, "keyslots", &ks));
        assert_true(json_object_object_get_ex(ks, name, &ks));
        assert_true(json_object_object_get_ex(ks, "kdf", &kdf));
        json_object_object_add(kdf, field, json_object_new_int64(value));
        text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN);
        assert_true(strlen(text) < size - 4096);
        for (int c = 0; c < 2; c++) {
                memset(hdr[c] + 4096, 0, size - 4096);
                memcpy(hdr[c] + 4096, text, strlen(text));
                memset(hdr[c] + 448, 0, 64);
                sha256(hdr[c], size, hdr[c] + 448);
                assert_int_equal(pwrite(fd, hdr[c], size, (off_t)(c * size)), (ssize_t)size);
        }
        json_object_put(root);
        close(fd);
}

static void craft_iterations(const char *path, int slot, int64_t iterations)
{
        craft_kdf(path, slot, "iterations", iterations);
}

/*
 * Keyslots added behind our back (the header is unsigned) with an expensive KDF are never tried:
 * a key they would take is refused at once, while cheap PBKDF2 slots still work.
 */
static void test_expensive_slots_skipped(void **state)
{
        const struct crypt_pbkdf_type cheap = {
                .type = CRYPT_KDF_PBKDF2, .hash = "sha256", .iterations = LUKS_PBKDF2_ITER,
                .flags = CRYPT_PBKDF_NO_BENCHMARK,
        };
        struct crypt_pbkdf_type over = cheap, at_max = cheap;
        const struct crypt_pbkdf_type argon = {
                .type = CRYPT_KDF_ARGON2ID, .iterations = 4, .max_memory_kb = 32, .parallel_threads = 1,
                .flags = CRYPT_PBKDF_NO_BENCHMARK,
        };
        struct secret *k_huge = NULL, *k_over = NULL, *k_max = NULL, *k_argon = NULL, *wrong = NULL;
        struct crypt_pbkdf_type got;
        struct crypt_device *cd = NULL;
        char copy[320], cmd[700];
        int64_t t0;
        int huge_slot, argon_slot;

        (void)state;
        over.iterations = LUKS_PBKDF2_ITER_MAX + 1;
        at_max.iterations = LUKS_PBKDF2_ITER_MAX;
        snprintf(copy, sizeof(copy), "%s/slots.img", dir);
        snprintf(cmd, sizeof(cmd), "cp --sparse=always '%s' '%s'", img, copy);
        assert_int_equal(system(cmd), 0);
        assert_int_equal(secret_random(32, &k_huge), 0);
        assert_int_equal(secret_random(32, &k_over), 0);
        assert_int_equal(secret_random(32, &k_max), 0);
        assert_int_equal(secret_random(32, &k_argon), 0);
        assert_int_equal(secret_random(32, &wrong), 0);
        huge_slot = add_slot(copy, &cheap, k_huge);
        add_slot(copy, &over, k_over);
        add_slot(copy, &at_max, k_max);
        argon_slot = add_slot(copy, &argon, k_argon);
        /* 50,000,000 iterations would cost half a minute per key tried; crafted, so the test does not
         * pay. The CPU-time limits below sit far from both sides: trying that slot once costs over 10 s,
         * the allowed slots (one at LUKS_PBKDF2_ITER_MAX) well under 5 s even under ASan. */
        craft_iterations(copy, huge_slot, 50000000);

        assert_int_equal(crypt_init(&cd, copy), 0);
        assert_int_equal(crypt_load(cd, CRYPT_LUKS2, NULL), 0);
        assert_int_equal(crypt_keyslot_get_pbkdf(cd, huge_slot, &got), 0);
        assert_int_equal(got.iterations, 50000000); /* libcryptsetup takes the crafted header */
        /* The argon2 slot is real: libcryptsetup itself opens it with k_argon. */
        assert_int_equal(crypt_activate_by_passphrase(cd, NULL, argon_slot, (const char *)k_argon->data,
                                                      k_argon->len, 0), argon_slot);
        crypt_free(cd);

        t0 = cpu_ms();
        assert_int_equal(luks_check_key(copy, k_huge, &foreign_policy), -EPERM);
        assert_true(cpu_ms() - t0 < 5000);
        t0 = cpu_ms();
        assert_int_equal(luks_check_key(copy, wrong, &foreign_policy), -EPERM); /* a wrong key does not pay for it either */
        assert_true(cpu_ms() - t0 < 5000);
        assert_int_equal(luks_check_key(copy, k_over, &foreign_policy), -EPERM); /* a real slot, one iteration too many */
        assert_int_equal(luks_check_key(copy, k_argon, &foreign_policy), -EPERM);
        assert_int_equal(luks_check_key(copy, k_max, &foreign_policy), 0); /* the limit itself is allowed */
        assert_int_equal(luks_check_key(copy, keys[0], &foreign_policy), 0);
        assert_int_equal(luks_check_key(copy, keys[1], &foreign_policy), 0);
        /* A header thaw wrote has no costly keyslot: as such (THAW) it is refused before any try. */
        assert_int_equal(luks_check_key(copy, keys[0], NULL), -LUKS_EPOLICY);

        secret_freep(&k_huge);
        secret_freep(&k_over);
        secret_freep(&k_max);
        secret_freep(&k_argon);
        secret_freep(&wrong);
        unlink(copy);
}

/*
 * A passphrase may open argon2 keyslots, but only those whose memory fits in half the RAM and whose
 * work is bounded; the others are named, with their cost, and never run (so never OOM the boot).
 */
static void test_passphrase_argon2_limits(void **state)
{
        const struct crypt_pbkdf_type argon = {
                .type = CRYPT_KDF_ARGON2ID, .iterations = 4, .max_memory_kb = 32, .parallel_threads = 1,
                .flags = CRYPT_PBKDF_NO_BENCHMARK,
        };
        struct crypt_pbkdf_type over = {
                .type = CRYPT_KDF_PBKDF2, .hash = "sha256", .iterations = LUKS_PBKDF2_ITER_MAX + 1,
                .flags = CRYPT_PBKDF_NO_BENCHMARK,
        };
        struct secret *pw = NULL, *big = NULL, *slow = NULL, *pbk = NULL;
        char copy[320], cmd[700], why[512], want[512];
        int pw_slot, big_slot, slow_slot;
        int64_t t0;

        (void)state;
        snprintf(copy, sizeof(copy), "%s/argon.img", dir);
        snprintf(cmd, sizeof(cmd), "cp --sparse=always '%s' '%s'", img, copy);
        assert_int_equal(system(cmd), 0);
        assert_int_equal(secret_random(20, &pw), 0);
        assert_int_equal(secret_random(20, &big), 0);
        assert_int_equal(secret_random(20, &slow), 0);
        assert_int_equal(secret_random(20, &pbk), 0);
        pw_slot = add_slot(copy, &argon, pw);
        big_slot = add_slot(copy, &argon, big);
        slow_slot = add_slot(copy, &argon, slow);
        add_slot(copy, &over, pbk);
        /* Crafted costs: running either for real would take gigabytes or minutes. */
        craft_kdf(copy, big_slot, "memory", 4194304);
        craft_kdf(copy, slow_slot, "time", 1 << 20);

        assert_int_equal(luks_activate_passphrase(copy, NULL, pw, 1024, &foreign_policy, why, sizeof(why)), 0);
        assert_int_equal(luks_check_key(copy, pw, &foreign_policy), -EPERM); /* machine keys never run argon2 */
        assert_int_equal(luks_activate_passphrase(copy, NULL, pw, 16, &foreign_policy, why, sizeof(why)), -EPERM);
        snprintf(want, sizeof(want), "keyslot %d (argon2id) needs 32 KiB of memory, more than half of "
                 "the RAM (16 KiB): not tried; keyslot %d (argon2id) needs 4194304 KiB of memory, more "
                 "than half of the RAM (16 KiB): not tried; keyslot %d (argon2id) needs 32 KiB of memory, "
                 "more than half of the RAM (16 KiB): not tried", pw_slot, big_slot, slow_slot);
        assert_string_equal(why, want);

        t0 = cpu_ms();
        assert_int_equal(luks_activate_passphrase(copy, NULL, big, 1048576, &foreign_policy, why, sizeof(why)), -EPERM);
        assert_true(cpu_ms() - t0 < 5000);
        snprintf(want, sizeof(want), "keyslot %d (argon2id) needs 4194304 KiB of memory, more than half "
                 "of the RAM (1048576 KiB): not tried; keyslot %d (argon2id) asks for 1048576 passes "
                 "over 32 KiB, more than thaw allows: not tried", big_slot, slow_slot);
        assert_string_equal(why, want);
        t0 = cpu_ms();
        assert_int_equal(luks_activate_passphrase(copy, NULL, slow, 1048576, &foreign_policy, why, sizeof(why)), -EPERM);
        assert_true(cpu_ms() - t0 < 5000);
        /* PBKDF2 as for every key: over the iteration cap it is not tried. */
        assert_int_equal(luks_activate_passphrase(copy, NULL, pbk, 1048576, &foreign_policy, NULL, 0), -EPERM);
        assert_int_equal(luks_activate_passphrase(copy, NULL, keys[1], 1048576, &foreign_policy, why, sizeof(why)), 0);
        assert_string_equal(why, ""); /* it opened before reaching the costly slots */

        secret_freep(&pw);
        secret_freep(&big);
        secret_freep(&slow);
        secret_freep(&pbk);
        unlink(copy);
}

/*
 * luks_slot_cheap_cd(): the keyslots thaw would try, as luks.c and the token plugin ask it (the
 * plugin refuses a token bound to any other: libcryptsetup would run its KDF unasked).
 */
static void test_slot_cheap_cd(void **state)
{
        const struct crypt_pbkdf_type argon = {
                .type = CRYPT_KDF_ARGON2ID, .iterations = 4, .max_memory_kb = 32, .parallel_threads = 1,
                .flags = CRYPT_PBKDF_NO_BENCHMARK,
        };
        struct crypt_pbkdf_type over = {
                .type = CRYPT_KDF_PBKDF2, .hash = "sha256", .iterations = LUKS_PBKDF2_ITER_MAX + 1,
                .flags = CRYPT_PBKDF_NO_BENCHMARK,
        };
        struct crypt_device *cd = NULL;
        struct secret *k = NULL;
        char copy[320], cmd[700];
        int over_slot, argon_slot, big_slot, huge_slot;

        (void)state;
        snprintf(copy, sizeof(copy), "%s/cheap.img", dir);
        snprintf(cmd, sizeof(cmd), "cp --sparse=always '%s' '%s'", img, copy);
        assert_int_equal(system(cmd), 0);
        assert_int_equal(secret_random(20, &k), 0);
        over_slot = add_slot(copy, &over, k);
        argon_slot = add_slot(copy, &argon, k);
        big_slot = add_slot(copy, &argon, k);
        over.iterations = LUKS_PBKDF2_ITER;
        huge_slot = add_slot(copy, &over, k);
        craft_kdf(copy, big_slot, "memory", 8388608);
        craft_iterations(copy, huge_slot, 2000000000);

        assert_int_equal(crypt_init(&cd, copy), 0);
        assert_int_equal(crypt_load(cd, CRYPT_LUKS2, NULL), 0);
        assert_int_equal(luks_slot_cheap_cd(cd, 0, 0), 1);             /* thaw's own PBKDF2 slot */
        assert_int_equal(luks_slot_cheap_cd(cd, 0, 1048576), 1);
        assert_int_equal(luks_slot_cheap_cd(cd, over_slot, 0), 0);     /* one iteration over the cap */
        assert_int_equal(luks_slot_cheap_cd(cd, over_slot, 1048576), 0);
        assert_int_equal(luks_slot_cheap_cd(cd, huge_slot, 1048576), 0);
        assert_int_equal(luks_slot_cheap_cd(cd, argon_slot, 0), 0);    /* argon2: only for a passphrase */
        assert_int_equal(luks_slot_cheap_cd(cd, argon_slot, 1024), 1);
        assert_int_equal(luks_slot_cheap_cd(cd, argon_slot, 16), 0);   /* more than half the RAM */
        assert_int_equal(luks_slot_cheap_cd(cd, big_slot, UINT64_MAX), 0); /* 8 GiB: over the work cap */
        assert_int_equal(luks_slot_cheap_cd(cd, 31, 0), 0);            /* inactive */
        assert_int_equal(luks_slot_cheap_cd(cd, -1, 0), 0);
        assert_int_equal(luks_slot_cheap_cd(cd, 32, 0), 0);
        assert_int_equal(luks_slot_cheap_cd(NULL, 0, 0), 0);
        crypt_free(cd);
        secret_freep(&k);
        unlink(copy);
}

static void test_uuid(void **state)
{
        char uuid[37], small[8] = "keep";

        (void)state;
        assert_int_equal(luks_uuid(img, uuid, sizeof(uuid)), 0);
        assert_int_equal(strlen(uuid), 36);
        assert_int_equal(luks_uuid(img, small, sizeof(small)), -ENAMETOOLONG);
        assert_string_equal(small, "keep");
}

static int found(const uint8_t *hay, const void *needle, size_t len)
{
        return memmem(hay, HEADER_SIZE, needle, len) != NULL;
}

/* The header names sources but never holds a key: no key's bytes appear anywhere in it. */
static void test_header_holds_no_key(void **state)
{
        static uint8_t hdr[HEADER_SIZE];
        FILE *f = fopen(img, "rbe");

        (void)state;
        assert_non_null(f);
        assert_int_equal(fread(hdr, 1, HEADER_SIZE, f), HEADER_SIZE);
        fclose(f);
        assert_true(found(hdr, "\"thaw-source\":\"fwcfg:opt/thaw/key\"", 33));
        for (int i = 0; i < 2; i++) {
                assert_false(found(hdr, keys[i]->data, keys[i]->len));
                assert_false(found(hdr, keys[i]->data, 8)); /* not even a part */
        }
}

static void test_foreign_tokens_ignored(void **state)
{
        static const char *const foreign[] = {
                "{\"type\":\"example-foreign\",\"keyslots\":[]}",
                "{\"type\":\"thaw-fwcfg\",\"keyslots\":[],\"thaw-source\":\"keyfile:/k\"}",
                "{\"type\":\"thaw-fwcfg\",\"keyslots\":[],\"thaw-source\":\"fwcfg:../x\"}",
                "{\"type\":\"thaw-fwcfg\",\"keyslots\":[],\"thaw-source\":7}",
        };
        struct crypt_device *cd = NULL;
        struct keychain got;
        char spec[KEYCHAIN_SPEC_MAX], copy[320];

        (void)state;
        snprintf(copy, sizeof(copy), "%s/copy.img", dir);
        snprintf(spec, sizeof(spec), "cp --sparse=always '%s' '%s'", img, copy);
        assert_int_equal(system(spec), 0);
        assert_int_equal(crypt_init(&cd, copy), 0);
        assert_int_equal(crypt_load(cd, CRYPT_LUKS2, NULL), 0);
        for (size_t i = 0; i < sizeof(foreign) / sizeof(foreign[0]); i++)
                assert_true(crypt_token_json_set(cd, CRYPT_ANY_TOKEN, foreign[i]) >= 0);
        crypt_free(cd);
        assert_int_equal(luks_token_sources(copy, &got), 0);
        assert_int_equal(keychain_format(&got, spec, sizeof(spec)), 0);
        assert_string_equal(spec, SPEC);
        unlink(copy);
}

static int run(const char *cmd, char *out, size_t size)
{
        FILE *p = popen(cmd, "re");
        size_t n;

        if (!p)
                return -1;
        n = fread(out, 1, size - 1, p);
        out[n] = '\0';
        return pclose(p);
}

/* What an administrator checks with cryptsetup: cipher, sector size, PBKDF2 at the fixed count. */
/* An enrollment whose token libcryptsetup refuses leaves no keyslot behind: nothing enrolled. */
static void test_enroll_failure_leaves_nothing(void **state)
{
        char refused[] = "{\"type\":\"thaw-keyfile\"}"; /* no "keyslots": libcryptsetup says no */
        struct keysrc_enrollment e = { .token = refused };
        struct crypt_device *cd = NULL;
        int before = 0, after = 0, id = -1;

        (void)state;
        assert_int_equal(crypt_init(&cd, img), 0);
        assert_int_equal(crypt_load(cd, CRYPT_LUKS2, NULL), 0);
        for (int slot = 0; slot < crypt_keyslot_max(CRYPT_LUKS2); slot++)
                before += crypt_keyslot_status(cd, slot) >= CRYPT_SLOT_ACTIVE;
        crypt_free(cd);
        assert_int_equal(secret_random(32, &e.key), 0);
        assert_true(luks_enroll(img, keys[0], &e, &id, NULL) < 0);
        assert_int_equal(id, -1);
        assert_int_equal(luks_check_key(img, e.key, &foreign_policy), -EPERM);
        cd = NULL;
        assert_int_equal(crypt_init(&cd, img), 0);
        assert_int_equal(crypt_load(cd, CRYPT_LUKS2, NULL), 0);
        for (int slot = 0; slot < crypt_keyslot_max(CRYPT_LUKS2); slot++)
                after += crypt_keyslot_status(cd, slot) >= CRYPT_SLOT_ACTIVE;
        crypt_free(cd);
        assert_int_equal(after, before);
        secret_freep(&e.key);
}

static void test_luks_dump(void **state)
{
        char cmd[400], out[16384];

        (void)state;
        if (system("command -v cryptsetup >/dev/null 2>&1") != 0)
                skip();
        snprintf(cmd, sizeof(cmd), "cryptsetup luksDump '%s' 2>&1", img);
        assert_int_equal(run(cmd, out, sizeof(out)), 0);
        assert_non_null(strstr(out, "cipher: aes-xts-plain64"));
        assert_non_null(strstr(out, "sector: 4096"));
        assert_non_null(strstr(out, "PBKDF:      pbkdf2"));
        assert_non_null(strstr(out, "Iterations: 1000"));
        assert_non_null(strstr(out, "thaw-fwcfg"));
        assert_non_null(strstr(out, "thaw-keyfile"));
        assert_non_null(strstr(out, "Label:"));
        assert_memory_equal(strstr(out, "Label:") + strcspn(strstr(out, "Label:"), "\t"), "\tthaw-test\n", 11);
        assert_null(strstr(out, "argon2"));
}

/*
 * --remove destroys only the keyslots no other token refers to: with token 1 bound to keyslot 0
 * too, removing token 0 keeps keyslot 0 (its key still opens the device); and the last keyslots
 * are never destroyed.
 */
static void test_remove_keeps_shared_keyslot(void **state)
{
        char own[sizeof(dir) + 16];
        struct crypt_device *cd = NULL;
        uint32_t kept = 0;

        (void)state;
        snprintf(own, sizeof(own), "%s/shared.img", dir);
        make_file(own);
        assert_int_equal(format(own, NULL, &chain, keys), 0);
        assert_int_equal(crypt_init(&cd, own), 0);
        assert_int_equal(crypt_load(cd, CRYPT_LUKS2, NULL), 0);
        assert_int_equal(crypt_token_assign_keyslot(cd, 1, 0), 1);
        crypt_free(cd);

        assert_int_equal(luks_token_remove(own, 0, &kept, NULL), 0);
        assert_int_equal(kept, 1u << 0);
        assert_int_equal(luks_check_key(own, keys[0], &foreign_policy), 0);
        assert_int_equal(luks_check_key(own, keys[1], &foreign_policy), 0);
        /* Token 1 now holds both remaining keyslots: removing it would leave none. */
        assert_int_equal(luks_token_remove(own, 1, &kept, NULL), -EBUSY);
        assert_int_equal(luks_check_key(own, keys[0], &foreign_policy), 0);
        assert_int_equal(luks_check_key(own, keys[1], &foreign_policy), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_probe),
                cmocka_unit_test(test_init_quiet),
                cmocka_unit_test(test_tokens_round_trip),
                cmocka_unit_test(test_tokens_bound_to_keyslots),
                cmocka_unit_test(test_check_key),
                cmocka_unit_test(test_deadline_passed),
                cmocka_unit_test(test_expensive_slots_skipped),
                cmocka_unit_test(test_passphrase_argon2_limits),
                cmocka_unit_test(test_slot_cheap_cd),
                cmocka_unit_test(test_uuid),
                cmocka_unit_test(test_header_holds_no_key),
                cmocka_unit_test(test_foreign_tokens_ignored),
                cmocka_unit_test(test_luks_dump),
                cmocka_unit_test(test_enroll_failure_leaves_nothing),
                cmocka_unit_test(test_remove_keeps_shared_keyslot),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}

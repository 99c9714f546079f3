/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the image ticket (ticket.c): key, MAC, seal, keyring, and its token on a LUKS2 image file. */
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <json.h>
#include <keyutils.h>
#include <libcryptsetup.h>
#include "faketicket.h"
#include "faketree.h"
#include "luks.h"
#include "luks_token.h"
#include "ticket.h"

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

static void hex(const uint8_t *p, size_t n, char *out)
{
        for (size_t i = 0; i < n; i++)
                sprintf(out + 2 * i, "%02x", p[i]);
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

/*
 * Stored from a session that does not possess root's user keyring, as a service under systemd's
 * private session keyring (KeyringMode=private) stores it: in a child that joined a new anonymous
 * session keyring. The key still lands in root's keyring with its rights narrowed, and is read back.
 */
static void test_keyring_private_session(void **state)
{
        int status;
        pid_t pid;

        (void)state;
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct secret *got = NULL, *k = NULL;
                uint8_t r[16];
                char uuid[37], desc[64], buf[256];
                key_serial_t id;
                unsigned perm;
                char *p = buf;
                int rc;

                if (keyctl_join_session_keyring(NULL) < 0)
                        _exit(77);
                /* Not possessed from here: the new session keyring does not link root's. */
                if (keyctl_search(KEY_SPEC_SESSION_KEYRING, "keyring", "_uid.0", 0) >= 0)
                        _exit(3);
                if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
                        _exit(4);
                snprintf(uuid, sizeof(uuid), "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                         r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13], r[14],
                         r[15]);
                /* The child's own key: secrets are not inherited across fork (MADV_WIPEONFORK). */
                if (secret_random(TICKET_KEY_SIZE, &k) < 0)
                        _exit(4);
                rc = ticket_key_store(uuid, k);
                if (rc == -EPERM || rc == -ENOSYS || rc == -EDQUOT)
                        _exit(77);
                if (rc != 0) {
                        fprintf(stderr, "ticket_key_store from a private session: %s\n", strerror(-rc));
                        _exit(5);
                }
                snprintf(desc, sizeof(desc), "thaw:ticket:%s", uuid);
                id = (key_serial_t)keyctl_search(KEY_SPEC_USER_KEYRING, "user", desc, 0);
                if (id <= 0 || keyctl_describe(id, buf, sizeof(buf)) <= 0)
                        _exit(6);
                for (int i = 0; i < 3; i++)
                        p = strchr(p, ';') + 1;
                perm = (unsigned)strtoul(p, NULL, 16);
                if (perm != (KEY_POS_ALL | KEY_USR_VIEW | KEY_USR_READ | KEY_USR_WRITE | KEY_USR_SEARCH |
                             KEY_USR_SETATTR))
                        _exit(7);
                if (ticket_key_load(uuid, &got) != 0 || !secret_equal(got, k))
                        _exit(8);
                secret_freep(&got);
                secret_freep(&k);
                /* Nothing left behind in the thread's keyring. */
                if (keyctl_search(KEY_SPEC_THREAD_KEYRING, "user", desc, 0) >= 0)
                        _exit(9);
                _exit(keyctl_unlink(id, KEY_SPEC_USER_KEYRING) == 0 ? 0 : 10);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        if (WEXITSTATUS(status) == 77) {
                fprintf(stderr, "skip: no user keyring here\n");
                skip();
        }
        assert_int_equal(WEXITSTATUS(status), 0);
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
                cmocka_unit_test_setup_teardown(test_new, ft_setup, ft_teardown),
                cmocka_unit_test(test_keyring),
                cmocka_unit_test(test_keyring_private_session),
        };
        const struct CMUnitTest disk[] = {
                cmocka_unit_test(test_token_io),
                cmocka_unit_test(test_token_malformed_on_disk),
        };
        int failed = cmocka_run_group_tests_name("ticket", pure, setup_key, teardown_key);

        return failed + cmocka_run_group_tests_name("ticket token", disk, luks_setup, luks_teardown);
}

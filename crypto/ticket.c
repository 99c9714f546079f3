/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The image ticket: its key, its MAC over a canonical encoding, and its LUKS2 token on the swap device. */
#include "ticket.h"
#include "luks.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <keyutils.h>
#include <libcryptsetup.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include "base/util.h"

#define KEY_SALT "thaw-ticket-key-v1"
#define MAC_DOMAIN "thaw-ticket-v1"
#define KEY_DESC_PREFIX "thaw:ticket:"
#define BOOT_ID_PATH "/proc/sys/kernel/random/boot_id"
#define TOKENS_MAX 32 /* LUKS2 token ids are 0..31 */

const char *ticket_state_name(enum ticket_state s)
{
        switch (s) {
        case TICKET_FRESH:
                return "fresh";
        case TICKET_CONSUMED:
                return "consumed";
        case TICKET_SUPERSEDED:
                return "superseded";
        }
        return NULL;
}

const char *ticket_writer_name(enum ticket_writer w)
{
        switch (w) {
        case TICKET_WRITER_THAW:
                return "thaw";
        case TICKET_WRITER_KERNEL:
                return "kernel";
        }
        return NULL;
}

bool ticket_uuid_valid(const char *s)
{
        if (!s || strnlen(s, 37) != 36)
                return false;
        for (size_t i = 0; i < 36; i++) {
                bool dash = i == 8 || i == 13 || i == 18 || i == 23;
                char c = s[i];

                if (dash ? c != '-' : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
                        return false;
        }
        return true;
}

int ticket_boot_id(const char *root, char out[37])
{
        char buf[64];
        int r = util_read_text_at(root, BOOT_ID_PATH, buf, sizeof(buf));

        if (r < 0)
                return r;
        util_rstrip(buf);
        if (!ticket_uuid_valid(buf))
                return -EBADMSG;
        memcpy(out, buf, 37);
        return 0;
}

int ticket_new_at(const char *root, struct ticket *t)
{
        struct ticket n = { .writer = TICKET_WRITER_THAW, .state = TICKET_FRESH };
        struct utsname u;
        ssize_t got;
        int r;

        if (!t)
                return -EINVAL;
        got = getrandom(n.id, sizeof(n.id), 0);
        if (got < 0)
                return -errno;
        if ((size_t)got != sizeof(n.id))
                return -EIO;
        n.time = (int64_t)time(NULL);
        r = ticket_boot_id(root, n.boot_id);
        if (r < 0)
                return r;
        if (uname(&u) < 0)
                return -errno;
        r = util_copy(n.kernel, sizeof(n.kernel), u.release);
        if (r < 0)
                return r;
        *t = n;
        return 0;
}

int ticket_new(struct ticket *t)
{
        return ticket_new_at("", t);
}

int ticket_key_derive(const uint8_t *vk, size_t vk_len, const char *luks_uuid, struct secret **out)
{
        EVP_KDF *kdf = NULL;
        EVP_KDF_CTX *ctx = NULL;
        struct secret *k = NULL;
        OSSL_PARAM params[5];
        int r;

        if (!vk || vk_len == 0 || !ticket_uuid_valid(luks_uuid) || !out)
                return -EINVAL;
        r = secret_new(TICKET_KEY_SIZE, &k);
        if (r < 0)
                return r;
        kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
        ctx = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
        if (!ctx) {
                r = -ENOMEM;
                goto out;
        }
        /* The UUID as info binds the key to this one volume: a ticket copied from another never verifies. */
        params[0] = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA256", 0);
        params[1] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)vk, vk_len);
        params[2] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)KEY_SALT, strlen(KEY_SALT));
        params[3] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)luks_uuid, strlen(luks_uuid));
        params[4] = OSSL_PARAM_construct_end();
        if (EVP_KDF_derive(ctx, k->data, TICKET_KEY_SIZE, params) != 1) {
                r = -EIO;
                goto out;
        }
        k->len = TICKET_KEY_SIZE;
        *out = k;
        k = NULL;
        r = 0;
out:
        EVP_KDF_CTX_free(ctx);
        EVP_KDF_free(kdf);
        secret_free(k);
        return r;
}

static int key_desc(const char *luks_uuid, char *buf, size_t size)
{
        /* The UUID comes from the header: only its plain form may become part of a key description. */
        if (!ticket_uuid_valid(luks_uuid))
                return -EINVAL;
        if ((size_t)snprintf(buf, size, KEY_DESC_PREFIX "%s", luks_uuid) >= size)
                return -ENAMETOOLONG;
        return 0;
}

int ticket_key_store(const char *luks_uuid, const struct secret *key)
{
        char desc[64];
        key_serial_t id;
        int r;

        if (!key || key->len != TICKET_KEY_SIZE)
                return -EINVAL;
        r = key_desc(luks_uuid, desc, sizeof(desc));
        if (r < 0)
                return r;
        /* A key root's keyring already has is updated in place (the owner may write it). */
        id = (key_serial_t)keyctl_search(KEY_SPEC_USER_KEYRING, "user", desc, 0);
        if (id >= 0 && keyctl_update(id, key->data, key->len) == 0)
                return 0;
        /*
         * A new one is made in this thread's keyring, where the caller possesses it whatever its
         * session keyring is: a service under systemd's private session keyring (KeyringMode=private,
         * the default), cloud-init's or systemd-run's, does not possess root's user keyring, and a
         * key added straight there could not have its rights narrowed (setattr is a possessor's
         * right), so it would be dropped. Narrowed there, then linked into root's keyring.
         */
        id = add_key("user", desc, key->data, key->len, KEY_SPEC_THREAD_KEYRING);
        if (id < 0)
                return -errno;
        /*
         * Security: the owner (root) reads it later from another session, where only the user
         * rights apply; group and others get nothing. A key whose rights could not be narrowed goes.
         */
        r = 0;
        if (keyctl_setperm(id, KEY_POS_ALL | KEY_USR_VIEW | KEY_USR_READ | KEY_USR_WRITE | KEY_USR_SEARCH |
                                       KEY_USR_SETATTR) < 0 ||
            keyctl_link(id, KEY_SPEC_USER_KEYRING) < 0)
                r = -errno;
        (void)keyctl_unlink(id, KEY_SPEC_THREAD_KEYRING);
        return r;
}

int ticket_key_load(const char *luks_uuid, struct secret **out)
{
        struct secret *k = NULL;
        char desc[64];
        long id, n;
        int r;

        if (!out)
                return -EINVAL;
        r = key_desc(luks_uuid, desc, sizeof(desc));
        if (r < 0)
                return r;
        id = keyctl_search(KEY_SPEC_USER_KEYRING, "user", desc, 0);
        if (id < 0)
                return -errno;
        r = secret_new(TICKET_KEY_SIZE, &k);
        if (r < 0)
                return r;
        /* Straight into locked memory; a key of another size is not one ticket_key_store() left. */
        n = keyctl_read((key_serial_t)id, (char *)k->data, k->cap);
        if (n < 0)
                r = -errno;
        else if (n != TICKET_KEY_SIZE)
                r = -EBADMSG;
        if (r < 0) {
                secret_free(k);
                return r;
        }
        k->len = TICKET_KEY_SIZE;
        *out = k;
        return 0;
}

struct ticket_mac {
        EVP_MAC *mac;
        EVP_MAC_CTX *ctx;
        uint8_t nonce[TICKET_MAC_NONCE];
};

void ticket_mac_free(struct ticket_mac *m)
{
        if (!m)
                return;
        EVP_MAC_CTX_free(m->ctx);
        EVP_MAC_free(m->mac);
        free(m);
}

/*
 * Poly1305 under the image's one-time key, HMAC-SHA256(ticket key, "thaw-image-mac-v1" || nonce):
 * a fresh random nonce for every image, so no Poly1305 key ever authenticates two images.
 */
static int mac_begin(const struct secret *key, const uint8_t nonce[TICKET_MAC_NONCE], struct ticket_mac **out)
{
        static const char label[] = "thaw-image-mac-v1";
        uint8_t in[sizeof(label) - 1 + TICKET_MAC_NONCE], pk[32];
        struct ticket_mac *m;
        size_t n = 0;
        int r = -EIO;

        if (!key || key->len != TICKET_KEY_SIZE || !out)
                return -EINVAL;
        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        memcpy(m->nonce, nonce, TICKET_MAC_NONCE);
        memcpy(in, label, sizeof(label) - 1);
        memcpy(in + sizeof(label) - 1, nonce, TICKET_MAC_NONCE);
        m->mac = EVP_MAC_fetch(NULL, "POLY1305", NULL);
        m->ctx = m->mac ? EVP_MAC_CTX_new(m->mac) : NULL;
        if (!m->ctx)
                r = -ENOMEM;
        else if (EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, key->data, key->len, in, sizeof(in), pk, sizeof(pk),
                           &n) && n == sizeof(pk) && EVP_MAC_init(m->ctx, pk, sizeof(pk), NULL) == 1)
                r = 0;
        OPENSSL_cleanse(pk, sizeof(pk));
        if (r < 0) {
                ticket_mac_free(m);
                return r;
        }
        *out = m;
        return 0;
}

int ticket_mac_begin(const struct secret *key, struct ticket_mac **out)
{
        uint8_t nonce[TICKET_MAC_NONCE];
        ssize_t got = getrandom(nonce, sizeof(nonce), 0);

        if (got < 0)
                return -errno;
        if ((size_t)got != sizeof(nonce))
                return -EIO;
        return mac_begin(key, nonce, out);
}

int ticket_mac_begin_check(const struct secret *key, const uint8_t held[TICKET_MAC_SIZE], struct ticket_mac **out)
{
        return held ? mac_begin(key, held, out) : -EINVAL;
}

int ticket_mac_update(struct ticket_mac *m, const void *data, size_t len)
{
        if (!m || (!data && len))
                return -EINVAL;
        return EVP_MAC_update(m->ctx, data, len) == 1 ? 0 : -EIO;
}

int ticket_mac_end(struct ticket_mac *m, uint8_t out[TICKET_MAC_SIZE])
{
        size_t n = 0;
        int r;

        if (!m || !out) {
                ticket_mac_free(m);
                return -EINVAL;
        }
        memcpy(out, m->nonce, TICKET_MAC_NONCE);
        r = EVP_MAC_final(m->ctx, out + TICKET_MAC_NONCE, &n, TICKET_MAC_SIZE - TICKET_MAC_NONCE) == 1 &&
            n == TICKET_MAC_SIZE - TICKET_MAC_NONCE ? 0 : -EIO;
        ticket_mac_free(m);
        return r;
}

/*
 * The canonical encoding the MAC covers (not the JSON text, whose form libcryptsetup may change):
 * fixed-size little-endian integers, text prefixed by its length, so no two tickets encode alike.
 */
struct enc {
        uint8_t b[2048]; /* a ticket with TICKET_FS_MAX entries takes about 1700 bytes */
        size_t n;
        bool bad;
};

static void put(struct enc *e, const void *p, size_t n)
{
        if (e->bad || n > sizeof(e->b) - e->n) {
                e->bad = true;
                return;
        }
        memcpy(e->b + e->n, p, n);
        e->n += n;
}

static void put_u64(struct enc *e, uint64_t v)
{
        uint8_t b[8];

        for (int i = 0; i < 8; i++)
                b[i] = (uint8_t)(v >> (8 * i));
        put(e, b, sizeof(b));
}

static void put_u32(struct enc *e, uint32_t v)
{
        uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };

        put(e, b, sizeof(b));
}

static void put_u8(struct enc *e, uint8_t v)
{
        put(e, &v, 1);
}

/* Text of a fixed field: it must end inside the field. */
static void put_text(struct enc *e, const char *s, size_t field)
{
        size_t n = strnlen(s, field);

        if (n == field) {
                e->bad = true;
                return;
        }
        put_u32(e, (uint32_t)n);
        put(e, s, n);
}

static void put_fs(struct enc *e, const struct fsmark *f)
{
        put_text(e, f->type, sizeof(f->type));
        put_text(e, f->uuid, sizeof(f->uuid));
        put_u8(e, f->known);
        put_u32(e, f->mnt_count);
        put_u32(e, f->mtime);
        put_u32(e, f->wtime);
        put_u64(e, f->kbytes_written);
        put_u8(e, f->has_journal);
        put_u32(e, f->journal_seq);
        put_u64(e, f->generation);
}

/* Every field but mac and the state, in the order the struct declares them. */
static void put_ticket(struct enc *e, const struct ticket *t)
{
        put_text(e, MAC_DOMAIN, sizeof(MAC_DOMAIN));
        put_u32(e, TICKET_VERSION);
        put(e, t->id, sizeof(t->id));
        put_u64(e, (uint64_t)t->time);
        put_text(e, t->boot_id, sizeof(t->boot_id));
        put_text(e, t->kernel, sizeof(t->kernel));
        put_u8(e, (uint8_t)t->writer);
        put_u32(e, (uint32_t)t->n_fs);
        for (size_t i = 0; i < t->n_fs; i++)
                put_fs(e, &t->fs[i]);
        /* An absent value is not encoded: only its absence is. */
        put_u8(e, t->has_tpm_counter);
        if (t->has_tpm_counter)
                put_u64(e, t->tpm_counter);
        put_u8(e, t->has_image_mac);
        if (t->has_image_mac)
                put(e, t->image_mac, sizeof(t->image_mac));
        /* Last, and only when present (tickets without it encode as before): unambiguous at the end. */
        if (t->has_image_head) {
                put_u8(e, 'H');
                put_u32(e, t->image_crc32);
                put_u64(e, t->image_first_map);
                put_u64(e, t->image_pages);
        }
}

static int compute(const struct ticket *t, const struct secret *key, uint8_t out[TICKET_MAC_SIZE])
{
        struct enc e = { .n = 0 };
        size_t n = 0;

        if (!t || t->n_fs > TICKET_FS_MAX || !ticket_writer_name(t->writer))
                return -EINVAL;
        put_ticket(&e, t);
        if (e.bad)
                return -EINVAL;
        if (!key || key->len != TICKET_KEY_SIZE)
                return -EINVAL;
        /* The ticket's own seal: HMAC-SHA256 under the ticket key over the canonical encoding. */
        return EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, key->data, key->len, e.b, e.n, out, TICKET_MAC_SIZE, &n) &&
               n == TICKET_MAC_SIZE ? 0 : -EIO;
}

int ticket_seal(struct ticket *t, const struct secret *key)
{
        uint8_t mac[TICKET_MAC_SIZE];
        int r = compute(t, key, mac);

        if (r < 0)
                return r;
        memcpy(t->mac, mac, sizeof(mac));
        return 0;
}

int ticket_verify(const struct ticket *t, const struct secret *key)
{
        uint8_t mac[TICKET_MAC_SIZE];
        int r = compute(t, key, mac);

        if (r < 0)
                return r;
        /* Security: constant time, so the time taken says nothing about how much of a forged MAC is right. */
        r = CRYPTO_memcmp(mac, t->mac, sizeof(mac)) == 0 ? 0 : -EBADMSG;
        OPENSSL_cleanse(mac, sizeof(mac));
        return r;
}

static int open_dev(const char *dev, struct crypt_device **out)
{
        struct crypt_device *cd = NULL;
        struct stat st;
        int r;

        if (!dev)
                return -EINVAL;
        /* A missing device is not a device without a ticket (-ENOENT): crypt_init() would say -ENOTBLK. */
        if (stat(dev, &st) < 0)
                return errno == ENOENT ? -ENODEV : -errno;
        r = luks_init_quiet(dev, &cd);
        if (r < 0)
                return r;
        r = crypt_load(cd, CRYPT_LUKS2, NULL);
        if (r < 0) {
                crypt_free(cd);
                return r;
        }
        *out = cd;
        return 0;
}

/* The ids of cd's thaw-ticket tokens, in order; returns how many there are (ids[] holds the first max). */
static int find_tickets(struct crypt_device *cd, int *ids, int max)
{
        int n = 0;

        for (int id = 0; id < TOKENS_MAX; id++) {
                const char *type = NULL;

                if (crypt_token_status(cd, id, &type) == CRYPT_TOKEN_INACTIVE || !type ||
                    strcmp(type, TICKET_TOKEN_TYPE) != 0)
                        continue;
                if (n < max)
                        ids[n] = id;
                n++;
        }
        return n;
}

/* The one ticket token of cd, parsed strictly; *id its token id. */
static int read_cd(struct crypt_device *cd, struct ticket *out, int *id, char *why, size_t size)
{
        const char *json = NULL;
        int ids[2], n = find_tickets(cd, ids, 2);

        if (n == 0)
                return -ENOENT;
        if (n > 1) {
                if (why && size)
                        snprintf(why, size, "%d thaw-ticket tokens (ids %d, %d, ...), not one", n, ids[0], ids[1]);
                return -EINVAL;
        }
        if (crypt_token_json_get(cd, ids[0], &json) < 0 || !json)
                return -ENOENT;
        *id = ids[0];
        return ticket_parse(json, out, why, size);
}

int ticket_read(const char *dev, struct ticket *out, char *why, size_t size)
{
        struct crypt_device *cd = NULL;
        struct ticket *t;
        int id, r;

        if (!out)
                return -EINVAL;
        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        r = open_dev(dev, &cd);
        if (r == 0) {
                r = read_cd(cd, t, &id, why, size);
                crypt_free(cd);
        }
        if (r == 0)
                *out = *t;
        free(t);
        return r;
}

/* Writes t's JSON at token id (CRYPT_ANY_TOKEN: a free one): one metadata update. */
static int write_cd(struct crypt_device *cd, int id, const struct ticket *t)
{
        char *json = malloc(TICKET_JSON_MAX + 1);
        int r;

        if (!json)
                return -ENOMEM;
        r = ticket_format(t, json, TICKET_JSON_MAX + 1);
        if (r == 0)
                r = crypt_token_json_set(cd, id, json);
        free(json);
        return r < 0 ? r : 0;
}

int ticket_write(const char *dev, const struct ticket *t)
{
        struct crypt_device *cd = NULL;
        int ids[TOKENS_MAX], n, r;

        if (!t)
                return -EINVAL;
        r = open_dev(dev, &cd);
        if (r < 0)
                return r;
        n = find_tickets(cd, ids, TOKENS_MAX);
        /* The new ticket takes the place of the first old one in a single update; extra ones go after. */
        r = write_cd(cd, n > 0 ? ids[0] : CRYPT_ANY_TOKEN, t);
        for (int i = 1; r == 0 && i < n; i++)
                r = crypt_token_json_set(cd, ids[i], NULL) < 0 ? -EIO : 0;
        crypt_free(cd);
        return r;
}

static int why_ok(const char *s)
{
        size_t n = strnlen(s, TICKET_WHY_MAX);

        if (n == TICKET_WHY_MAX)
                return -ENAMETOOLONG;
        for (size_t i = 0; i < n; i++) {
                if (s[i] < 0x20 || s[i] > 0x7e)
                        return -EINVAL;
        }
        return 0;
}

int ticket_set_state(const char *dev, enum ticket_state s, const char *why_text)
{
        struct crypt_device *cd = NULL;
        struct ticket *t;
        int id, r;

        if (!ticket_state_name(s))
                return -EINVAL;
        if (!why_text)
                why_text = "";
        r = why_ok(why_text);
        if (r < 0)
                return r;
        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        r = open_dev(dev, &cd);
        if (r < 0) {
                free(t);
                return r;
        }
        /* The present token is parsed as strictly as ticket_read() does: a malformed one is not rewritten. */
        r = read_cd(cd, t, &id, NULL, 0);
        if (r == 0) {
                t->state = s;
                memset(t->state_boot_id, 0, sizeof(t->state_boot_id));
                memset(t->state_why, 0, sizeof(t->state_why));
                t->state_time = 0;
                if (s != TICKET_FRESH) {
                        t->state_time = (int64_t)time(NULL);
                        /* Without /proc the record only lacks which boot it was: the state itself matters more. */
                        (void)ticket_boot_id("", t->state_boot_id);
                        memcpy(t->state_why, why_text, strlen(why_text) + 1);
                }
                r = write_cd(cd, id, t);
        }
        crypt_free(cd);
        free(t);
        return r;
}

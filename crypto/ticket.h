/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The image ticket: what thaw hibernate records about an image, in a LUKS2 token ("thaw-ticket",
 * bound to no keyslot) of the swap device, so that thaw resume hands over only a fresh image: one
 * made by thaw on this volume, not consumed by an earlier resume, not superseded by a boot that went
 * on without it, and whose file systems are as it left them.
 *
 * Authenticated part: HMAC-SHA256, under a key derived (HKDF-SHA256) from the volume key, over a
 * canonical encoding of every field but the state. Whoever can write the disk but lacks the
 * volume key cannot make one that verifies. The state (fresh, consumed, superseded) is written at
 * boot without any key and is not authenticated: it is a record, and the file-system markers (and
 * the TPM counter) are what an attacker who resets it still meets.
 *
 * Token JSON (keys in this order when written; unknown keys refused when read):
 *   {"type":"thaw-ticket","keyslots":[],"thaw-ticket":1,
 *    "id":"<32 hex>","time":<unix s>,"boot-id":"<uuid>","kernel":"<release>","writer":"thaw"|"kernel",
 *    "fs":[{"uuid":"…","type":"ext4","known":true,"mnt-count":N,"mtime":N,"wtime":N,
 *           "kbytes-written":N,"journal":true,"journal-seq":N,"generation":N}, …],
 *    ["tpm-counter":N,] ["image-mac":"<64 hex>",] ["image-crc32":N,"image-first-map":N,"image-pages":N,]
 *    "mac":"<64 hex>",
 *    "state":"fresh"|"consumed"|"superseded", ["state-time":N,"state-boot-id":"…","state-why":"…"]}
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dev/fsmark.h"
#include "secret.h"

#define TICKET_TOKEN_TYPE "thaw-ticket"
#define TICKET_VERSION 1
#define TICKET_ID_SIZE 16
#define TICKET_KEY_SIZE 32
#define TICKET_MAC_SIZE 32
#define TICKET_FS_MAX FSMARK_LIST_MAX
#define TICKET_JSON_MAX 8192
#define TICKET_WHY_MAX 64      /* state-why: "noresume", "no key", "verify failed", … */

enum ticket_state { TICKET_FRESH, TICKET_CONSUMED, TICKET_SUPERSEDED };
enum ticket_writer { TICKET_WRITER_THAW, TICKET_WRITER_KERNEL };

struct ticket {
        /* authenticated */
        uint8_t id[TICKET_ID_SIZE];
        int64_t time;                   /* CLOCK_REALTIME seconds when the ticket was made */
        char boot_id[37];               /* /proc/sys/kernel/random/boot_id of the hibernating boot */
        char kernel[65];                /* uname -r of the hibernating kernel */
        enum ticket_writer writer;
        size_t n_fs;
        struct fsmark fs[TICKET_FS_MAX];
        bool has_tpm_counter;
        uint64_t tpm_counter;
        bool has_image_mac;
        uint8_t image_mac[TICKET_MAC_SIZE];
        /*
         * The image's own header (thaw's writer): its CRC32, first swap-map block and page count,
         * checked at every boot, so that the ticket holds for this image only, not an older one
         * put back under it. Encoded after the rest, and only when present.
         */
        bool has_image_head;
        uint32_t image_crc32;
        uint64_t image_first_map;
        uint64_t image_pages;
        uint8_t mac[TICKET_MAC_SIZE];   /* filled by ticket_seal(), checked by ticket_verify() */
        /* not authenticated */
        enum ticket_state state;
        int64_t state_time;             /* when consumed or superseded, 0 if fresh */
        char state_boot_id[37];
        char state_why[TICKET_WHY_MAX];
};

const char *ticket_state_name(enum ticket_state s);   /* "fresh", "consumed", "superseded" */
const char *ticket_writer_name(enum ticket_writer w); /* "thaw", "kernel" */

/* A new fresh ticket: random id, this time, boot id, kernel release; no file systems yet. */
int ticket_new(struct ticket *t);
/* The same with the boot id read from root + /proc/sys/kernel/random/boot_id (tests: a fixture tree). */
int ticket_new_at(const char *root, struct ticket *t);
/* root + /proc/sys/kernel/random/boot_id into out; -EBADMSG if it is not a UUID. */
int ticket_boot_id(const char *root, char out[37]);
/* true for 36 characters of hex digits and dashes at 8, 13, 18, 23 (a LUKS2 UUID, a boot id). */
bool ticket_uuid_valid(const char *s);

/* The ticket key of a volume: HKDF-SHA256(volume key, salt "thaw-ticket-key-v1", info LUKS2 UUID). */
int ticket_key_derive(const uint8_t *vk, size_t vk_len, const char *luks_uuid, struct secret **out);

/*
 * The key in root's user keyring (keyutils; key type "user", description "thaw:ticket:<uuid>",
 * readable and writable by its owner only), where thaw resume leaves it after each unlock and
 * thaw hibernate finds it: the kernel keeps it from the initramfs into the real system.
 * load: -ENOKEY if it is not there.
 */
int ticket_key_store(const char *luks_uuid, const struct secret *key);
int ticket_key_load(const char *luks_uuid, struct secret **out);

/* Compute t->mac over the authenticated fields. */
int ticket_seal(struct ticket *t, const struct secret *key);
/* 0 if t->mac is right for key, -EBADMSG if not. Constant time. */
int ticket_verify(const struct ticket *t, const struct secret *key);

/* The token JSON; -ENAMETOOLONG if size is short. */
int ticket_format(const struct ticket *t, char *buf, size_t size);
/* Strict parse of a token's JSON: -EINVAL with why (one line) for anything malformed or unknown. */
int ticket_parse(const char *json, struct ticket *out, char *why, size_t size);

/*
 * The device's thaw-ticket token. read: 0 and *out; -ENOENT if it has none; -EINVAL with why if it
 * is malformed (or there are several); -ENODEV if dev is absent; crypt_load()'s error (-EINVAL, why
 * untouched) if dev holds no LUKS2 header. write: replaces any thaw-ticket token with t (sealed by the
 * caller). set_state: rewrites only the state fields of the present token (no key needed); -ENOENT
 * if there is none. Each write is one libcryptsetup metadata update (both header copies, seqid).
 */
int ticket_read(const char *dev, struct ticket *out, char *why, size_t size);
int ticket_write(const char *dev, const struct ticket *t);
int ticket_set_state(const char *dev, enum ticket_state s, const char *why_text);

/*
 * The MAC of the whole image stream, fed page by page while writing (thaw's writer) or while
 * verifying (rd.thaw.verify=1, thaw inspect --verify): Poly1305 under a one-time key,
 * HMAC-SHA256(ticket key, "thaw-image-mac-v1" || nonce), with a random 16-byte nonce per image.
 * The 32 bytes kept in the ticket are the nonce and the 16-byte tag. (HMAC-SHA256 of the stream
 * itself doubled the writer's time under emulation; Poly1305 is about five times cheaper.)
 * ticket_mac_begin: for writing, a new nonce. ticket_mac_begin_check: for checking the value held
 * in a ticket, its nonce; the end result is then compared with held, in constant time.
 */
#define TICKET_MAC_NONCE 16
struct ticket_mac;
int ticket_mac_begin(const struct secret *key, struct ticket_mac **out);
int ticket_mac_begin_check(const struct secret *key, const uint8_t held[TICKET_MAC_SIZE], struct ticket_mac **out);
int ticket_mac_update(struct ticket_mac *m, const void *data, size_t len);
int ticket_mac_end(struct ticket_mac *m, uint8_t out[TICKET_MAC_SIZE]); /* frees m */
void ticket_mac_free(struct ticket_mac *m);                             /* NULL ok */

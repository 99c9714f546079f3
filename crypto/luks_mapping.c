/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Is an active mapping encrypted as its LUKS2 header says? Its live table compared with the header. */
#include "luks_mapping.h"
#include "luks.h"
#include "luks_policy.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <libcryptsetup.h>

#include "base/util.h"

#define FAIL(...) (snprintf(why, size, __VA_ARGS__), -EPROTO)

/* The cipher string dm-crypt shows for the header's cipher, mode and integrity. */
static void expected_cipher(const struct luks_mapping_want *w, char *buf, size_t size)
{
        const char *dash = strchr(w->mode, '-');

        if (!w->integrity[0] || !dash)
                snprintf(buf, size, "%s-%s", w->cipher, w->mode);
        else /* libcryptsetup maps "aes", "xts-plain64", "hmac(sha256)" as the kernel's authenc() */
                snprintf(buf, size, "capi:authenc(%s,%.*s(%s))-%s", w->integrity, (int)(dash - w->mode),
                         w->mode, w->cipher, dash + 1);
}

static int compare_integrity(const struct luks_mapping_want *w, const struct luks_mapping_live *l, char *why,
                             size_t size)
{
        const struct dm_crypt *c = &l->crypt;
        const struct dm_integrity *g = &l->integrity;

        if (!c->tag_size || strcmp(c->integrity, "aead") != 0)
                return FAIL("live table has no authenticated integrity (integrity:%" PRIu32 ":%s), the header "
                            "says %s", c->tag_size, c->integrity[0] ? c->integrity : "none", w->integrity);
        if (c->tag_size != w->tag_size)
                return FAIL("live table integrity tag is %" PRIu32 " bytes, the header says %" PRIu32,
                            c->tag_size, w->tag_size);
        if (!l->lower_dm || l->lower_targets != 1 || strcmp(l->lower_type, "integrity") != 0 ||
            l->lower_start != 0)
                return FAIL("live table's crypt target is on %u:%u, which is not one dm-integrity target",
                            c->maj, c->min);
        if (c->offset != 0)
                return FAIL("live table data offset is %" PRIu64 " sectors on the dm-integrity mapping, not 0",
                            c->offset);
        if (g->maj != w->maj || g->min != w->min)
                return FAIL("dm-integrity mapping is on device %u:%u, the header is on %u:%u", g->maj, g->min,
                            w->maj, w->min);
        if (g->offset != w->offset)
                return FAIL("dm-integrity data offset is %" PRIu64 " sectors, the header says %" PRIu64,
                            g->offset, w->offset);
        if (g->tag_size != w->tag_size)
                return FAIL("dm-integrity tag is %" PRIu32 " bytes, the header says %" PRIu32, g->tag_size,
                            w->tag_size);
        if (g->block_size != w->sector_size)
                return FAIL("dm-integrity block size is %" PRIu32 ", the header says %" PRIu32, g->block_size,
                            w->sector_size);
        /* Security: recovery mode reads without checking a tag; a separate metadata device is not ours. */
        if (g->mode != 'J' && g->mode != 'B' && g->mode != 'D')
                return FAIL("dm-integrity mode is %c, not J, B or D (R checks no tag)", g->mode);
        if (g->meta_device || g->internal_hash)
                return FAIL("dm-integrity has %s, which the header does not say",
                            g->meta_device ? "a metadata device" : "an internal hash");
        return 0;
}

int luks_mapping_compare(const struct luks_mapping_want *w, const struct luks_mapping_live *l, char *why,
                         size_t size)
{
        const struct dm_crypt *c = &l->crypt;
        char want[DM_CIPHER_MAX + 64];

        if (l->targets != 1)
                return FAIL("live table has %zu targets, not one crypt target", l->targets);
        if (strcmp(l->type, "crypt") != 0)
                return FAIL("live table is a %s target, not crypt", l->type);
        if (l->start != 0)
                return FAIL("live table's crypt target starts at sector %" PRIu64 ", not 0", l->start);
        expected_cipher(w, want, sizeof(want));
        if (strcmp(c->cipher, want) != 0)
                return FAIL("live table cipher is %s, the header says %s", c->cipher, want);
        /* Security: whatever the header says, only these two are encryption thaw set up. */
        if (strcmp(want, LUKS_MAPPING_CIPHER) != 0 && strcmp(want, LUKS_MAPPING_CIPHER_AEAD) != 0)
                return FAIL("live table cipher is %s, not %s", c->cipher,
                            w->integrity[0] ? LUKS_MAPPING_CIPHER_AEAD : LUKS_MAPPING_CIPHER);
        if (c->key_size != w->key_size || c->key_size == 0)
                return FAIL("live table key is %zu bits, the header says %zu", c->key_size * 8, w->key_size * 8);
        if (c->iv_offset != 0)
                return FAIL("live table IV offset is %" PRIu64 ", not 0", c->iv_offset);
        if (c->sector_size != w->sector_size)
                return FAIL("live table sector size is %" PRIu32 ", the header says %" PRIu32, c->sector_size,
                            w->sector_size);
        if (w->integrity[0])
                return compare_integrity(w, l, why, size);
        if (c->tag_size || c->integrity[0])
                return FAIL("live table has integrity:%" PRIu32 ":%s, the header says none", c->tag_size,
                            c->integrity);
        if (c->maj != w->maj || c->min != w->min)
                return FAIL("live table maps device %u:%u, the header is on %u:%u", c->maj, c->min, w->maj,
                            w->min);
        if (c->offset != w->offset)
                return FAIL("live table data offset is %" PRIu64 " sectors, the header says %" PRIu64, c->offset,
                            w->offset);
        return 0;
}

/* The mapping's live table, and the table of a mapping its crypt target sits on. */
static int live_read(const char *root, const char *name, struct luks_mapping_live *l, char *why, size_t size)
{
        struct dm_table t = { 0 };
        int r = dm_table_read(root, name, 0, 0, &t);

        if (r < 0) {
                snprintf(why, size, "its live table cannot be read (%s)", r == -ENXIO ? "no such mapping" :
                         strerror(-r));
                return r;
        }
        l->targets = t.n;
        if (t.n) {
                snprintf(l->type, sizeof(l->type), "%s", t.t[0].type);
                l->start = t.t[0].start;
        }
        r = 0;
        if (t.n && strcmp(l->type, "crypt") == 0)
                r = dm_crypt_parse(t.t[0].params, &l->crypt);
        dm_table_free(&t);
        if (r < 0) {
                snprintf(why, size, "its crypt target's table cannot be parsed (%s)", strerror(-r));
                return r;
        }
        if (l->targets != 1 || strcmp(l->type, "crypt") != 0)
                return 0;
        r = dm_table_read(root, NULL, l->crypt.maj, l->crypt.min, &t);
        if (r == -ENXIO)
                return 0; /* not a mapping: a disk or partition */
        if (r < 0) {
                snprintf(why, size, "the live table of %u:%u under it cannot be read (%s)", l->crypt.maj,
                         l->crypt.min, strerror(-r));
                return r;
        }
        l->lower_dm = true;
        l->lower_targets = t.n;
        if (t.n) {
                snprintf(l->lower_type, sizeof(l->lower_type), "%s", t.t[0].type);
                l->lower_start = t.t[0].start;
        }
        if (t.n && strcmp(l->lower_type, "integrity") == 0)
                r = dm_integrity_parse(t.t[0].params, &l->integrity);
        dm_table_free(&t);
        if (r < 0)
                snprintf(why, size, "the dm-integrity table under it cannot be parsed (%s)", strerror(-r));
        return r;
}

/* ROOT/dev/<kernel name> of device maj:min, found through ROOT/sys/dev/block/<maj>:<min>. */
static int device_path(const char *root, unsigned maj, unsigned min, char *buf, size_t size)
{
        char rel[64], link[PATH_MAX], target[PATH_MAX];
        const char *base;
        ssize_t n;
        int r;

        snprintf(rel, sizeof(rel), "/sys/dev/block/%u:%u", maj, min);
        r = util_path(link, sizeof(link), root, rel);
        if (r < 0)
                return r;
        n = readlink(link, target, sizeof(target) - 1);
        if (n < 0)
                return -errno;
        target[n] = '\0';
        base = strrchr(target, '/');
        base = base ? base + 1 : target;
        if (!*base || strcmp(base, "..") == 0 || strlen(base) > 58)
                return -EINVAL;
        snprintf(rel, sizeof(rel), "/dev/%.58s", base);
        return util_path(buf, size, root, rel);
}

static int header_read(const char *dev, const struct luks_policy *p, struct luks_mapping_want *w, char *why,
                       size_t size)
{
        struct crypt_params_integrity ip = { 0 };
        struct crypt_device *cd = NULL;
        struct stat st;
        int r;

        if (stat(dev, &st) < 0)
                return -errno;
        if (!S_ISBLK(st.st_mode))
                return -ENOTBLK;
        w->maj = major(st.st_rdev);
        w->min = minor(st.st_rdev);
        r = luks_init_quiet(dev, &cd);
        if (r < 0)
                return r;
        r = crypt_load(cd, CRYPT_LUKS2, NULL);
        /* The policy on the very header the values below come from (p NULL: checked before). */
        if (r == 0 && p)
                r = luks_header_check_cd(cd, p, why, size);
        if (r == 0 && crypt_get_integrity_info(cd, &ip) < 0)
                memset(&ip, 0, sizeof(ip));
        if (r == 0) {
                const char *cipher = crypt_get_cipher(cd), *mode = crypt_get_cipher_mode(cd);
                int ks = crypt_get_volume_key_size(cd);

                snprintf(w->cipher, sizeof(w->cipher), "%s", cipher ? cipher : "");
                snprintf(w->mode, sizeof(w->mode), "%s", mode ? mode : "");
                /* ip.integrity points into cd's header: copied before crypt_free(). */
                snprintf(w->integrity, sizeof(w->integrity), "%s", ip.integrity ? ip.integrity : "");
                w->tag_size = ip.tag_size;
                w->key_size = ks > 0 ? (size_t)ks : 0;
                w->sector_size = (uint32_t)crypt_get_sector_size(cd);
                w->offset = crypt_get_data_offset(cd);
        }
        crypt_free(cd);
        return r;
}

int luks_mapping_check(const char *root, const char *dev, const char *name, char *why, size_t size)
{
        return luks_mapping_check_policy(root, dev, name, NULL, why, size);
}

int luks_mapping_check_policy(const char *root, const char *dev, const char *name, const struct luks_policy *p,
                              char *why, size_t size)
{
        struct luks_mapping_want w = { 0 };
        struct luks_mapping_live l = { 0 };
        char found[PATH_MAX];
        int r;

        if (!name || !why || size == 0)
                return -EINVAL;
        why[0] = '\0';
        r = live_read(root ? root : "", name, &l, why, size);
        if (r < 0)
                return r;
        if (l.targets == 1 && strcmp(l.type, "crypt") == 0) {
                if (!dev) {
                        bool dif = l.lower_dm && strcmp(l.lower_type, "integrity") == 0;
                        unsigned maj = dif ? l.integrity.maj : l.crypt.maj;
                        unsigned min = dif ? l.integrity.min : l.crypt.min;

                        r = device_path(root ? root : "", maj, min, found, sizeof(found));
                        if (r < 0) {
                                snprintf(why, size, "cannot find the device %u:%u under it (%s)", maj, min,
                                         strerror(-r));
                                return r;
                        }
                        dev = found;
                }
                r = header_read(dev, p, &w, why, size);
                if (r == -LUKS_EPOLICY) {
                        char reason[LUKS_POLICY_WHY_MAX];

                        snprintf(reason, sizeof(reason), "%s", why);
                        snprintf(why, size, "the LUKS2 header of %s is refused: %s", dev, reason);
                        return r;
                }
                if (r < 0) {
                        snprintf(why, size, "cannot read the LUKS2 header of %s (%s)", dev, strerror(-r));
                        return r;
                }
        }
        return luks_mapping_compare(&w, &l, why, size);
}

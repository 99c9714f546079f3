/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the running machine's kernel will compare a hibernation image against, read from ROOT. */
#include "image/machine.h"
#include "base/bytes.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "image/image.h"
#include "base/util.h"

#define ZONEINFO_LINES_MAX 200000 /* a few hundred CPUs times a few zones */
#define E820_ENTRY 20             /* struct e820_entry: u64 addr, u64 size, u32 type, packed */

static void read_release(const char *root, struct machine_info *m)
{
        char text[128];

        if (util_read_text_at(root, "/proc/sys/kernel/osrelease", text, sizeof(text)) < 0)
                return;
        util_rstrip(text);
        snprintf(m->release, sizeof(m->release), "%.64s", text);
        if (sscanf(text, "%u.%u", &m->kmajor, &m->kminor) != 2)
                m->kmajor = m->kminor = 0;
}

static int file_at(const char *root, const char *rel)
{
        char path[PATH_MAX];

        return util_path(path, sizeof(path), root, rel) == 0 && util_exists(path);
}

/*
 * The kernel asks the crypto API for "lz4" and loads crypto-lz4 on demand: registered in
 * /proc/crypto, built in, or a module on disk all count.
 */
static void read_lz4(const char *root, struct machine_info *m)
{
        static const char *const ko[] = { "lz4.ko", "lz4.ko.xz", "lz4.ko.zst", "lz4.ko.gz" };
        char line[256], rel[PATH_MAX];
        int known = 0;
        FILE *f;

        if (util_path(rel, sizeof(rel), root, "/proc/crypto") == 0 && (f = fopen(rel, "re"))) {
                known = 1;
                for (int n = 0; n < ZONEINFO_LINES_MAX && fgets(line, sizeof(line), f); n++) {
                        char name[64];

                        if (sscanf(line, "name : %63s", name) == 1 && strcmp(name, "lz4") == 0) {
                                m->lz4 = 1;
                                break;
                        }
                }
                fclose(f);
        }
        if (m->lz4 == 1 || !*m->release)
                return;
        for (size_t i = 0; i < sizeof(ko) / sizeof(ko[0]); i++) {
                if (snprintf(rel, sizeof(rel), "/lib/modules/%s/kernel/crypto/%s", m->release, ko[i]) <
                    (int)sizeof(rel) && file_at(root, rel)) {
                        m->lz4 = 1;
                        return;
                }
        }
        /* Say "cannot" only when the module tree was there to ask. */
        if (snprintf(rel, sizeof(rel), "/lib/modules/%s/modules.builtin", m->release) < (int)sizeof(rel) &&
            file_at(root, rel)) {
                char text[65536];

                if (util_read_text_at(root, rel, text, sizeof(text)) >= 0)
                        m->lz4 = strstr(text, "crypto/lz4.ko") ? 1 : known ? 0 : -1;
        }
}

void machine_read_facs(const char *root, struct machine_info *m)
{
        char path[PATH_MAX];
        unsigned char b[12];
        FILE *f;

        if (util_path(path, sizeof(path), root, "/sys/firmware/acpi/tables/FACS") < 0)
                return;
        f = fopen(path, "rbe");
        if (!f) {
                /* No FACS: the kernel's signature is 0. Unreadable (not root): unknown. */
                if (errno == ENOENT) {
                        m->have_facs = true;
                        m->facs_sig = 0;
                }
                return;
        }
        if (fread(b, 1, sizeof(b), f) == sizeof(b)) {
                m->have_facs = true;
                m->facs_sig = (uint32_t)b[8] | (uint32_t)b[9] << 8 | (uint32_t)b[10] << 16 |
                              (uint32_t)b[11] << 24;
        }
        fclose(f);
}

/* get_num_physpages() is the sum of the zones' present pages over the online nodes. */
static void read_zoneinfo(const char *root, struct machine_info *m)
{
        char path[PATH_MAX], line[256];
        uint64_t sum = 0, v;
        int n, found = 0;
        FILE *f;

        if (util_path(path, sizeof(path), root, "/proc/zoneinfo") < 0 || !(f = fopen(path, "re")))
                return;
        for (n = 0; n < ZONEINFO_LINES_MAX && fgets(line, sizeof(line), f); n++) {
                if (sscanf(line, " present %" SCNu64, &v) == 1 && v < (UINT64_C(1) << 40)) {
                        sum += v;
                        found = 1;
                }
        }
        if (n < ZONEINFO_LINES_MAX && !ferror(f) && found) {
                m->have_mem = true;
                m->present_pages = sum;
        }
        fclose(f);
}

uint32_t machine_e820_type(const char *name)
{
        static const struct {
                const char *name;
                uint32_t type;
        } types[] = {
                { "System RAM", 1 },
                { "Reserved", 2 },
                { "ACPI Tables", 3 },
                { "ACPI Non-volatile Storage", 4 },
                { "Unusable memory", 5 },
                { "Persistent Memory (legacy)", 12 },
                { "Persistent Memory", 7 },
                { "Soft Reserved", 0xefffffff },
        };

        for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
                if (strcmp(name, types[i].name) == 0)
                        return types[i].type;
        return 0;
}

static int read_hex(const char *root, const char *rel, uint64_t *out)
{
        char text[64], *end;
        unsigned long long v;
        int r = util_read_text_at(root, rel, text, sizeof(text));

        if (r < 0)
                return r;
        errno = 0;
        v = strtoull(text, &end, 16);
        if (errno || end == text || (*end && *end != '\n'))
                return -EINVAL;
        *out = v;
        return 0;
}

/* One memmap entry as the kernel's packed struct e820_entry. -ENOENT past the last one. */
static int e820_entry(const char *root, unsigned i, uint8_t *out)
{
        char rel[96], type[64];
        uint64_t start, end;
        uint32_t t;
        int r;

        snprintf(rel, sizeof(rel), "/sys/firmware/memmap/%u/start", i);
        r = read_hex(root, rel, &start);
        if (r < 0)
                return r;
        snprintf(rel, sizeof(rel), "/sys/firmware/memmap/%u/end", i);
        r = read_hex(root, rel, &end);
        if (r < 0)
                return r == -ENOENT ? -EINVAL : r;
        snprintf(rel, sizeof(rel), "/sys/firmware/memmap/%u/type", i);
        r = util_read_text_at(root, rel, type, sizeof(type));
        if (r < 0)
                return r == -ENOENT ? -EINVAL : r;
        util_rstrip(type);
        t = machine_e820_type(type);
        if (t == 0 || end < start)
                return -EINVAL;
        /* memmap's end is inclusive (firmware_map_add_early(addr, addr + size - 1, …)). */
        bytes_put_le(out, start, 8);
        bytes_put_le(out + 8, end - start + 1, 8);
        bytes_put_le(out + 16, t, 4);
        return 0;
}

/*
 * arch/x86/power/hibernate.c: ~crc32_le(~0, e820_table_firmware, 4 + 20 * nr_entries), which is
 * zlib's crc32(0, …). /sys/firmware/memmap lists e820_table_firmware in its order.
 */
static void read_e820(const char *root, struct machine_info *m)
{
        uint8_t *table = malloc(4 + (size_t)E820_ENTRY * MACHINE_E820_MAX);
        unsigned n = 0;
        int r = 0;

        if (!table)
                return;
        while (n < MACHINE_E820_MAX && (r = e820_entry(root, n, table + 4 + E820_ENTRY * n)) == 0)
                n++;
        if (n > 0 && n < MACHINE_E820_MAX && r == -ENOENT) {
                bytes_put_le(table, n, 4);
                m->have_e820 = true;
                m->e820_entries = n;
                m->e820_crc = (uint32_t)crc32_z(0, table, 4 + (size_t)E820_ENTRY * n);
        }
        free(table);
}

int machine_read(const char *root, struct machine_info *out)
{
        struct machine_info m = { .lz4 = -1 };

        read_release(root, &m);
        read_lz4(root, &m);
        machine_read_facs(root, &m);
        read_zoneinfo(root, &m);
        read_e820(root, &m);
        *out = m;
        return 0;
}

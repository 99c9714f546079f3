/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A hibernation image and this machine's verdict on it, as JSON (`thaw inspect --json`). */
#include "image/inspect.h"

#include <stdio.h>
#include <string.h>

void inspect_flag_names(unsigned flags, char *buf, size_t size)
{
        static const char *const names[] = { "platform", "nocompress", "crc32", "hw-sig", "lz4" };
        size_t used = 0;

        buf[0] = '\0';
        for (unsigned i = 0; i < 5; i++)
                if (flags & (1u << i) && used < size)
                        used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? "," : "", names[i]);
        if (flags & ~0x1Fu && used < size)
                used += (size_t)snprintf(buf + used, size - used, "%s%#x", used ? "," : "", flags & ~0x1Fu);
        if (used == 0)
                snprintf(buf, size, "none");
}

static void add(struct json_object *o, const char *key, struct json_object *v)
{
        json_object_object_add(o, key, v);
}

static struct json_object *hex32(uint32_t v)
{
        char s[16];

        snprintf(s, sizeof(s), "%08x", v);
        return json_object_new_string(s);
}

static struct json_object *machine_json(const struct machine_info *m)
{
        struct json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        add(o, "kernel", json_object_new_string(m->release));
        add(o, "lz4", m->lz4 < 0 ? NULL : json_object_new_boolean(m->lz4));
        add(o, "num_physpages", m->have_mem ? json_object_new_int64((int64_t)m->present_pages) : NULL);
        add(o, "memory_mib", m->have_mem ? json_object_new_int64((int64_t)imgcheck_mib(m->present_pages))
                                         : NULL);
        add(o, "e820_checksum", m->have_e820 ? hex32(m->e820_crc) : NULL);
        add(o, "e820_entries", m->have_e820 ? json_object_new_int((int)m->e820_entries) : NULL);
        add(o, "hw_sig", m->have_facs ? hex32(m->facs_sig) : NULL);
        return o;
}

struct json_object *inspect_json(const struct image_info *img, const struct machine_info *m,
                                 const struct imgcheck *c)
{
        struct json_object *o = json_object_new_object(), *i = json_object_new_object();
        char flags[96];

        if (!o || !i) {
                json_object_put(o);
                json_object_put(i);
                return NULL;
        }
        inspect_flag_names(img->flags, flags, sizeof(flags));
        add(i, "flags", json_object_new_int64(img->flags));
        add(i, "flag_names", json_object_new_string(flags));
        add(i, "compression", json_object_new_string(image_compression(img->flags)));
        add(i, "crc32", img->flags & SWSUSP_SF_CRC32 ? hex32(img->crc32) : NULL);
        add(i, "hw_sig", img->flags & SWSUSP_SF_HW_SIG ? hex32(img->hw_sig) : NULL);
        add(i, "first_map_block", json_object_new_int64((int64_t)img->image));
        add(i, "map_pages", json_object_new_int64((int64_t)img->map_pages));
        add(i, "stored_pages", json_object_new_int64((int64_t)img->entries));
        add(i, "pages", json_object_new_int64((int64_t)img->pages));
        add(i, "image_pages", json_object_new_int64((int64_t)img->image_pages));
        add(i, "size", json_object_new_int64((int64_t)img->size));
        add(i, "num_physpages", json_object_new_int64((int64_t)img->num_physpages));
        add(i, "memory_mib", json_object_new_int64((int64_t)imgcheck_mib(img->num_physpages)));
        add(i, "e820_checksum", hex32(img->e820_crc));
        add(i, "structure", json_object_new_string(img->why));
        add(o, "image", i);
        add(o, "machine", machine_json(m));
        add(o, "resumable", json_object_new_boolean(c->result == IMGCHECK_OK));
        add(o, "check", json_object_new_string(imgcheck_name(c->result)));
        add(o, "reason", json_object_new_string(c->why));
        return o;
}

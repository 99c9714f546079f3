/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The LUKS2 mapping a file system sits on, as sysfs shows it (swap files on an encrypted root). */
#include "dev/fsdev.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"

static int read_attr(const char *root, unsigned maj, unsigned min, const char *attr, char *buf,
                     size_t size)
{
        char rel[PATH_MAX];
        int n = snprintf(rel, sizeof(rel), "/sys/dev/block/%u:%u/%s", maj, min, attr);

        if (n < 0 || (size_t)n >= sizeof(rel))
                return -ENAMETOOLONG;
        n = util_read_text_at(root, rel, buf, size);
        if (n >= 0)
                util_rstrip(buf);
        return n < 0 ? n : 0;
}

/* The one device under the mapping ("vdb"); -EXDEV if there is not exactly one. */
static int only_slave(const char *root, unsigned maj, unsigned min, char *out, size_t size)
{
        char rel[64], path[PATH_MAX];
        struct dirent *de;
        int count = 0, r;
        DIR *d;

        snprintf(rel, sizeof(rel), "/sys/dev/block/%u:%u/slaves", maj, min);
        r = util_path(path, sizeof(path), root, rel);
        if (r < 0)
                return r;
        d = opendir(path);
        if (!d)
                return -errno;
        r = 0;
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                if (count++ == 0)
                        r = util_copy(out, size, de->d_name);
        }
        closedir(d);
        if (r < 0)
                return r;
        return count == 1 ? 0 : -EXDEV;
}

int fsdev_crypt(const char *root, unsigned maj, unsigned min, struct fsdev *out)
{
        char uuid[256], name[ARGS_NAME_MAX + 2], slave[32];
        struct fsdev f;
        int r;

        r = read_attr(root, maj, min, "dm/uuid", uuid, sizeof(uuid));
        if (r == -ENOENT)
                return -ENODEV;
        if (r < 0)
                return r;
        /* LVM on LUKS (uuid "LVM-…") would put the file system at an offset inside the container. */
        if (strncmp(uuid, FSDEV_UUID_PREFIX, strlen(FSDEV_UUID_PREFIX)) != 0)
                return -EMEDIUMTYPE;
        r = read_attr(root, maj, min, "dm/name", name, sizeof(name));
        if (r == 0 && !args_name_valid(name))
                r = -EINVAL;
        if (r == 0)
                r = only_slave(root, maj, min, slave, sizeof(slave));
        if (r < 0)
                return r;
        if (util_copy(f.name, sizeof(f.name), name) < 0 ||
            snprintf(f.backing, sizeof(f.backing), "/dev/%s", slave) >= (int)sizeof(f.backing))
                return -ENAMETOOLONG;
        *out = f;
        return 0;
}

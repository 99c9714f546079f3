/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Device-mapper mappings as sysfs shows them. */
#include "dm.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "util.h"

int dm_mapper_path(const char *name, char *buf, size_t size)
{
        int n;

        /* The name becomes a path: no '/' or "..", so it cannot point outside /dev/mapper. */
        if (!name || !args_name_valid(name))
                return -EINVAL;
        n = snprintf(buf, size, "/dev/mapper/%s", name);
        if (n < 0)
                return -EINVAL;
        if ((size_t)n >= size)
                return -ENAMETOOLONG;
        return 0;
}

static int read_attr(const char *root, const char *dev, const char *attr, char *buf, size_t size)
{
        char rel[PATH_MAX];
        int n = snprintf(rel, sizeof(rel), "/sys/block/%s/%s", dev, attr);

        if (n < 0 || (size_t)n >= sizeof(rel))
                return -ENAMETOOLONG;
        n = util_read_text_at(root, rel, buf, size);
        if (n >= 0)
                util_rstrip(buf);
        return n;
}

static int parse_devnum(const char *s, unsigned *maj, unsigned *min)
{
        unsigned a, b;
        char end;

        if (sscanf(s, "%u:%u%c", &a, &b, &end) != 2)
                return -EINVAL;
        *maj = a;
        *min = b;
        return 0;
}

int dm_devnum(const char *root, const char *name, unsigned *maj, unsigned *min, char *kname,
              size_t ksize)
{
        char path[PATH_MAX], buf[ARGS_NAME_MAX + 2];
        struct dirent *de;
        DIR *d;
        int r = util_path(path, sizeof(path), root, "/sys/block");

        if (r < 0)
                return r;
        d = opendir(path);
        if (!d)
                return -errno;
        r = -ENOENT;
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.' || strlen(de->d_name) >= DM_KNAME_MAX)
                        continue;
                if (read_attr(root, de->d_name, "dm/name", buf, sizeof(buf)) < 0 ||
                    strcmp(buf, name) != 0)
                        continue;
                r = read_attr(root, de->d_name, "dev", buf, sizeof(buf));
                if (r >= 0)
                        r = parse_devnum(buf, maj, min);
                if (r == 0 && kname)
                        r = util_copy(kname, ksize, de->d_name);
                break;
        }
        closedir(d);
        return r;
}

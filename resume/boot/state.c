/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What `thaw resume` did at boot, in ROOT/run/thaw/state (key=value lines) for the real system. */
#include "boot/state.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"

static size_t put(char *buf, size_t used, size_t size, const char *key, const char *value)
{
        int n = snprintf(buf + used, size - used, "%s=", key);

        if (used >= size || n < 0 || (size_t)n + 2 >= size - used)
                return size;
        used += (size_t)n;
        for (const char *p = value; *p && used < size - 2; p++)
                buf[used++] = *p == '\n' || *p == '\r' ? ' ' : *p;
        buf[used++] = '\n';
        buf[used] = '\0';
        return used;
}

int state_write(const char *root, const struct state *s)
{
        char text[STATE_MAX], path[PATH_MAX];
        size_t used = 0;
        int r;

        text[0] = '\0';
        used = put(text, used, sizeof(text), "outcome", s->outcome);
        used = put(text, used, sizeof(text), "reason", s->reason);
        used = put(text, used, sizeof(text), "device", s->device);
        used = put(text, used, sizeof(text), "message", s->message);
        if (*s->ticket)
                used = put(text, used, sizeof(text), "ticket", s->ticket);
        if (used >= sizeof(text))
                return -EMSGSIZE;
        r = util_path(path, sizeof(path), root, STATE_PATH);
        if (r < 0)
                return r;
        return util_write_file(path, text, 0644);
}

static void take(char *dst, size_t size, const char *value)
{
        snprintf(dst, size, "%s", value);
}

int state_read(const char *root, struct state *out)
{
        char text[STATE_MAX];
        struct state s;
        char *line, *save = NULL;
        int r = util_read_text_at(root, STATE_PATH, text, sizeof(text));

        if (r < 0)
                return r;
        memset(&s, 0, sizeof(s));
        for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char *eq = strchr(line, '=');

                if (!eq)
                        continue;
                *eq++ = '\0';
                if (strcmp(line, "outcome") == 0)
                        take(s.outcome, sizeof(s.outcome), eq);
                else if (strcmp(line, "reason") == 0)
                        take(s.reason, sizeof(s.reason), eq);
                else if (strcmp(line, "device") == 0)
                        take(s.device, sizeof(s.device), eq);
                else if (strcmp(line, "message") == 0)
                        take(s.message, sizeof(s.message), eq);
                else if (strcmp(line, "ticket") == 0)
                        take(s.ticket, sizeof(s.ticket), eq);
        }
        if (!*s.outcome)
                return -EBADMSG;
        *out = s;
        return 0;
}

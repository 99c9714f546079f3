/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The "imds:URL[;header=NAME:VALUE]...[;b64]" form of the imds: key source, and where it may go. */
#include "imds_url.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#define SCHEME "http://"
#define SCHEME_LEN 7
#define HEADER_NAME_MAX 64

/*
 * Characters a URL or a header value may hold as written. Not ',' (it separates the key chain),
 * not ';' (it separates the options), not '"' (the kernel command line's quoting), no space;
 * not '@', '#' or '\\', which change the host or the shape of the request.
 */
static bool url_char(char c)
{
        return c > ' ' && c <= '~' && !strchr(",;\"@#\\", c);
}

static bool is_link_local(const char *host, bool v6)
{
        unsigned char a[16];

        if (v6)
                return inet_pton(AF_INET6, host, a) == 1 && a[0] == 0xfe && (a[1] & 0xc0) == 0x80;
        /* inet_pton takes dotted decimal only: "0251.254.1.1" or "169.254.1" are host names here,
         * so not link-local, although a resolver might read them as such. */
        return inet_pton(AF_INET, host, a) == 1 && a[0] == 169 && a[1] == 254;
}

/*
 * The authority s[0..len) ("HOST[:PORT]", "[V6[%25ZONE]][:PORT]") into the canonical origin; sets
 * *ll when the host is a link-local address literal.
 */
static int parse_authority(const char *s, size_t len, char *origin, size_t size, bool *ll)
{
        char host[KEYSRC_ARG_MAX], addr[INET6_ADDRSTRLEN];
        unsigned char a[16];
        const char *end = s + len, *hend, *port = NULL;
        bool v6 = s < end && *s == '[';
        size_t hlen;
        unsigned long p = 80;
        int n;

        if (v6) {
                hend = memchr(s, ']', len);
                if (!hend)
                        return -EINVAL;
                hlen = (size_t)(hend + 1 - s);
                if (hend + 1 < end && hend[1] != ':')
                        return -EINVAL;
                port = hend + 1 < end ? hend + 2 : NULL;
        } else {
                hend = memchr(s, ':', len);
                hlen = hend ? (size_t)(hend - s) : len;
                port = hend ? hend + 1 : NULL;
        }
        if (hlen == 0 || hlen >= sizeof(host))
                return -EINVAL;
        for (size_t i = 0; i < hlen; i++)
                host[i] = (char)tolower((unsigned char)s[i]);
        host[hlen] = '\0';
        if (v6) {
                /* "[fe80::1%25eth0]": the address, then an optional zone (an interface name). */
                char *zone = strstr(host, "%25");
                size_t alen = (zone ? (size_t)(zone - host) : hlen - 1) - 1;

                if (alen == 0 || alen >= sizeof(addr))
                        return -EINVAL;
                memcpy(addr, host + 1, alen);
                addr[alen] = '\0';
                if (zone && (zone[3] == ']' || strspn(zone + 3, "abcdefghijklmnopqrstuvwxyz0123456789._-") !=
                                                       strlen(zone + 3) - 1))
                        return -EINVAL;
                if (inet_pton(AF_INET6, addr, a) != 1)
                        return -EINVAL; /* only address literals between brackets */
                *ll = is_link_local(addr, true);
        } else {
                if (strspn(host, "abcdefghijklmnopqrstuvwxyz0123456789.-") != hlen)
                        return -EINVAL;
                *ll = is_link_local(host, false);
        }
        if (port) {
                size_t plen = (size_t)(end - port);

                if (plen == 0 || plen > 5 || strspn(port, "0123456789") < plen || port[0] == '0')
                        return -EINVAL;
                p = 0;
                for (size_t i = 0; i < plen; i++)
                        p = p * 10 + (unsigned long)(port[i] - '0');
                if (p > 65535)
                        return -EINVAL;
        }
        n = p == 80 ? snprintf(origin, size, SCHEME "%s", host) : snprintf(origin, size, SCHEME "%s:%lu", host, p);
        return n < 0 || (size_t)n >= size ? -EINVAL : 0;
}

static int hex(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        c = (char)tolower((unsigned char)c);
        return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* "NAME:VALUE" (len bytes) into "Name: value" with VALUE's %XX escapes decoded. */
static int parse_header(const char *s, size_t len, char *out, size_t size)
{
        const char *colon = memchr(s, ':', len), *v, *end = s + len;
        size_t nlen, used;

        if (!colon)
                return -EINVAL;
        nlen = (size_t)(colon - s);
        if (nlen == 0 || nlen > HEADER_NAME_MAX || nlen + 3 > size)
                return -EINVAL;
        for (size_t i = 0; i < nlen; i++)
                if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_')
                        return -EINVAL;
        /* The request goes to the URL's host, under that name. */
        if (nlen == 4 && strncasecmp(s, "host", 4) == 0)
                return -EINVAL;
        memcpy(out, s, nlen);
        memcpy(out + nlen, ": ", 2);
        used = nlen + 2;
        if (colon + 1 == end)
                return -EINVAL;
        for (v = colon + 1; v < end; v++) {
                int c = (unsigned char)*v;

                if (c == '%') {
                        if (end - v < 3 || hex(v[1]) < 0 || hex(v[2]) < 0)
                                return -EINVAL;
                        c = hex(v[1]) * 16 + hex(v[2]);
                        v += 2;
                        /* Printable only: a line end would start another header. */
                        if (c < ' ' || c > '~')
                                return -EINVAL;
                } else if (!url_char((char)c)) {
                        return -EINVAL;
                }
                if (used + 1 >= size)
                        return -EINVAL;
                out[used++] = (char)c;
        }
        out[used] = '\0';
        return 0;
}

static int parse_options(const char *s, struct imds_url *u)
{
        while (*s) {
                const char *next = strchr(s, ';');
                size_t len = next ? (size_t)(next - s) : strlen(s);

                if (len == 3 && strncmp(s, "b64", 3) == 0 && !u->b64) {
                        u->b64 = true;
                } else if (len > 7 && strncmp(s, "header=", 7) == 0 && u->n_headers < IMDS_URL_HEADERS_MAX) {
                        if (parse_header(s + 7, len - 7, u->header[u->n_headers], sizeof(u->header[0])) < 0)
                                return -EINVAL;
                        u->n_headers++;
                } else {
                        return -EINVAL;
                }
                if (!next)
                        break;
                s = next + 1;
                if (!*s)
                        return -EINVAL; /* a trailing ';' */
        }
        return 0;
}

int imds_url_parse(const char *arg, struct imds_url *out)
{
        struct imds_url u = { 0 };
        const char *semi, *auth, *path;
        size_t len;

        if (!arg || strncmp(arg, SCHEME, SCHEME_LEN) != 0)
                return -EINVAL;
        semi = strchr(arg, ';');
        len = semi ? (size_t)(semi - arg) : strlen(arg);
        if (len >= sizeof(u.url))
                return -EINVAL;
        auth = arg + SCHEME_LEN;
        path = memchr(auth, '/', len - SCHEME_LEN);
        if (!path || path == auth)
                return -EINVAL;
        for (const char *p = auth; p < arg + len; p++) {
                if (!url_char(*p))
                        return -EINVAL;
                /* No escapes in the path ("%2e%2e"); '%' only as an IPv6 zone's "%25". */
                if (*p == '%' && (p >= path || strncmp(p, "%25", 3) != 0))
                        return -EINVAL;
                if (p >= path && p[0] == '/' && p[1] == '.' && p[2] == '.' &&
                    (p + 3 == arg + len || p[3] == '/' || p[3] == '?'))
                        return -EINVAL;
        }
        if (parse_authority(auth, (size_t)(path - auth), u.origin, sizeof(u.origin), &u.link_local) < 0)
                return -EINVAL;
        memcpy(u.url, arg, len);
        u.url[len] = '\0';
        if (semi && (!semi[1] || parse_options(semi + 1, &u) < 0))
                return -EINVAL;
        *out = u;
        return 0;
}

int imds_origin_canon(const char *text, char *out, size_t size)
{
        size_t len;
        bool ll;

        if (!text || strncmp(text, SCHEME, SCHEME_LEN) != 0)
                return -EINVAL;
        text += SCHEME_LEN;
        len = strlen(text);
        if (len > 0 && text[len - 1] == '/')
                len--;
        for (size_t i = 0; i < len; i++)
                if (!url_char(text[i]) || text[i] == '/' || (text[i] == '%' && strncmp(text + i, "%25", 3) != 0))
                        return -EINVAL;
        return parse_authority(text, len, out, size, &ll);
}

int imds_allow_check(const char *allow)
{
        struct imds_url none = { .link_local = false };

        return imds_url_allowed(&none, allow) < 0 ? -EINVAL : 0;
}

int imds_url_allowed(const struct imds_url *u, const char *allow)
{
        char item[KEYSRC_ARG_MAX], origin[KEYSRC_ARG_MAX];
        int found = 0;

        for (const char *p = allow ? allow : ""; *p;) {
                size_t len = strcspn(p, ",");

                if (len == 0 || len >= sizeof(item))
                        return -EINVAL;
                memcpy(item, p, len);
                item[len] = '\0';
                if (imds_origin_canon(item, origin, sizeof(origin)) < 0)
                        return -EINVAL;
                if (strcmp(origin, u->origin) == 0)
                        found = 1;
                p += len;
                if (*p == ',' && !*++p)
                        return -EINVAL;
        }
        /* Security: a key travels in clear over plain HTTP. Link-local addresses never leave the
         * host's link (the metadata services of every cloud live there); anything else must have
         * been named by the administrator. */
        return u->link_local || found;
}

int imds_allow_join(char *list, size_t size, const char *origin)
{
        size_t used = strnlen(list, size);
        int n;

        if (used >= size || strchr(origin, ',') || imds_allow_check(origin) < 0)
                return -EINVAL;
        n = snprintf(list + used, size - used, "%s%s", used ? "," : "", origin);
        if (n < 0 || (size_t)n >= size - used) {
                list[used] = '\0';
                return -E2BIG;
        }
        return 0;
}

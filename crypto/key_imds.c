/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Key provider "imds:FLAVOR[+b64]:PATH" and "imds:URL[;header=NAME:VALUE]...[;b64]": a key from a
 * cloud's instance metadata service over HTTP.
 */
#include <curl/curl.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "base64.h"
#include "base/clock.h"
#include "imds_url.h"
#include "key_provider.h"
#include "keysrc.h"

#define IMDS_BASE_DEFAULT "http://169.254.169.254"
#define IMDS_BASE_MAX 64
#define IMDS_ATTEMPTS 3          /* a service that answers 5xx or is not reachable yet */
#define IMDS_RETRY_MS 300
#define IMDS_REQUEST_MAX_MS 5000 /* one request; the deadline bounds them all */
#define IMDS_TOKEN_MAX 512       /* an AWS session token is 56 bytes today */
#define IMDS_AWS_TTL "60"        /* the token is used once, right away */
/* A base64 body of a SECRET_MAX key, with a line end. */
#define IMDS_BODY_MAX ((SECRET_MAX + 2) / 3 * 4 + 2)

/*
 * libcurl is loaded when an imds: source is used, not linked: its TLS and protocol libraries would
 * otherwise weigh on every initramfs, which has no network unless an imds: source asks for one.
 */
static struct {
        CURL *(*easy_init)(void);
        CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
        CURLcode (*easy_perform)(CURL *);
        CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
        void (*easy_cleanup)(CURL *);
        struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
        void (*slist_free_all)(struct curl_slist *);
} cu;

/* 0 once libcurl is loaded, -ENOPKG if it is not installed (an initramfs without it). */
static int curl_load(void)
{
        static void *lib;
        void *l;

        if (lib)
                return 0;
        l = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
        if (!l)
                return -ENOPKG;
        *(void **)&cu.easy_init = dlsym(l, "curl_easy_init");
        *(void **)&cu.easy_setopt = dlsym(l, "curl_easy_setopt");
        *(void **)&cu.easy_perform = dlsym(l, "curl_easy_perform");
        *(void **)&cu.easy_getinfo = dlsym(l, "curl_easy_getinfo");
        *(void **)&cu.easy_cleanup = dlsym(l, "curl_easy_cleanup");
        *(void **)&cu.slist_append = dlsym(l, "curl_slist_append");
        *(void **)&cu.slist_free_all = dlsym(l, "curl_slist_free_all");
        if (!cu.easy_init || !cu.easy_setopt || !cu.easy_perform || !cu.easy_getinfo || !cu.easy_cleanup ||
            !cu.slist_append || !cu.slist_free_all) {
                dlclose(l);
                return -ENOPKG;
        }
        lib = l;
        return 0;
}

enum imds_flavor { IMDS_AWS, IMDS_GCP, IMDS_AZURE };

static const struct {
        const char *name;
        const char *header; /* what the service requires to know the request is not forwarded */
} flavors[] = {
        [IMDS_AWS] = { "aws", NULL },
        [IMDS_GCP] = { "gcp", "Metadata-Flavor: Google" },
        [IMDS_AZURE] = { "azure", "Metadata: true" },
};

/*
 * Security: the base URL is the link-local metadata address unless a caller allowed another one
 * through imds_allow_base() (tests do; the boot never does). The source string names a path only.
 */
static char imds_base[IMDS_BASE_MAX] = IMDS_BASE_DEFAULT;

int imds_allow_base(const char *base)
{
        size_t len;

        if (!base)
                return -EINVAL;
        len = strlen(base);
        if (len >= sizeof(imds_base) || strncmp(base, "http://", 7) != 0 || len == 7 ||
            base[len - 1] == '/' || strpbrk(base + 7, "/?#@ "))
                return -EINVAL;
        memcpy(imds_base, base, len + 1);
        return 0;
}

/* Origins ("http://HOST[:PORT]", comma-separated) that imds:URL sources may name besides
 * link-local addresses: from thaw.conf at boot, --allow-url for the commands. */
static char imds_allow[KEYSRC_ALLOW_MAX];

int imds_allow_urls(const char *list)
{
        if (!list || strlen(list) >= sizeof(imds_allow) || imds_allow_check(list) < 0)
                return -EINVAL;
        memcpy(imds_allow, list, strlen(list) + 1);
        return 0;
}

struct imds_src {
        enum imds_flavor flavor;
        bool b64;
        const char *path;
};

static int imds_split(const char *arg, struct imds_src *out)
{
        const char *colon = strchr(arg, ':'), *plus;
        size_t flen;

        if (!colon)
                return -EINVAL;
        plus = memchr(arg, '+', (size_t)(colon - arg));
        flen = (size_t)((plus ? plus : colon) - arg);
        if (plus && (size_t)(colon - plus - 1) != 3)
                return -EINVAL;
        if (plus && strncmp(plus + 1, "b64", 3) != 0)
                return -EINVAL;
        out->b64 = plus != NULL;
        out->path = colon + 1;
        /* The path: absolute, printable URL characters, nothing that changes the host or the query
         * shape (no '@', '#', '\\', ','), no ".." component. */
        if (out->path[0] != '/')
                return -EINVAL;
        for (const char *p = out->path; *p; p++) {
                if (*p <= ' ' || *p > '~' || strchr("@#\\,%", *p))
                        return -EINVAL;
                if (p[0] == '/' && p[1] == '.' && p[2] == '.' && (p[3] == '/' || p[3] == '\0'))
                        return -EINVAL;
        }
        for (unsigned f = 0; f < sizeof(flavors) / sizeof(flavors[0]); f++) {
                if (strlen(flavors[f].name) == flen && strncmp(arg, flavors[f].name, flen) == 0) {
                        out->flavor = (enum imds_flavor)f;
                        return 0;
                }
        }
        return -EINVAL;
}

static bool is_url(const char *arg)
{
        return strncmp(arg, "http://", 7) == 0;
}

static int imds_check(const char *arg)
{
        struct imds_src s;
        struct imds_url u;

        return is_url(arg) ? imds_url_parse(arg, &u) : imds_split(arg, &s);
}

struct body {
        struct secret *buf;
        bool overflow;
};

/* Write straight into locked memory; past the cap, abort the transfer (curl sees a short write). */
static size_t body_write(char *data, size_t size, size_t n, void *opaque)
{
        struct body *b = opaque;
        size_t len = size * n;

        if (len > b->buf->cap - b->buf->len) {
                b->overflow = true;
                return 0;
        }
        memcpy(b->buf->data + b->buf->len, data, len);
        b->buf->len += len;
        return len;
}

static int curl_to_errno(CURLcode c, bool overflow)
{
        if (overflow)
                return -EMSGSIZE;
        switch (c) {
        case CURLE_OPERATION_TIMEDOUT:
                return -ETIMEDOUT;
        case CURLE_COULDNT_CONNECT:
                return -ECONNREFUSED;
        case CURLE_COULDNT_RESOLVE_HOST:
                return -EHOSTUNREACH;
        default:
                return -EIO;
        }
}

/* One HTTP request: body into b (cap set by the caller). 0 on 200, -ENOENT on 404; worth a retry:
 * -ECONNREFUSED no connection (yet), -EAGAIN a 5xx answer; other -errno. */
static int request(const char *url, const char *method, struct curl_slist *hdr, int64_t deadline_ms,
                   struct body *b)
{
        int64_t left = deadline_ms - clock_now_ms();
        long status = 0;
        CURLcode c;
        CURL *h;
        int r;

        if (left <= 0)
                return -ETIMEDOUT;
        if (left > IMDS_REQUEST_MAX_MS)
                left = IMDS_REQUEST_MAX_MS;
        h = cu.easy_init();
        if (!h)
                return -ENOMEM;
        /* Security: plain HTTP to the one host named, no redirects, no proxy from the environment
         * (the metadata service is link-local; a proxy would see the key), no signals. */
        cu.easy_setopt(h, CURLOPT_URL, url);
        cu.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http");
        cu.easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
        cu.easy_setopt(h, CURLOPT_NOPROXY, "*");
        cu.easy_setopt(h, CURLOPT_PROXY, "");
        cu.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        cu.easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)left);
        cu.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)left);
        cu.easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
        /*
         * The key's copies. body_write() copies the body straight into locked secret memory, capped,
         * and thaw keeps no buffer of its own. What thaw cannot wipe: libcurl reads the socket into
         * the easy handle's receive buffer (CURLOPT_BUFFERSIZE bytes; chunked bodies are decoded
         * there in place) and frees it unwiped at curl_easy_cleanup(), and the kernel's socket
         * buffers. The smallest buffer libcurl takes (1 KiB) holds at most the last read, and thaw
         * does not replace libcurl's allocator (curl_global_init_mem) to wipe it: that is global to
         * every user of libcurl in the process, and this code also runs in the token plugin, inside
         * cryptsetup. The process is non-dumpable (thaw) and exits soon after the boot.
         */
        cu.easy_setopt(h, CURLOPT_BUFFERSIZE, 1024L);
        cu.easy_setopt(h, CURLOPT_WRITEFUNCTION, body_write);
        cu.easy_setopt(h, CURLOPT_WRITEDATA, b);
        if (strcmp(method, "PUT") == 0) {
                cu.easy_setopt(h, CURLOPT_CUSTOMREQUEST, "PUT");
                cu.easy_setopt(h, CURLOPT_POSTFIELDS, "");
        }
        c = cu.easy_perform(h);
        cu.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
        cu.easy_cleanup(h);
        if (c != CURLE_OK)
                r = curl_to_errno(c, b->overflow);
        else if (status == 200)
                r = 0;
        else if (status == 404)
                r = -ENOENT;
        else if (status >= 500)
                r = -EAGAIN;
        else
                r = -EACCES; /* 401, 403, 400: the service refused the request as made */
        return r;
}

/* request() with a few retries for what may pass (the link coming up, a busy service). */
static int request_retry(const char *url, const char *method, struct curl_slist *hdr, int64_t deadline_ms,
                         struct body *b)
{
        int r = -EAGAIN;

        for (int i = 0; i < IMDS_ATTEMPTS && (r == -EAGAIN || r == -ECONNREFUSED); i++) {
                int64_t left = deadline_ms - clock_now_ms();

                if (i > 0)
                        clock_sleep_ms(left < IMDS_RETRY_MS ? left : IMDS_RETRY_MS);
                b->buf->len = 0;
                b->overflow = false;
                explicit_bzero(b->buf->data, b->buf->cap);
                r = request(url, method, hdr, deadline_ms, b);
        }
        return r == -EAGAIN ? -EPROTO : r; /* the service answered, with a server error */
}

/* AWS IMDSv2: a session token from a PUT, sent with the GET. */
static int aws_token_header(int64_t deadline_ms, struct curl_slist **hdr)
{
        char url[IMDS_BASE_MAX + 32], line[IMDS_TOKEN_MAX + 64];
        struct curl_slist *h = cu.slist_append(NULL, "X-aws-ec2-metadata-token-ttl-seconds: " IMDS_AWS_TTL);
        struct body b = { 0 };
        int r;

        if (!h)
                return -ENOMEM;
        snprintf(url, sizeof(url), "%s/latest/api/token", imds_base);
        r = secret_new(IMDS_TOKEN_MAX, &b.buf);
        if (r == 0)
                r = request_retry(url, "PUT", h, deadline_ms, &b);
        cu.slist_free_all(h);
        if (r == 0 && (b.buf->len == 0 || memchr(b.buf->data, '\n', b.buf->len) ||
                       memchr(b.buf->data, '\r', b.buf->len)))
                r = -EPROTO;
        if (r == 0) {
                snprintf(line, sizeof(line), "X-aws-ec2-metadata-token: %.*s", (int)b.buf->len,
                         (const char *)b.buf->data);
                /* curl keeps its own copy of the line; the token only opens metadata for 60 s. */
                *hdr = cu.slist_append(NULL, line);
                r = *hdr ? 0 : -ENOMEM;
                explicit_bzero(line, sizeof(line));
        }
        secret_free(b.buf);
        return r;
}

/* The body as the key: raw, or base64 (one trailing line end allowed) decoded. */
static int body_to_key(const struct secret *body, bool b64, struct secret **out)
{
        struct secret *k = NULL;
        size_t len = body->len;
        int r;

        if (!b64 && len > SECRET_MAX)
                return -EMSGSIZE;
        if (b64 && len > 0 && body->data[len - 1] == '\n')
                len--;
        if (b64 && len > 0 && body->data[len - 1] == '\r')
                len--;
        if (len == 0)
                return -ENODATA;
        r = secret_new(SECRET_MAX, &k);
        if (r < 0)
                return r;
        if (b64) {
                r = base64_decode((const char *)body->data, len, k->data, k->cap);
                if (r == -EINVAL)
                        r = -EBADMSG;
                if (r == 0)
                        r = -ENODATA;
        } else {
                memcpy(k->data, body->data, len);
                r = (int)len;
        }
        if (r < 0) {
                secret_free(k);
                return r;
        }
        k->len = (size_t)r;
        *out = k;
        return 0;
}

/* imds:URL: the headers named in the source, to a link-local or allowed origin only. */
static int url_fetch(const char *arg, const struct keysrc_ctx *ctx, struct secret **out)
{
        struct curl_slist *hdr = NULL;
        struct body b = { 0 };
        struct imds_url u;
        int r;

        r = imds_url_parse(arg, &u);
        if (r == 0 && imds_url_allowed(&u, imds_allow) != 1) {
                if (ctx->detail && ctx->detail_size > 0)
                        snprintf(ctx->detail, ctx->detail_size, "%s is neither link-local nor an allowed "
                                 "origin (allow-url= in thaw.conf, --allow-url): no request made", u.origin);
                r = -EPERM;
        }
        if (r == 0)
                r = curl_load();
        for (size_t i = 0; r == 0 && i < u.n_headers; i++) {
                struct curl_slist *h = cu.slist_append(hdr, u.header[i]);

                if (h)
                        hdr = h;
                else
                        r = -ENOMEM;
        }
        if (r == 0)
                r = secret_new_scratch(IMDS_BODY_MAX, &b.buf);
        if (r == 0)
                r = request_retry(u.url, "GET", hdr, ctx->deadline_ms, &b);
        if (r == 0)
                r = body_to_key(b.buf, u.b64, out);
        if (hdr)
                cu.slist_free_all(hdr);
        secret_free(b.buf);
        return r;
}

static int imds_fetch(const char *arg, const struct keysrc_ctx *ctx, struct secret **out)
{
        const char *root = ctx->root;
        int64_t deadline_ms = ctx->deadline_ms;
        char url[IMDS_BASE_MAX + KEYSRC_ARG_MAX];
        struct curl_slist *hdr = NULL;
        struct body b = { 0 };
        struct imds_src s;
        int r;

        (void)root; /* nothing on the file system: the key never touches disk */
        if (is_url(arg))
                return url_fetch(arg, ctx, out);
        r = imds_split(arg, &s);
        if (r == 0)
                r = curl_load();
        if (r < 0)
                return r;
        if ((size_t)snprintf(url, sizeof(url), "%s%s", imds_base, s.path) >= sizeof(url))
                return -ENAMETOOLONG;
        if (s.flavor == IMDS_AWS)
                r = aws_token_header(deadline_ms, &hdr);
        else
                r = (hdr = cu.slist_append(NULL, flavors[s.flavor].header)) ? 0 : -ENOMEM;
        if (r == 0)
                r = secret_new_scratch(IMDS_BODY_MAX, &b.buf);
        if (r == 0)
                r = request_retry(url, "GET", hdr, deadline_ms, &b);
        if (r == 0)
                r = body_to_key(b.buf, s.b64, out);
        cu.slist_free_all(hdr);
        secret_free(b.buf);
        return r;
}

const struct key_provider key_imds_provider = {
        .name = "imds",
        .check = imds_check,
        .fetch = imds_fetch,
};

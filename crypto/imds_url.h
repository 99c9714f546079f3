/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The "imds:URL[;header=NAME:VALUE]...[;b64]" form of the imds: key source, and where it may go. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include "keysrc.h"

#define IMDS_URL_HEADERS_MAX 4
#define IMDS_URL_HEADER_MAX 256

struct imds_url {
        char url[KEYSRC_ARG_MAX];    /* http://HOST[:PORT]/PATH, as curl gets it */
        char origin[KEYSRC_ARG_MAX]; /* http://host[:port]: host lower-cased, ":80" dropped */
        char header[IMDS_URL_HEADERS_MAX][IMDS_URL_HEADER_MAX]; /* "Name: value", decoded */
        size_t n_headers;
        bool b64;        /* ;b64: the body is the key in base64 */
        bool link_local; /* the host is an address literal in 169.254.0.0/16 or fe80::/10 */
};

/*
 * Parse the source argument after "imds:" when it starts with "http://". Options follow the URL,
 * each after a ';': "header=NAME:VALUE" (VALUE with %XX escapes for a space, ',', ';' or '%'),
 * "b64". -EINVAL on anything else: another scheme, user info, a fragment, "..", a ',' or a space.
 */
int imds_url_parse(const char *arg, struct imds_url *out);

/* "http://HOST[:PORT]" (one trailing '/' allowed) into its canonical origin; -EINVAL if not one. */
int imds_origin_canon(const char *text, char *out, size_t size);

/*
 * 1 if a request may go to u: a link-local address, or an origin in allow (a comma-separated list
 * of origins, NULL or "" for none); 0 if not; -EINVAL if allow is malformed.
 */
int imds_url_allowed(const struct imds_url *u, const char *allow);

/* 0 if allow is a well-formed list of origins for imds_url_allowed(), -EINVAL if not. */
int imds_allow_check(const char *allow);

/* Append origin (one "http://HOST[:PORT]") to the comma-separated list (size bytes); -EINVAL if
 * origin is not one, -E2BIG if it does not fit (list unchanged). */
int imds_allow_join(char *list, size_t size, const char *origin);

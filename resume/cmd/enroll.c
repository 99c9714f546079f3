/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* thaw enroll: add a key source to a thaw device (a keyslot and its token), list or remove them. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "args.h"
#include "base/clock.h"
#include "cmd/cmd.h"
#include "base/escape.h"
#include "imds_url.h"
#include "key_provider.h"
#include "keysrc.h"
#include "base/log.h"
#include "system/power.h"
#include "luks.h"
#include "luks_token.h"
#include "ticket.h"
#include "tpm2_counter.h"
#include "tpm2_token.h"
#include "base/util.h"

#define FETCH_WAIT_MS 5000 /* a running system: a source is there or soon is */
#define PROMPT_WAIT_MS 60000 /* a person typing a passphrase */

struct enroll_opts {
        const char *device;
        const char *key;
        const char *unlock;
        const char *check;
        const char *root;
        char allow_url[KEYSRC_ALLOW_MAX]; /* --allow-url, comma-joined */
        int remove;        /* token id, -1 if not asked */
        bool list;
        bool repin;        /* --repin: pin the header as it is now */
        bool counter;      /* --tpm-counter: define the TPM2 anti-rollback counter */
        struct luks_policy policy; /* the header policy for DEV, from thaw.conf (see load_policy()) */
        bool configured;   /* DEV is thaw.conf's device=UUID=: its header= is DEV's pin */
        char pin[LUKS_FP_SIZE];
};

static void usage(FILE *f)
{
        fprintf(f, "Usage: thaw enroll --device DEV --key SRC [--unlock CHAIN] [--tcti TCTI]\n"
                   "                   [--allow-url http://HOST[:PORT]]... [--root DIR]\n"
                   "       thaw enroll --device DEV --list\n"
                   "       thaw enroll --device DEV --remove TOKEN\n"
                   "       thaw enroll --device DEV --check SRC [--tcti TCTI] [--allow-url ...]\n"
                   "       thaw enroll --device DEV --repin\n"
                   "       thaw enroll --device DEV --tpm-counter [--unlock CHAIN] [--tcti TCTI]\n\n"
                   "Add the key source SRC to the thaw device DEV: its key (fetched once, or for tpm2 a\n"
                   "fresh random key sealed to the TPM) gets a PBKDF2 keyslot and a thaw-<type> token.\n"
                   "A key of DEV's existing keyslots authorizes it: from the --unlock chain, by default\n"
                   "key= of /etc/thaw/thaw.conf. The boot uses SRC only once it is in rd.thaw.key=.\n"
                   "Sources as in thaw setup, and:\n"
                   "  tpm2[:pcrs=7+11][,bank=sha256][,lock=15]\n"
                   "                    a key sealed to this TPM2, unsealed only while the PCRs (default\n"
                   "                    7; 0-15, as 16-23 can be reset by software) hold their present\n"
                   "                    values and the lock PCR (default 15, any of 8-15) its reset\n"
                   "                    value; thaw resume extends the lock PCR whatever the outcome, so\n"
                   "                    it cannot be unsealed again in that boot; also defines the\n"
                   "                    TPM2 counter of DEV (see --tpm-counter)\n"
                   "  passphrase[:console]  a recovery passphrase, typed twice on this terminal;\n"
                   "                    its keyslot is argon2id (64 MiB, 4 passes). --check prompts\n"
                   "                    on the console as thaw resume would\n"
                   "  systemd-tpm2      (--check only) the key of systemd-cryptenroll's systemd-tpm2\n"
                   "                    token, unsealed as systemd-cryptsetup does\n\n"
                   "  -d, --device DEV  the thaw device (LUKS2)\n"
                   "  -k, --key SRC     the source to enroll\n"
                   "  -u, --unlock CHAIN  sources of an existing key (default: key= in thaw.conf)\n"
                   "  -l, --list        list the device's tokens: id, type, keyslots, source\n"
                   "  -r, --remove TOKEN  remove token TOKEN (an id from --list) and the keyslots no\n"
                   "                    other token uses; refused if that would leave no keyslot\n"
                   "  -c, --check SRC   fetch (unseal) the key of SRC and test it against DEV's keyslots;\n"
                   "                    a tpm2 source extends its lock PCR when it unseals\n"
                   "      --repin       after another tool (systemd-cryptenroll, cryptsetup) changed DEV's\n"
                   "                    header on purpose: check it against thaw's header policy and pin\n"
                   "                    its fingerprint (header= in thaw.conf, rd.thaw.header=)\n"
                   "      --tpm-counter define DEV's anti-rollback counter in the TPM2 (an NV counter\n"
                   "                    index under the owner hierarchy, which needs an empty owner\n"
                   "                    password), for a device enrolled with tpm2 before thaw had it:\n"
                   "                    thaw hibernate increments it and records it in the image ticket,\n"
                   "                    thaw resume hands over only an image whose ticket has its value.\n"
                   "                    The ticket key comes from root's keyring, else from a key of\n"
                   "                    the unlock chain. Idempotent\n"
                   "      --tcti TCTI   reach the TPM2 through TCTI (e.g. swtpm:port=2321) instead of\n"
                   "                    /dev/tpmrm0\n"
                   "      --allow-url ORIGIN  let imds:URL sources name http://HOST[:PORT] (not link-\n"
                   "                    local) for this command; the boot needs it in allow-url= of\n"
                   "                    thaw.conf too\n"
                   "      --root DIR    prefix for /dev and /etc (tests)\n"
                   "  -h, --help        show this help\n");
}

static enum cmd_status parse(int argc, char **argv, struct enroll_opts *o)
{
        static const struct option opts[] = {
                { "device", required_argument, NULL, 'd' },
                { "key", required_argument, NULL, 'k' },
                { "unlock", required_argument, NULL, 'u' },
                { "list", no_argument, NULL, 'l' },
                { "remove", required_argument, NULL, 'r' },
                { "check", required_argument, NULL, 'c' },
                { "tcti", required_argument, NULL, 'T' },
                { "allow-url", required_argument, NULL, 'a' },
                { "root", required_argument, NULL, 'R' },
                { "repin", no_argument, NULL, 'P' },
                { "tpm-counter", no_argument, NULL, 'C' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        uint64_t id;
        int c, modes;

        while ((c = getopt_long(argc, argv, "d:k:u:lr:c:h", opts, NULL)) != -1) {
                switch (c) {
                case 'd': o->device = optarg; break;
                case 'k': o->key = optarg; break;
                case 'u': o->unlock = optarg; break;
                case 'l': o->list = true; break;
                case 'c': o->check = optarg; break;
                case 'R': o->root = optarg; break;
                case 'P': o->repin = true; break;
                case 'C': o->counter = true; break;
                case 'r':
                        if (util_parse_u64(optarg, LUKS_TOKENS_MAX - 1, &id) < 0) {
                                log_msg(LOG_ERR, "--remove %s is not a token id (0-%d)", optarg,
                                        LUKS_TOKENS_MAX - 1);
                                return CMD_USAGE;
                        }
                        o->remove = (int)id;
                        break;
                case 'T':
                        if (tpm2_use_tcti(optarg) < 0) {
                                log_msg(LOG_ERR, "--tcti %s is not a usable TCTI string", optarg);
                                return CMD_USAGE;
                        }
                        break;
                case 'a':
                        if (imds_allow_join(o->allow_url, sizeof(o->allow_url), optarg) < 0) {
                                log_msg(LOG_ERR, "--allow-url %s is not an origin http://HOST[:PORT] (or one "
                                        "too many)", optarg);
                                return CMD_USAGE;
                        }
                        break;
                case 'h': usage(stdout); return CMD_OK;
                default: usage(stderr); return CMD_USAGE;
                }
        }
        if (imds_allow_urls(o->allow_url) < 0)
                return CMD_USAGE; /* joined from checked origins: does not happen */
        modes = !!o->key + o->list + (o->remove >= 0) + !!o->check + o->repin + o->counter;
        if (optind < argc || !o->device || modes != 1) {
                log_msg(LOG_ERR, "enroll needs --device and one of --key, --list, --remove, --check, --repin, "
                        "--tpm-counter");
                return CMD_USAGE;
        }
        return CMD_FAILED; /* meaning: go on */
}

/* One source: a chain of exactly one ("tpm2:pcrs=7,bank=sha256" holds commas). */
static int one_source(const char *spec, const char *opt, struct keysrc *out)
{
        struct keychain c;

        int r = keychain_parse(spec, &c);

        if (r == -ERANGE) {
                log_msg(LOG_ERR, "%s %s: pcrs= names a PCR of 16-23, which software can reset: %s", opt, spec,
                        TPM2_RESETTABLE_WHY);
                return r;
        }
        if (r < 0 || c.n != 1) {
                log_msg(LOG_ERR, "%s %s is not one key source (see thaw enroll --help)", opt, spec);
                return -EINVAL;
        }
        *out = c.src[0];
        return 0;
}

/* "image ticket: fresh, made 2024-05-01 12:00:00 UTC", or why the token is malformed. */
static void ticket_line(const char *json, char *buf, size_t size)
{
        struct ticket *t = calloc(1, sizeof(*t));
        char why[160], when[32] = "?";
        time_t made;
        struct tm tm;

        if (!t) {
                snprintf(buf, size, "image ticket (not read: out of memory)");
                return;
        }
        if (ticket_parse(json, t, why, sizeof(why)) < 0) {
                snprintf(buf, size, "(malformed image ticket: %s)", why);
                free(t);
                return;
        }
        made = (time_t)t->time;
        if (gmtime_r(&made, &tm))
                strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
        snprintf(buf, size, "image ticket: %s, made %s", ticket_state_name(t->state), when);
        free(t);
}

static void show_token(const struct luks_token_info *ti)
{
        char slots[128] = "", extra[200] = "", src[KEYSRC_ARG_MAX + 32] = "", why[160];
        struct tpm2_token *t = NULL;
        struct keysrc s;
        size_t used = 0;

        for (int i = 0; i < 32; i++) {
                if (ti->keyslots & (1u << i))
                        used += (size_t)snprintf(slots + used, sizeof(slots) - used, "%s%d", used ? "," : "", i);
        }
        if (strncmp(ti->type, LUKS_TOKEN_PREFIX, strlen(LUKS_TOKEN_PREFIX)) != 0) {
                snprintf(src, sizeof(src), "(not thaw's)");
        } else if (strcmp(ti->type, TICKET_TOKEN_TYPE) == 0) {
                ticket_line(ti->json, src, sizeof(src));
        } else if (luks_token_check(ti->json, &s, why, sizeof(why)) < 0 ||
                   keysrc_format(&s, src, sizeof(src)) < 0) {
                snprintf(src, sizeof(src), "(malformed: %s)", why);
        } else if (s.type == KEYSRC_TPM2 && (t = calloc(1, sizeof(*t)))) {
                char pcrs[80];

                if (tpm2_token_parse(ti->json, t, why, sizeof(why)) == 0) {
                        tpm2_pcrs_format(t->pcrs, pcrs, sizeof(pcrs));
                        snprintf(extra, sizeof(extra), "  (policy: PCRs %s of %s, lock PCR %u at reset value)",
                                 pcrs, tpm2_bank_name(t->bank), t->lock);
                }
                free(t);
        }
        /* The type and the token's fields are the header's text, which anyone who can write the
         * disk chooses: escaped, so that they cannot drive the terminal. */
        char type[4 * sizeof(ti->type)], safe_src[4 * sizeof(src)], safe_extra[4 * sizeof(extra)];

        escape_text(type, sizeof(type), ti->type);
        escape_text(safe_src, sizeof(safe_src), src);
        escape_text(safe_extra, sizeof(safe_extra), extra);
        printf("%-3d %-14s keyslot %-6s %s%s\n", ti->id, type, slots[0] ? slots : "-", safe_src, safe_extra);
}

static int list(const struct enroll_opts *o)
{
        struct luks_tokens *t = NULL;
        int r = luks_tokens_read(o->device, &t);

        if (r < 0) {
                log_msg(LOG_ERR, "cannot read the LUKS2 tokens of %s (%s)", o->device, strerror(-r));
                return r;
        }
        printf("%-3s %-14s %-14s %s\n", "id", "type", "keyslots", "source");
        for (size_t i = 0; i < t->n; i++)
                show_token(&t->t[i]);
        luks_tokens_free(t);
        return 0;
}

/* "0,2" for a keyslot mask, into buf. */
static const char *slot_list(uint32_t mask, char *buf, size_t size)
{
        size_t used = 0;

        buf[0] = '\0';
        for (unsigned slot = 0; slot < 32; slot++) {
                int n;

                if (!(mask & (1u << slot)))
                        continue;
                n = snprintf(buf + used, size - used, "%s%u", used ? "," : "", slot);
                if (n < 0 || (size_t)n >= size - used)
                        break;
                used += (size_t)n;
        }
        return buf;
}

static int remove_token(const struct enroll_opts *o)
{
        char list[128];
        uint32_t kept = 0;
        int r = luks_token_remove(o->device, o->remove, &kept, &o->policy);

        if (r == -ENOENT)
                log_msg(LOG_ERR, "%s has no token %d: nothing removed", o->device, o->remove);
        else if (r == -EBUSY)
                log_msg(LOG_ERR, "token %d holds the last keyslot of %s: refusing to remove it (the device "
                        "could never be opened again); enroll another source first", o->remove, o->device);
        else if (r < 0)
                log_msg(LOG_ERR, "removing token %d of %s failed (%s)", o->remove, o->device, strerror(-r));
        else if (kept)
                log_msg(LOG_WARNING, "removed token %d and its keyslots from %s, except keyslots %s: other tokens "
                        "still use them, so the removed source's key still opens the device through them",
                        o->remove, o->device, slot_list(kept, list, sizeof(list)));
        else
                log_msg(LOG_INFO, "removed token %d and its keyslots from %s", o->remove, o->device);
        return r;
}

/* The key of src, with the device's tokens in view; says why not in one line. */
static int fetch(const struct enroll_opts *o, const struct keysrc *src, const struct luks_tokens *tokens,
                 struct secret **key)
{
        char name[KEYSRC_ARG_MAX + 32], detail[512] = "";
        /* A person types a passphrase: more time than a source that is there or not. */
        int64_t wait = src->type == KEYSRC_PASSPHRASE ? PROMPT_WAIT_MS : FETCH_WAIT_MS;
        struct keysrc_ctx kc = { .root = o->root, .deadline_ms = clock_now_ms() + wait,
                                 .device = o->device, .tokens = tokens, .detail = detail,
                                 .detail_size = sizeof(detail) };
        int r = keysrc_fetch(src, &kc, key);

        if (r < 0) {
                if (keysrc_format(src, name, sizeof(name)) < 0)
                        name[0] = '\0';
                log_msg(LOG_WARNING, "cannot get the key from %s (%s)", name,
                        detail[0] ? detail : r == -ENOENT ? "not found" : strerror(-r));
        }
        return r;
}

/* As thaw resume would: a passphrase may open argon2 keyslots within half of the RAM (why names the others). */
static int check_key(const struct enroll_opts *o, const struct keysrc *src, const struct secret *key,
                     char *why, size_t size)
{
        struct power_meminfo m;

        why[0] = '\0';
        if (src->type != KEYSRC_PASSPHRASE)
                return luks_check_key(o->device, key, &o->policy);
        if (power_meminfo(o->root, &m) < 0)
                m.mem_total_kib = 0;
        return luks_activate_passphrase(o->device, NULL, key, m.mem_total_kib / 2, &o->policy, why, size);
}

static int check(const struct enroll_opts *o, const struct luks_tokens *tokens)
{
        char why[512];
        struct secret *key = NULL;
        struct keysrc src;
        int r;

        r = one_source(o->check, "--check", &src);
        if (r < 0)
                return r;
        r = fetch(o, &src, tokens, &key);
        if (r < 0)
                return r;
        r = check_key(o, &src, key, why, sizeof(why));
        secret_free(key);
        if (r < 0)
                log_msg(LOG_WARNING, "the key from %s does not open %s (%s%s%s)", o->check, o->device,
                        r == -EPERM ? "no keyslot takes it" : strerror(-r), why[0] ? "; " : "", why);
        else
                log_msg(LOG_INFO, "the key from %s opens %s", o->check, o->device);
        return r;
}

/* The chain whose keys authorize the new keyslot: --unlock, or key= of thaw.conf. */
static int unlock_chain(const struct enroll_opts *o, struct keychain *chain)
{
        static struct thaw_args a;
        const char *spec = o->unlock;
        int r;

        if (!spec) {
                r = args_load(o->root, NULL, ARGS_LOAD_CONF_ONLY, &a, NULL, NULL);
                if (r < 0 || !a.key[0]) {
                        log_msg(LOG_ERR, "no --unlock and no key= in %s: nothing authorizes a new keyslot "
                                "on %s", ARGS_CONF_PATH, o->device);
                        return -ENOKEY;
                }
                spec = a.key;
        }
        r = keychain_parse(spec, chain);
        if (r == -ERANGE)
                log_msg(LOG_ERR, "%s: pcrs= names a PCR of 16-23, which software can reset: %s", spec,
                        TPM2_RESETTABLE_WHY);
        else if (r < 0)
                log_msg(LOG_ERR, "%s is not a key source chain", spec);
        return r;
}

/* A key of the unlock chain recovers the volume key; the new keyslot and token are added. */
static int add(const struct enroll_opts *o, const struct keysrc_enrollment *e, const struct luks_tokens *tokens)
{
        struct keychain chain;
        int r, id = -1;

        r = unlock_chain(o, &chain);
        if (r < 0)
                return r;
        r = -ENOKEY;
        for (size_t i = 0; i < chain.n; i++) {
                char name[KEYSRC_ARG_MAX + 32];
                struct secret *key = NULL;

                if (fetch(o, &chain.src[i], tokens, &key) < 0)
                        continue; /* it said why */
                r = luks_enroll(o->device, key, e, &id, &o->policy);
                secret_free(key);
                if (r == 0)
                        break;
                if (r != -EPERM) {
                        log_msg(LOG_ERR, "adding the keyslot to %s failed (%s): nothing enrolled", o->device,
                                strerror(-r));
                        return r;
                }
                if (keysrc_format(&chain.src[i], name, sizeof(name)) < 0)
                        name[0] = '\0';
                log_msg(LOG_WARNING, "the key from %s opens no keyslot of %s", name, o->device);
        }
        if (r < 0) {
                log_msg(LOG_ERR, "no key of the unlock chain opens %s: nothing enrolled", o->device);
                return r;
        }
        log_msg(LOG_INFO, "enrolled %s on %s as token %d; the boot uses it once it is in rd.thaw.key= "
                "(or key= in %s)", o->key, o->device, id, ARGS_CONF_PATH);
        return 0;
}

/*
 * DEV's anti-rollback counter in the TPM2 (tpm2_counter.h), its auth from the ticket key that key
 * recovers (NULL: the one in root's keyring). why says what failed.
 */
static int define_counter(const struct enroll_opts *o, const struct secret *key, char *why, size_t size)
{
        uint32_t index = 0;
        uint64_t value = 0;
        int r = tpm2_counter_enroll(o->root, o->device, key, &o->policy, clock_now_ms() + FETCH_WAIT_MS, &index,
                                    &value, why, size);

        if (r == 0)
                log_msg(LOG_INFO, "TPM2 counter of %s at NV index 0x%08x, value %" PRIu64 ": each hibernation and "
                        "each resume increment it, and an image is resumed only while it holds its ticket's value",
                        o->device, index, value);
        return r;
}

/* --tpm-counter: the ticket key from the keyring, else from the first key of the unlock chain that opens DEV. */
static int counter(const struct enroll_opts *o, const struct luks_tokens *tokens)
{
        struct keychain chain;
        char why[512] = "";
        int r;

        if (!tpm2_counter_wanted(tokens)) {
                log_msg(LOG_ERR, "%s has no thaw-tpm2 token: the TPM2 counter guards the images of a device with a "
                        "TPM2 key only (thaw enroll --key tpm2 defines both)", o->device);
                return -ENOENT;
        }
        r = define_counter(o, NULL, why, sizeof(why));
        if (r == -ENOKEY && unlock_chain(o, &chain) == 0) {
                for (size_t i = 0; i < chain.n; i++) {
                        struct secret *key = NULL;

                        if (fetch(o, &chain.src[i], tokens, &key) < 0)
                                continue; /* it said why */
                        r = define_counter(o, key, why, sizeof(why));
                        secret_free(key);
                        if (r != -EPERM)
                                break;
                }
        }
        if (r < 0)
                log_msg(LOG_ERR, "cannot define the TPM2 counter of %s: %s", o->device,
                        r == -EPERM ? "no key of the unlock chain opens it" : why);
        return r;
}

static int enroll(const struct enroll_opts *o, const struct luks_tokens *tokens, int *counter_r)
{
        char detail[512] = "";
        struct keysrc_ctx kc = { .root = o->root, .deadline_ms = clock_now_ms() + FETCH_WAIT_MS,
                                 .device = o->device, .tokens = tokens, .detail = detail,
                                 .detail_size = sizeof(detail) };
        struct keysrc_enrollment e = { 0 };
        struct keysrc src;
        int r;

        r = one_source(o->key, "--key", &src);
        if (r < 0)
                return r;
        r = keysrc_enroll(&src, &kc, &e);
        if (r < 0) {
                log_msg(LOG_ERR, "cannot make the key for %s (%s): nothing enrolled on %s", o->key,
                        detail[0] ? detail : r == -ENOENT ? "not found" : strerror(-r), o->device);
                return r;
        }
        r = add(o, &e, tokens);
        /* The new key opens its new keyslot: the ticket key comes from it, whatever the keyring holds. */
        if (r == 0 && src.type == KEYSRC_TPM2) {
                *counter_r = define_counter(o, e.key, detail, sizeof(detail));
                if (*counter_r < 0)
                        log_msg(LOG_ERR, "tpm2 is enrolled on %s, but its TPM2 counter is not (%s): its images are "
                                "not protected against a rollback; thaw enroll --device %s --tpm-counter tries "
                                "again", o->device, detail, o->device);
        }
        keysrc_enrollment_free(&e);
        return r;
}

/*
 * The policy for DEV: the profile thaw.conf implies (a swap file, offset=, lives in a container
 * thaw did not format) and, when thaw.conf's device= is DEV's UUID, its pinned header=.
 */
static void load_policy(struct enroll_opts *o)
{
        static struct thaw_args a;
        char uuid[64], spec[80];

        (void)args_load(o->root, NULL, ARGS_LOAD_CONF_ONLY, &a, NULL, NULL); /* none: no pin, thaw's profile */
        o->policy.profile = a.offset ? LUKS_PROFILE_FOREIGN : LUKS_PROFILE_THAW;
        if (luks_uuid(o->device, uuid, sizeof(uuid)) == 0 &&
            snprintf(spec, sizeof(spec), "UUID=%s", uuid) < (int)sizeof(spec) && strcasecmp(spec, a.device) == 0) {
                o->configured = true;
                snprintf(o->pin, sizeof(o->pin), "%s", a.header);
                o->policy.pin = o->pin;
        } else if (*a.header) {
                /* Said, not silent: the pin of another device= (or of a /dev path) is not this one's. */
                log_msg(LOG_WARNING, "%s's device=%s is not UUID= of %s: its header= pin is neither checked "
                        "nor updated here", ARGS_CONF_PATH, a.device, o->device);
        }
}

/* Security: the header must pass before any key is tried on it (luks.c checks again on load). */
static int header_ok(const struct enroll_opts *o, const struct luks_policy *p, char *fp)
{
        char why[LUKS_POLICY_WHY_MAX];
        int r = luks_header_check(o->device, p, fp, why, sizeof(why));

        if (r == -LUKS_EPOLICY && p->pin && *p->pin)
                log_msg(LOG_ERR, "refusing the LUKS2 header of %s before any key was tried: %s; if you changed "
                        "it yourself (systemd-cryptenroll, cryptsetup), check it with thaw inspect, then "
                        "thaw enroll --device %s --repin", o->device, why, o->device);
        else if (r < 0)
                log_msg(LOG_ERR, "refusing the LUKS2 header of %s before any key was tried: %s", o->device,
                        *why ? why : strerror(-r));
        return r;
}

/* header=FP in thaw.conf, in place of any header= line there. */
static int conf_set_header(const struct enroll_opts *o, const char *fp)
{
        char path[PATH_MAX], text[ARGS_CONF_MAX], out[ARGS_CONF_MAX + LUKS_FP_SIZE + 16];
        size_t used = 0;
        int r = util_read_text_at(o->root, ARGS_CONF_PATH, text, sizeof(text));

        if (r < 0)
                return r;
        for (char *line = text, *next; line && *line; line = next) {
                const char *k = line;

                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                while (*k == ' ' || *k == '\t')
                        k++;
                if (strncmp(k, "header", 6) == 0 && strchr(" \t=", k[6]))
                        continue;
                r = snprintf(out + used, sizeof(out) - used, "%s\n", line);
                if (r < 0 || (size_t)r >= sizeof(out) - used)
                        return -E2BIG;
                used += (size_t)r;
        }
        r = snprintf(out + used, sizeof(out) - used, "header=%s\n", fp);
        if (r < 0 || (size_t)r >= sizeof(out) - used)
                return -E2BIG;
        r = util_path(path, sizeof(path), o->root, ARGS_CONF_PATH);
        return r < 0 ? r : util_write_file(path, out, 0644);
}

/* After a change thaw made (or --repin): DEV's header as it is now becomes the pin. */
static int pin(const struct enroll_opts *o)
{
        struct luks_policy p = { .profile = o->policy.profile };
        char fp[LUKS_FP_SIZE];
        int r = header_ok(o, &p, fp);

        if (r < 0)
                return r;
        if (o->configured) {
                r = conf_set_header(o, fp);
                if (r < 0) {
                        log_msg(LOG_ERR, "cannot record header=%s in %s (%s): the boot still insists on the old "
                                "header", fp, ARGS_CONF_PATH, strerror(-r));
                        return r;
                }
                log_msg(LOG_INFO, "pinned the LUKS2 header of %s in %s (rebuild a host-only initramfs); add "
                        "to the kernel command line if it carries rd.thaw.*:", o->device, ARGS_CONF_PATH);
        } else {
                log_msg(LOG_INFO, "%s is not device= of %s: nothing recorded; its header, for "
                        "rd.thaw.header=:", o->device, ARGS_CONF_PATH);
        }
        printf("rd.thaw.header=%s\n", fp);
        return 0;
}

enum cmd_status cmd_enroll(int argc, char **argv)
{
        struct enroll_opts o = { .root = "", .remove = -1 };
        struct luks_tokens *tokens = NULL;
        enum cmd_status st;
        int r, counter_r = 0;

        log_setup("", true);
        st = parse(argc, argv, &o);
        if (st != CMD_FAILED)
                return st;
        if (o.list)
                return list(&o) < 0 ? CMD_FAILED : CMD_OK;
        load_policy(&o);
        if (o.repin)
                return pin(&o) < 0 ? CMD_FAILED : CMD_OK;
        if (header_ok(&o, &o.policy, NULL) < 0)
                return CMD_FAILED;
        if (o.remove >= 0)
                return remove_token(&o) < 0 || pin(&o) < 0 ? CMD_FAILED : CMD_OK;
        r = luks_tokens_read(o.device, &tokens);
        if (r < 0) {
                log_msg(LOG_ERR, "cannot read %s as LUKS2 (%s)", o.device, strerror(-r));
                return CMD_FAILED;
        }
        if (o.counter) {
                r = counter(&o, tokens);
                luks_tokens_free(tokens);
                return r < 0 ? CMD_FAILED : CMD_OK;
        }
        r = o.check ? check(&o, tokens) : enroll(&o, tokens, &counter_r);
        luks_tokens_free(tokens);
        if (r == 0 && !o.check)
                r = pin(&o);
        return r < 0 || counter_r < 0 ? CMD_FAILED : CMD_OK;
}

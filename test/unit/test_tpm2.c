/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the tpm2 source's options in a chain, the PolicyPCR digest and the thaw-tpm2 token parser. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <json-c/json.h>
#include <openssl/evp.h>
#include <tss2/tss2_mu.h>
#include "base/clock.h"
#include "keysrc.h"
#include "luks.h"
#include "luks_token.h"
#include "tpm2.h"
#include "tpm2_lock.h"
#include "tpm2_token.h"

static void chain_ok(const char *spec, size_t n, const char *first_arg, const char *formatted)
{
        struct keychain c;
        char buf[KEYCHAIN_SPEC_MAX];

        if (keychain_parse(spec, &c) != 0)
                fail_msg("\"%s\" was refused", spec);
        assert_int_equal(c.n, n);
        assert_string_equal(c.src[0].arg, first_arg);
        assert_int_equal(keychain_format(&c, buf, sizeof(buf)), 0);
        assert_string_equal(buf, formatted);
}

/* Commas inside a tpm2 source's options do not cut the chain; the next "type:" or bare name does. */
static void test_chain(void **state)
{
        (void)state;
        chain_ok("tpm2", 1, "", "tpm2");
        chain_ok("tpm2,fwcfg:opt/thaw/key", 2, "", "tpm2,fwcfg:opt/thaw/key");
        chain_ok("tpm2:pcrs=7+11,bank=sha256,fwcfg:opt/thaw/key", 2, "pcrs=7+11,bank=sha256",
                 "tpm2:pcrs=7+11,bank=sha256,fwcfg:opt/thaw/key");
        chain_ok("tpm2,bank=sha1,lock=14", 1, "bank=sha1,lock=14", "tpm2:bank=sha1,lock=14");
        chain_ok("fwcfg:a,tpm2:lock=8", 2, "a", "fwcfg:a,tpm2:lock=8");
}

static void test_chain_bad(void **state)
{
        static const char *const bad[] = {
                "tpm2:", "tpm2:pcrs=24", "tpm2:pcrs=7+7", "tpm2:pcrs=", "tpm2:pcrs=7+", "tpm2:pcrs=007",
                "tpm2:bank=md5", "tpm2:lock=16", "tpm2:lock=7", "tpm2:lock=23", "tpm2:pcrs=15",
                "tpm2:pcrs=7,pcrs=8", "tpm2:color=red", "tpm2:pcrs=7,,fwcfg:a", "tpm2:pcrs=7,",
                "tpm2,", "fwcfg:a,b", "fwcfg", "keyfile", "tpm2x", "tpm2:pcrs=7 ",
        };
        struct keychain c;

        (void)state;
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                if (keychain_parse(bad[i], &c) != -EINVAL)
                        fail_msg("\"%s\" was accepted", bad[i]);
        }
}

/* PCRs 16-23 can be reset by software: a policy on them is refused with its own error. */
static void test_chain_resettable(void **state)
{
        static const char *const bad[] = {
                "tpm2:pcrs=16", "tpm2:pcrs=7+23", "tpm2:pcrs=16+7,bank=sha256", "fwcfg:a,tpm2:pcrs=20",
        };
        struct keychain c;

        (void)state;
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                if (keychain_parse(bad[i], &c) != -ERANGE)
                        fail_msg("\"%s\" was not refused as resettable", bad[i]);
        }
        assert_int_equal(keychain_parse("tpm2:pcrs=0+7+14", &c), 0);
}

/* The digest a PolicyPCR session reaches, for known values (checked against a TPM in test/host). */
static void test_policy_pcr(void **state)
{
        uint8_t values[TPM2_PCR_COUNT][TPM2_DIGEST_MAX], a[TPM2_POLICY_SIZE], b[TPM2_POLICY_SIZE];

        (void)state;
        memset(values, 0, sizeof(values));
        assert_int_equal(tpm2_policy_pcr(TPM2_ALG_SHA256, 1u << 7 | 1u << 15, values, a), 0);
        values[15][0] = 1; /* the lock PCR after an extend */
        assert_int_equal(tpm2_policy_pcr(TPM2_ALG_SHA256, 1u << 7 | 1u << 15, values, b), 0);
        assert_memory_not_equal(a, b, sizeof(a));
        values[3][0] = 1; /* a PCR outside the selection does not count */
        assert_int_equal(tpm2_policy_pcr(TPM2_ALG_SHA256, 1u << 7 | 1u << 15, values, a), 0);
        assert_memory_equal(a, b, sizeof(a));
        assert_int_equal(tpm2_policy_pcr(0x1234, 1u << 7, values, a), -EINVAL);
        assert_int_equal(tpm2_policy_pcr(TPM2_ALG_SHA256, 0, values, a), -EINVAL);
        assert_int_equal(tpm2_policy_pcr(TPM2_ALG_SHA256, 1u << 24, values, a), -EINVAL);
}

/* A sealed-object blob as tpm2_seal() makes it (the private part's bytes do not matter here). */
static size_t fake_blob(uint8_t *blob, size_t size, const uint8_t policy[TPM2_POLICY_SIZE])
{
        TPM2B_PRIVATE priv = { .size = 48 };
        TPM2B_PUBLIC pub = { .publicArea = {
                .type = TPM2_ALG_KEYEDHASH, .nameAlg = TPM2_ALG_SHA256,
                .objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT,
                .parameters.keyedHashDetail.scheme.scheme = TPM2_ALG_NULL,
                .authPolicy.size = TPM2_POLICY_SIZE,
                .unique.keyedHash.size = 32,
        } };
        size_t off = 0;

        memcpy(pub.publicArea.authPolicy.buffer, policy, TPM2_POLICY_SIZE);
        assert_int_equal(Tss2_MU_TPM2B_PRIVATE_Marshal(&priv, blob, size, &off), 0);
        assert_int_equal(Tss2_MU_TPM2B_PUBLIC_Marshal(&pub, blob, size, &off), 0);
        return off;
}

/* A good token's JSON text, as keysrc_enroll() writes it. */
static char *good_token(void)
{
        static struct tpm2_token t;
        struct keysrc src;
        char base[LUKS_TOKEN_JSON_MAX];
        struct json_object *o;
        char *text;

        memset(&t, 0, sizeof(t));
        for (size_t i = 0; i < TPM2_POLICY_SIZE; i++)
                t.policy[i] = (uint8_t)(i * 7);
        t.blob_len = fake_blob(t.blob, sizeof(t.blob), t.policy);
        t.bank = TPM2_ALG_SHA256;
        t.lock = 15;
        t.pcrs = 1u << 7 | 1u << 15;
        assert_int_equal(keysrc_parse("tpm2:pcrs=7", &src), 0);
        assert_int_equal(luks_token_build(&src, base, sizeof(base)), 0);
        o = json_tokener_parse(base);
        assert_non_null(o);
        assert_int_equal(tpm2_token_fields(&t, o), 0);
        text = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(o);
        return text;
}

static void test_token_good(void **state)
{
        struct tpm2_token *t = calloc(1, sizeof(*t));
        char *json = good_token(), why[128] = "";

        (void)state;
        assert_int_equal(tpm2_token_parse(json, t, why, sizeof(why)), 0);
        assert_int_equal(t->pcrs, 1u << 7 | 1u << 15);
        assert_int_equal(t->lock, 15);
        assert_int_equal(t->bank, TPM2_ALG_SHA256);
        assert_int_equal(t->opts.pcrs, 1u << 7);
        assert_int_equal(t->policy[1], 7);
        assert_int_equal(t->primary.len, 0); /* a token from before the name was kept */
        free(json);
        free(t);
}

/* The storage primary key's name: written at enrollment, read back whole (nameAlg, then the digest). */
static void test_token_primary_name(void **state)
{
        struct tpm2_token *t = calloc(1, sizeof(*t));
        char *json = good_token(), *p, with[8192], why[128] = "";

        (void)state;
        p = strstr(json, "\"tpm2-lock-pcr\":15");
        assert_non_null(p);
        snprintf(with, sizeof(with), "%.*s\"tpm2-primary-name\":\"000b%s\",%s", (int)(p - json), json,
                 "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff", p);
        assert_int_equal(tpm2_token_parse(with, t, why, sizeof(why)), 0);
        assert_int_equal(t->primary.len, 34);
        assert_int_equal(t->primary.name[1], 0x0b);
        assert_int_equal(t->primary.name[33], 0xff);
        free(json);
        free(t);
}

/* Replace the first occurrence of from with to in a good token, and expect a refusal naming why. */
static void bad_token(const char *from, const char *to, const char *why_part)
{
        struct tpm2_token *t = calloc(1, sizeof(*t));
        char *json = good_token(), *p, bad[8192], why[128] = "";

        p = strstr(json, from);
        if (!p)
                fail_msg("'%s' not in %s", from, json);
        snprintf(bad, sizeof(bad), "%.*s%s%s", (int)(p - json), json, to, p + strlen(from));
        if (tpm2_token_parse(bad, t, why, sizeof(why)) != -EINVAL)
                fail_msg("accepted: %s", bad);
        if (!strstr(why, why_part))
                fail_msg("reason \"%s\" lacks \"%s\" for %s", why, why_part, bad);
        free(json);
        free(t);
}

static void test_token_bad(void **state)
{
        char big[5000];

        (void)state;
        bad_token("\"tpm2-lock-pcr\":15", "\"tpm2-lock-pcr\":\"15\"", "tpm2-lock-pcr");
        bad_token("\"tpm2-lock-pcr\":15", "\"tpm2-lock-pcr\":16", "tpm2-lock-pcr");
        bad_token("\"tpm2-lock-pcr\":15", "\"tpm2-lock-pcr\":15,\"tpm2-primary-name\":\"000b\"", "tpm2-primary-name");
        bad_token("\"tpm2-lock-pcr\":15", "\"tpm2-lock-pcr\":15,\"tpm2-primary-name\":\"000B"
                  "0000000000000000000000000000000000000000000000000000000000000000\"", "tpm2-primary-name");
        bad_token("\"tpm2-lock-pcr\":15", "\"tpm2-lock-pcr\":15,\"tpm2-primary-name\":\"0004"
                  "0000000000000000000000000000000000000000000000000000000000000000\"", "tpm2-primary-name");
        bad_token("\"tpm2-lock-pcr\":15", "\"tpm2-lock-pcr\":15,\"tpm2-primary-name\":34", "tpm2-primary-name");
        bad_token("\"tpm2-lock-pcr\":15", "\"tpm2-lock-pcr\":14", "not among");
        bad_token(",\"tpm2-lock-pcr\":15", "", "tpm2-lock-pcr missing");
        bad_token("\"tpm2-bank\":\"sha256\"", "\"tpm2-bank\":\"md5\"", "unknown tpm2-bank");
        bad_token("\"tpm2-bank\":\"sha256\"", "\"tpm2-bank\":256", "tpm2-bank is not a string");
        bad_token("\"tpm2-pcrs\":[7,15]", "\"tpm2-pcrs\":[7,7,15]", "tpm2-pcrs");
        bad_token("\"tpm2-pcrs\":[7,15]", "\"tpm2-pcrs\":[7,24,15]", "tpm2-pcrs");
        bad_token("\"tpm2-pcrs\":[7,15]", "\"tpm2-pcrs\":[7,16,15]", "16-23, which software can reset");
        bad_token("\"tpm2-pcrs\":[7,15]", "\"tpm2-pcrs\":[23,15]", "16-23, which software can reset");
        bad_token("\"tpm2-pcrs\":[7,15]", "\"tpm2-pcrs\":\"7+15\"", "tpm2-pcrs");
        bad_token("\"tpm2-pcrs\":[7,15]", "\"tpm2-pcrs\":[7,[15]]", "tpm2-pcrs");
        bad_token("\"tpm2-policy-hash\":\"00", "\"tpm2-policy-hash\":\"01", "not the blob's policy");
        bad_token("\"tpm2-policy-hash\":\"00", "\"tpm2-policy-hash\":\"0", "hex");
        bad_token("\"tpm2-policy-hash\":\"00", "\"tpm2-policy-hash\":\"000", "tpm2-policy-hash is not a string or is longer");
        bad_token("\"tpm2-policy-hash\":\"00", "\"tpm2-policy-hash\":\"0A", "hex");
        bad_token("\"tpm2-blob\":\"", "\"tpm2-blob\":\"!", "base64");
        bad_token("\"tpm2-blob\":\"", "\"tpm2-blob\":\"AAAA", "sealed object");
        bad_token("\"tpm2-blob\":\"", "\"tpm2-blob\":1,\"x\":\"", "unknown field");
        bad_token("\"tpm2-blob\":\"", "\"tpm2-blob\":1,\"tpm2-x\":\"", "unknown field");
        bad_token("\"tpm2-blob\":\"", "\"tpm2-blobx\":\"", "unknown field");
        bad_token("\"tpm2-bank\":\"sha256\",", "", "tpm2-bank missing");
        bad_token("\"type\":\"thaw-tpm2\"", "\"type\":\"thaw-fwcfg\"", "type");
        bad_token("\"thaw-source\":\"tpm2:pcrs=7\"", "\"thaw-source\":\"tpm2:pcrs=99\"", "thaw-source");
        bad_token("\"keyslots\":[]", "\"keyslots\":{}", "keyslots");
        bad_token("\"tpm2-lock-pcr\":15}", "\"tpm2-lock-pcr\":15}x", "JSON");
        bad_token("\"tpm2-lock-pcr\":15", "\"tpm2-lock-pcr\":15,\"extra\":1", "unknown field");
        /* A blob larger than any sealed object: refused by size before it is decoded. */
        memset(big, 'A', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        {
                char to[sizeof(big) + 16];

                snprintf(to, sizeof(to), "\"tpm2-blob\":\"%.1400s", big);
                bad_token("\"tpm2-blob\":\"", to, "tpm2-blob is not a string or is longer than");
                snprintf(to, sizeof(to), "\"tpm2-blob\":\"%s", big);
                bad_token("\"tpm2-blob\":\"", to, "larger than");
        }
}

static char root[256];

/* A device with a thaw-tpm2 token, but no TPM: said, after the grace or at the deadline. */
static void fetch_no_tpm(int with_driver, int64_t wait_ms, int64_t min_ms, int64_t max_ms, const char *text)
{
        static struct luks_tokens tokens;
        char detail[512] = "", path[1024];
        struct keysrc_ctx kc = { .root = root, .tokens = &tokens, .detail = detail,
                                 .detail_size = sizeof(detail) };
        struct secret *key = NULL;
        struct keysrc src;
        int64_t t0;

        memset(&tokens, 0, sizeof(tokens));
        tokens.n = 1;
        snprintf(tokens.t[0].type, sizeof(tokens.t[0].type), "thaw-tpm2");
        tokens.t[0].json = (char *)"{}";
        snprintf(path, sizeof(path), "rm -rf '%s/sys' && mkdir -p '%s/sys/module%s'", root, root,
                 with_driver ? "/tpm_tis" : "");
        assert_int_equal(system(path), 0);
        assert_int_equal(keysrc_parse("tpm2", &src), 0);
        t0 = clock_now_ms();
        kc.deadline_ms = t0 + wait_ms;
        assert_int_equal(keysrc_fetch(&src, &kc, &key), -ENODEV);
        assert_null(key);
        if (clock_now_ms() - t0 < min_ms || clock_now_ms() - t0 > max_ms)
                fail_msg("gave up after %lld ms, not within %lld..%lld", (long long)(clock_now_ms() - t0),
                         (long long)min_ms, (long long)max_ms);
        assert_non_null(strstr(detail, text));
}

static void test_no_tpm(void **state)
{
        (void)state;
        snprintf(root, sizeof(root), "%s/thaw-tpm2-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        assert_non_null(mkdtemp(root));
        /* No driver: it may still load, so the wait lasts until the deadline. */
        fetch_no_tpm(0, 1500, 1400, 4000, "no TPM2 device (/dev/tpmrm0) appeared within the timeout");
        /* A driver that found nothing: a short grace, not the whole timeout. */
        fetch_no_tpm(1, 20000, 900, 8000, "no TPM2 device (/dev/tpmrm0): the TPM driver found none");
        /* Without a thaw-tpm2 token the TPM is not even looked for. */
        {
                struct luks_tokens none = { 0 };
                char detail[128] = "";
                struct keysrc_ctx kc = { .root = root, .tokens = &none, .detail = detail,
                                         .detail_size = sizeof(detail), .deadline_ms = clock_now_ms() + 20000 };
                struct secret *key = NULL;
                struct keysrc src;

                assert_int_equal(keysrc_parse("tpm2", &src), 0);
                assert_int_equal(keysrc_fetch(&src, &kc, &key), -ENOKEY);
                assert_string_equal(detail, "no thaw-tpm2 token on the device");
        }
        {
                char cmd[300];

                snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
                assert_int_equal(system(cmd), 0);
        }
}

/* json with the first from replaced by to, malloc()ed. */
static char *replaced(const char *json, const char *from, const char *to)
{
        const char *p = strstr(json, from);
        char *out;

        if (!p)
                fail_msg("'%s' not in %s", from, json);
        assert_true(asprintf(&out, "%.*s%s%s", (int)(p - json), json, to, p + strlen(from)) > 0);
        return out;
}

/*
 * The PCRs the boot locks: each tpm2 source's lock=, and each well-formed thaw-tpm2 token's lock PCR
 * (a token the chain does not name still holds a key); other and malformed tokens add nothing.
 */
static void test_lock_pcrs(void **state)
{
        struct luks_tokens *tokens = calloc(1, sizeof(*tokens));
        char *good = good_token(), *lock14 = replaced(good, "\"tpm2-lock-pcr\":15", "\"tpm2-lock-pcr\":14");
        char *lock14b = replaced(lock14, "[7,15]", "[7,14]");
        char *broken = replaced(good, "\"tpm2-bank\"", "\"tpm2-bonk\"");
        struct keychain chain;

        (void)state;
        assert_int_equal(tpm2_lock_pcrs(NULL, NULL), 0);
        assert_int_equal(keychain_parse("fwcfg:opt/k,keyfile:/k", &chain), 0);
        assert_int_equal(tpm2_lock_pcrs(&chain, NULL), 0);
        assert_int_equal(keychain_parse("fwcfg:opt/k,tpm2:pcrs=7,lock=13,tpm2", &chain), 0);
        assert_int_equal(tpm2_lock_pcrs(&chain, NULL), 1u << 13 | 1u << 15);
        assert_int_equal(keychain_parse("systemd-tpm2,keyfile:/k", &chain), 0);
        tokens->n = 4;
        snprintf(tokens->t[0].type, sizeof(tokens->t[0].type), "thaw-tpm2");
        tokens->t[0].json = broken;
        snprintf(tokens->t[1].type, sizeof(tokens->t[1].type), "thaw-keyfile");
        tokens->t[1].json = good;
        snprintf(tokens->t[2].type, sizeof(tokens->t[2].type), "thaw-tpm2");
        tokens->t[2].json = lock14;                     /* lock PCR not in its policy: malformed */
        snprintf(tokens->t[3].type, sizeof(tokens->t[3].type), "thaw-tpm2");
        tokens->t[3].json = lock14b;
        assert_int_equal(tpm2_lock_pcrs(&chain, tokens), 1u << 14);
        tokens->t[3].json = good;
        assert_int_equal(tpm2_lock_pcrs(NULL, tokens), 1u << 15);
        /* Only lock PCRs are extended: 8-15, never one a policy reads from firmware. */
        assert_int_equal(tpm2_lock_boot("", 1u << 7, 0, NULL, 0), -EINVAL);
        assert_int_equal(tpm2_lock_boot("", 1u << 16, 0, NULL, 0), -EINVAL);
        free(good);
        free(lock14);
        free(lock14b);
        free(broken);
        free(tokens);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_chain),
                cmocka_unit_test(test_chain_bad),
                cmocka_unit_test(test_chain_resettable),
                cmocka_unit_test(test_policy_pcr),
                cmocka_unit_test(test_token_good),
                cmocka_unit_test(test_token_primary_name),
                cmocka_unit_test(test_token_bad),
                cmocka_unit_test(test_no_tpm),
                cmocka_unit_test(test_lock_pcrs),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}

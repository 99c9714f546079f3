/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the strict base64 decoder that SMBIOS binary credentials go through. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "base64.h"

static int dec(const char *in, uint8_t *out, size_t cap)
{
        return base64_decode(in, strlen(in), out, cap);
}

/* RFC 4648 section 10 test vectors, and every byte value once. */
static void test_vectors(void **state)
{
        static const char *const v[][2] = {
                { "Zg==", "f" }, { "Zm8=", "fo" }, { "Zm9v", "foo" }, { "Zm9vYg==", "foob" },
                { "Zm9vYmE=", "fooba" }, { "Zm9vYmFy", "foobar" },
        };
        static const char *all = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4"
                                 "OTo7PD0+P0BBQkNERUZHSElKS0xNTk9QUVJTVFVWV1hZWltcXV5fYGFiY2RlZmdoaWprbG1u"
                                 "b3BxcnN0dXZ3eHl6e3x9fn+AgYKDhIWGh4iJiouMjY6PkJGSk5SVlpeYmZqbnJ2en6ChoqOk"
                                 "paanqKmqq6ytrq+wsbKztLW2t7i5uru8vb6/wMHCw8TFxsfIycrLzM3Oz9DR0tPU1dbX2Nna"
                                 "29zd3t/g4eLj5OXm5+jp6uvs7e7v8PHy8/T19vf4+fr7/P3+/w==";
        uint8_t out[300];

        (void)state;
        for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
                memset(out, 0, sizeof(out));
                assert_int_equal(dec(v[i][0], out, sizeof(out)), (int)strlen(v[i][1]));
                assert_memory_equal(out, v[i][1], strlen(v[i][1]));
        }
        assert_int_equal(dec(all, out, sizeof(out)), 256);
        for (int i = 0; i < 256; i++)
                assert_int_equal(out[i], i);
}

static void test_strict(void **state)
{
        static const char *const bad[] = {
                "", "Z", "Zg", "Zg=", "Zm9vY", "Zg==Zg==", "Z===", "====", "=Zm9", "Zm=v", "Zm9v\n",
                " Zm9v", "Zm9-", "Zm9_", "Zh==", /* pad bits set */ "Zm9=", /* pad bits set */ "Zm\0v",
        };
        uint8_t out[16];

        (void)state;
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                if (dec(bad[i], out, sizeof(out)) != -EINVAL)
                        fail_msg("accepted or wrong error: \"%s\"", bad[i]);
        }
        assert_int_equal(base64_decode("Zm9v\0", 5, out, sizeof(out)), -EINVAL);
        assert_int_equal(base64_decode(NULL, 4, out, sizeof(out)), -EINVAL);
}

static void test_cap(void **state)
{
        uint8_t out[4] = { 9, 9, 9, 9 };

        (void)state;
        assert_int_equal(dec("Zm9vYg==", out, 3), -EMSGSIZE);
        assert_memory_equal(out, "\x09\x09\x09\x09", 4); /* nothing written when it cannot fit */
        assert_int_equal(dec("Zm9vYg==", out, 4), 4);
        assert_int_equal(dec("Zm9v", out, 3), 3);
}

/* The encoder is the decoder's inverse on RFC 4648's vectors and every byte value, and says when it does not fit. */
static void test_encode(void **state)
{
        static const char *const v[][2] = {
                { "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" }, { "foo", "Zm9v" }, { "foob", "Zm9vYg==" },
                { "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" },
        };
        uint8_t all[256], back[256];
        char out[400];

        (void)state;
        for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
                assert_int_equal(base64_encode((const uint8_t *)v[i][0], strlen(v[i][0]), out, sizeof(out)),
                                 (int)strlen(v[i][1]));
                assert_string_equal(out, v[i][1]);
        }
        for (int i = 0; i < 256; i++)
                all[i] = (uint8_t)i;
        assert_int_equal(base64_encode(all, sizeof(all), out, sizeof(out)), 344);
        assert_int_equal(base64_decode(out, 344, back, sizeof(back)), 256);
        assert_memory_equal(all, back, 256);
        assert_int_equal(base64_encode(all, 3, out, 4), -EMSGSIZE); /* no room for the NUL */
        assert_int_equal(base64_encode(all, 3, out, 5), 4);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_encode),
                cmocka_unit_test(test_vectors),
                cmocka_unit_test(test_strict),
                cmocka_unit_test(test_cap),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}

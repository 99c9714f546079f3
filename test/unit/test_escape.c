/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of escape_text(): what thaw prints of header text holds no byte a terminal acts on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "base/escape.h"

static void check(const char *in, const char *want)
{
        char out[256];

        assert_int_equal(escape_text(out, sizeof(out), in), strlen(want));
        assert_string_equal(out, want);
}

/* Printable ASCII and valid UTF-8 pass unchanged. */
static void test_plain(void **state)
{
        (void)state;
        check("", "");
        check("thaw-tpm2 keyslot 1 aes-xts-plain64", "thaw-tpm2 keyslot 1 aes-xts-plain64");
        check("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\x91", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\x91");
}

/* Control characters, DEL and C1 controls become \xNN. */
static void test_controls(void **state)
{
        (void)state;
        check("thaw-\x1b[2J\x1b]0;owned\x07x", "thaw-\\x1b[2J\\x1b]0;owned\\x07x");
        check("a\nb\rc\td", "a\\x0ab\\x0dc\\x09d");
        check("\x7f", "\\x7f");
        check("csi \xc2\x9b" "2J", "csi \\xc2\\x9b2J");
        check("\xc2\xa0", "\xc2\xa0"); /* U+00A0, just past the C1 range */
}

/* Bytes that are not valid UTF-8 become \xNN one by one; what follows is read again. */
static void test_invalid_utf8(void **state)
{
        (void)state;
        check("\x9b" "2J", "\\x9b2J");                  /* a lone continuation byte (8-bit CSI) */
        check("\xc0\xaf", "\\xc0\\xaf");                /* overlong '/' */
        check("\xe0\x80\x80", "\\xe0\\x80\\x80");       /* overlong NUL */
        check("\xed\xa0\x80", "\\xed\\xa0\\x80");       /* a surrogate */
        check("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"); /* above U+10FFFF */
        check("\xff\xfe", "\\xff\\xfe");
        check("\xc3", "\\xc3");                         /* cut at the end */
        check("\xe2\x82" "A", "\\xe2\\x82A");           /* cut before an ASCII byte */
}

/* Output is capped and always terminated; a sequence is never cut. */
static void test_truncation(void **state)
{
        char out[8];

        (void)state;
        memset(out, 'z', sizeof(out));
        assert_int_equal(escape_text(out, sizeof(out), "abcdefghijk"), 7);
        assert_string_equal(out, "abcdefg");
        assert_int_equal(escape_text(out, sizeof(out), "abcd\x1b"), 4); /* \x1b needs 4 */
        assert_string_equal(out, "abcd");
        assert_int_equal(escape_text(out, sizeof(out), "abc\x1b"), 7);
        assert_string_equal(out, "abc\\x1b");
        assert_int_equal(escape_text(out, sizeof(out), "abcde\xe2\x82\xac"), 5);
        assert_string_equal(out, "abcde");
        assert_int_equal(escape_text(out, 1, "abc"), 0);
        assert_string_equal(out, "");
        assert_int_equal(escape_text(out, 0, "abc"), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_plain),
                cmocka_unit_test(test_controls),
                cmocka_unit_test(test_invalid_utf8),
                cmocka_unit_test(test_truncation),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}

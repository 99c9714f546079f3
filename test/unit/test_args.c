/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the kernel command line tokenizer, thaw.conf parser and their precedence. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "args.h"
#include "faketree.h"
#include "boot/resume.h"

static void test_defaults(void **state)
{
        struct thaw_args a;

        (void)state;
        args_init(&a);
        assert_string_equal(a.device, "");
        assert_string_equal(a.key, "");
        assert_string_equal(a.name, "thaw-swap");
        assert_int_equal(a.timeout_s, 30);
        assert_int_equal(a.offset, 0);
        assert_false(a.noresume);
        assert_false(a.disabled);
}

static void test_tokenizer_quotes(void **state)
{
        const char *p = "  root=/dev/vda  key=\"a b  c\" \"whole=quoted one\"\tlast ";
        char tok[64];

        (void)state;
        assert_int_equal(args_next_token(&p, tok, sizeof(tok)), 1);
        assert_string_equal(tok, "root=/dev/vda");
        assert_int_equal(args_next_token(&p, tok, sizeof(tok)), 1);
        assert_string_equal(tok, "key=a b  c");
        assert_int_equal(args_next_token(&p, tok, sizeof(tok)), 1);
        assert_string_equal(tok, "whole=quoted one");
        assert_int_equal(args_next_token(&p, tok, sizeof(tok)), 1);
        assert_string_equal(tok, "last");
        assert_int_equal(args_next_token(&p, tok, sizeof(tok)), 0);
}

static void test_tokenizer_end_and_overflow(void **state)
{
        const char *p = "a -- rd.thaw=0", *q = "abcdefghij next", *e = "   ";
        char tok[8];

        (void)state;
        assert_int_equal(args_next_token(&p, tok, sizeof(tok)), 1);
        assert_int_equal(args_next_token(&p, tok, sizeof(tok)), 0); /* "--": the rest is init's */
        assert_int_equal(args_next_token(&q, tok, sizeof(tok)), -E2BIG);
        assert_int_equal(args_next_token(&q, tok, sizeof(tok)), 1);
        assert_string_equal(tok, "next");
        assert_int_equal(args_next_token(&e, tok, sizeof(tok)), 0);
}

static void test_cmdline_all(void **state)
{
        struct thaw_args a;
        char bad[128];

        (void)state;
        args_init(&a);
        assert_int_equal(args_parse_cmdline("BOOT_IMAGE=/vmlinuz root=/dev/vda ro rd.thaw.device=UUID=1234 "
                                            "rd.thaw.key=fwcfg:opt/thaw/key,keyfile:/k rd.thaw.timeout=7 "
                                            "rd.thaw.name=swp resume_offset=34816 quiet resume=/dev/x",
                                            &a, bad, sizeof(bad)), 0);
        assert_string_equal(a.device, "UUID=1234");
        assert_string_equal(a.key, "fwcfg:opt/thaw/key,keyfile:/k");
        assert_int_equal(a.timeout_s, 7);
        assert_string_equal(a.name, "swp");
        assert_int_equal(a.offset, 34816);
        assert_false(a.noresume);
        assert_false(a.disabled);
        assert_string_equal(bad, "");
}

static void test_cmdline_flags(void **state)
{
        struct thaw_args a;

        (void)state;
        args_init(&a);
        assert_int_equal(args_parse_cmdline("noresume rd.thaw=0", &a, NULL, 0), 0);
        assert_true(a.noresume);
        assert_true(a.disabled);
        /* The last one wins, as with the kernel's own parameters. */
        assert_int_equal(args_parse_cmdline("rd.thaw=1", &a, NULL, 0), 0);
        assert_false(a.disabled);
        assert_int_equal(args_parse_cmdline("rd.thaw", &a, NULL, 0), 0);
        assert_false(a.disabled);
        /* Not ours: similar names are left alone. */
        args_init(&a);
        assert_int_equal(args_parse_cmdline("noresumeX rd.thawing=0 xrd.thaw=0", &a, NULL, 0), 0);
        assert_false(a.noresume);
        assert_false(a.disabled);
}

/* What makes the kernel ignore an image makes thaw unlock nothing: prefixes as in hibernate_setup(). */
static void test_cmdline_nohibernate(void **state)
{
        static const struct {
                const char *cmdline, *by;
        } yes[] = {
                { "noresume", "noresume" },
                { "nohibernate", "nohibernate" },
                { "hibernate=noresume", "hibernate=noresume" },
                { "hibernate=noresume_please", "hibernate=noresume" },
                { "hibernate=no", "hibernate=no" },
                { "hibernate=nope", "hibernate=no" },
        };
        static const char *const no[] = {
                "hibernate=nocompress", "hibernate=protect_image", "hibernate", "hibernate=",
                "nohibernateX", "xnohibernate", "hibernate.no=1",
        };
        struct thaw_args a;

        (void)state;
        for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
                args_init(&a);
                assert_int_equal(args_parse_cmdline(yes[i].cmdline, &a, NULL, 0), 0);
                assert_true(a.noresume);
                assert_string_equal(a.noresume_by, yes[i].by);
        }
        for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
                args_init(&a);
                assert_int_equal(args_parse_cmdline(no[i], &a, NULL, 0), 0);
                if (a.noresume)
                        fail_msg("%s counted as noresume", no[i]);
                assert_null(a.noresume_by);
        }
}

static void test_cmdline_quoted_value(void **state)
{
        struct thaw_args a;

        (void)state;
        args_init(&a);
        assert_int_equal(args_parse_cmdline("rd.thaw.key=\"keyfile:/etc/my keys/k\" "
                                            "\"rd.thaw.device=LABEL=my swap\"", &a, NULL, 0), 0);
        assert_string_equal(a.key, "keyfile:/etc/my keys/k");
        assert_string_equal(a.device, "LABEL=my swap");
}

static void test_cmdline_bad_values(void **state)
{
        struct thaw_args a;
        char bad[128];

        (void)state;
        args_init(&a);
        assert_int_equal(args_parse_cmdline("rd.thaw.timeout=abc rd.thaw.timeout=99999 rd.thaw.timeout=-1 "
                                            "rd.thaw.timeout= rd.thaw.timeout", &a, bad, sizeof(bad)), 5);
        assert_string_equal(bad, "rd.thaw.timeout=abc");
        assert_int_equal(a.timeout_s, 30); /* unchanged */

        args_init(&a);
        assert_int_equal(args_parse_cmdline("resume_offset=99999999999999999999 resume_offset=0x10 "
                                            "resume_offset=2251799813685248 rd.thaw.name=a/b rd.thaw.name=.. "
                                            "rd.thaw.device= rd.thaw=2 rd.thaw.typo=1",
                                            &a, bad, sizeof(bad)), 8);
        assert_string_equal(bad, "resume_offset=99999999999999999999");
        assert_int_equal(a.offset, 0);
        assert_string_equal(a.name, "thaw-swap");
        assert_string_equal(a.device, "");
        assert_false(a.disabled);

        /* Largest accepted values. */
        assert_int_equal(args_parse_cmdline("rd.thaw.timeout=3600 resume_offset=2251799813685247", &a,
                                            bad, sizeof(bad)), 0);
        assert_int_equal(a.timeout_s, 3600);
        assert_int_equal(a.offset, 2251799813685247ULL);
}

static void test_cmdline_caps(void **state)
{
        char line[ARGS_TOKEN_MAX + 64], bad[64];
        struct thaw_args a;

        (void)state;
        args_init(&a);
        /* A device longer than ARGS_DEVICE_MAX is refused, not truncated. */
        snprintf(line, sizeof(line), "rd.thaw.device=/dev/%0300d", 0);
        assert_int_equal(args_parse_cmdline(line, &a, bad, sizeof(bad)), 1);
        assert_string_equal(a.device, "");
        assert_int_equal(strncmp(bad, "rd.thaw.device=/dev/000", 23), 0);
        /* A token longer than any buffer is skipped whole; the next one still counts. */
        memset(line, 'k', sizeof(line) - 1);
        line[sizeof(line) - 1] = '\0';
        memcpy(line, "rd.thaw.key=", 12);
        memcpy(line + sizeof(line) - 19, " rd.thaw.timeout=5", 18);
        assert_int_equal(args_parse_cmdline(line, &a, bad, sizeof(bad)), 1);
        assert_string_equal(a.key, "");
        assert_int_equal(a.timeout_s, 5);
}

static void test_verify(void **state)
{
        struct thaw_args a;
        char bad[128];

        (void)state;
        args_init(&a);
        assert_false(a.verify); /* off by default */
        assert_int_equal(args_parse_conf("verify=1\n", &a, bad, sizeof(bad)), 0);
        assert_true(a.verify);
        assert_int_equal(args_parse_cmdline("rd.thaw.verify=0", &a, bad, sizeof(bad)), 0);
        assert_false(a.verify);
        assert_int_equal(args_parse_cmdline("rd.thaw.verify=1 rd.thaw.verify=yes rd.thaw.verify", &a, bad,
                                            sizeof(bad)), 2);
        assert_string_equal(bad, "rd.thaw.verify=yes");
        assert_true(a.verify);
        assert_int_equal(args_parse_conf("verify=2\n", &a, bad, sizeof(bad)), 1);
        assert_true(a.verify);
}

static void test_swapin_settings(void **state)
{
        struct thaw_args a;
        char bad[128];

        (void)state;
        args_init(&a);
        assert_string_equal(a.swapin, "prefetch");
        assert_true(a.image_size_kib == UINT64_MAX);
        assert_int_equal(args_parse_conf("swapin=off\nimage_size=64M\n", &a, bad, sizeof(bad)), 0);
        assert_string_equal(a.swapin, "off");
        assert_int_equal(a.image_size_kib, 65536);
        assert_int_equal(args_parse_conf("swapin=swapoff\nimage_size=0\n", &a, bad, sizeof(bad)), 0);
        assert_string_equal(a.swapin, "swapoff");
        assert_int_equal(a.image_size_kib, 0);
        assert_int_equal(args_parse_conf("swapin=maybe\nimage_size=10%\nimage_size=x\n", &a, bad,
                                         sizeof(bad)), 3);
        assert_string_equal(bad, "swapin=maybe");
        assert_string_equal(a.swapin, "swapoff");
        assert_int_equal(a.image_size_kib, 0);
}

static void test_writer_setting(void **state)
{
        struct thaw_args a;
        char bad[128];

        (void)state;
        args_init(&a);
        assert_string_equal(a.writer, "auto");
        assert_int_equal(args_parse_conf("writer=thaw\n", &a, bad, sizeof(bad)), 0);
        assert_string_equal(a.writer, "thaw");
        assert_int_equal(args_parse_conf("writer=kernel\n", &a, bad, sizeof(bad)), 0);
        assert_string_equal(a.writer, "kernel");
        assert_int_equal(args_parse_conf("writer=uswsusp\n", &a, bad, sizeof(bad)), 1);
        assert_string_equal(bad, "writer=uswsusp");
        assert_string_equal(a.writer, "kernel");
}

/* allow-url= comes from thaw.conf only: the command line cannot widen where keys come from. */
static void test_allow_url(void **state)
{
        struct thaw_args a;
        char bad[128];

        (void)state;
        args_init(&a);
        assert_string_equal(a.allow_url, "");
        assert_int_equal(args_parse_conf("allow-url=http://10.0.0.5:8080,http://[fd00:ec2::254]\n", &a, bad,
                                         sizeof(bad)), 0);
        assert_string_equal(a.allow_url, "http://10.0.0.5:8080,http://[fd00:ec2::254]");
        assert_int_equal(args_parse_cmdline("rd.thaw.allow-url=http://192.0.2.1 rd.thaw.allow_url=http://192.0.2.1",
                                            &a, bad, sizeof(bad)), 2);
        assert_string_equal(bad, "rd.thaw.allow-url=http://192.0.2.1");
        assert_string_equal(a.allow_url, "http://10.0.0.5:8080,http://[fd00:ec2::254]");
        assert_int_equal(args_parse_conf("allow-url=https://10.0.0.6\nallow-url=http://a/b\n", &a, bad,
                                         sizeof(bad)), 2);
        assert_string_equal(a.allow_url, "http://10.0.0.5:8080,http://[fd00:ec2::254]");
}

static void test_conf(void **state)
{
        struct thaw_args a;
        char bad[128];

        (void)state;
        args_init(&a);
        assert_int_equal(args_parse_conf("# written by thaw setup\n"
                                         "\n"
                                         "  device = UUID=abcd  \n"
                                         "key=\"fwcfg:opt/thaw/key\"\n"
                                         "\t# indented comment\n"
                                         "name=thaw-swap2\r\n"
                                         "timeout=12\n"
                                         "offset=8", &a, bad, sizeof(bad)), 0);
        assert_string_equal(a.device, "UUID=abcd");
        assert_string_equal(a.key, "fwcfg:opt/thaw/key");
        assert_string_equal(a.name, "thaw-swap2");
        assert_int_equal(a.timeout_s, 12);
        assert_int_equal(a.offset, 8);
}

static void test_conf_bad_lines(void **state)
{
        struct thaw_args a;
        char bad[128];

        (void)state;
        args_init(&a);
        assert_int_equal(args_parse_conf("timeout=abc\nnoequals\ncolor=blue\nname=\ntimeout=4000\n"
                                         "noresume=1\ndevice=/dev/vdb\n", &a, bad, sizeof(bad)), 6);
        assert_string_equal(bad, "timeout=abc");
        assert_int_equal(a.timeout_s, 30);
        assert_string_equal(a.name, "thaw-swap");
        assert_false(a.noresume); /* not a thaw.conf key */
        assert_string_equal(a.device, "/dev/vdb");
}

/* The precedence the resume helper applies: thaw.conf first, the kernel command line over it. */
static void test_cmdline_overrides_conf(void **state)
{
        struct thaw_args a;

        (void)state;
        args_init(&a);
        assert_int_equal(args_parse_conf("device=UUID=conf\nkey=keyfile:/conf\ntimeout=5\n", &a, NULL, 0), 0);
        assert_int_equal(args_parse_cmdline("rd.thaw.device=/dev/vdc rd.thaw.timeout=9", &a, NULL, 0), 0);
        assert_string_equal(a.device, "/dev/vdc");
        assert_string_equal(a.key, "keyfile:/conf");
        assert_int_equal(a.timeout_s, 9);
}

struct said {
        int n;
        char lines[8][1024];
};

static void record(void *userdata, int level, const char *msg)
{
        struct said *s = userdata;

        (void)level;
        if (s->n < 8)
                snprintf(s->lines[s->n++], sizeof(s->lines[0]), "%s", msg);
}

static void test_load_args_from_root(void **state)
{
        struct said s = { 0 };
        struct thaw_args a;

        (void)state;
        ft_puts("/etc/thaw/thaw.conf", "device=UUID=conf\nkey=fwcfg:opt/thaw/key\nname=fromconf\nbogus\n");
        ft_puts("/proc/cmdline", "root=/dev/vda rd.thaw.name=fromcmdline rd.thaw.timeout=x\n");
        assert_int_equal(args_load(ft_root, NULL, 0, &a, record, &s), 0);
        assert_string_equal(a.device, "UUID=conf");
        assert_string_equal(a.key, "fwcfg:opt/thaw/key");
        assert_string_equal(a.name, "fromcmdline");
        assert_int_equal(a.timeout_s, 30);
        assert_int_equal(s.n, 2);
        assert_non_null(strstr(s.lines[0], "thaw.conf"));
        assert_non_null(strstr(s.lines[0], "\"bogus\""));
        assert_non_null(strstr(s.lines[1], "\"rd.thaw.timeout=x\""));

        /* --cmdline replaces /proc/cmdline; a missing thaw.conf is not worth a word. */
        s.n = 0;
        assert_int_equal(args_load(ft_root, "rd.thaw.device=/dev/vdb", 0, &a, record, &s), 0);
        assert_string_equal(a.device, "/dev/vdb");
        assert_string_equal(a.name, "fromconf");
        assert_int_equal(s.n, 1);
}

/* A host-only initramfs's stored arguments: after thaw.conf, before /proc/cmdline. */
static void test_load_args_cmdline_d(void **state)
{
        struct said s = { 0 };
        struct thaw_args a;

        (void)state;
        ft_puts("/etc/thaw/thaw.conf", "device=UUID=conf\nname=fromconf\ntimeout=5\n");
        ft_puts("/etc/cmdline.d/90thaw.conf", "rd.thaw.device=UUID=stored rd.thaw.key=fwcfg:k "
                                              "rd.thaw.name=stored resume_offset=34816\n");
        ft_puts("/etc/cmdline.d/10other.conf", "rd.thaw.timeout=7 rd.thaw.bogus=1\n");
        ft_puts("/etc/cmdline.d/ignored.txt", "rd.thaw.device=UUID=txt\n");
        ft_puts("/proc/cmdline", "root=/dev/vda rd.thaw.name=fromcmdline\n");
        assert_int_equal(args_load(ft_root, NULL, 0, &a, record, &s), 0);
        assert_string_equal(a.device, "UUID=stored");
        assert_string_equal(a.key, "fwcfg:k");
        assert_string_equal(a.name, "fromcmdline");
        assert_int_equal(a.timeout_s, 7);
        assert_int_equal(a.offset, 34816);
        assert_int_equal(s.n, 1);
        assert_non_null(strstr(s.lines[0], "/etc/cmdline.d/10other.conf"));

        /* --cmdline replaces both. */
        assert_int_equal(args_load(ft_root, "rd.thaw.key=keyfile:/k", 0, &a, record, &s), 0);
        assert_string_equal(a.device, "UUID=conf");
        assert_int_equal(a.offset, 0);
}

/* What a host-only initramfs stores: only what differs from the defaults, spaces quoted. */
static void test_format_cmdline(void **state)
{
        struct thaw_args a;
        char buf[512], small[16];

        (void)state;
        args_init(&a);
        assert_int_equal(args_format_cmdline(&a, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "");
        assert_int_equal(args_parse_conf("device=LABEL=my swap\nkey=fwcfg:opt/thaw/key\nname=luks-1\n"
                                         "offset=34816\ntimeout=9\nverify=1\nmismatch=discard\n", &a, NULL, 0), 0);
        assert_int_equal(args_format_cmdline(&a, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "rd.thaw.device=\"LABEL=my swap\" rd.thaw.key=fwcfg:opt/thaw/key "
                                 "rd.thaw.name=luks-1 rd.thaw.timeout=9 rd.thaw.mismatch=discard "
                                 "rd.thaw.verify=1 resume_offset=34816");
        /* It reads back as the same settings. */
        {
                struct thaw_args b;

                args_init(&b);
                assert_int_equal(args_parse_cmdline(buf, &b, NULL, 0), 0);
                assert_string_equal(b.device, "LABEL=my swap");
                assert_int_equal(b.offset, 34816);
        }
        assert_int_equal(args_format_cmdline(&a, small, sizeof(small)), -ENAMETOOLONG);
        assert_string_equal(small, "");
}

/* thaw config --get NAME: each thaw.conf key, its default when unset, nothing for one without a default. */
static void test_get(void **state)
{
        static const char *const none[] = { "device", "key", "header", "allow-url", "image_size" };
        struct thaw_args a;
        char buf[256], small[4];

        (void)state;
        args_init(&a);
        for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
                assert_int_equal(args_get(&a, none[i], buf, sizeof(buf)), 0);
                assert_string_equal(buf, "");
        }
        assert_int_equal(args_get(&a, "timeout", buf, sizeof(buf)), 1);
        assert_string_equal(buf, "30");
        assert_int_equal(args_get(&a, "name", buf, sizeof(buf)), 1);
        assert_string_equal(buf, "thaw-swap");
        assert_int_equal(args_get(&a, "mismatch", buf, sizeof(buf)), 1);
        assert_string_equal(buf, "poweroff");
        assert_int_equal(args_get(&a, "offset", buf, sizeof(buf)), 1);
        assert_string_equal(buf, "0");
        assert_int_equal(args_get(&a, "verify", buf, sizeof(buf)), 1);
        assert_string_equal(buf, "0");
        assert_int_equal(args_get(&a, "swapin", buf, sizeof(buf)), 1);
        assert_string_equal(buf, "prefetch");
        assert_int_equal(args_get(&a, "writer", buf, sizeof(buf)), 1);
        assert_string_equal(buf, "auto");
        /* As thaw reads the file: blanks, quotes, comments; a bad line keeps the value before it. */
        assert_int_equal(args_parse_conf("  device = \"LABEL=my swap\" \n# key=tpm2\nkey=fwcfg:k\n"
                                         "timeout=45\ntimeout=4000\nimage_size=512M\nmismatch=keep\n"
                                         "allow-url=http://10.0.0.1\n", &a, NULL, 0), 1);
        assert_int_equal(args_get(&a, "device", buf, sizeof(buf)), 1);
        assert_string_equal(buf, "LABEL=my swap");
        assert_int_equal(args_get(&a, "key", buf, sizeof(buf)), 1);
        assert_string_equal(buf, "fwcfg:k");
        assert_int_equal(args_get(&a, "timeout", buf, sizeof(buf)), 1);
        assert_string_equal(buf, "45");
        assert_int_equal(args_get(&a, "image_size", buf, sizeof(buf)), 1);
        assert_string_equal(buf, "524288K");
        assert_int_equal(args_get(&a, "mismatch", buf, sizeof(buf)), 1);
        assert_string_equal(buf, "poweroff");
        assert_int_equal(args_get(&a, "allow-url", buf, sizeof(buf)), 1);
        assert_string_equal(buf, "http://10.0.0.1");
        /* Command line names and unknown keys are not thaw.conf's; a short buffer is left alone. */
        assert_int_equal(args_get(&a, "rd.thaw.device", buf, sizeof(buf)), -ENOENT);
        assert_int_equal(args_get(&a, "resume_offset", buf, sizeof(buf)), -ENOENT);
        assert_int_equal(args_get(&a, "", buf, sizeof(buf)), -ENOENT);
        memcpy(small, "abc", 4);
        assert_int_equal(args_get(&a, "device", small, sizeof(small)), -ENAMETOOLONG);
        assert_string_equal(small, "abc");
}

static void test_load_args_empty_root(void **state)
{
        struct said s = { 0 };
        struct thaw_args a;

        (void)state;
        assert_int_equal(args_load(ft_root, NULL, 0, &a, record, &s), 0);
        assert_string_equal(a.device, "");
        assert_int_equal(s.n, 1); /* no /proc/cmdline: said so */
        assert_non_null(strstr(s.lines[0], "/proc/cmdline"));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_defaults),
                cmocka_unit_test(test_tokenizer_quotes),
                cmocka_unit_test(test_tokenizer_end_and_overflow),
                cmocka_unit_test(test_cmdline_all),
                cmocka_unit_test(test_cmdline_flags),
                cmocka_unit_test(test_cmdline_nohibernate),
                cmocka_unit_test(test_cmdline_quoted_value),
                cmocka_unit_test(test_cmdline_bad_values),
                cmocka_unit_test(test_cmdline_caps),
                cmocka_unit_test(test_conf), cmocka_unit_test(test_verify), cmocka_unit_test(test_swapin_settings),
                cmocka_unit_test(test_writer_setting),
                cmocka_unit_test(test_allow_url),
                cmocka_unit_test(test_conf_bad_lines),
                cmocka_unit_test(test_cmdline_overrides_conf),
                cmocka_unit_test_setup_teardown(test_load_args_from_root, ft_setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_load_args_empty_root, ft_setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_load_args_cmdline_d, ft_setup, ft_teardown),
                cmocka_unit_test(test_format_cmdline),
                cmocka_unit_test(test_get),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}

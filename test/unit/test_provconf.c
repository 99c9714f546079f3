/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of provision.conf's parser (provconf.c): strict, capped, errors with their line. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "faketree.h"
#include "provision/provconf.h"

#define GIB (UINT64_C(1) << 30)

static void test_provconf_swapfile(void **state)
{
        struct provconf c;
        char why[PROVCONF_WHY_MAX] = "";

        (void)state;
        assert_int_equal(provconf_parse("# written by the image builder\n\n  swapfile=/swapfile\n"
                                        "key=tpm2,fwcfg:opt/thaw/key\nunlock=keyfile:/etc/k\n"
                                        "size=ram+10%\nmin=1G\n", &c, why, sizeof(why)), 0);
        assert_string_equal(why, "");
        assert_string_equal(c.swapfile, "/swapfile");
        assert_string_equal(c.device, "");
        assert_string_equal(c.key, "tpm2,fwcfg:opt/thaw/key");
        assert_string_equal(c.unlock, "keyfile:/etc/k");
        assert_string_equal(c.name, "thaw-swap");
        assert_int_equal(c.size.milli, 1000);
        assert_int_equal(c.size.pct, 10);
        assert_int_equal(c.size.min, GIB);
}

static void test_provconf_device(void **state)
{
        struct provconf c;
        char why[PROVCONF_WHY_MAX];

        (void)state;
        /* min= before size=: the order does not matter. */
        assert_int_equal(provconf_parse("device=PARTUUID=0fc63daf-8483-4772-8e79-3d69d8477de4\nkey=fwcfg:opt/k\n"
                                        "min=512M\nsize=1.25x\nname=swap0", &c, why, sizeof(why)), 0);
        assert_string_equal(c.device, "PARTUUID=0fc63daf-8483-4772-8e79-3d69d8477de4");
        assert_string_equal(c.name, "swap0");
        assert_int_equal(c.size.milli, 1250);
        assert_int_equal(c.size.pct, 0);
        assert_int_equal(c.size.min, 512u << 20);
        /* No size=: as large as memory. */
        assert_int_equal(provconf_parse("device=/dev/vdb\nkey=fwcfg:opt/k\n", &c, why, sizeof(why)), 0);
        assert_int_equal(c.size.milli, 1000);
        assert_int_equal(c.size.add, 0);
        assert_int_equal(c.size.min, 0);
}

/* parse TEXT: refused with a reason containing WANT, and the output untouched. */
static void refused(const char *text, const char *want)
{
        struct provconf c = { .key = "untouched" };
        char why[PROVCONF_WHY_MAX] = "";

        assert_int_equal(provconf_parse(text, &c, why, sizeof(why)), -EINVAL);
        if (!strstr(why, want))
                fail_msg("\"%s\" does not say \"%s\"", why, want);
        assert_string_equal(c.key, "untouched");
}

static void test_provconf_refused(void **state)
{
        (void)state;
        refused("swapfile=/s\nkey=fwcfg:k\nsize=ram+ten\n", "line 3: size=ram+ten is not a size rule");
        refused("swapfile=/s\nkey=fwcfg:k\nsizes=ram\n", "line 3: unknown setting \"sizes\"");
        refused("swapfile=/s\nkey=fwcfg:k\nkey=fwcfg:j\n", "line 3: key= given twice");
        refused("swapfile=/s\nkey=nosuch:k\n", "line 2: key=nosuch:k is not a key source chain");
        refused("swapfile=/s\nkey=\n", "line 2: key= is empty");
        refused("swapfile=/s\nkey=tpm2,passphrase\n", "line 2: key=tpm2,passphrase: a passphrase cannot be typed "
                                                      "at boot");
        refused("swapfile=/s\nkey=tpm2\nunlock=passphrase:console\n", "line 3: unlock=passphrase:console: a "
                                                                      "passphrase cannot be typed");
        refused("swapfile=/s\njust words\n", "line 2: \"just words\" is not NAME=VALUE");
        refused("swapfile=relative\nkey=fwcfg:k\n", "line 1: swapfile=relative is not a plain absolute path");
        refused("swapfile=/a/../etc/passwd\nkey=fwcfg:k\n", "not a plain absolute path");
        refused("swapfile=/dir/\nkey=fwcfg:k\n", "not a plain absolute path");
        refused("device=sda\nkey=fwcfg:k\n", "line 1: device=sda is not a device");
        refused("device=/dev/vdb\nswapfile=/s\nkey=fwcfg:k\n", "give either device= (a partition) or swapfile=");
        refused("key=fwcfg:k\n", "give either device=");
        refused("swapfile=/s\n", "no key=");
        refused("device=/dev/vdb\nkey=fwcfg:k\nunlock=keyfile:/k\n", "unlock= is for swapfile= only");
        refused("swapfile=/s\nkey=fwcfg:k\nname=x\n", "name= is for device= only");
        refused("device=/dev/vdb\nkey=fwcfg:k\nname=a/b\n", "line 3: name=a/b is not a usable device-mapper name");
        refused("swapfile=/s\nkey=fwcfg:k\nmin=lots\n", "line 3: min=lots is not a size");
        refused("swapfile=/s\nkey=fwcfg:k\nmin=99999999999T\n", "line 3: min=");
}

static void test_provconf_size_rules(void **state)
{
        struct provsize z = { .min = 7 };

        (void)state;
        assert_int_equal(provconf_parse_size("ram", &z), 0);
        assert_true(z.milli == 1000 && z.pct == 0 && z.add == 0 && z.min == 7);
        assert_int_equal(provconf_parse_size("ram+512M", &z), 0);
        assert_true(z.milli == 1000 && z.add == 512u << 20);
        assert_int_equal(provconf_parse_size("ram+0%", &z), 0);
        assert_int_equal(provconf_parse_size("2x", &z), 0);
        assert_int_equal(z.milli, 2000);
        assert_int_equal(provconf_parse_size("0.125x", &z), 0);
        assert_int_equal(z.milli, 125);
        assert_int_equal(provconf_parse_size("1.0x", &z), 0);
        assert_int_equal(z.milli, 1000);
        const char *bad[] = { "", "x", "0x", "0.0x", "1.2345x", ".5x", "1.x", "-1x", "1e3x", "ram+", "ram+%",
                              "ram+1001%", "ram-10%", "ram+10%%", "rams", "RAM", "1.5", "1001x", "ram+1Q" };

        for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
                if (provconf_parse_size(bad[i], &z) == 0)
                        fail_msg("size rule \"%s\" accepted", bad[i]);
}

/* The caps: a line and the whole file; provconf_load() through the root. */
static void test_provconf_caps_and_load(void **state)
{
        char big[PROVCONF_MAX + 64], why[PROVCONF_WHY_MAX];
        struct provconf c;

        (void)state;
        memset(big, '#', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        assert_int_equal(provconf_parse(big, &c, why, sizeof(why)), -EFBIG);
        big[PROVCONF_LINE_MAX + 10] = '\0';
        assert_int_equal(provconf_parse(big, &c, why, sizeof(why)), -EINVAL);
        assert_non_null(strstr(why, "line 1 is longer than"));
        assert_int_equal(provconf_load(ft_root, &c, why, sizeof(why)), -ENOENT);
        ft_puts("/etc/thaw/provision.conf", "swapfile=/swapfile\nkey=tpm2\nsize=ram+5%\n");
        assert_int_equal(provconf_load(ft_root, &c, why, sizeof(why)), 0);
        assert_int_equal(c.size.pct, 5);
        memset(big, 'a', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        ft_puts("/etc/thaw/provision.conf", big);
        assert_int_equal(provconf_load(ft_root, &c, why, sizeof(why)), -EFBIG);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_provconf_swapfile),
                cmocka_unit_test(test_provconf_device),
                cmocka_unit_test(test_provconf_refused),
                cmocka_unit_test(test_provconf_size_rules),
                cmocka_unit_test_setup_teardown(test_provconf_caps_and_load, ft_setup, ft_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}

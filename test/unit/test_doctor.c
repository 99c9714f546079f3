/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of thaw doctor's checks (kconfig.c, doctor.c) against fixture root trees. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <zlib.h>

#include "system/doctor.h"
#include "faketree.h"
#include "system/kconfig.h"

/* The options of Debian's 6.1.0-57-amd64 config that kernel/thaw.config names (as Debian sets them). */
static const char debian_61_config[] =
        "#\n# Automatically generated file; DO NOT EDIT.\n#\n"
        "CONFIG_HIBERNATE_CALLBACKS=y\nCONFIG_HIBERNATION=y\nCONFIG_HIBERNATION_SNAPSHOT_DEV=y\n"
        "CONFIG_SWAP=y\nCONFIG_BLK_DEV_DM=m\nCONFIG_DM_CRYPT=m\nCONFIG_DM_INTEGRITY=m\n"
        "CONFIG_CRYPTO_XTS=m\nCONFIG_CRYPTO_AES=y\nCONFIG_CRYPTO_SHA256=y\nCONFIG_CRYPTO_LZO=y\n"
        "CONFIG_CRYPTO_LZ4=m\nCONFIG_KEYS=y\nCONFIG_CRYPTO_USER_API_SKCIPHER=m\nCONFIG_TCG_TPM=y\n"
        "CONFIG_TCG_TIS=y\nCONFIG_TCG_CRB=y\nCONFIG_FW_CFG_SYSFS=m\nCONFIG_VIRTIO_BLK=m\n"
        "# CONFIG_IKCONFIG is not set\nCONFIG_LOCALVERSION=\"\"\n";

#define REL "6.1.0-57-amd64"

/* A Debian 6.1 guest as the cold-boot scenario sees it: everything thaw needs is there. */
static void good_tree(void)
{
        ft_puts("/proc/sys/kernel/osrelease", REL "\n");
        ft_puts("/boot/config-" REL, debian_61_config);
        ft_puts("/sys/power/disk", "[shutdown] reboot suspend test_resume\n");
        ft_puts("/sys/power/state", "freeze mem disk\n");
        ft_puts("/sys/kernel/security/lockdown", "[none] integrity confidentiality\n");
        ft_puts("/proc/cmdline", "console=ttyS0 root=/dev/vda rw\n");
        ft_puts("/dev/mapper/control", "");
        ft_mkdir("/sys/firmware/qemu_fw_cfg");
        ft_puts("/proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n"
                               "/dev/dm-0                               partition\t612348\t0\t-2\n");
}

static const struct doctor_item *item(const struct doctor_report *rep, const char *what)
{
        for (size_t i = 0; i < rep->n; i++)
                if (strcmp(rep->items[i].what, what) == 0)
                        return &rep->items[i];
        fail_msg("no item %s", what);
        return NULL;
}

static struct doctor_report rep; /* large; not on the stack */

static void test_fragment_embedded(void **state)
{
        struct kconfig_want w[KCONFIG_WANT_MAX];
        const char *frag = kconfig_thaw_fragment();
        int n, lines = 0;

        (void)state;
        for (const char *p = frag; (p = strstr(p, "\nCONFIG_")); p++)
                lines++;
        n = kconfig_parse_fragment(frag, w, KCONFIG_WANT_MAX);
        assert_int_equal(n, lines); /* every option line of kernel/thaw.config, none lost */
        assert_string_equal(w[0].name, "CONFIG_HIBERNATION");
        assert_int_equal(w[0].value, 'y');
        assert_false(w[0].optional);
        assert_non_null(strstr(w[0].why, "Hibernation itself"));
        for (int i = 0; i < n; i++) {
                assert_true(w[i].why[0] != '\0'); /* each option says why */
                if (strcmp(w[i].name, "CONFIG_HIBERNATION_COMP_LZ4") == 0) {
                        assert_true(w[i].optional);
                        assert_int_equal(w[i].since_major, 6);
                        assert_int_equal(w[i].since_minor, 9);
                }
                if (strcmp(w[i].name, "CONFIG_DM_CRYPT") == 0)
                        assert_true(w[i].value == 'm' && !w[i].optional);
        }
}

static void test_fragment_errors(void **state)
{
        struct kconfig_want w[2];

        (void)state;
        assert_int_equal(kconfig_parse_fragment("# a\nCONFIG_A=n\n", w, 2), -EINVAL);
        assert_int_equal(kconfig_parse_fragment("# a\n# @sometimes\nCONFIG_A=y\n", w, 2), -EINVAL);
        assert_int_equal(kconfig_parse_fragment("# a\n# @since six\nCONFIG_A=y\n", w, 2), -EINVAL);
        assert_int_equal(kconfig_parse_fragment("CONFIG_a-b=y\n", w, 2), -EINVAL);
        assert_int_equal(kconfig_parse_fragment("junk\n", w, 2), -EINVAL);
        assert_int_equal(kconfig_parse_fragment("CONFIG_=y\n", w, 2), -EINVAL);
        assert_int_equal(kconfig_parse_fragment("CONFIG_A=y\nCONFIG_B=m\nCONFIG_C=y\n", w, 2), -E2BIG);
        /* A blank line ends a comment block: B gets no why from A's comment. */
        assert_int_equal(kconfig_parse_fragment("# why A\n# @optional\nCONFIG_A=y\n\n# header\n\nCONFIG_B=m",
                                                w, 2), 2);
        assert_true(w[0].optional);
        assert_string_equal(w[0].why, "why A");
        assert_false(w[1].optional);
        assert_string_equal(w[1].why, "");
}

static void test_value_and_release(void **state)
{
        unsigned a, b;

        (void)state;
        assert_int_equal(kconfig_value(debian_61_config, "CONFIG_HIBERNATION"), 'y');
        assert_int_equal(kconfig_value(debian_61_config, "CONFIG_DM_CRYPT"), 'm');
        assert_int_equal(kconfig_value(debian_61_config, "CONFIG_IKCONFIG"), 'n');   /* is not set */
        assert_int_equal(kconfig_value(debian_61_config, "CONFIG_NOPE"), 'n');       /* absent */
        assert_int_equal(kconfig_value(debian_61_config, "CONFIG_LOCALVERSION"), 'v');
        assert_int_equal(kconfig_value(debian_61_config, "CONFIG_HIBERNATE"), 'n');  /* a prefix */
        assert_int_equal(kconfig_value(debian_61_config, "CONFIG_HIBERNATION_SNAPSHOT_DEV"), 'y');

        assert_int_equal(kconfig_parse_release(REL, &a, &b), 0);
        assert_true(a == 6 && b == 1);
        assert_int_equal(kconfig_parse_release("6.10", &a, &b), 0);
        assert_true(a == 6 && b == 10);
        assert_int_equal(kconfig_parse_release("linux", &a, &b), -EINVAL);
        assert_int_equal(kconfig_parse_release("6", &a, &b), -EINVAL);
        assert_int_equal(kconfig_parse_release("-6.1", &a, &b), -EINVAL);
}

/* Debian's 6.1 guest: nothing required missing; the 6.9 options skipped, not missing. */
static void test_debian_61_ok(void **state)
{
        (void)state;
        good_tree();
        assert_int_equal(doctor_run(ft_root, NULL, &rep), 0);
        assert_string_equal(rep.release, REL);
        assert_int_equal(item(&rep, "kernel config")->state, DOCTOR_OK);
        assert_non_null(strstr(item(&rep, "kernel config")->text, "/boot/config-" REL));
        assert_int_equal(item(&rep, "CONFIG_HIBERNATION")->state, DOCTOR_OK);
        assert_int_equal(item(&rep, "CONFIG_DM_CRYPT")->state, DOCTOR_OK);
        assert_string_equal(item(&rep, "CONFIG_DM_CRYPT")->text, "m");
        assert_int_equal(item(&rep, "CONFIG_HIBERNATION_COMP_LZ4")->state, DOCTOR_SKIP);
        assert_int_equal(item(&rep, "CONFIG_CRYPTO_LZO")->state, DOCTOR_SKIP);
        assert_int_equal(item(&rep, "hibernation")->state, DOCTOR_OK);
        assert_int_equal(item(&rep, "lockdown")->state, DOCTOR_OK);
        assert_int_equal(item(&rep, "device-mapper")->state, DOCTOR_OK);
        assert_int_equal(item(&rep, "fw_cfg")->state, DOCTOR_OK);
        assert_int_equal(item(&rep, "swap")->state, DOCTOR_OK);
        for (size_t i = 0; i < rep.n; i++)
                assert_true(rep.items[i].state != DOCTOR_MISSING);
}

/* /proc/config.gz wins over /boot/config-RELEASE. */
static void test_config_gz(void **state)
{
        char path[PATH_MAX];
        gzFile gz;

        (void)state;
        good_tree();
        ft_puts("/proc/sys/kernel/osrelease", "6.12.5\n");
        ft_abs(path, sizeof(path), "/proc/config.gz");
        gz = gzopen(path, "wb");
        assert_non_null(gz);
        assert_true(gzputs(gz, "CONFIG_HIBERNATION=y\nCONFIG_SWAP=y\nCONFIG_DM_CRYPT=y\n") > 0);
        assert_int_equal(gzclose(gz), Z_OK);
        assert_true(doctor_run(ft_root, NULL, &rep) > 0);
        assert_non_null(strstr(item(&rep, "kernel config")->text, "/proc/config.gz"));
        assert_string_equal(item(&rep, "CONFIG_DM_CRYPT")->text, "y");
        /* 6.12: the 6.9 options apply now; LZO is required and absent from this config. */
        assert_int_equal(item(&rep, "CONFIG_CRYPTO_LZO")->state, DOCTOR_MISSING);
        assert_int_equal(item(&rep, "CONFIG_HIBERNATION_COMP_LZ4")->state, DOCTOR_OPTIONAL);
        assert_int_equal(item(&rep, "CONFIG_BLK_DEV_DM")->state, DOCTOR_MISSING);
        assert_non_null(strstr(item(&rep, "CONFIG_BLK_DEV_DM")->text, "Rebuild with CONFIG_BLK_DEV_DM=m"));
}

static void test_lockdown(void **state)
{
        const struct doctor_item *h;

        (void)state;
        good_tree();
        ft_puts("/sys/power/disk", "[disabled]\n");
        ft_puts("/sys/power/state", "freeze mem\n");
        ft_puts("/sys/kernel/security/lockdown", "none [integrity] confidentiality\n");
        assert_int_equal(doctor_run(ft_root, NULL, &rep), 2);
        h = item(&rep, "hibernation");
        assert_int_equal(h->state, DOCTOR_MISSING);
        assert_non_null(strstr(h->text, "disabled by kernel lockdown (integrity)"));
        assert_non_null(strstr(h->text, "Secure Boot"));
        assert_int_equal(item(&rep, "lockdown")->state, DOCTOR_MISSING);
}

static void test_nohibernate(void **state)
{
        (void)state;
        good_tree();
        ft_puts("/sys/power/disk", "[disabled]\n");
        ft_puts("/proc/cmdline", "root=/dev/vda hibernate=no quiet\n");
        assert_int_equal(doctor_run(ft_root, NULL, &rep), 1);
        assert_non_null(strstr(item(&rep, "hibernation")->text,
                               "disabled by hibernate=no on the kernel command line"));

        /* hibernate=noresume only skips resume: it is not why hibernation is disabled. */
        ft_puts("/proc/cmdline", "root=/dev/vda hibernate=noresume\n");
        ft_puts("/sys/kernel/security/lockdown", "[none] integrity confidentiality\n");
        assert_int_equal(doctor_run(ft_root, NULL, &rep), 1);
        assert_null(strstr(item(&rep, "hibernation")->text, "command line"));
        assert_non_null(strstr(item(&rep, "hibernation")->text, "[disabled]"));

        ft_puts("/proc/cmdline", "nohibernate\n");
        assert_int_equal(doctor_run(ft_root, NULL, &rep), 1);
        assert_non_null(strstr(item(&rep, "hibernation")->text, "disabled by nohibernate"));
}

/* No hibernation in the kernel, no device-mapper, no swap, no config: each said, exit non-zero. */
static void test_bare_system(void **state)
{
        (void)state;
        ft_puts("/proc/sys/kernel/osrelease", REL "\n");
        ft_puts("/sys/power/state", "freeze mem\n");
        ft_puts("/proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n");
        assert_int_equal(doctor_run(ft_root, NULL, &rep), 3);
        assert_int_equal(item(&rep, "kernel config")->state, DOCTOR_SKIP);
        assert_non_null(strstr(item(&rep, "hibernation")->text, "kernel built without hibernation"));
        assert_int_equal(item(&rep, "device-mapper")->state, DOCTOR_MISSING);
        assert_int_equal(item(&rep, "swap")->state, DOCTOR_MISSING);
        assert_int_equal(item(&rep, "fw_cfg")->state, DOCTOR_OPTIONAL);
        assert_int_equal(item(&rep, "lockdown")->state, DOCTOR_SKIP);

        /* An empty lockdown file says nothing against hibernation. */
        ft_puts("/sys/kernel/security/lockdown", "");
        assert_int_equal(doctor_run(ft_root, NULL, &rep), 3);
        assert_int_equal(item(&rep, "lockdown")->state, DOCTOR_OK);
}

/* A built-in-only option found as a module is missing; another fragment can be given. */
static void test_builtin_wanted(void **state)
{
        (void)state;
        good_tree();
        assert_int_equal(doctor_run(ft_root, "# Needed early.\nCONFIG_DM_CRYPT=y\n", &rep), 1);
        assert_int_equal(item(&rep, "CONFIG_DM_CRYPT")->state, DOCTOR_MISSING);
        assert_non_null(strstr(item(&rep, "CONFIG_DM_CRYPT")->text, "=m, but must be built in: Needed early."));
        assert_int_equal(doctor_run(ft_root, "CONFIG_A=x\n", &rep), -EINVAL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_fragment_embedded),
                cmocka_unit_test(test_fragment_errors),
                cmocka_unit_test(test_value_and_release),
                cmocka_unit_test_setup_teardown(test_debian_61_ok, ft_setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_config_gz, ft_setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_lockdown, ft_setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_nohibernate, ft_setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_bare_system, ft_setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_builtin_wanted, ft_setup, ft_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of thaw doctor's checks (resume/system/doctor.c) against fixture root trees. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <zlib.h>

#include "system/doctor.h"
#include "faketree.h"
#include "kconfig61.h"

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
                cmocka_unit_test_setup_teardown(test_debian_61_ok, ft_setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_config_gz, ft_setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_lockdown, ft_setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_nohibernate, ft_setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_bare_system, ft_setup, ft_teardown),
                cmocka_unit_test_setup_teardown(test_builtin_wanted, ft_setup, ft_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}

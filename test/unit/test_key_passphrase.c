/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the passphrase key source (key_passphrase.c) on a pseudo-terminal posing as /dev/console. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <cmocka.h>
#include "base/clock.h"
#include "fakeconsole.h"
#include "faketree.h"
#include "key_provider.h"

/* A headless VM (serial console only) is never asked, unless the source says "console". */
static void test_headless(void **state)
{
        struct secret *key = NULL;
        pid_t pid;

        (void)state;
        ft_puts("/sys/class/tty/console/active", "ttyS0\n");
        screen();
        assert_int_equal(fetch("", 10000, &key), -ENOTTY);
        assert_string_equal(screen(), ""); /* not even a prompt */
        assert_string_equal(detail, "no screen and keyboard: the console is serial only (passphrase:console "
                            "prompts there)");
        ft_puts("/sys/class/tty/console/active", "hvc0 ttyS0\n");
        assert_int_equal(fetch("", 10000, &key), -ENOTTY);
        pid = typist("serial\n");
        assert_int_equal(fetch("console", 10000, &key), 0);
        reap(pid);
        assert_memory_equal(key->data, "serial", 6);
        secret_free(key);
        ft_puts("/sys/class/tty/console/active", "tty0 ttyS0\n");
}

static void test_no_terminal(void **state)
{
        struct secret *key = NULL;
        char path[PATH_MAX];

        (void)state;
        ft_abs(path, sizeof(path), "/dev/console");
        assert_int_equal(rename(path, strcat(strcpy((char[PATH_MAX]){ 0 }, path), ".pty")), 0);
        assert_int_equal(fetch("console", 10000, &key), -ENOENT);
        ft_puts("/dev/console", "not a terminal");
        assert_int_equal(fetch("console", 10000, &key), -ENOTTY);
        assert_null(key);
        assert_int_equal(unlink(path), 0);
        assert_int_equal(rename(strcat(strcpy((char[PATH_MAX]){ 0 }, path), ".pty"), path), 0);
}

/* thaw enroll --key passphrase: typed twice on the administrator's terminal, the same both times. */
static void test_enroll(void **state)
{
        static const char *const same[] = { "new one\n", "new one\n" }, *const differ[] = { "a\n", "b\n" };
        struct keysrc_ctx ctx = { .root = ft_root, .deadline_ms = clock_now_ms() + 10000,
                                  .detail = detail, .detail_size = sizeof(detail) };
        struct secret *key = NULL;
        pid_t pid;

        (void)state;
        ft_symlink(ptyname, "/dev/tty"); /* the administrator's terminal: the same pty */
        screen();
        pid = typist_n(same, 2);
        assert_int_equal(key_passphrase_provider.enroll("", &ctx, &key, NULL), 0);
        reap(pid);
        assert_int_equal(key->len, 7);
        assert_memory_equal(key->data, "new one", 7);
        secret_free(key);
        key = NULL;
        pid = typist_n(differ, 2);
        detail[0] = '\0';
        assert_int_equal(key_passphrase_provider.enroll("", &ctx, &key, NULL), -EKEYREJECTED);
        reap(pid);
        assert_null(key);
        assert_string_equal(detail, "the two passphrases differ");
        assert_null(strstr(screen(), "new one"));
        assert_echo_restored();
}

static void test_check(void **state)
{
        (void)state;
        assert_int_equal(key_passphrase_provider.check(""), 0);
        assert_int_equal(key_passphrase_provider.check("console"), 0);
        assert_int_equal(key_passphrase_provider.check("tty"), -EINVAL);
        assert_int_equal(key_passphrase_provider.check("console,x"), -EINVAL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_check),
                cmocka_unit_test(test_headless),
                cmocka_unit_test(test_no_terminal),
                cmocka_unit_test(test_enroll),
        };

        signal(SIGPIPE, SIG_IGN);
        return cmocka_run_group_tests(tests, console_setup, console_teardown);
}

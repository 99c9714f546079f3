/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of the passphrase prompt (prompt.c) on a pseudo-terminal posing as /dev/console, through
 * the passphrase source: no echo, a deadline, the length limits, the terminal restored.
 */
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
#include "prompt.h"

static void test_reads_without_echo(void **state)
{
        struct secret *key = NULL;
        pid_t pid;

        (void)state;
        screen();
        pid = typist("correct horse\n");
        assert_int_equal(fetch("", 10000, &key), 0);
        reap(pid);
        assert_int_equal(key->len, 13);
        assert_memory_equal(key->data, "correct horse", 13);
        /* The terminal showed the prompt's line end, never the passphrase. */
        assert_null(strstr(screen(), "horse"));
        assert_echo_restored();
        secret_free(key);
}

static void test_carriage_return_stripped(void **state)
{
        struct secret *key = NULL;
        pid_t pid;

        (void)state;
        screen();
        pid = typist("pw\r\n");
        assert_int_equal(fetch("console", 10000, &key), 0);
        reap(pid);
        assert_int_equal(key->len, 2);
        assert_memory_equal(key->data, "pw", 2);
        secret_free(key);
}

static void test_timeout(void **state)
{
        struct secret *key = (struct secret *)0x1;
        int64_t start = clock_now_ms();

        (void)state;
        screen();
        assert_int_equal(fetch("", 300, &key), -ETIMEDOUT);
        assert_true(clock_now_ms() - start >= 300);
        assert_true(clock_now_ms() - start < 5000);
        assert_ptr_equal(key, (struct secret *)0x1); /* untouched */
        assert_non_null(strstr(screen(), "Passphrase for /dev/vdb (thaw, 1 s): "));
        assert_echo_restored();
        /* A deadline already passed: no prompt at all. */
        assert_int_equal(fetch_until("", clock_now_ms() - 1, &key), -ETIMEDOUT);
        assert_string_equal(screen(), "");
}

static void test_empty_and_long(void **state)
{
        static char line[PROMPT_PASSPHRASE_MAX + 100];
        struct secret *key = NULL;
        pid_t pid;

        (void)state;
        screen();
        pid = typist("\n");
        assert_int_equal(fetch("", 10000, &key), -ENODATA);
        reap(pid);
        memset(line, 'a', sizeof(line) - 2);
        line[sizeof(line) - 2] = '\n';
        pid = typist(line);
        assert_int_equal(fetch("", 10000, &key), -EMSGSIZE);
        reap(pid);
        assert_null(key);
        assert_echo_restored();
}


int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_reads_without_echo),
                cmocka_unit_test(test_carriage_return_stripped),
                cmocka_unit_test(test_timeout),
                cmocka_unit_test(test_empty_and_long),
        };

        signal(SIGPIPE, SIG_IGN);
        return cmocka_run_group_tests(tests, console_setup, console_teardown);
}

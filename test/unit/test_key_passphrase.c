/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the passphrase source and its prompt on a pseudo-terminal posing as /dev/console. */
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
#include "faketree.h"
#include "key_provider.h"
#include "prompt.h"

static int master = -1, slave = -1;
static char ptyname[PATH_MAX];

static int setup(void **state)
{
        if (ft_setup(state) < 0 || openpty(&master, &slave, ptyname, NULL, NULL) < 0)
                return -1;
        ft_mkdir("/dev");
        ft_symlink(ptyname, "/dev/console");
        ft_puts("/sys/class/tty/console/active", "tty0 ttyS0\n");
        return 0;
}

static int teardown(void **state)
{
        close(master);
        close(slave);
        return ft_teardown(state);
}

/* What the terminal has shown since the last call (the prompt, any echo), without waiting. */
static const char *screen(void)
{
        static char buf[4096];
        size_t len = 0;

        for (;;) {
                struct pollfd p = { .fd = master, .events = POLLIN };
                ssize_t n;

                if (poll(&p, 1, 50) <= 0 || len == sizeof(buf) - 1)
                        break;
                n = read(master, buf + len, sizeof(buf) - 1 - len);
                if (n <= 0)
                        break;
                len += (size_t)n;
        }
        buf[len] = '\0';
        return buf;
}

/* A person at the console: waits for each prompt (": "), then types the next of n lines. */
static pid_t typist_n(const char *const *text, int n)
{
        pid_t pid = fork();

        assert_true(pid >= 0);
        if (pid == 0) {
                char seen[2048] = "";
                size_t len = 0;

                for (int i = 0; i < n; i++) {
                        int prompts;

                        for (;;) {
                                const char *p = seen;
                                ssize_t got;

                                for (prompts = 0; (p = strstr(p, ": ")); p += 2)
                                        prompts++;
                                if (prompts > i || len == sizeof(seen) - 1)
                                        break;
                                got = read(master, seen + len, sizeof(seen) - 1 - len);
                                if (got <= 0)
                                        _exit(1);
                                len += (size_t)got;
                                seen[len] = '\0';
                        }
                        if (write(master, text[i], strlen(text[i])) != (ssize_t)strlen(text[i]))
                                _exit(1);
                }
                _exit(0);
        }
        return pid;
}

static pid_t typist(const char *text)
{
        return typist_n(&text, 1);
}

static void reap(pid_t pid)
{
        int status;

        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static char detail[256];

static int fetch_until(const char *arg, int64_t deadline, struct secret **out)
{
        struct keysrc_ctx ctx = { .root = ft_root, .deadline_ms = deadline, .device = "/dev/vdb",
                                  .detail = detail, .detail_size = sizeof(detail) };

        detail[0] = '\0';
        assert_int_equal(key_passphrase_provider.check(arg), 0);
        return key_passphrase_provider.fetch(arg, &ctx, out);
}

static int fetch(const char *arg, int64_t wait_ms, struct secret **out)
{
        return fetch_until(arg, clock_now_ms() + wait_ms, out);
}

static void assert_echo_restored(void)
{
        struct termios t;

        assert_int_equal(tcgetattr(slave, &t), 0);
        assert_true(t.c_lflag & ECHO);
}

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
                cmocka_unit_test(test_reads_without_echo),
                cmocka_unit_test(test_carriage_return_stripped),
                cmocka_unit_test(test_timeout),
                cmocka_unit_test(test_empty_and_long),
                cmocka_unit_test(test_headless),
                cmocka_unit_test(test_no_terminal),
                cmocka_unit_test(test_enroll),
        };

        signal(SIGPIPE, SIG_IGN);
        return cmocka_run_group_tests(tests, setup, teardown);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of crypto/secret.c: locked allocation, random fill, wipe, compare, bounded reads. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "secret.h"

static void test_new_bounds(void **state)
{
        struct secret *s = NULL;

        (void)state;
        assert_int_equal(secret_new(0, &s), -EINVAL);
        assert_int_equal(secret_new(SECRET_MAX + 1, &s), -EINVAL);
        assert_null(s);
        assert_int_equal(secret_new(SECRET_MAX, &s), 0);
        assert_non_null(s);
        assert_int_equal(s->len, 0);
        assert_int_equal(s->cap, SECRET_MAX);
        memset(s->data, 0xaa, s->cap); /* the whole capacity is writable (ASan would see otherwise) */
        secret_freep(&s);
        assert_null(s);
        secret_free(NULL);
        secret_freep(&s);
}

static void test_random(void **state)
{
        struct secret *a = NULL, *b = NULL;
        static const uint8_t zero[32];

        (void)state;
        assert_int_equal(secret_random(32, &a), 0);
        assert_int_equal(secret_random(32, &b), 0);
        assert_int_equal(a->len, 32);
        assert_memory_not_equal(a->data, zero, 32);
        assert_int_equal(secret_equal(a, b), 0);
        secret_free(a);
        secret_free(b);
}

static void test_equal(void **state)
{
        struct secret *a = NULL, *b = NULL;

        (void)state;
        assert_int_equal(secret_new(16, &a), 0);
        assert_int_equal(secret_new(16, &b), 0);
        memcpy(a->data, "0123456789abcdef", 16);
        memcpy(b->data, "0123456789abcdef", 16);
        a->len = b->len = 16;
        assert_int_equal(secret_equal(a, b), 1);
        b->data[15] ^= 1;
        assert_int_equal(secret_equal(a, b), 0);
        b->data[15] ^= 1;
        b->len = 15; /* a prefix is not the same key */
        assert_int_equal(secret_equal(a, b), 0);
        assert_int_equal(secret_equal(a, NULL), 0);
        secret_free(a);
        secret_free(b);
}

static int pipe_with(const void *buf, size_t len)
{
        int p[2];

        assert_int_equal(pipe(p), 0);
        assert_int_equal(write(p[1], buf, len), (ssize_t)len);
        close(p[1]);
        return p[0];
}

static void test_read_fd(void **state)
{
        static uint8_t big[SECRET_MAX + 1];
        struct secret *s = NULL;
        int fd;

        (void)state;
        fd = pipe_with("key", 3);
        assert_int_equal(secret_read_fd(fd, &s), 0);
        close(fd);
        assert_int_equal(s->len, 3);
        assert_memory_equal(s->data, "key", 3);
        secret_freep(&s);

        fd = pipe_with("", 0);
        assert_int_equal(secret_read_fd(fd, &s), -ENODATA);
        close(fd);
        assert_null(s);

        fd = pipe_with(big, SECRET_MAX);
        assert_int_equal(secret_read_fd(fd, &s), 0);
        close(fd);
        assert_int_equal(s->len, SECRET_MAX);
        secret_freep(&s);

        fd = pipe_with(big, SECRET_MAX + 1);
        assert_int_equal(secret_read_fd(fd, &s), -EMSGSIZE);
        close(fd);
        assert_null(s);
        assert_int_equal(secret_read_fd(-1, &s), -EINVAL);
}

/* thaw's main() calls this first: the process is not dumpable and has no core limit afterwards. */
static void test_protect_process(void **state)
{
        int status = -1;
        pid_t pid;

        (void)state;
        pid = fork(); /* in a child: the test runner itself stays dumpable for debugging */
        assert_true(pid >= 0);
        if (pid == 0) {
                struct rlimit rl;

                if (secret_protect_process() != 0)
                        _exit(1);
                if (prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0)
                        _exit(2);
                if (getrlimit(RLIMIT_CORE, &rl) != 0 || rl.rlim_cur != 0 || rl.rlim_max != 0)
                        _exit(3);
                _exit(0);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_new_bounds),
                cmocka_unit_test(test_random),
                cmocka_unit_test(test_equal),
                cmocka_unit_test(test_read_fd),
                cmocka_unit_test(test_protect_process),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}

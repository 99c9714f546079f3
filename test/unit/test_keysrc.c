/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the key source chain and the fwcfg and keyfile providers against a fixture tree. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "key_provider.h"
#include "keysrc.h"

#define FWCFG "/sys/firmware/qemu_fw_cfg/by_name/"
#define DMI "sys/firmware/dmi/entries/"

static char root[256];

static void mkdirs(const char *rel)
{
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/%s", root, rel);
        for (char *p = path + strlen(root) + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                mkdir(path, 0700);
                *p = '/';
        }
        mkdir(path, 0700);
}

/* Write len bytes to ROOT/rel, making parent directories. */
static void put(const char *rel, const void *buf, size_t len)
{
        char path[PATH_MAX], dir[PATH_MAX];
        int fd;

        snprintf(dir, sizeof(dir), "%s", rel);
        *strrchr(dir, '/') = '\0';
        mkdirs(dir);
        snprintf(path, sizeof(path), "%s/%s", root, rel);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, buf, len), (ssize_t)len);
        close(fd);
}

/* Atomically publish the late key, as the driver would: the file appears whole. */
static int publish_late_key(void)
{
        char a[PATH_MAX], b[PATH_MAX];

        snprintf(a, sizeof(a), "%s" FWCFG "opt/late/raw.tmp", root);
        snprintf(b, sizeof(b), "%s" FWCFG "opt/late/raw", root);
        return rename(a, b);
}

static int setup(void **state)
{
        (void)state;
        snprintf(root, sizeof(root), "%s/thaw-keysrc-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
        char cmd[sizeof(root) + 16];

        (void)state;
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        return system(cmd) == 0 ? 0 : -1;
}

static void test_parse_valid(void **state)
{
        struct keychain c;

        (void)state;
        assert_int_equal(keychain_parse("fwcfg:opt/thaw/key", &c), 0);
        assert_int_equal(c.n, 1);
        assert_int_equal(c.src[0].type, KEYSRC_FWCFG);
        assert_string_equal(c.src[0].arg, "opt/thaw/key");
        assert_int_equal(keychain_parse("fwcfg:opt/thaw/key,keyfile:/etc/thaw/key.bin", &c), 0);
        assert_int_equal(c.n, 2);
        assert_int_equal(c.src[1].type, KEYSRC_KEYFILE);
        assert_string_equal(c.src[1].arg, "/etc/thaw/key.bin");
        assert_string_equal(keysrc_type_name(KEYSRC_FWCFG), "fwcfg");
        assert_string_equal(keysrc_type_name(KEYSRC_KEYFILE), "keyfile");
        assert_int_equal(keychain_parse("smbios:thaw-key,fwcfg:opt/k", &c), 0);
        assert_int_equal(c.src[0].type, KEYSRC_SMBIOS);
        assert_string_equal(c.src[0].arg, "thaw-key");
        assert_string_equal(keysrc_type_name(KEYSRC_SMBIOS), "smbios");
        assert_int_equal(keychain_parse("drive:config-2:/openstack/thaw.key,smbios:k", &c), 0);
        assert_int_equal(c.src[0].type, KEYSRC_DRIVE);
        assert_string_equal(c.src[0].arg, "config-2:/openstack/thaw.key");
        assert_string_equal(keysrc_type_name(KEYSRC_DRIVE), "drive");
        assert_null(keysrc_type_name(KEYSRC__MAX));
}

static void test_parse_invalid(void **state)
{
        static const char *const bad[] = {
                "", ",", "fwcfg:a,", ",fwcfg:a", "fwcfg:a,,keyfile:/k", "fwcfg", "fwcfg:", "keyfile:",
                "tpm2:x", "FWCFG:a", " fwcfg:a", "fwcfg:/opt/a", "fwcfg:opt//a", "fwcfg:opt/a/",
                "fwcfg:opt/../a", "fwcfg:..", "fwcfg:opt/a b", "fwcfg:opt/ä",
                "fwcfg:opt/0123456789012345678901234567890123456789012345678901", /* 56 chars */
                "keyfile:relative", "keyfile:/a/../etc/shadow", "keyfile:/..", "keyfile:/a b",
                "keyfile:/a\tb", "smbios:", "smbios:a,b", "smbios:a=b", "smbios:a/b", "smbios:a b",
                "smbios:..", "smbios:.", "drive:", "drive:CIDATA", "drive:CIDATA:", "drive::/k",
                "drive:CIDATA:/", "drive:CIDATA:k", "drive:CI DATA:/k", "drive:CI/DATA:/k",
                "drive:CIDATA:/a/../k", "drive:CIDATA:/..", "drive:CIDATA:/./k", "drive:CIDATA:/a//k",
                "drive:CIDATA:/a/", "drive:CIDATA:/a:b", "drive:CIDATA:/a b",
                "drive:012345678901234567890123456789012:/k", /* 33 characters */
        };
        struct keychain c = { .n = 42 };
        char many[KEYCHAIN_SPEC_MAX];
        char huge[KEYCHAIN_SPEC_MAX + 8];

        (void)state;
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                if (keychain_parse(bad[i], &c) != -EINVAL)
                        fail_msg("accepted or wrong error: \"%s\"", bad[i]);
        }
        assert_int_equal(c.n, 42); /* output untouched on failure */
        many[0] = '\0';
        for (int i = 0; i < KEYCHAIN_MAX + 1; i++)
                strcat(many, i ? ",fwcfg:opt/k" : "fwcfg:opt/k");
        assert_int_equal(keychain_parse(many, &c), -E2BIG);
        memset(huge, 'a', sizeof(huge) - 1);
        huge[sizeof(huge) - 1] = '\0';
        memcpy(huge, "keyfile:/", 9);
        assert_int_equal(keychain_parse(huge, &c), -E2BIG);
        assert_int_equal(c.n, 42);
        assert_int_equal(keychain_parse(NULL, &c), -EINVAL);
}

static void test_format_round_trip(void **state)
{
        const char *spec = "fwcfg:opt/thaw/key,keyfile:/etc/thaw/key,fwcfg:opt/thaw/spare";
        struct keychain c, d;
        char buf[KEYCHAIN_SPEC_MAX], small[10] = "untouched";

        (void)state;
        assert_int_equal(keychain_parse(spec, &c), 0);
        assert_int_equal(keychain_format(&c, buf, sizeof(buf)), 0);
        assert_string_equal(buf, spec);
        assert_int_equal(keychain_parse(buf, &d), 0);
        assert_memory_equal(&c, &d, sizeof(c));
        assert_int_equal(keysrc_format(&c.src[1], buf, sizeof(buf)), 0);
        assert_string_equal(buf, "keyfile:/etc/thaw/key");
        assert_int_equal(keysrc_format(&c.src[0], small, sizeof(small)), -ENAMETOOLONG);
        assert_int_equal(keychain_format(&c, small, sizeof(small)), -ENAMETOOLONG);
        assert_string_equal(small, "untouched");
}

static void fetch_one(const char *spec, int64_t wait_ms, int expect, struct secret **out)
{
        struct keysrc_ctx kc = { .root = root, .deadline_ms = clock_now_ms() + wait_ms };
        struct keysrc s;

        assert_int_equal(keysrc_parse(spec, &s), 0);
        assert_int_equal(keysrc_fetch(&s, &kc, out), expect);
}

static void test_fwcfg(void **state)
{
        static const uint8_t key[32] = { 1, 2, 3, 0, 5, 255 };
        struct secret *k = NULL;

        (void)state;
        put(FWCFG "opt/thaw/key/raw", key, sizeof(key));
        fetch_one("fwcfg:opt/thaw/key", 0, 0, &k);
        assert_int_equal(k->len, sizeof(key));
        assert_memory_equal(k->data, key, sizeof(key));
        secret_freep(&k);
}

static void test_fwcfg_bad_sizes(void **state)
{
        static uint8_t big[SECRET_MAX + 1];
        struct secret *k = NULL;

        (void)state;
        put(FWCFG "opt/big/raw", big, sizeof(big));
        fetch_one("fwcfg:opt/big", 0, -EMSGSIZE, &k);
        put(FWCFG "opt/max/raw", big, SECRET_MAX);
        fetch_one("fwcfg:opt/max", 0, 0, &k);
        assert_int_equal(k->len, SECRET_MAX);
        secret_freep(&k);
        put(FWCFG "opt/empty/raw", "", 0);
        fetch_one("fwcfg:opt/empty", 0, -ENODATA, &k);
        assert_null(k);
}

static void test_fwcfg_missing_is_bounded(void **state)
{
        struct secret *k = NULL;
        int64_t start = clock_now_ms(), took;

        (void)state;
        fetch_one("fwcfg:opt/absent", 300, -ENOENT, &k);
        took = clock_now_ms() - start;
        assert_null(k);
        assert_true(took >= 300);
        assert_true(took < 1000);
        start = clock_now_ms();
        fetch_one("fwcfg:opt/absent", -5000, -ENOENT, &k); /* deadline passed: one look only */
        assert_true(clock_now_ms() - start < 100);
}

/* Once the driver is there, an absent name is final after a short grace: the rest of the timeout
 * stays for the next source in the chain. */
static void test_fwcfg_absent_with_driver_is_quick(void **state)
{
        struct secret *k = NULL;
        int64_t start = clock_now_ms();

        (void)state;
        mkdirs(FWCFG "opt/other");
        fetch_one("fwcfg:opt/never", 10000, -ENOENT, &k);
        assert_null(k);
        assert_true(clock_now_ms() - start < 2000);
}

/* The fw_cfg driver may load after we start: a key that appears before the deadline is found. */
static void test_fwcfg_appears_late(void **state)
{
        struct secret *k = NULL;
        int64_t start = clock_now_ms();
        pid_t pid;
        int status;

        (void)state;
        mkdirs(FWCFG "opt/late");
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                usleep(250 * 1000);
                put(FWCFG "opt/late/raw.tmp", "late-key", 8);
                _exit(publish_late_key() ? 1 : 0);
        }
        fetch_one("fwcfg:opt/late", 3000, 0, &k);
        assert_true(clock_now_ms() - start < 1500);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_int_equal(k->len, 8);
        assert_memory_equal(k->data, "late-key", 8);
        secret_freep(&k);
}

static void test_keyfile(void **state)
{
        struct secret *k = NULL;
        int64_t start;

        (void)state;
        put("etc/thaw/key", "secret-bytes", 12);
        fetch_one("keyfile:/etc/thaw/key", 0, 0, &k);
        assert_int_equal(k->len, 12);
        assert_memory_equal(k->data, "secret-bytes", 12);
        secret_freep(&k);
        start = clock_now_ms();
        fetch_one("keyfile:/etc/thaw/nokey", 10000, -ENOENT, &k); /* no waiting for a file */
        assert_true(clock_now_ms() - start < 100);
        mkdirs("etc/thaw/dir");
        fetch_one("keyfile:/etc/thaw/dir", 0, -EINVAL, &k);
        assert_null(k);
}

static void test_fetch_invalid(void **state)
{
        struct keysrc_ctx kc = { .root = root };
        struct keysrc s = { .type = KEYSRC__MAX };
        struct secret *k = NULL;

        (void)state;
        assert_int_equal(keysrc_fetch(&s, &kc, &k), -EINVAL);
        s.type = KEYSRC_FWCFG;
        snprintf(s.arg, sizeof(s.arg), "../../../etc/shadow"); /* built by hand, never parsed */
        assert_int_equal(keysrc_fetch(&s, &kc, &k), -EINVAL);
        assert_null(k);
}

/* A raw SMBIOS type 11 structure with the given strings; returns its length. */
static size_t type11(uint8_t *buf, size_t size, const char *const *strs, size_t n)
{
        size_t off = 5;

        memset(buf, 0, size);
        buf[0] = 11;
        buf[1] = 5;
        buf[2] = 0x2a; /* handle */
        buf[4] = (uint8_t)n;
        for (size_t i = 0; i < n; i++) {
                size_t len = strlen(strs[i]) + 1;

                assert_true(off + len + 1 <= size);
                memcpy(buf + off, strs[i], len);
                off += len;
        }
        if (n == 0)
                off++; /* an empty set is still two NULs */
        return off + 1;
}

static void put_type11(const char *entry, const char *const *strs, size_t n)
{
        static uint8_t buf[SECRET_SCRATCH_MAX];
        char rel[128];

        snprintf(rel, sizeof(rel), DMI "%s/raw", entry);
        put(rel, buf, type11(buf, sizeof(buf), strs, n));
}

static void expect_key(const char *spec, const void *key, size_t len)
{
        struct secret *k = NULL;

        fetch_one(spec, 0, 0, &k);
        assert_int_equal(k->len, len);
        assert_memory_equal(k->data, key, len);
        secret_freep(&k);
}

static void test_smbios_text_and_binary(void **state)
{
        static const char *const e0[] = { "vendor string", "io.systemd.credential:thaw-key2=other",
                                          "io.systemd.credential:thaw-text=plain key=with=equals" };
        static const char *const e1[] = { "io.systemd.credential.binary:thaw-bin=AAEC/w==" };

        (void)state;
        put_type11("11-0", e0, 3);
        put_type11("11-1", e1, 1);
        put_type11("1-0", e1, 0); /* another type's entry: never looked at */
        expect_key("smbios:thaw-text", "plain key=with=equals", 21);
        expect_key("smbios:thaw-bin", "\x00\x01\x02\xff", 4);
        expect_key("smbios:thaw-key2", "other", 5);
}

/* The first entry (in numeric order) with the credential wins; broken entries are passed over. */
static void test_smbios_order_and_broken_entries(void **state)
{
        static const char *const a[] = { "io.systemd.credential:dup=from-2" };
        static const char *const b[] = { "io.systemd.credential:dup=from-10" };
        static const uint8_t unterminated[] = { 11, 5, 0, 0, 1, 'i', 'o' };
        static const uint8_t wrong_type[] = { 12, 5, 0, 0, 1, 'x', 0, 0 };

        (void)state;
        put(DMI "11-0/raw", unterminated, sizeof(unterminated));
        put(DMI "11-1/raw", wrong_type, sizeof(wrong_type));
        put_type11("11-10", b, 1);
        put_type11("11-2", a, 1);
        expect_key("smbios:dup", "from-2", 6);
}

static void test_smbios_bad_values(void **state)
{
        static char big[SECRET_MAX + 64], bigb64[SECRET_MAX * 2];
        const char *strs[6] = {
                "io.systemd.credential:empty=", "io.systemd.credential.binary:bad=Zm9v!A==",
                "io.systemd.credential.binary:nopad=Zm9vYg", big, bigb64,
                "io.systemd.credential.binary:maxb64=",
        };
        struct secret *k = NULL;
        size_t n;

        (void)state;
        n = (size_t)snprintf(big, sizeof(big), "io.systemd.credential:big=");
        memset(big + n, 'k', SECRET_MAX + 1);
        big[n + SECRET_MAX + 1] = '\0';
        n = (size_t)snprintf(bigb64, sizeof(bigb64), "io.systemd.credential.binary:bigb64=");
        memset(bigb64 + n, 'A', (SECRET_MAX + 3) / 3 * 4 + 4); /* decodes to more than SECRET_MAX */
        put_type11("11-0", strs, 5);
        fetch_one("smbios:empty", 0, -ENODATA, &k);
        fetch_one("smbios:bad", 0, -EBADMSG, &k);
        fetch_one("smbios:nopad", 0, -EBADMSG, &k);
        fetch_one("smbios:big", 0, -EMSGSIZE, &k);
        fetch_one("smbios:bigb64", 0, -EMSGSIZE, &k);
        assert_null(k);
        /* Exactly SECRET_MAX bytes of text is a key. */
        big[n = strlen("io.systemd.credential:big=") + SECRET_MAX] = '\0';
        put_type11("11-0", strs, 1 + 3);
        expect_key("smbios:big", big + n - SECRET_MAX, SECRET_MAX);
}

static void test_smbios_parser(void **state)
{
        static const char *const s[] = { "io.systemd.credential:k=v" };
        uint8_t buf[64];
        struct secret *k = NULL;
        size_t len = type11(buf, sizeof(buf), s, 1);

        (void)state;
        assert_int_equal(smbios_find_credential(buf, len, "k", &k), 0);
        secret_freep(&k);
        assert_int_equal(smbios_find_credential(buf, len - 2, "k", &k), -EPROTO); /* no NUL */
        assert_int_equal(smbios_find_credential(buf, 4, "k", &k), -EPROTO);
        buf[1] = 4;
        assert_int_equal(smbios_find_credential(buf, len, "k", &k), -EPROTO);
        buf[1] = (uint8_t)(len + 1);
        assert_int_equal(smbios_find_credential(buf, len, "k", &k), -EPROTO);
        len = type11(buf, sizeof(buf), s, 0);
        assert_int_equal(len, 7);
        assert_int_equal(smbios_find_credential(buf, len, "k", &k), -ENOENT);
        assert_null(k);
}

static void test_smbios_missing_is_bounded(void **state)
{
        struct secret *k = NULL;
        int64_t start = clock_now_ms(), took;

        (void)state;
        fetch_one("smbios:absent", 300, -ENOENT, &k); /* no dmi-sysfs at all: wait, then give up */
        took = clock_now_ms() - start;
        assert_true(took >= 300 && took < 1000);
        put_type11("11-0", NULL, 0);
        start = clock_now_ms();
        fetch_one("smbios:absent", 10000, -ENOENT, &k); /* dmi-sysfs there: a short grace only */
        assert_true(clock_now_ms() - start < 2000);
        assert_null(k);
}

static void test_drive_split(void **state)
{
        char label[33] = "x", path[KEYSRC_ARG_MAX] = "y";

        (void)state;
        assert_int_equal(drive_split("CIDATA:/thaw/key", label, sizeof(label), path, sizeof(path)), 0);
        assert_string_equal(label, "CIDATA");
        assert_string_equal(path, "/thaw/key");
        assert_int_equal(drive_split("01234567890123456789012345678901:/k.bin", label, sizeof(label), path,
                                     sizeof(path)), 0);
        assert_string_equal(label, "01234567890123456789012345678901");
        assert_int_equal(drive_split("CIDATA:/a/..b/.c", label, sizeof(label), path, sizeof(path)), 0);
        assert_string_equal(path, "/a/..b/.c"); /* names that merely start with dots are names */
        assert_int_equal(drive_split("CIDATA:/thaw/key", label, 6, path, sizeof(path)), -EINVAL);
        assert_int_equal(drive_split("C:/k", label, sizeof(label), path, 2), -EINVAL);
}

/* The key path is resolved on the mounted drive and must stay on it. */
static void test_drive_key_path(void **state)
{
        char mnt[PATH_MAX], out[PATH_MAX] = "untouched", want[PATH_MAX];

        (void)state;
        put("mnt/thaw/key", "k", 1);
        put("o/outside", "o", 1);
        mkdirs("mnt/dir");
        snprintf(mnt, sizeof(mnt), "%s/mnt", root);
        assert_int_equal(symlink("../o/outside", strcat(strcpy(want, mnt), "/up")), 0);
        assert_int_equal(symlink("/etc/passwd", strcat(strcpy(want, mnt), "/abs")), 0);
        assert_int_equal(symlink("thaw/key", strcat(strcpy(want, mnt), "/inside")), 0);
        assert_int_equal(drive_key_path(mnt, "/up", out, sizeof(out)), -EACCES);
        assert_int_equal(drive_key_path(mnt, "/abs", out, sizeof(out)), -EACCES);
        assert_int_equal(drive_key_path(mnt, "/none", out, sizeof(out)), -ENOENT);
        assert_int_equal(drive_key_path(mnt, "/thaw/key/x", out, sizeof(out)), -ENOENT);
        assert_string_equal(out, "untouched");
        assert_int_equal(drive_key_path(mnt, "/inside", out, sizeof(out)), 0);
        assert_string_equal(out, strcat(strcpy(want, mnt), "/thaw/key"));
        assert_int_equal(drive_key_path(mnt, "/thaw/key", out, sizeof(out)), 0);
        assert_string_equal(out, want);
        assert_int_equal(drive_key_path(mnt, "/thaw/key", out, 4), -ENAMETOOLONG);
}

/* No drive with the label: the wait is bounded. One that holds neither ISO 9660 nor vfat is
 * refused before any mount, and no temporary mount point is left behind. */
static void test_drive_fetch_errors(void **state)
{
        struct secret *k = NULL;
        char dev[PATH_MAX], run[PATH_MAX], cmd[2 * PATH_MAX + 64];
        int64_t start = clock_now_ms(), took;

        (void)state;
        fetch_one("drive:NOSUCHLABEL:/thaw/key", 300, -ENODEV, &k);
        took = clock_now_ms() - start;
        assert_true(took >= 300 && took < 1500);
        put("dev/fake", "not a file system", 17);
        mkdirs("run/thaw");
        mkdirs("dev/disk/by-label");
        snprintf(dev, sizeof(dev), "%s/dev/disk/by-label/FAKE", root);
        assert_int_equal(symlink("../../fake", dev), 0);
        fetch_one("drive:FAKE:/thaw/key", 1000, -EMEDIUMTYPE, &k);
        assert_null(k);
        snprintf(run, sizeof(run), "%s/run/thaw", root);
        snprintf(cmd, sizeof(cmd), "test -d '%s' && test -z \"$(ls -A '%s')\"", run, run);
        assert_int_equal(system(cmd), 0); /* no drive-XXXXXX left behind */
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_valid),
                cmocka_unit_test(test_parse_invalid),
                cmocka_unit_test(test_format_round_trip),
                cmocka_unit_test(test_fwcfg),
                cmocka_unit_test(test_fwcfg_bad_sizes),
                cmocka_unit_test(test_fwcfg_missing_is_bounded),
                cmocka_unit_test(test_fwcfg_appears_late),
                cmocka_unit_test(test_fwcfg_absent_with_driver_is_quick),
                cmocka_unit_test(test_keyfile),
                cmocka_unit_test(test_fetch_invalid),
                cmocka_unit_test_setup_teardown(test_smbios_text_and_binary, setup, teardown),
                cmocka_unit_test_setup_teardown(test_smbios_order_and_broken_entries, setup, teardown),
                cmocka_unit_test_setup_teardown(test_smbios_bad_values, setup, teardown),
                cmocka_unit_test_setup_teardown(test_smbios_parser, setup, teardown),
                cmocka_unit_test_setup_teardown(test_smbios_missing_is_bounded, setup, teardown),
                cmocka_unit_test(test_drive_split),
                cmocka_unit_test_setup_teardown(test_drive_key_path, setup, teardown),
                cmocka_unit_test_setup_teardown(test_drive_fetch_errors, setup, teardown),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of thaw resume's decisions (resume/boot/resume.c's resume_run(), and through it the
 * key-chain walk of unlock.c, the ticket's verdict of fresh.c and state.c's state file) on a
 * fixture root. Device-mapper is replaced by fakes that make /dev/mapper/NAME a file and
 * /sys/block/dm-0 a directory; key files and /sys/power are real files under the root, so the
 * handoff writes can be read back.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <cmocka.h>

#include "base/clock.h"
#include "faketree.h"
#include "luks.h"
#include "luks_token.h"
#include "boot/resume.h"
#include "boot/state.h"
#include "image/swsusp.h"
#include "putle.h"
#include "ticket.h"

#define GOOD "0123456789abcdef0123456789abcdef"

enum header { HDR_SWAP, HDR_IMAGE, HDR_OTHER };
enum kernel { KERNEL_IGNORES, KERNEL_CONSUMES };

static struct {
        int probes, activations, deactivations, handoffs;
        enum header header;     /* what the unlocked mapping holds */
        uint64_t header_at;     /* at which page */
        int page0;              /* 1 + another header to put at page 0, 0 = none */
        enum kernel kernel;     /* what the kernel does with an image */
        int activate_err;       /* forced activation error, 0 = check the key */
        int make_node;          /* activation makes /dev/mapper/NAME */
        uint64_t physpages;     /* the image's num_physpages */
        int bad_magic;          /* the image's header page is not x86_64's */
        int lzo;                /* compressed (SF_CRC32_MODE), its one chunk has cmp_len 0 */
        int locks, locks_at_handoff; /* tpm_lock calls, in all and when the handoff came */
        uint32_t lock_pcrs;
        int lock_err;           /* forced tpm_lock error, 0 = extended */
        int active;             /* the mapping is already active before thaw runs */
        int mapping_err;        /* forced live-table check error, 0 = mapped as the header says */
        int checks;             /* live-table checks */
        char check_dev[256];
        int said;
        char lines[16][1024];
        int levels[16];
} fx;

static void record(void *userdata, int level, const char *msg)
{
        (void)userdata;
        if (fx.said < 16) {
                fx.levels[fx.said] = level;
                snprintf(fx.lines[fx.said++], sizeof(fx.lines[0]), "%s", msg);
        }
}

static const char *last(void)
{
        return fx.said ? fx.lines[fx.said - 1] : "";
}

static int said(const char *needle)
{
        for (int i = 0; i < fx.said; i++)
                if (strstr(fx.lines[i], needle))
                        return 1;
        return 0;
}

/* How many times this very line was said. */
static int times_said(const char *line)
{
        int n = 0;

        for (int i = 0; i < fx.said; i++)
                n += strcmp(fx.lines[i], line) == 0;
        return n;
}

/* The state file the last run left, as thaw status reads it. */
static const struct state *left_state(void)
{
        static struct state s;

        assert_int_equal(state_read(ft_root, &s), 0);
        return &s;
}

/*
 * An image is a well-formed uncompressed one: map page at block 1 listing blocks 2-4, the x86_64
 * header page at block 2 (one data page, made with fx.physpages pages of memory).
 */
static void write_image_body(int fd)
{
        uint8_t map[SWSUSP_PAGE] = { 0 }, info[SWSUSP_PAGE] = { 0 };

        put64(map, 2);
        put64(map + 8, 3);
        put64(map + 16, 4);
        put64(info + 24, fx.bad_magic ? 0 : 0x23456789ABCDEF02ULL);
        put64(info + 400, fx.physpages);
        put64(info + 416, 1);
        put64(info + 424, 3);
        put64(info + 432, 3 * SWSUSP_PAGE);
        assert_int_equal(pwrite(fd, map, sizeof(map), SWSUSP_PAGE), SWSUSP_PAGE);
        assert_int_equal(pwrite(fd, info, sizeof(info), 2 * SWSUSP_PAGE), SWSUSP_PAGE);
}

static void write_header(const char *rel, enum header h, uint64_t at)
{
        uint8_t page[SWSUSP_PAGE] = { 0 };
        char path[PATH_MAX];
        int fd;

        if (h != HDR_OTHER)
                memcpy(page + 4086, "SWAPSPACE2", 10);
        if (h == HDR_IMAGE) {
                memcpy(page + 4076, "SWAPSPACE2", 10);
                memcpy(page + 4086, "S1SUSPEND\0", 10);
                page[4064] = 1;
                page[4072] = fx.lzo ? 4 : 2; /* SF_CRC32_MODE : SF_NOCOMPRESS_MODE */
        }
        ft_parents(rel);
        ft_abs(path, sizeof(path), rel);
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        assert_int_equal(ftruncate(fd, 64 * SWSUSP_PAGE), 0);
        assert_int_equal(pwrite(fd, page, sizeof(page), (off_t)(at * SWSUSP_PAGE)), SWSUSP_PAGE);
        if (h == HDR_IMAGE)
                write_image_body(fd);
        close(fd);
}

static int fake_probe(const char *dev)
{
        (void)dev;
        fx.probes++;
        return 1;
}

static int fake_activate(const char *dev, const char *name, const struct secret *key,
                         const struct luks_policy *p)
{
        char rel[256];

        (void)p;
        (void)dev;
        fx.activations++;
        if (fx.activate_err)
                return fx.activate_err;
        if (!key || key->len != strlen(GOOD) || memcmp(key->data, GOOD, key->len) != 0)
                return -EPERM;
        snprintf(rel, sizeof(rel), "/dev/mapper/%s", name);
        if (fx.make_node && fx.page0)
                write_header(rel, (enum header)(fx.page0 - 1), 0);
        if (fx.make_node)
                write_header(rel, fx.header, fx.header_at);
        ft_puts("/sys/block/dm-0/dm/name", name);
        ft_puts("/sys/block/dm-0/dev", "253:0\n");
        return 0;
}

static void unlink_mapper(void)
{
        char path[PATH_MAX];

        ft_abs(path, sizeof(path), "/dev/mapper/thaw-swap");
        unlink(path);
}

static int fake_deactivate(const char *name)
{
        char path[PATH_MAX], rel[256];

        fx.deactivations++;
        snprintf(rel, sizeof(rel), "/dev/mapper/%s", name);
        ft_abs(path, sizeof(path), rel);
        unlink(path);
        return 0;
}

static int fake_is_active(const char *name)
{
        (void)name;
        return fx.active;
}

static int fake_check_mapping(const char *root, const char *dev, const char *name, char *why, size_t size)
{
        (void)root;
        fx.checks++;
        snprintf(fx.check_dev, sizeof(fx.check_dev), "%s", dev);
        (void)name;
        if (fx.mapping_err == -EPROTO)
                snprintf(why, size, "live table cipher is cipher_null-ecb, the header says aes-xts-plain64");
        else
                why[0] = '\0';
        return fx.mapping_err;
}

/* The real handoff into the fixture /sys, then what the kernel would do to the header. */
static int fake_handoff(const char *root, unsigned maj, unsigned min, uint64_t offset)
{
        extern const struct resume_ops resume_default_ops;
        int r = resume_default_ops.handoff(root, maj, min, offset);

        fx.handoffs++;
        fx.locks_at_handoff = fx.locks;
        if (r == 0 && fx.kernel == KERNEL_CONSUMES)
                write_header("/dev/mapper/thaw-swap", HDR_SWAP, offset);
        return r;
}

static const struct resume_ops fake_ops = {
        .probe = fake_probe,
        .fetch = keysrc_fetch, /* real: key files under the fixture root */
        .activate = fake_activate,
        .deactivate = fake_deactivate,
        .is_active = fake_is_active,
        .check_mapping = fake_check_mapping,
        .handoff = fake_handoff,
};

/* The passphrase source without a console: "typed" is what a person would type. */
static uint64_t passphrase_limit;
static int64_t passphrase_left_ms;
static bool slow_sources; /* every other source waits out the deadline, as tpm2 without a TPM */

static int fake_fetch(const struct keysrc *src, const struct keysrc_ctx *ctx, struct secret **out)
{
        struct secret *s = NULL;

        if (src->type != KEYSRC_PASSPHRASE && slow_sources) {
                while (clock_now_ms() < ctx->deadline_ms)
                        clock_sleep_ms(ctx->deadline_ms - clock_now_ms());
                return -ENODEV;
        }
        if (src->type != KEYSRC_PASSPHRASE)
                return keysrc_fetch(src, ctx, out);
        passphrase_left_ms = ctx->deadline_ms - clock_now_ms();
        assert_int_equal(secret_new(5, &s), 0);
        memcpy(s->data, "typed", 5);
        s->len = 5;
        *out = s;
        return 0;
}

static int fake_activate_passphrase(const char *dev, const char *name, const struct secret *key,
                                    uint64_t argon2_max_kib, const struct luks_policy *p, char *why,
                                    size_t size)
{
        (void)p;
        (void)dev;
        (void)name;
        passphrase_limit = argon2_max_kib;
        assert_memory_equal(key->data, "typed", 5);
        if (argon2_max_kib < 1048576) {
                snprintf(why, size, "keyslot 1 (argon2id) needs 1048576 KiB of memory, more than half of the "
                         "RAM (%llu KiB): not tried", (unsigned long long)argon2_max_kib);
                return -EPERM;
        }
        why[0] = '\0';
        return fake_activate(dev, name, &(struct secret){ .len = strlen(GOOD), .data = (uint8_t *)GOOD }, NULL);
}

static const struct resume_ops passphrase_ops = {
        .probe = fake_probe,
        .fetch = fake_fetch,
        .activate = fake_activate,
        .activate_passphrase = fake_activate_passphrase,
        .deactivate = fake_deactivate,
        .is_active = fake_is_active,
        .handoff = fake_handoff,
};

static int fake_tpm_lock(const char *root, uint32_t pcrs, int64_t deadline_ms, char *why, size_t size)
{
        (void)root;
        assert_true(deadline_ms > 0);
        /* The lock waits for a TPM a few seconds at most, never the whole rd.thaw.timeout=. */
        assert_true(deadline_ms <= clock_now_ms() + 3000);
        fx.locks++;
        fx.lock_pcrs = pcrs;
        if (fx.lock_err)
                snprintf(why, size, "the TPM did not answer");
        return fx.lock_err;
}

static int setup(void **state)
{
        if (ft_setup(state) < 0)
                return -1;
        memset(&fx, 0, sizeof(fx));
        fx.make_node = 1;
        fx.physpages = 196478;
        write_header("/dev/vdb", HDR_OTHER, 0); /* 256 KiB of zeros: no LUKS2 header */
        ft_puts("/keys/good", GOOD);
        ft_puts("/keys/bad", "fedcba9876543210fedcba9876543210");
        ft_puts("/sys/power/resume", "0:0\n");
        ft_puts("/sys/power/resume_offset", "0\n");
        ft_puts("/sys/power/disk", "[platform] shutdown reboot suspend test_resume\n");
        ft_puts("/sys/power/state", "freeze mem disk\n");
        return 0;
}

static enum resume_outcome run(const char *cmdline, const struct resume_ops *ops)
{
        struct thaw_args a;
        struct resume_ctx c = { .root = ft_root, .args = &a, .ops = ops, .say = record };

        assert_int_equal(args_load(ft_root, cmdline, 0, &a, record, NULL), 0);
        return resume_run(&c);
}

static int64_t now_ms(void)
{
        return clock_now_ms();
}

static void test_disabled(void **state)
{
        (void)state;
        assert_int_equal(run("rd.thaw=0 rd.thaw.device=/dev/vdb noresume", &fake_ops), RESUME_DISABLED);
        assert_string_equal(last(), "resume disabled (rd.thaw=0)");
        assert_int_equal(fx.said, 1);
        assert_int_equal(fx.probes + fx.activations, 0);
}

static void test_noresume_unlocks_nothing(void **state)
{
        (void)state;
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good noresume", &fake_ops),
                         RESUME_NORESUME);
        assert_string_equal(last(), "noresume given: not unlocking /dev/vdb; an image on it will not be resumed");
        /* Found and probed (its ticket is superseded), never unlocked. */
        assert_int_equal(fx.probes, 1);
        assert_int_equal(fx.activations + fx.handoffs, 0);
        assert_string_equal(ft_read("/sys/power/resume"), "0:0\n");
}

/* The kernel ignores an image with any of these, so thaw unlocks nothing either. */
static void test_nohibernate_variants(void **state)
{
        static const struct {
                const char *arg, *line;
        } cases[] = {
                { "nohibernate", "nohibernate given: not unlocking /dev/vdb;" },
                { "hibernate=noresume", "hibernate=noresume given: not unlocking /dev/vdb;" },
                { "hibernate=noresume,x", "hibernate=noresume given: not unlocking /dev/vdb;" },
                { "hibernate=no", "hibernate=no given: not unlocking /dev/vdb;" },
        };
        char cmdline[256];

        (void)state;
        fx.header = HDR_IMAGE;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                fx.said = 0;
                snprintf(cmdline, sizeof(cmdline), "rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good %s",
                         cases[i].arg);
                assert_int_equal(run(cmdline, &fake_ops), RESUME_NORESUME);
                assert_non_null(strstr(last(), cases[i].line));
        }
        assert_int_equal(fx.activations + fx.handoffs, 0);
        assert_string_equal(ft_read("/sys/power/resume"), "0:0\n");
}

static void test_no_device(void **state)
{
        (void)state;
        assert_int_equal(run("root=/dev/vda", &fake_ops), RESUME_NO_DEVICE);
        assert_string_equal(last(), "no device configured (rd.thaw.device=): nothing to do");
}

static void test_bad_device_spec(void **state)
{
        (void)state;
        assert_int_equal(run("rd.thaw.device=vdb", &fake_ops), RESUME_BAD_DEVICE);
        assert_non_null(strstr(last(), "rd.thaw.device=vdb is not UUID="));
        assert_int_equal(fx.probes, 0);
}

static void test_device_timeout(void **state)
{
        int64_t t0 = now_ms(), took;

        (void)state;
        assert_int_equal(run("rd.thaw.device=UUID=nothere rd.thaw.timeout=1", &fake_ops),
                         RESUME_DEVICE_TIMEOUT);
        took = now_ms() - t0;
        assert_true(took >= 1000 && took < 1500);
        assert_string_equal(last(), "device UUID=nothere did not appear within 1 s: boot continues without "
                                    "resume");
        assert_int_equal(fx.probes, 0);

        fx.said = 0;
        t0 = now_ms();
        assert_int_equal(run("rd.thaw.device=/dev/vdq rd.thaw.timeout=0", &fake_ops), RESUME_DEVICE_TIMEOUT);
        assert_true(now_ms() - t0 < 300);
}

/* The device shows up while we wait (udev creating the link): found before the deadline. */
static void test_device_appears_late(void **state)
{
        int64_t t0 = now_ms(), took;
        pid_t pid;

        (void)state;
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                char target[PATH_MAX], link[PATH_MAX];
                struct timespec ts = { 0, 400 * 1000000L };

                nanosleep(&ts, NULL);
                ft_abs(target, sizeof(target), "/dev/vdb");
                ft_abs(link, sizeof(link), "/dev/disk");
                mkdir(link, 0755);
                ft_abs(link, sizeof(link), "/dev/disk/by-uuid");
                mkdir(link, 0755);
                ft_abs(link, sizeof(link), "/dev/disk/by-uuid/late");
                _exit(symlink(target, link) == 0 ? 0 : 1);
        }
        /* Real luks_probe: the fixture device is a plain file, so not LUKS2. */
        assert_int_equal(run("rd.thaw.device=UUID=late rd.thaw.timeout=5", &resume_default_ops),
                         RESUME_NOT_LUKS);
        took = now_ms() - t0;
        waitpid(pid, NULL, 0);
        assert_true(took >= 350 && took < 2000);
        assert_true(said("waiting up to 5 s for UUID=late"));
}

static void test_not_luks(void **state)
{
        char want[PATH_MAX + 64];

        (void)state;
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good", &resume_default_ops),
                         RESUME_NOT_LUKS);
        snprintf(want, sizeof(want), "%s/dev/vdb is not a LUKS2 container: boot continues without resume",
                 ft_root);
        assert_string_equal(last(), want);
        assert_string_equal(ft_read("/sys/power/resume"), "0:0\n");
}

/* A header that fails the policy: refused before any key, the policy the boot asked for seen. */
static struct luks_policy header_seen;
static char header_pin[LUKS_FP_SIZE];

static int refusing_header(const char *dev, const struct luks_policy *p, char *fp, char *why, size_t size)
{
        (void)dev;
        (void)fp;
        header_seen = *p;
        snprintf(header_pin, sizeof(header_pin), "%s", p->pin ? p->pin : "");
        snprintf(why, size, "segment 0 encryption is cipher_null-ecb: not a header thaw wrote");
        return -LUKS_EPOLICY;
}

static void test_bad_header(void **state)
{
        struct resume_ops ops = fake_ops;
        const char *pin = "sha256:00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
        char cmdline[256], want[PATH_MAX + 256];

        (void)state;
        ops.check_header = refusing_header;
        snprintf(cmdline, sizeof(cmdline), "rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good "
                 "rd.thaw.header=%s", pin);
        assert_int_equal(run(cmdline, &ops), RESUME_BAD_HEADER);
        snprintf(want, sizeof(want), "LUKS2 header of %s/dev/vdb refused before any key was tried: segment 0 "
                 "encryption is cipher_null-ecb: not a header thaw wrote; nothing unlocked, boot continues "
                 "without resume", ft_root);
        assert_string_equal(last(), want);
        assert_int_equal(fx.activations, 0);
        assert_int_equal(fx.handoffs, 0);
        assert_string_equal(ft_read("/sys/power/resume"), "0:0\n");
        assert_non_null(strstr(ft_read("/run/thaw/state"), "outcome=bad-header\n"));
        /* The pin of rd.thaw.header=, THAW profile (no resume_offset=), the unlock's deadline. */
        assert_string_equal(header_pin, pin);
        assert_int_equal(header_seen.profile, LUKS_PROFILE_THAW);
        assert_true(header_seen.deadline_ms > 0);
        /* A swap file (resume_offset=) lives in the root's container: FOREIGN. */
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good resume_offset=100", &ops),
                         RESUME_BAD_HEADER);
        assert_int_equal(header_seen.profile, LUKS_PROFILE_FOREIGN);
        assert_int_equal(fx.activations, 0);
}

/* A header that passes: the check is counted and the policy it was asked with kept. */
static int header_checks;

static int accepting_header(const char *dev, const struct luks_policy *p, char *fp, char *why, size_t size)
{
        (void)dev;
        (void)fp;
        (void)why;
        (void)size;
        header_checks++;
        header_seen = *p;
        snprintf(header_pin, sizeof(header_pin), "%s", p->pin ? p->pin : "");
        return 0;
}

/*
 * A malformed pin pins nothing and is reported (args.c is strict); the header is still checked
 * against the policy before the key is tried, and a malformed rd.thaw.header= does not unpin the
 * header= of thaw.conf.
 */
static void test_malformed_pin(void **state)
{
        struct resume_ops ops = fake_ops;
        const char *pin = "sha256:00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
        char conf[256];

        (void)state;
        ops.check_header = accepting_header;
        fx.header = HDR_SWAP;
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good rd.thaw.header=sha256:xyz",
                             &ops), RESUME_NO_IMAGE);
        assert_true(said("ignoring 1 bad kernel argument(s), the first: \"rd.thaw.header=sha256:xyz\""));
        assert_int_equal(header_checks, 1);
        assert_string_equal(header_pin, "");
        assert_int_equal(header_seen.profile, LUKS_PROFILE_THAW);
        assert_int_equal(fx.activations, 1);

        /* thaw.conf's pin stays: the malformed one on the command line does not win. */
        fx.said = header_checks = 0;
        unlink_mapper();
        snprintf(conf, sizeof(conf), "header=%s\n", pin);
        ft_puts("/etc/thaw/thaw.conf", conf);
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good rd.thaw.header=sha256:XYZ",
                             &ops), RESUME_NO_IMAGE);
        assert_true(said("ignoring 1 bad kernel argument(s), the first: \"rd.thaw.header=sha256:XYZ\""));
        assert_int_equal(header_checks, 1);
        assert_string_equal(header_pin, pin);

        /* A malformed header= in thaw.conf: reported, and the check still runs, without a pin. */
        fx.said = header_checks = 0;
        unlink_mapper();
        ft_puts("/etc/thaw/thaw.conf", "header=sha256:0011\n");
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good", &ops), RESUME_NO_IMAGE);
        assert_true(said("ignoring 1 bad line(s) in /etc/thaw/thaw.conf, the first: \"header=sha256:0011\""));
        assert_int_equal(header_checks, 1);
        assert_string_equal(header_pin, "");
}

/*
 * The header passed check_header() but changed before the key was tried: the activation's own
 * check refuses it (-LUKS_EPOLICY). Told as a refused header, with the policy's reason from a new
 * check of the device, not as a key failure; the chain stops there.
 */
static int header_flips(const char *dev, const struct luks_policy *p, char *fp, char *why, size_t size)
{
        (void)dev;
        (void)p;
        (void)fp;
        if (header_checks++ == 0)
                return 0;
        snprintf(why, size, "segment 0 encryption is cipher_null-ecb: not a header thaw wrote");
        return -LUKS_EPOLICY;
}

static void test_header_changed_before_unlock(void **state)
{
        struct resume_ops ops = fake_ops;
        char want[PATH_MAX + 256];

        (void)state;
        ops.check_header = header_flips;
        header_checks = 0;
        fx.activate_err = -LUKS_EPOLICY;
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good,keyfile:/keys/bad", &ops),
                         RESUME_BAD_HEADER);
        snprintf(want, sizeof(want), "LUKS2 header of %s/dev/vdb refused: segment 0 encryption is "
                 "cipher_null-ecb: not a header thaw wrote; nothing unlocked, boot continues without resume",
                 ft_root);
        assert_string_equal(last(), want);
        assert_int_equal(header_checks, 2);
        assert_int_equal(fx.activations, 1);
        assert_int_equal(fx.handoffs, 0);
        assert_false(said("Wrong medium type"));
        assert_non_null(strstr(ft_read("/run/thaw/state"), "outcome=bad-header\n"));
        assert_string_equal(ft_read("/sys/power/resume"), "0:0\n");

        /* Checked again, the device passes (changed back): the line still says the header was refused. */
        fx.said = 0;
        ops.check_header = accepting_header;
        header_checks = 0;
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good", &ops), RESUME_BAD_HEADER);
        snprintf(want, sizeof(want), "LUKS2 header of %s/dev/vdb refused: it changed after it was checked and "
                 "failed the check made when the key was tried; nothing unlocked, boot continues without "
                 "resume", ft_root);
        assert_string_equal(last(), want);
}

/*
 * rd.thaw.timeout= passed while keyslots were left to try: said as such (not "Timer expired"),
 * and the next source still gets its try before the summary line.
 */
static void test_deadline_stops_keyslots(void **state)
{
        char want[PATH_MAX + 512];

        (void)state;
        fx.activate_err = -ETIME;
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good,keyfile:/keys/bad "
                             "rd.thaw.timeout=0", &fake_ops), RESUME_NO_KEY);
        assert_int_equal(fx.activations, 2);
        assert_true(said("cannot get the key from keyfile:/keys/good (not the key of the first keyslot tried, "
                         "and rd.thaw.timeout= (0 s) passed before the next one was tried): trying "
                         "keyfile:/keys/bad"));
        snprintf(want, sizeof(want), "no key source unlocked %s/dev/vdb (keyfile:/keys/good: not the key of "
                 "the first keyslot tried, and rd.thaw.timeout= (0 s) passed before the next one was tried; "
                 "keyfile:/keys/bad: not the key of the first keyslot tried, and rd.thaw.timeout= (0 s) passed "
                 "before the next one was tried): boot continues without resume; the image, if any, is kept",
                 ft_root);
        assert_string_equal(last(), want);
        assert_false(said("Timer expired"));
        assert_non_null(strstr(ft_read("/run/thaw/state"), "outcome=no-key\n"));
}

/* The key checked on a real LUKS2 header (no device-mapper: name NULL), then the fake mapping. */
static int activate_checked(const char *dev, const char *name, const struct secret *key,
                            const struct luks_policy *p)
{
        int r = luks_activate(dev, NULL, key, p);

        return r < 0 ? r : fake_activate(dev, name, key, p);
}

/*
 * rd.thaw.timeout=0 (thaw(8) allows it): the deadline has passed before the unlock, yet the key
 * that was fetched gets its try on the real header, checked by the real policy.
 */
static void test_timeout_zero_unlocks(void **state)
{
        struct resume_ops ops = fake_ops;
        struct keysrc_ctx kc = { .root = ft_root };
        struct keysrc_enrollment e = { 0 };
        char token[LUKS_TOKEN_JSON_MAX], dev[PATH_MAX];
        struct secret *key = NULL;
        struct keychain chain;
        int fd;

        (void)state;
        ft_abs(dev, sizeof(dev), "/dev/vdb");
        fd = open(dev, O_WRONLY | O_TRUNC | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(ftruncate(fd, 20 << 20), 0); /* room for the 16 MiB LUKS2 header */
        close(fd);
        assert_int_equal(keychain_parse("keyfile:/keys/good", &chain), 0);
        assert_int_equal(keysrc_fetch(&chain.src[0], &kc, &key), 0);
        assert_int_equal(luks_token_build(&chain.src[0], token, sizeof(token)), 0);
        e.key = key;
        e.token = token;
        assert_int_equal(luks_format(dev, NULL, 1, &e, false, NULL), 0);
        secret_free(key);

        ops.probe = luks_probe;
        ops.check_header = luks_header_check;
        ops.activate = activate_checked;
        fx.header = HDR_SWAP;
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good rd.thaw.timeout=0", &ops),
                         RESUME_NO_IMAGE);
        assert_true(said("as /dev/mapper/thaw-swap with keyfile:/keys/good"));
        assert_int_equal(fx.activations, 1);
}

static void test_no_key_reasons(void **state)
{
        char want[PATH_MAX + 256];

        (void)state;
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/bad,keyfile:/keys/missing",
                             &fake_ops), RESUME_NO_KEY);
        snprintf(want, sizeof(want), "no key source unlocked %s/dev/vdb (keyfile:/keys/bad: wrong key; "
                 "keyfile:/keys/missing: not found): boot continues without resume; the image, if any, "
                 "is kept", ft_root);
        assert_string_equal(last(), want);
        assert_int_equal(fx.activations, 1);
        assert_int_equal(fx.handoffs, 0);
        /* Each failure that leaves a source to try is told at once, in its own line. */
        assert_true(said("cannot get the key from keyfile:/keys/bad (wrong key): trying keyfile:/keys/missing"));
        assert_false(said("cannot get the key from keyfile:/keys/missing"));
}

/* A tpm2 source on a device without a TPM and without a thaw-tpm2 token: one line, the next source. */
static void test_tpm2_then_keyfile(void **state)
{
        (void)state;
        fx.header = HDR_SWAP;
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=tpm2,keyfile:/keys/good", &fake_ops),
                         RESUME_NO_IMAGE);
        assert_true(said("cannot get the key from tpm2 (no thaw-tpm2 token on the device"));
        assert_true(said("with keyfile:/keys/good (key "));
}

/*
 * A passphrase opens argon2 keyslots within half of MemTotal only: the refusal is said in the
 * source's line, and with more RAM the same keyslot opens.
 */
static void test_passphrase_memory(void **state)
{
        char want[PATH_MAX + 512];

        (void)state;
        ft_puts("/proc/meminfo", "MemTotal:        1000000 kB\nMemFree: 1 kB\nAnonPages: 1 kB\nShmem: 1 kB\n");
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/bad,passphrase", &passphrase_ops),
                         RESUME_NO_KEY);
        assert_int_equal(passphrase_limit, 500000);
        snprintf(want, sizeof(want), "no key source unlocked %s/dev/vdb (keyfile:/keys/bad: wrong key; "
                 "passphrase: wrong key (keyslot 1 (argon2id) needs 1048576 KiB of memory, more than half of "
                 "the RAM (500000 KiB): not tried)): boot continues without resume; the image, if any, is kept",
                 ft_root);
        assert_string_equal(last(), want);
        fx.said = 0;
        ft_puts("/proc/meminfo", "MemTotal:        4000000 kB\nMemFree: 1 kB\nAnonPages: 1 kB\nShmem: 1 kB\n");
        run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/bad,passphrase", &passphrase_ops);
        assert_int_equal(passphrase_limit, 2000000);
        assert_true(said("as /dev/mapper/thaw-swap with passphrase"));
        /* Never before an unattended source: the chain is refused as a whole. */
        fx.said = 0;
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=passphrase,keyfile:/keys/good", &passphrase_ops),
                         RESUME_NO_KEY);
        assert_true(said("rd.thaw.key=passphrase,keyfile:/keys/good is not a valid key source chain"));
}

/*
 * A source before the passphrase that waits out the whole deadline (tpm2 on a host without a TPM)
 * leaves the person at the console rd.thaw.timeout= of their own, not nothing.
 */
static void test_passphrase_own_window(void **state)
{
        (void)state;
        ft_puts("/proc/meminfo", "MemTotal:        4000000 kB\nMemFree: 1 kB\nAnonPages: 1 kB\nShmem: 1 kB\n");
        slow_sources = true;
        passphrase_left_ms = -1;
        run("rd.thaw.device=/dev/vdb rd.thaw.timeout=1 rd.thaw.key=keyfile:/keys/good,passphrase",
            &passphrase_ops);
        slow_sources = false;
        assert_true(said("as /dev/mapper/thaw-swap with passphrase"));
        assert_true(passphrase_left_ms > 0 && passphrase_left_ms <= 1000);
}

/* No rd.thaw.key= and no key= in thaw.conf: nothing is unlocked, whatever the device says. */
static void test_no_key_configured(void **state)
{
        char want[PATH_MAX + 256];

        (void)state;
        fx.header = HDR_IMAGE;
        ft_puts("/etc/thaw/thaw.conf", "device=/dev/vdb\nname=thaw-swap\n");
        assert_int_equal(run("root=/dev/vda", &fake_ops), RESUME_NO_KEY_SOURCE);
        snprintf(want, sizeof(want), "no key source configured for %s/dev/vdb (rd.thaw.key= or key= in "
                 "/etc/thaw/thaw.conf): boot continues without resume; the image, if any, is kept",
                 ft_root);
        assert_string_equal(last(), want);
        assert_int_equal(fx.activations + fx.handoffs, 0);
        assert_string_equal(ft_read("/sys/power/resume"), "0:0\n");
        fx.said = 0;
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=bogus:x", &fake_ops), RESUME_NO_KEY);
        assert_non_null(strstr(last(), "rd.thaw.key=bogus:x is not a valid key source chain"));
        assert_int_equal(fx.activations, 0);
}

static void test_activation_error_stops_chain(void **state)
{
        (void)state;
        fx.activate_err = -ENODEV;
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good,keyfile:/keys/bad",
                             &fake_ops), RESUME_NO_KEY);
        assert_int_equal(fx.activations, 1);
        assert_non_null(strstr(last(), "keyfile:/keys/good: activation failed: No such device)"));
}

/*
 * Security: the thaw-* tokens of a real LUKS2 header do not choose the key source. The token names
 * a key file that opens the device; without rd.thaw.key= it is never read and nothing is unlocked.
 */
static void test_tokens_ignored(void **state)
{
        struct keysrc_ctx kc = { .root = ft_root };
        struct keysrc_enrollment e = { 0 };
        char token[LUKS_TOKEN_JSON_MAX];
        struct secret *key = NULL;
        struct keychain chain;
        char dev[PATH_MAX], want[PATH_MAX + 256];
        int fd;

        (void)state;
        ft_abs(dev, sizeof(dev), "/dev/vdb");
        fd = open(dev, O_WRONLY | O_TRUNC | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(ftruncate(fd, 20 << 20), 0); /* room for the 16 MiB LUKS2 header */
        close(fd);
        assert_int_equal(keychain_parse("keyfile:/keys/good", &chain), 0);
        assert_int_equal(keysrc_fetch(&chain.src[0], &kc, &key), 0);
        assert_int_equal(luks_token_build(&chain.src[0], token, sizeof(token)), 0);
        e.key = key;
        e.token = token;
        assert_int_equal(luks_format(dev, NULL, 1, &e, false, NULL), 0);
        secret_free(key);
        assert_int_equal(luks_token_sources(dev, &chain), 0);
        assert_int_equal(chain.n, 1); /* the header does name keyfile:/keys/good */

        assert_int_equal(run("rd.thaw.device=/dev/vdb", &resume_default_ops), RESUME_NO_KEY_SOURCE);
        snprintf(want, sizeof(want), "no key source configured for %s (rd.thaw.key= or key= in "
                 "/etc/thaw/thaw.conf): boot continues without resume; the image, if any, is kept", dev);
        assert_string_equal(last(), want);
        assert_false(said("unlocked"));
        assert_string_equal(ft_read("/sys/power/resume"), "0:0\n");
}

/* The chain is tried in order; the first source that unlocks wins and is named. */
static void test_chain_no_image(void **state)
{
        (void)state;
        fx.header = HDR_SWAP;
        assert_int_equal(run("rd.thaw.device=/dev/vdb "
                             "rd.thaw.key=keyfile:/keys/missing,keyfile:/keys/bad,keyfile:/keys/good",
                             &fake_ops), RESUME_NO_IMAGE);
        assert_int_equal(fx.activations, 2);
        assert_true(said("/dev/vdb as /dev/mapper/thaw-swap with keyfile:/keys/good"));
        assert_string_equal(last(), "no hibernation image on /dev/mapper/thaw-swap: boot continues, swap "
                                    "ready");
        assert_int_equal(fx.handoffs + fx.deactivations, 0);
        assert_string_equal(ft_read("/sys/power/resume"), "0:0\n");
        assert_true(ft_exists("/dev/mapper/thaw-swap")); /* left open for the real system's swap */
}

/* A refused header whose mapping is open already (another tool, a forged token): closed, unread. */
static void test_bad_header_active(void **state)
{
        struct resume_ops ops = fake_ops;
        char want[PATH_MAX + 256];

        (void)state;
        ops.check_header = refusing_header;
        fx.active = 1;
        fx.header = HDR_SWAP;
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good", &ops), RESUME_BAD_HEADER);
        snprintf(want, sizeof(want), "LUKS2 header of %s/dev/vdb refused before any key was tried: segment 0 "
                 "encryption is cipher_null-ecb: not a header thaw wrote; /dev/mapper/thaw-swap was already "
                 "open: mapping closed, boot continues without resume", ft_root);
        assert_string_equal(last(), want);
        assert_int_equal(fx.deactivations, 1);
        assert_int_equal(fx.activations + fx.handoffs, 0);
        assert_false(ft_exists("/dev/mapper/thaw-swap"));
}

/* Neither image nor swap at the offset: the mapping is closed, so nothing swaps over it. */
static void test_foreign_header(void **state)
{
        (void)state;
        fx.header = HDR_OTHER;
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good", &fake_ops),
                         RESUME_FOREIGN);
        assert_string_equal(last(), "no hibernation image and no swap signature on /dev/mapper/thaw-swap "
                                    "at offset 0: mapping closed (an image may sit elsewhere: check "
                                    "resume_offset=; mkswap makes it swap), boot continues without resume");
        assert_int_equal(fx.handoffs, 0);
        assert_int_equal(fx.deactivations, 1);
        assert_false(ft_exists("/dev/mapper/thaw-swap"));
        assert_string_equal(ft_read("/sys/power/resume"), "0:0\n");

        /* The same at a non-zero offset, with plain swap at page 0: still closed. */
        fx.said = fx.deactivations = 0;
        fx.header_at = 5;
        fx.page0 = 1 + HDR_SWAP;
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good resume_offset=5",
                             &fake_ops), RESUME_FOREIGN);
        assert_non_null(strstr(last(), "at offset 5: mapping closed"));
        assert_int_equal(fx.deactivations, 1);
}

/* An ext4 superblock (magic only: libblkid calls it ext2) on page 0 of the mapping. */
static void write_fs_page0(void)
{
        char path[PATH_MAX];
        uint8_t magic[2] = { 0x53, 0xef };
        int fd;

        ft_abs(path, sizeof(path), "/dev/mapper/thaw-swap");
        fd = open(path, O_WRONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(pwrite(fd, magic, 2, 1024 + 56), 2);
        close(fd);
}

static int activate_root(const char *dev, const char *name, const struct secret *key,
                         const struct luks_policy *p)
{
        int r = fake_activate(dev, name, key, p);

        if (r == 0)
                write_fs_page0();
        return r;
}

/*
 * A swap file on an encrypted root (resume_offset= and a file system on the mapping): whatever
 * happens to the image, the mapping stays open, because the boot mounts the root from it.
 */
static void test_root_container_stays_open(void **state)
{
        struct resume_ops ops = fake_ops;

        (void)state;
        ops.activate = activate_root;
        fx.header = HDR_IMAGE;
        fx.header_at = 40;
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good resume_offset=40",
                             &ops), RESUME_KEPT);
        assert_true(said("resuming from /dev/mapper/thaw-swap (253:0, offset 40)"));
        assert_string_equal(ft_read("/sys/power/resume_offset"), "40\n");
        assert_non_null(strstr(last(), "image kept, mapping left open for the file system on it"));
        assert_int_equal(fx.deactivations, 0);
        assert_true(ft_exists("/dev/mapper/thaw-swap"));

        /* No swap signature at the offset (the file was replaced): still open. */
        fx.said = 0;
        fx.header = HDR_OTHER;
        unlink_mapper();
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good resume_offset=40",
                             &ops), RESUME_FOREIGN);
        assert_non_null(strstr(last(), "mapping left open for the file system on it"));
        assert_int_equal(fx.deactivations, 0);

        /* The swap file as it should be: no image, swap ready, open. */
        fx.said = 0;
        fx.header = HDR_SWAP;
        unlink_mapper();
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good resume_offset=40",
                             &ops), RESUME_NO_IMAGE);
        assert_int_equal(fx.deactivations, 0);
}

/* A stale resume_offset= points past an image at page 0: the image is kept, the mapping closed. */
static void test_offsets_disagree(void **state)
{
        static const enum header at_offset[] = { HDR_OTHER, HDR_SWAP };

        (void)state;
        fx.page0 = 1 + HDR_IMAGE;
        fx.header_at = 5;
        for (size_t i = 0; i < 2; i++) {
                fx.said = fx.deactivations = 0;
                fx.header = at_offset[i];
                assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good "
                                     "resume_offset=5", &fake_ops), RESUME_OFFSET_MISMATCH);
                assert_string_equal(last(), "no hibernation image on /dev/mapper/thaw-swap at "
                                            "resume_offset=5, but page 0 holds one: the offsets disagree; "
                                            "image kept, mapping closed, boot continues without resume");
                assert_int_equal(fx.handoffs, 0);
                assert_int_equal(fx.deactivations, 1);
                assert_false(ft_exists("/dev/mapper/thaw-swap"));
        }
        assert_string_equal(ft_read("/sys/power/resume"), "0:0\n");
}

static void test_image_kernel_ignores(void **state)
{
        (void)state;
        fx.header = HDR_IMAGE;
        fx.kernel = KERNEL_IGNORES;
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good", &fake_ops),
                         RESUME_KEPT);
        assert_true(said("resuming from /dev/mapper/thaw-swap (253:0, offset 0)"));
        assert_string_equal(ft_read("/sys/power/resume_offset"), "0\n");
        assert_string_equal(ft_read("/sys/power/resume"), "253:0\n");
        assert_string_equal(last(), "kernel did not look at the image on /dev/mapper/thaw-swap (hibernation "
                                    "unavailable?): image kept, mapping closed");
        assert_int_equal(fx.deactivations, 1);
}

/* Lockdown: /sys/power/disk says [disabled]. The image is not handed over and the mapping is closed. */
static void test_image_hibernation_unavailable(void **state)
{
        char path[PATH_MAX];

        (void)state;
        fx.header = HDR_IMAGE;
        fx.kernel = KERNEL_CONSUMES; /* it would, if it were asked: it must not be */
        ft_puts("/sys/power/disk", "[disabled]\n");
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good", &fake_ops),
                         RESUME_UNAVAILABLE);
        assert_string_equal(last(), "hibernation is unavailable on this boot (/sys/power/disk says "
                                    "[disabled]: hibernation is off (kernel lockdown, Secure Boot or "
                                    "nohibernate)): image on /dev/mapper/thaw-swap kept, mapping closed");
        assert_false(said("resuming from"));
        assert_int_equal(fx.handoffs, 0);
        assert_int_equal(fx.deactivations, 1);
        assert_false(ft_exists("/dev/mapper/thaw-swap"));
        assert_string_equal(ft_read("/sys/power/resume"), "0:0\n");

        /* A kernel without hibernation at all: no /sys/power/disk. */
        fx.said = fx.deactivations = 0;
        ft_abs(path, sizeof(path), "/sys/power/disk");
        assert_int_equal(unlink(path), 0);
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good", &fake_ops),
                         RESUME_UNAVAILABLE);
        assert_non_null(strstr(last(), "kernel built without hibernation): image on /dev/mapper/thaw-swap "
                                       "kept, mapping closed"));
        assert_int_equal(fx.handoffs, 0);
        assert_int_equal(fx.deactivations, 1);
}

static void test_image_consumed(void **state)
{
        (void)state;
        fx.header = HDR_IMAGE;
        fx.kernel = KERNEL_CONSUMES;
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good", &fake_ops),
                         RESUME_CONSUMED);
        assert_string_equal(ft_read("/sys/power/resume"), "253:0\n");
        assert_string_equal(last(), "kernel did not resume the image on /dev/mapper/thaw-swap (it was "
                                    "consumed; see kernel log): boot continues, swap ready");
        assert_int_equal(fx.deactivations, 0);
}

static void test_image_at_offset_from_conf(void **state)
{
        (void)state;
        fx.header = HDR_IMAGE;
        fx.header_at = 5;
        fx.kernel = KERNEL_CONSUMES;
        ft_puts("/etc/thaw/thaw.conf", "device=/dev/vdb\nkey=keyfile:/keys/good\nname=thaw-swap\n");
        assert_int_equal(run("root=/dev/vda resume_offset=5", &fake_ops), RESUME_CONSUMED);
        assert_true(said("resuming from /dev/mapper/thaw-swap (253:0, offset 5)"));
        assert_string_equal(ft_read("/sys/power/resume_offset"), "5\n");
        assert_string_equal(ft_read("/sys/power/resume"), "253:0\n");
}

static void test_handoff_fails_keeps_image(void **state)
{
        char path[PATH_MAX];

        (void)state;
        fx.header = HDR_IMAGE;
        ft_abs(path, sizeof(path), "/sys/power/resume");
        unlink(path);
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good", &fake_ops),
                         RESUME_KEPT);
        assert_true(said("through /sys/power failed (No such file or directory)"));
        assert_int_equal(fx.deactivations, 1);
}

static void test_mapping_never_appears(void **state)
{
        int64_t t0 = now_ms();

        (void)state;
        fx.make_node = 0;
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good rd.thaw.timeout=0",
                             &fake_ops), RESUME_NO_MAPPING);
        assert_true(now_ms() - t0 < 3000);
        assert_non_null(strstr(last(), "/dev/mapper/thaw-swap did not appear after unlocking"));
        assert_int_equal(fx.deactivations, 1);
}

static void test_custom_name(void **state)
{
        (void)state;
        fx.header = HDR_SWAP;
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good rd.thaw.name=cswap",
                             &fake_ops), RESUME_NO_IMAGE);
        assert_true(ft_exists("/dev/mapper/cswap"));
        assert_string_equal(last(), "no hibernation image on /dev/mapper/cswap: boot continues, swap ready");
}

/* The checks pass: the image goes to the kernel, and the line says what was compared. */
static void test_checks_pass(void **state)
{
        (void)state;
        fx.header = HDR_IMAGE;
        fx.kernel = KERNEL_CONSUMES;
        ft_puts("/proc/zoneinfo", "Node 0, zone DMA32\n        present  196478\n");
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good", &fake_ops),
                         RESUME_CONSUMED);
        assert_true(said("image checks passed in "));
        assert_true(said(" ms: 3 pages, none, made with 768 MiB (as here), e820 checksum 00000000 (not "
                         "checked)"));
        assert_int_equal(fx.handoffs, 1);
        assert_string_equal(ft_read("/run/thaw/state"), "outcome=consumed\nreason=\n"
                            "device=/dev/mapper/thaw-swap\nmessage=kernel did not resume the image on "
                            "/dev/mapper/thaw-swap (it was consumed; see kernel log): boot continues, swap "
                            "ready\n");
}

/*
 * A mapping whose live table is not what the header says (a segment switched to cipher_null, an
 * attacker's image in the clear behind it): closed before anything reads through it.
 */
static void test_bad_mapping_closed_unread(void **state)
{
        char why[64];

        (void)state;
        fx.header = HDR_IMAGE;
        fx.mapping_err = -EPROTO;
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good", &fake_ops),
                         RESUME_BAD_MAPPING);
        assert_int_equal(fx.checks, 1);
        assert_non_null(strstr(fx.check_dev, "/dev/vdb"));
        assert_string_equal(last(), "/dev/mapper/thaw-swap is not mapped as its header says: live table cipher is "
                            "cipher_null-ecb, the header says aes-xts-plain64; mapping closed, boot continues "
                            "without resume");
        /* Nothing read through it: no image line, no handoff; the mapping is gone. */
        assert_int_equal(fx.said, 2);
        assert_non_null(strstr(fx.lines[0], "/dev/vdb as /dev/mapper/thaw-swap with keyfile:"));
        assert_int_equal(fx.handoffs, 0);
        assert_int_equal(fx.deactivations, 1);
        assert_false(ft_exists("/dev/mapper/thaw-swap"));
        snprintf(why, sizeof(why), "%.*s", 34, ft_read("/run/thaw/state"));
        assert_string_equal(why, "outcome=bad-mapping\nreason=\ndevice");
        /* A check that cannot be made refuses too, and says why. */
        memset(&fx.said, 0, sizeof(fx.said));
        fx.mapping_err = -ENXIO;
        fx.deactivations = 0;
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good", &fake_ops),
                         RESUME_BAD_MAPPING);
        assert_non_null(strstr(last(), "is not mapped as its header says: it cannot be checked ("));
        assert_int_equal(fx.deactivations, 1);
}

/* A mapping that was already active (opened by someone else) is checked the same way. */
static void test_bad_mapping_already_active(void **state)
{
        (void)state;
        fx.active = 1;
        fx.mapping_err = -EPROTO;
        write_header("/dev/mapper/thaw-swap", HDR_SWAP, 0);
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good", &fake_ops),
                         RESUME_BAD_MAPPING);
        assert_true(said("/dev/mapper/thaw-swap is already active: using it"));
        assert_int_equal(fx.activations, 0);
        assert_int_equal(fx.checks, 1);
        assert_int_equal(fx.deactivations, 1);
        assert_true(said("is not mapped as its header says"));
        assert_false(said("swap ready"));
        /* And one that passes is used. */
        fx.mapping_err = 0;
        write_header("/dev/mapper/thaw-swap", HDR_SWAP, 0);
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good", &fake_ops),
                         RESUME_NO_IMAGE);
        assert_int_equal(fx.checks, 2);
}

static int poweroffs;

static int fake_poweroff(const char *root)
{
        (void)root;
        poweroffs++;
        return 0; /* as if it had: the real one does not return */
}

static int failing_poweroff(const char *root)
{
        (void)root;
        poweroffs++;
        return -EPERM;
}

/*
 * rd.thaw.mismatch=poweroff (the default; keep means the same): an image a boot with the right
 * memory would resume powers this one off, before anything is mounted: no handoff, the mapping
 * closed, the image as it was, the advice on the console.
 */
static void test_mismatch_poweroff(void **state)
{
        static const char *const cmdlines[] = {
                "rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good",
                "rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good rd.thaw.mismatch=keep",
                "rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good rd.thaw.mismatch=poweroff",
        };
        const char *why = "not resuming the image on /dev/mapper/thaw-swap: image was made with 768 MiB of "
                          "memory, this machine has 1024 MiB; rd.thaw.mismatch=poweroff: powering off before "
                          "anything is mounted, image kept: start the VM again with 768 MiB to resume it, or "
                          "boot with rd.thaw.mismatch=discard to drop it";
        struct resume_ops ops = fake_ops;

        (void)state;
        ops.poweroff = fake_poweroff;
        fx.header = HDR_IMAGE;
        fx.kernel = KERNEL_CONSUMES; /* it would, if it were asked: it must not be */
        ft_puts("/proc/zoneinfo", "        present  3998\n        present  258016\n");
        for (size_t i = 0; i < 3; i++) {
                fx.said = fx.deactivations = poweroffs = 0;
                assert_int_equal(run(cmdlines[i], &ops), RESUME_POWEROFF);
                assert_string_equal(last(), why);
                assert_int_equal(fx.levels[fx.said - 1], LOG_EMERG);
                assert_int_equal(poweroffs, 1);
                assert_int_equal(fx.handoffs, 0);
                assert_int_equal(fx.deactivations, 1);
                assert_false(ft_exists("/dev/mapper/thaw-swap"));
                assert_string_equal(ft_read("/sys/power/resume"), "0:0\n");
        }
        /* A machine that cannot power off goes on, and says so: the image is then superseded. */
        fx.said = poweroffs = 0;
        ops.poweroff = failing_poweroff;
        assert_int_equal(run(cmdlines[0], &ops), RESUME_MISMATCH_KEPT);
        assert_int_equal(poweroffs, 1);
        assert_true(said("cannot power off (Operation not permitted): boot continues without resume"));
}

/* A damaged image is kept the same way, with the defect named. */
static void test_mismatch_malformed(void **state)
{
        (void)state;
        fx.header = HDR_IMAGE;
        fx.kernel = KERNEL_CONSUMES;
        fx.bad_magic = 1;
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good", &fake_ops),
                         RESUME_MISMATCH_KEPT);
        assert_non_null(strstr(last(), "not resuming the image on /dev/mapper/thaw-swap: the image is "
                                       "damaged: the image header is not an x86_64 restore record (magic "
                                       "0); image kept"));
        assert_int_equal(fx.handoffs, 0);
        assert_int_equal(fx.deactivations, 1);
        assert_non_null(strstr(ft_read("/run/thaw/state"), "reason=malformed\n"));
}

/* rd.thaw.verify=1: a chunk the kernel's loader would refuse keeps the image, with the reason. */
static void test_verify(void **state)
{
        (void)state;
        fx.header = HDR_IMAGE;
        fx.kernel = KERNEL_CONSUMES;
        fx.lzo = 1;
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good rd.thaw.verify=1",
                             &fake_ops), RESUME_MISMATCH_KEPT);
        assert_non_null(strstr(last(), "not resuming the image on /dev/mapper/thaw-swap: image data is "
                                       "damaged: chunk 0 has an invalid compressed length (0 bytes); "
                                       "image kept"));
        assert_int_equal(fx.handoffs, 0);
        assert_int_equal(fx.deactivations, 1);
        assert_non_null(strstr(ft_read("/run/thaw/state"), "reason=damaged\n"));
}

/* Off by default: the same image goes to the kernel; an uncompressed one passes the verification. */
static void test_verify_default_off(void **state)
{
        (void)state;
        fx.header = HDR_IMAGE;
        fx.kernel = KERNEL_CONSUMES;
        fx.lzo = 1;
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good", &fake_ops),
                         RESUME_CONSUMED);
        assert_false(said("image verified"));
        fx.lzo = 0;
        fx.said = fx.handoffs = 0;
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good rd.thaw.verify=1",
                             &fake_ops), RESUME_CONSUMED);
        assert_true(said("image verified in "));
        assert_true(said("all 2 pages read; uncompressed images carry no checksum"));
        assert_int_equal(fx.handoffs, 1);
}

/* rd.thaw.mismatch=discard: the swap signature comes back as the kernel would write it; swap ready. */
static void test_mismatch_discard(void **state)
{
        struct swsusp_header h;
        char path[PATH_MAX];

        (void)state;
        fx.header = HDR_IMAGE;
        fx.kernel = KERNEL_CONSUMES;
        ft_puts("/proc/zoneinfo", "        present  262014\n");
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good rd.thaw.mismatch=discard",
                             &fake_ops), RESUME_MISMATCH_DISCARDED);
        assert_string_equal(last(), "not resuming the image on /dev/mapper/thaw-swap: image was made with "
                                    "768 MiB of memory, this machine has 1024 MiB; rd.thaw.mismatch=discard: "
                                    "image discarded, boot continues, swap ready");
        assert_int_equal(fx.handoffs + fx.deactivations, 0);
        ft_abs(path, sizeof(path), "/dev/mapper/thaw-swap");
        assert_int_equal(swsusp_read(path, 0, &h), 0);
        assert_int_equal(h.kind, SWSUSP_SWAP);
        assert_non_null(strstr(ft_read("/run/thaw/state"), "outcome=mismatch-discarded\nreason=memory\n"));
}

static void test_mismatch_bad_value(void **state)
{
        (void)state;
        fx.header = HDR_SWAP;
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good rd.thaw.mismatch=yes",
                             &fake_ops), RESUME_NO_IMAGE);
        assert_true(said("ignoring 1 bad kernel argument(s), the first: \"rd.thaw.mismatch=yes\""));
}

/* Every outcome leaves a state file, not only the image ones. */
static void test_state_without_image(void **state)
{
        (void)state;
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good noresume", &fake_ops),
                         RESUME_NORESUME);
        assert_string_equal(ft_read("/run/thaw/state"), "outcome=noresume\nreason=\ndevice=/dev/vdb\n"
                            "message=noresume given: not unlocking /dev/vdb; an image on it will not be "
                            "resumed\n");
}

/* Every exit of thaw resume extends the lock PCR of a chain naming tpm2, once; the handoff after it. */
static void test_tpm_lock_every_path(void **state)
{
        static const struct {
                const char *cmdline;
                enum header header;
                enum resume_outcome outcome;
                uint32_t pcrs;  /* 0: no lock asked for */
        } cases[] = {
                { "rd.thaw=0 rd.thaw.key=tpm2", HDR_SWAP, RESUME_DISABLED, 1u << 15 },
                { "rd.thaw.device=/dev/vdb rd.thaw.key=tpm2 noresume", HDR_SWAP, RESUME_NORESUME, 1u << 15 },
                { "rd.thaw.device=/dev/vdb rd.thaw.key=tpm2:lock=14,keyfile:/keys/good", HDR_SWAP,
                  RESUME_NO_IMAGE, 1u << 14 },
                { "rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/bad,tpm2", HDR_SWAP, RESUME_NO_KEY, 1u << 15 },
                { "rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good,tpm2", HDR_OTHER, RESUME_FOREIGN,
                  1u << 15 },
                { "rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good,tpm2", HDR_IMAGE, RESUME_KEPT, 1u << 15 },
                { "rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good,tpm2 rd.thaw.timeout=1",
                  HDR_IMAGE, RESUME_KEPT, 1u << 15 },
                { "rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good", HDR_IMAGE, RESUME_KEPT, 0 },
        };
        struct resume_ops ops = fake_ops;

        (void)state;
        ops.tpm_lock = fake_tpm_lock;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                fx.locks = fx.locks_at_handoff = fx.handoffs = 0;
                fx.lock_pcrs = 0;
                fx.said = 0;
                fx.header = cases[i].header;
                assert_int_equal(run(cases[i].cmdline, &ops), cases[i].outcome);
                assert_int_equal(fx.locks, cases[i].pcrs ? 1 : 0);
                assert_int_equal(fx.lock_pcrs, cases[i].pcrs);
                if (cases[i].pcrs)
                        assert_true(said("extended: no thaw-tpm2 key unseals for the rest of this boot"));
                /* The resumed system must not unseal either: locked before the image is handed over. */
                if (fx.handoffs)
                        assert_int_equal(fx.locks_at_handoff, fx.locks);
        }
}

/* A lock that fails is said; the boot goes on with the outcome it had, written as such. */
static void test_tpm_lock_fails(void **state)
{
        struct resume_ops ops = fake_ops;

        (void)state;
        ops.tpm_lock = fake_tpm_lock;
        fx.lock_err = -EIO;
        fx.header = HDR_SWAP;
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good,tpm2", &ops), RESUME_NO_IMAGE);
        assert_string_equal(last(), "cannot extend TPM2 lock PCR 15 (the TPM did not answer): a thaw-tpm2 key may "
                            "still unseal later in this boot");
        assert_non_null(strstr(ft_read("/run/thaw/state"), "no-image"));
        fx.lock_err = -ENODEV;
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good,tpm2", &ops), RESUME_NO_IMAGE);
        assert_string_equal(last(), "no TPM2 device (yet): lock PCR 15 not extended");
}

/* The image ticket (ticket.h, fresh.h): fakes for the token and the file system, the real MAC. */
static struct {
        int have;                     /* the device has a thaw-ticket token */
        struct ticket t;
        int sets;                     /* ticket_set_state() calls */
        int set_handoffs;             /* fx.handoffs when the last one came */
        char set_why[64];
        int fs_changed;               /* the root's mount count went up since the ticket */
        int fs_missing;               /* the root cannot be found at boot */
        int fs_copy;                  /* another device carries the root's UUID, with other markers */
} tk;

static const uint8_t tk_key[TICKET_KEY_SIZE] = { 7, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
                                                 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31 };

static int fake_ticket_key(const char *dev, struct secret **out)
{
        struct secret *k = NULL;

        (void)dev;
        assert_int_equal(secret_new(TICKET_KEY_SIZE, &k), 0);
        memcpy(k->data, tk_key, TICKET_KEY_SIZE);
        k->len = TICKET_KEY_SIZE;
        *out = k;
        return 0;
}

static int fake_ticket_read(const char *dev, struct ticket *t, char *why, size_t size)
{
        (void)dev;
        (void)why;
        (void)size;
        if (!tk.have)
                return -ENOENT;
        *t = tk.t;
        return 0;
}

static int fake_ticket_set_state(const char *dev, enum ticket_state st, const char *why)
{
        (void)dev;
        tk.sets++;
        tk.set_handoffs = fx.handoffs;
        tk.t.state = st;
        tk.t.state_time = time(NULL);
        snprintf(tk.set_why, sizeof(tk.set_why), "%s", why);
        snprintf(tk.t.state_why, sizeof(tk.t.state_why), "%s", why);
        return 0;
}

static int fake_fs_read(const struct fsmark *rec, enum fsmark_level level, char *dev, size_t dsize, struct fsmark *m,
                        char *why, size_t size)
{
        assert_string_equal(rec->type, "ext4");
        assert_string_equal(rec->uuid, tk.t.fs[0].uuid);
        assert_int_equal(level, tk.t.writer == TICKET_WRITER_THAW ? FSMARK_ALL : FSMARK_MOUNT);
        if (tk.fs_missing)
                return -ENOENT;
        if (tk.fs_copy) {
                snprintf(dev, dsize, "/dev/vda");
                snprintf(why, size, "/dev/vdc carries it too, with other markers (mount count 6, recorded 5)");
                return -ENOTUNIQ;
        }
        snprintf(dev, dsize, "/dev/vda");
        *m = tk.t.fs[0];
        if (tk.fs_changed)
                m->mnt_count++;
        return 0;
}

/* A fresh ticket by thaw's writer for one ext4 root, sealed with tk_key. */
static void ticket_fixture(void)
{
        struct secret key = { .len = TICKET_KEY_SIZE, .cap = TICKET_KEY_SIZE, .data = (uint8_t *)tk_key };
        struct fsmark *f;

        memset(&tk, 0, sizeof(tk));
        assert_int_equal(ticket_new(&tk.t), 0);
        tk.t.writer = TICKET_WRITER_THAW;
        tk.t.n_fs = 1;
        f = &tk.t.fs[0];
        snprintf(f->type, sizeof(f->type), "ext4");
        snprintf(f->uuid, sizeof(f->uuid), "0f6c3e0a-1d2b-4c5d-8e9f-a0b1c2d3e4f5");
        f->known = true;
        f->mnt_count = 5;
        f->mtime = 1796000000;
        f->wtime = 1796000100;
        f->kbytes_written = 123456;
        f->has_journal = true;
        f->journal_seq = 42;
        assert_int_equal(ticket_seal(&tk.t, &key), 0);
        tk.have = 1;
}

static struct resume_ops ticket_ops(void)
{
        struct resume_ops ops = fake_ops;

        ops.ticket_read = fake_ticket_read;
        ops.ticket_set_state = fake_ticket_set_state;
        ops.ticket_key = fake_ticket_key;
        ops.fs_read = fake_fs_read;
        ops.poweroff = fake_poweroff;
        return ops;
}

#define TK_CMDLINE "rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good"

/* A fresh, authentic ticket whose file system is as it was: marked consumed, then handed over. */
static void test_ticket_fresh_consumed_before_handoff(void **state)
{
        struct resume_ops ops = ticket_ops();

        (void)state;
        ticket_fixture();
        fx.header = HDR_IMAGE;
        fx.kernel = KERNEL_CONSUMES;
        assert_int_equal(run(TK_CMDLINE, &ops), RESUME_CONSUMED);
        assert_true(said("image ticket verified in "));
        assert_true(said("1 file system(s) as the image left them (every marker)"));
        assert_int_equal(fx.handoffs, 1);
        assert_int_equal(tk.sets, 1);
        assert_int_equal(tk.t.state, TICKET_CONSUMED);
        assert_int_equal(tk.set_handoffs, 0); /* consumed before the kernel saw it */
}

/* Each stale ticket: no handoff, the image dropped (swap signature back), the reason said. */
static void stale_case(const struct resume_ops *ops, const char *needle)
{
        struct swsusp_header h;
        char path[PATH_MAX];

        fx.header = HDR_IMAGE;
        fx.kernel = KERNEL_CONSUMES;
        fx.said = fx.handoffs = 0;
        assert_int_equal(run(TK_CMDLINE, ops), RESUME_STALE);
        assert_true(said(needle));
        assert_true(said("; image discarded, boot continues, swap ready"));
        assert_int_equal(fx.handoffs, 0);
        ft_abs(path, sizeof(path), "/dev/mapper/thaw-swap");
        assert_int_equal(swsusp_read(path, 0, &h), 0);
        assert_int_equal(h.kind, SWSUSP_SWAP);
        assert_non_null(strstr(ft_read("/run/thaw/state"), "outcome=stale\nreason=stale\n"));
}

static void test_ticket_stale(void **state)
{
        struct resume_ops ops = ticket_ops();

        (void)state;
        ticket_fixture();
        tk.t.state = TICKET_SUPERSEDED;
        snprintf(tk.t.state_why, sizeof(tk.t.state_why), "noresume");
        tk.t.state_time = tk.t.time + 720;
        stale_case(&ops, "was superseded by the boot of ");
        assert_true(said("(noresume): resuming it would corrupt file systems it had mounted"));

        ticket_fixture();
        tk.t.state = TICKET_CONSUMED;
        stale_case(&ops, "was already resumed once, at ");

        ticket_fixture();
        tk.fs_changed = 1;
        stale_case(&ops, "is older than its file systems: ext4 0f6c3e0a-1d2b-4c5d-8e9f-a0b1c2d3e4f5 on /dev/vda "
                         "changed since it was made (");
        assert_true(said("mount count"));
        /* The state was fresh: this boot goes on, so it is superseded too. */
        assert_int_equal(tk.t.state, TICKET_SUPERSEDED);

        /* Security: edited offline (any authenticated field): refused before any field is believed. */
        ticket_fixture();
        tk.t.time += 1;
        stale_case(&ops, "its ticket does not verify (edited, or not made with this volume's key)");
        ticket_fixture();
        tk.t.fs[0].mnt_count += 1;
        tk.fs_changed = 0;
        stale_case(&ops, "its ticket does not verify");
}

/* Security: a copy of the root attached beside it, with other markers: refused, whichever one udev named. */
static void test_ticket_fs_copy(void **state)
{
        struct resume_ops ops = ticket_ops();

        (void)state;
        ticket_fixture();
        tk.fs_copy = 1;
        stale_case(&ops, "ext4 0f6c3e0a-1d2b-4c5d-8e9f-a0b1c2d3e4f5 is on /dev/vda and on another device that "
                         "differs (/dev/vdc carries it too, with other markers (mount count 6, recorded 5)): thaw "
                         "cannot tell which one the image had mounted");
        assert_int_equal(tk.t.state, TICKET_SUPERSEDED);
}

static int failing_fs_read(const struct fsmark *rec, enum fsmark_level level, char *dev, size_t dsize,
                           struct fsmark *m, char *why, size_t size)
{
        (void)rec;
        (void)level;
        (void)m;
        snprintf(dev, dsize, "/dev/vda");
        snprintf(why, size, "journal block 9 has no valid header");
        return -EBADMSG;
}

/* Security: a file system found but unreadable is refused, not skipped. */
static void test_ticket_fs_unreadable(void **state)
{
        struct resume_ops ops = ticket_ops();

        (void)state;
        ticket_fixture();
        ops.fs_read = failing_fs_read;
        stale_case(&ops, "the markers of ext4 0f6c3e0a-1d2b-4c5d-8e9f-a0b1c2d3e4f5 on /dev/vda cannot be read "
                         "(journal block 9 has no valid header), so thaw cannot tell whether it changed since");
}

/*
 * Security: the ticket of thaw's writer names its image (header CRC32, first map block, pages): an
 * older image put back under the current header is refused, even with the ticket fresh.
 */
static void test_ticket_image_head(void **state)
{
        struct secret key = { .len = TICKET_KEY_SIZE, .cap = TICKET_KEY_SIZE, .data = (uint8_t *)tk_key };
        struct resume_ops ops = ticket_ops();

        (void)state;
        ticket_fixture();
        tk.t.has_image_head = true;
        tk.t.image_crc32 = 0; /* the fixture image: no CRC32, map at block 1, 3 pages */
        tk.t.image_first_map = 1;
        tk.t.image_pages = 3;
        assert_int_equal(ticket_seal(&tk.t, &key), 0);
        fx.header = HDR_IMAGE;
        fx.kernel = KERNEL_CONSUMES;
        assert_int_equal(run(TK_CMDLINE, &ops), RESUME_CONSUMED);
        ticket_fixture();
        tk.t.has_image_head = true;
        tk.t.image_crc32 = 0x1234;
        tk.t.image_first_map = 1;
        tk.t.image_pages = 3;
        assert_int_equal(ticket_seal(&tk.t, &key), 0);
        stale_case(&ops, "the image on the device is not the one its ticket was made for (CRC32 00000000, ticket "
                         "00001234): an older image put back?");
}

/* A file system that is not there at boot is not checked, and the note says so. */
static void test_ticket_fs_missing(void **state)
{
        struct resume_ops ops = ticket_ops();

        (void)state;
        ticket_fixture();
        tk.fs_missing = 1;
        fx.header = HDR_IMAGE;
        fx.kernel = KERNEL_CONSUMES;
        assert_int_equal(run(TK_CMDLINE, &ops), RESUME_CONSUMED);
        assert_true(said("0 file system(s) as the image left them (every marker); not checked: ext4 "
                         "0f6c3e0a-1d2b-4c5d-8e9f-a0b1c2d3e4f5 (not found at boot)"));
}

/* With the kernel's writer only the mount count and time are compared. */
static void test_ticket_kernel_writer(void **state)
{
        struct resume_ops ops = ticket_ops();
        struct secret key = { .len = TICKET_KEY_SIZE, .cap = TICKET_KEY_SIZE, .data = (uint8_t *)tk_key };

        (void)state;
        ticket_fixture();
        tk.t.writer = TICKET_WRITER_KERNEL;
        assert_int_equal(ticket_seal(&tk.t, &key), 0);
        fx.header = HDR_IMAGE;
        fx.kernel = KERNEL_CONSUMES;
        assert_int_equal(run(TK_CMDLINE, &ops), RESUME_CONSUMED);
        assert_true(said("mount count and time only: the kernel wrote the image"));
        ticket_fixture();
        tk.t.writer = TICKET_WRITER_KERNEL;
        assert_int_equal(ticket_seal(&tk.t, &key), 0);
        tk.fs_changed = 1;
        stale_case(&ops, "is older than its file systems");
}

/*
 * No ticket: thaw cannot tell the image fresh and never resumes it. Security: not a power-off,
 * whatever the policy, or deleting the token (no key needed) would stop the VM at every boot.
 */
static void test_ticket_missing(void **state)
{
        static const char *const cmdlines[] = { TK_CMDLINE, TK_CMDLINE " rd.thaw.mismatch=discard" };
        struct resume_ops ops = ticket_ops();
        struct swsusp_header h;
        char path[PATH_MAX];

        (void)state;
        for (size_t i = 0; i < 2; i++) {
                ticket_fixture();
                tk.have = 0;
                fx.header = HDR_IMAGE;
                fx.kernel = KERNEL_CONSUMES;
                fx.said = fx.handoffs = poweroffs = 0;
                assert_int_equal(run(cmdlines[i], &ops), RESUME_STALE);
                assert_true(said("the image has no thaw ticket (written without thaw hibernate, or by an older "
                                 "thaw): thaw cannot tell whether a boot went on without it, and never resumes it; "
                                 "image discarded, boot continues, swap ready"));
                assert_int_equal(poweroffs, 0);
                assert_int_equal(fx.handoffs, 0);
                ft_abs(path, sizeof(path), "/dev/mapper/thaw-swap");
                assert_int_equal(swsusp_read(path, 0, &h), 0);
                assert_int_equal(h.kind, SWSUSP_SWAP);
                assert_non_null(strstr(ft_read("/run/thaw/state"), "outcome=stale\nreason=no-ticket\n"));
        }
}

/* A boot that goes on with an image present supersedes its ticket, with the reason; once. */
static void test_ticket_superseded_when_boot_goes_on(void **state)
{
        static const struct {
                const char *cmdline;
                enum resume_outcome o;
                const char *why;
        } cases[] = {
                { TK_CMDLINE " noresume", RESUME_NORESUME, "noresume" },
                { "rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/bad", RESUME_NO_KEY, "no-key" },
                { "rd.thaw.device=/dev/vdb", RESUME_NO_KEY_SOURCE, "no-key-source" },
                { TK_CMDLINE " rd.thaw.mismatch=discard", RESUME_MISMATCH_DISCARDED, "mismatch-discarded" },
        };
        struct resume_ops ops = ticket_ops();

        (void)state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                ticket_fixture();
                fx.header = HDR_IMAGE;
                fx.kernel = KERNEL_CONSUMES;
                fx.said = fx.handoffs = 0;
                ft_puts("/proc/zoneinfo", "        present  262014\n"); /* 1024 MiB: the image needs 768 */
                assert_int_equal(run(cases[i].cmdline, &ops), cases[i].o);
                assert_int_equal(fx.handoffs, 0);
                assert_int_equal(tk.sets, 1);
                assert_int_equal(tk.t.state, TICKET_SUPERSEDED);
                assert_string_equal(tk.set_why, cases[i].why);
                assert_true(said("superseded") && (said("it will never be resumed") || said("no image of it")));
                assert_non_null(strstr(ft_read("/run/thaw/state"), "ticket="));
                /* Already superseded: the next boot does not write it again. */
                fx.said = 0;
                tk.sets = 0;
                run(cases[i].cmdline, &ops);
                assert_int_equal(tk.sets, 0);
        }
}

/*
 * Power cut in thaw's writer after the ticket, before the header's mark: a fresh ticket and no
 * image. The boot goes on quietly and the ticket is superseded, so no later copy of an image can
 * ride on it.
 */
static void test_ticket_without_image(void **state)
{
        struct resume_ops ops = ticket_ops();

        (void)state;
        ticket_fixture();
        fx.header = HDR_SWAP;
        assert_int_equal(run(TK_CMDLINE, &ops), RESUME_NO_IMAGE);
        assert_int_equal(tk.sets, 1);
        assert_int_equal(tk.t.state, TICKET_SUPERSEDED);
        assert_string_equal(tk.set_why, "no-image");
        assert_true(said("marked superseded (no-image): no image of it is left to resume"));
}

/* A boot that powers off does not supersede (the image can still be resumed), nor does a refused header. */
static void test_ticket_kept_by_poweroff_and_bad_header(void **state)
{
        struct resume_ops ops = ticket_ops();

        (void)state;
        ticket_fixture();
        fx.header = HDR_IMAGE;
        fx.kernel = KERNEL_CONSUMES;
        ft_puts("/proc/zoneinfo", "        present  262014\n");
        assert_int_equal(run(TK_CMDLINE, &ops), RESUME_POWEROFF);
        assert_int_equal(tk.sets, 0);
        assert_int_equal(tk.t.state, TICKET_FRESH);
        ops.check_header = refusing_header;
        fx.said = 0;
        assert_int_equal(run(TK_CMDLINE " noresume", &ops), RESUME_NORESUME);
        assert_int_equal(run(TK_CMDLINE, &ops), RESUME_BAD_HEADER);
        assert_int_equal(tk.sets, 0);
}

/* The TPM2 counter (tpm2_counter.h): a fake TPM that checks it is asked under the ticket key. */
static struct {
        uint64_t value;
        int read_err, incr_err;
        int reads, incrs;
        int incr_handoffs, incr_sets;  /* fx.handoffs and tk.sets when the increment came */
} ctr;

static int fake_counter_read(const char *root, const char *dev, const struct secret *key, int64_t deadline_ms,
                             uint64_t *value, char *why, size_t size)
{
        (void)root;
        (void)dev;
        assert_true(deadline_ms > 0);
        assert_memory_equal(key->data, tk_key, TICKET_KEY_SIZE);
        ctr.reads++;
        if (ctr.read_err) {
                snprintf(why, size, "no TPM2 device (/dev/tpmrm0) appeared within the timeout");
                return ctr.read_err;
        }
        *value = ctr.value;
        return 0;
}

static int fake_counter_increment(const char *root, const char *dev, const struct secret *key, int64_t deadline_ms,
                                  uint64_t *value, char *why, size_t size)
{
        (void)root;
        (void)dev;
        assert_true(deadline_ms > 0);
        assert_memory_equal(key->data, tk_key, TICKET_KEY_SIZE);
        ctr.incrs++;
        ctr.incr_handoffs = fx.handoffs;
        ctr.incr_sets = tk.sets;
        if (ctr.incr_err) {
                snprintf(why, size, "the TPM did not answer");
                return ctr.incr_err;
        }
        *value = ++ctr.value;
        return 0;
}

/* ticket_fixture() whose ticket records TPM counter value v; the TPM's counter at now. */
static void counter_fixture(uint64_t v, uint64_t now)
{
        struct secret key = { .len = TICKET_KEY_SIZE, .cap = TICKET_KEY_SIZE, .data = (uint8_t *)tk_key };

        ticket_fixture();
        tk.t.has_tpm_counter = true;
        tk.t.tpm_counter = v;
        assert_int_equal(ticket_seal(&tk.t, &key), 0);
        memset(&ctr, 0, sizeof(ctr));
        ctr.value = now;
        fx.header = HDR_IMAGE;
        fx.kernel = KERNEL_CONSUMES;
        fx.said = fx.handoffs = 0;
}

static struct resume_ops counter_ops(void)
{
        struct resume_ops ops = ticket_ops();

        ops.tpm_counter_read = fake_counter_read;
        ops.tpm_counter_increment = fake_counter_increment;
        return ops;
}

/* The counter holds the ticket's value: resumed; incremented after the consumed mark, before the handoff. */
static void test_counter_equal_passes(void **state)
{
        struct resume_ops ops = counter_ops();

        (void)state;
        counter_fixture(5, 5);
        assert_int_equal(run(TK_CMDLINE, &ops), RESUME_CONSUMED);
        assert_true(said("1 file system(s) as the image left them (every marker); TPM2 counter 5 as its ticket says"));
        assert_true(said("TPM2 counter incremented to 6: this image can never pass again"));
        assert_int_equal(fx.handoffs, 1);
        assert_int_equal(ctr.reads, 1);
        assert_int_equal(ctr.incrs, 1);
        assert_int_equal(ctr.value, 6);
        assert_int_equal(ctr.incr_sets, 1);     /* after the consumed mark */
        assert_int_equal(ctr.incr_handoffs, 0); /* before the kernel saw it */

        /* A ticket without a counter (a device without a thaw-tpm2 token): the TPM is not asked. */
        counter_fixture(5, 5);
        ticket_fixture();
        fx.header = HDR_IMAGE;
        fx.kernel = KERNEL_CONSUMES;
        assert_int_equal(run(TK_CMDLINE, &ops), RESUME_CONSUMED);
        assert_int_equal(ctr.reads + ctr.incrs, 0);
}

/* An older copy put back: the counter is ahead of its ticket; dropped, and the counter left as it is. */
static void test_counter_older_refused(void **state)
{
        struct resume_ops ops = counter_ops();

        (void)state;
        counter_fixture(3, 5);
        stale_case(&ops, "is 2 hibernations old: the TPM2 counter is at 5, its ticket says 3 (an older copy of the "
                         "swap device put back): resuming it would corrupt file systems");
        assert_int_equal(ctr.incrs, 0);
        assert_int_equal(ctr.value, 5);
        assert_int_equal(tk.t.state, TICKET_SUPERSEDED);

        /* Security: the counter taken out of the ticket offline: the MAC fails first. */
        counter_fixture(3, 5);
        tk.t.has_tpm_counter = false;
        stale_case(&ops, "its ticket does not verify (edited, or not made with this volume's key)");
        assert_int_equal(ctr.reads, 0);
}

/* Behind, or no TPM to read it: nothing resumed, the image kept for a boot with its TPM (the policy). */
static void test_counter_unproven(void **state)
{
        struct resume_ops ops = counter_ops();

        (void)state;
        counter_fixture(5, 3);
        poweroffs = 0;
        assert_int_equal(run(TK_CMDLINE, &ops), RESUME_POWEROFF);
        assert_true(said("the TPM2 counter (3) is behind the ticket of the image of "));
        assert_true(said("(5): another TPM, or its state was rolled back; rd.thaw.mismatch=poweroff: powering off "
                         "before anything is mounted, image kept: start the VM again with the TPM it hibernated "
                         "with to resume it, or boot with rd.thaw.mismatch=discard to drop it"));
        assert_int_equal(poweroffs, 1);
        assert_int_equal(fx.handoffs + ctr.incrs + tk.sets, 0);
        assert_non_null(strstr(ft_read("/run/thaw/state"), "reason=tpm-counter\n"));

        counter_fixture(5, 5);
        ctr.read_err = -ENODEV;
        assert_int_equal(run(TK_CMDLINE, &ops), RESUME_POWEROFF);
        assert_true(said("cannot be checked against the TPM2 counter its ticket names (value 5): no TPM2 device "
                         "(/dev/tpmrm0) appeared within the timeout"));
        assert_int_equal(fx.handoffs + ctr.incrs + tk.sets, 0);

        /* Without a TPM op at all (a build or a boot with no TPM): the same. */
        counter_fixture(5, 5);
        ops.tpm_counter_read = NULL;
        assert_int_equal(run(TK_CMDLINE " rd.thaw.mismatch=discard", &ops), RESUME_MISMATCH_DISCARDED);
        assert_int_equal(fx.handoffs, 0);
}

/* No increment, no handoff: the ticket is consumed already, and the image is not resumed. */
static void test_counter_increment_fails(void **state)
{
        struct resume_ops ops = counter_ops();

        (void)state;
        counter_fixture(5, 5);
        ctr.incr_err = -ETIMEDOUT;
        assert_int_equal(run(TK_CMDLINE, &ops), RESUME_KEPT);
        assert_true(said("cannot increment the TPM2 counter of "));
        assert_true(said("(the TPM did not answer)"));
        assert_true(said("its ticket is consumed, and without the TPM2 counter a copy of it could pass again"));
        assert_int_equal(fx.handoffs, 0);
        assert_int_equal(tk.t.state, TICKET_CONSUMED);
}

/*
 * The state's message is the outcome's line, not the last line said: the TPM lock, the ticket's
 * supersede and a failed power-off are said after it.
 */
static void test_state_message_said_after(void **state)
{
        const char *poweroff = "not resuming the image on /dev/mapper/thaw-swap: image was made with 768 MiB of "
                               "memory, this machine has 1024 MiB; rd.thaw.mismatch=poweroff: powering off before "
                               "anything is mounted, image kept: start the VM again with 768 MiB to resume it, or "
                               "boot with rd.thaw.mismatch=discard to drop it";
        struct resume_ops ops = fake_ops;
        char want[PATH_MAX + 256];

        (void)state;
        ops.tpm_lock = fake_tpm_lock;
        fx.lock_err = -EIO;
        fx.header = HDR_SWAP;
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/good,tpm2", &ops), RESUME_NO_IMAGE);
        assert_non_null(strstr(last(), "cannot extend TPM2 lock PCR 15"));
        assert_string_equal(left_state()->message, "no hibernation image on /dev/mapper/thaw-swap: boot continues, "
                            "swap ready");

        ops = ticket_ops();
        ticket_fixture();
        fx.header = HDR_IMAGE;
        fx.said = 0;
        unlink_mapper();
        assert_int_equal(run("rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/bad", &ops), RESUME_NO_KEY);
        assert_non_null(strstr(last(), "superseded by this boot (no-key)"));
        snprintf(want, sizeof(want), "no key source unlocked %s/dev/vdb (keyfile:/keys/bad: wrong key): boot "
                 "continues without resume; the image, if any, is kept", ft_root);
        assert_string_equal(left_state()->message, want);

        /* Still here after the power-off: mismatch-kept, and its line is the one that said why. */
        ticket_fixture();
        ops.poweroff = failing_poweroff;
        fx.said = 0;
        ft_puts("/proc/zoneinfo", "        present  262014\n");
        assert_int_equal(run(TK_CMDLINE, &ops), RESUME_MISMATCH_KEPT);
        assert_true(said("cannot power off (Operation not permitted): boot continues without resume"));
        assert_non_null(strstr(last(), "superseded by this boot (mismatch-kept)"));
        assert_string_equal(left_state()->outcome, "mismatch-kept");
        assert_string_equal(left_state()->reason, "memory");
        assert_string_equal(left_state()->message, poweroff);
}

/*
 * noresume's line comes first and is the outcome's: the wait for the device and a refused header,
 * said after it, are not the state's message.
 */
static void test_state_message_noresume(void **state)
{
        struct resume_ops ops = fake_ops;

        (void)state;
        assert_int_equal(run("rd.thaw.device=/dev/vdq rd.thaw.timeout=1 noresume", &fake_ops), RESUME_NORESUME);
        assert_string_equal(last(), "waiting up to 1 s for /dev/vdq");
        assert_string_equal(left_state()->message, "noresume given: not unlocking /dev/vdq; an image on it will not "
                            "be resumed");

        ops.check_header = refusing_header;
        fx.said = 0;
        assert_int_equal(run(TK_CMDLINE " noresume", &ops), RESUME_NORESUME);
        assert_non_null(strstr(last(), "refused before any key was tried"));
        assert_string_equal(left_state()->message, "noresume given: not unlocking /dev/vdb; an image on it will not "
                            "be resumed");
}

static int probe_not_luks(const char *dev)
{
        (void)dev;
        return 0;
}

/*
 * Set up a boot that ends in outcome o, one of the paths tested above, with a fresh ticket for
 * the image the fixture holds unless o needs otherwise; returns its command line.
 */
static const char *outcome_case(enum resume_outcome o, struct resume_ops *ops)
{
        *ops = ticket_ops();
        ticket_fixture();
        fx.header = HDR_IMAGE;
        fx.kernel = KERNEL_CONSUMES;
        switch (o) {
        case RESUME_DISABLED:
                return "rd.thaw=0";
        case RESUME_NO_DEVICE:
                return "root=/dev/vda";
        case RESUME_NORESUME:
                return TK_CMDLINE " noresume";
        case RESUME_BAD_DEVICE:
                return "rd.thaw.device=vdb";
        case RESUME_DEVICE_TIMEOUT:
                return "rd.thaw.device=/dev/vdq rd.thaw.timeout=0";
        case RESUME_NOT_LUKS:
                ops->probe = probe_not_luks;
                break;
        case RESUME_BAD_HEADER:
                ops->check_header = refusing_header;
                break;
        case RESUME_NO_KEY_SOURCE:
                return "rd.thaw.device=/dev/vdb";
        case RESUME_NO_KEY:
                return "rd.thaw.device=/dev/vdb rd.thaw.key=keyfile:/keys/bad";
        case RESUME_NO_MAPPING:
                fx.make_node = 0;
                return TK_CMDLINE " rd.thaw.timeout=0";
        case RESUME_BAD_MAPPING:
                fx.mapping_err = -EPROTO;
                break;
        case RESUME_NO_IMAGE:
                fx.header = HDR_SWAP;
                break;
        case RESUME_FOREIGN:
                fx.header = HDR_OTHER;
                break;
        case RESUME_OFFSET_MISMATCH:
                fx.header = HDR_SWAP;
                fx.header_at = 5;
                fx.page0 = 1 + HDR_IMAGE;
                return TK_CMDLINE " resume_offset=5";
        case RESUME_UNAVAILABLE:
                ft_puts("/sys/power/disk", "[disabled]\n");
                break;
        case RESUME_CONSUMED:
                break;
        case RESUME_KEPT:
                fx.kernel = KERNEL_IGNORES;
                break;
        case RESUME_MISMATCH_KEPT:
                fx.bad_magic = 1;
                break;
        case RESUME_MISMATCH_DISCARDED:
                ft_puts("/proc/zoneinfo", "        present  262014\n");
                return TK_CMDLINE " rd.thaw.mismatch=discard";
        case RESUME_STALE:
                tk.have = 0;
                break;
        case RESUME_POWEROFF:
                ft_puts("/proc/zoneinfo", "        present  262014\n");
                break;
        }
        return TK_CMDLINE;
}

/* Every outcome leaves its own line, as said once, for thaw status (man thaw(8), MESSAGES). */
static void test_state_message_every_outcome(void **state)
{
        static const char *const lines[] = {
                [RESUME_DISABLED] = "resume disabled (rd.thaw=0)",
                [RESUME_NO_DEVICE] = "no device configured (rd.thaw.device=): nothing to do",
                [RESUME_NORESUME] = "noresume given: not unlocking /dev/vdb",
                [RESUME_BAD_DEVICE] = "rd.thaw.device=vdb is not UUID=",
                [RESUME_DEVICE_TIMEOUT] = "device /dev/vdq did not appear within 0 s",
                [RESUME_NOT_LUKS] = "/dev/vdb is not a LUKS2 container",
                [RESUME_BAD_HEADER] = "/dev/vdb refused before any key was tried",
                [RESUME_NO_KEY_SOURCE] = "no key source configured for ",
                [RESUME_NO_KEY] = "no key source unlocked ",
                [RESUME_NO_MAPPING] = "/dev/mapper/thaw-swap did not appear after unlocking",
                [RESUME_BAD_MAPPING] = "/dev/mapper/thaw-swap is not mapped as its header says",
                [RESUME_NO_IMAGE] = "no hibernation image on /dev/mapper/thaw-swap: boot continues, swap ready",
                [RESUME_FOREIGN] = "no hibernation image and no swap signature on /dev/mapper/thaw-swap",
                [RESUME_OFFSET_MISMATCH] = "the offsets disagree; image kept",
                [RESUME_UNAVAILABLE] = "hibernation is unavailable on this boot",
                [RESUME_CONSUMED] = "kernel did not resume the image on /dev/mapper/thaw-swap",
                [RESUME_KEPT] = "kernel did not look at the image on /dev/mapper/thaw-swap",
                [RESUME_MISMATCH_KEPT] = "image kept, mapping closed, boot continues without resume (rd.thaw.mismatch=",
                [RESUME_MISMATCH_DISCARDED] = "rd.thaw.mismatch=discard: image discarded",
                [RESUME_STALE] = "image discarded, boot continues, swap ready",
                [RESUME_POWEROFF] = "rd.thaw.mismatch=poweroff: powering off before anything is mounted",
        };
        struct resume_ops ops;

        for (int o = RESUME_DISABLED; o <= RESUME_POWEROFF; o++) {
                const char *cmdline, *name = resume_outcome_name((enum resume_outcome)o);
                const struct state *s;

                assert_int_equal(ft_teardown(state), 0);
                assert_int_equal(setup(state), 0);
                cmdline = outcome_case((enum resume_outcome)o, &ops);
                assert_int_equal(run(cmdline, &ops), o);
                s = left_state();
                assert_string_equal(s->outcome, name);
                if (!strstr(s->message, lines[o]) || times_said(s->message) != 1)
                        fail_msg("%s: the state's message \"%s\" is not its line \"...%s...\", said once", name,
                                 s->message, lines[o]);
        }
        /* A new outcome needs its case here. */
        assert_string_equal(resume_outcome_name((enum resume_outcome)(RESUME_POWEROFF + 1)), "unknown");
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, ft_teardown)
        const struct CMUnitTest tests[] = {
                T(test_disabled),
                T(test_noresume_unlocks_nothing),
                T(test_nohibernate_variants),
                T(test_no_device),
                T(test_bad_device_spec),
                T(test_device_timeout),
                T(test_device_appears_late),
                T(test_not_luks),
                T(test_bad_header),
                T(test_malformed_pin),
                T(test_header_changed_before_unlock),
                T(test_deadline_stops_keyslots),
                T(test_timeout_zero_unlocks),
                T(test_no_key_reasons),
                T(test_passphrase_memory),
                T(test_tpm2_then_keyfile),
                T(test_passphrase_own_window),
                T(test_no_key_configured),
                T(test_tokens_ignored),
                T(test_activation_error_stops_chain),
                T(test_chain_no_image),
                T(test_foreign_header),
                T(test_root_container_stays_open),
                T(test_offsets_disagree),
                T(test_image_kernel_ignores),
                T(test_image_hibernation_unavailable),
                T(test_image_consumed),
                T(test_image_at_offset_from_conf),
                T(test_handoff_fails_keeps_image),
                T(test_mapping_never_appears),
                T(test_custom_name),
                T(test_checks_pass),
                T(test_mismatch_poweroff),
                T(test_bad_mapping_closed_unread),
                T(test_bad_mapping_already_active),
                T(test_mismatch_malformed), T(test_verify), T(test_verify_default_off),
                T(test_mismatch_discard),
                T(test_mismatch_bad_value),
                T(test_state_without_image),
                T(test_tpm_lock_every_path),
                T(test_tpm_lock_fails),
                T(test_bad_header_active),
                T(test_ticket_fresh_consumed_before_handoff),
                T(test_ticket_stale),
                T(test_ticket_fs_missing),
                T(test_ticket_fs_copy),
                T(test_ticket_image_head),
                T(test_ticket_fs_unreadable),
                T(test_ticket_kernel_writer),
                T(test_ticket_missing),
                T(test_ticket_superseded_when_boot_goes_on),
                T(test_ticket_kept_by_poweroff_and_bad_header),
                T(test_ticket_without_image),
                T(test_counter_equal_passes),
                T(test_counter_older_refused),
                T(test_counter_unproven),
                T(test_counter_increment_fails),
                T(test_state_message_said_after),
                T(test_state_message_noresume),
                T(test_state_message_every_outcome),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of thaw provision's plan (provplan.c): the size rule, the change detection, what it sees. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "faketree.h"
#include "provision/provplan.h"

#define MIB PROVPLAN_MIB
#define GIB (UINT64_C(1) << 30)

static void test_provplan_size(void **state)
{
        struct provsize ram = { .milli = 1000 }, r;
        uint64_t b;

        (void)state;
        /* MemTotal is a little under the instance's memory: 4 GiB machines say about 4020000 kB. */
        assert_int_equal(provplan_size(&ram, 4020000, &b), 0);
        assert_int_equal(b, 3926 * MIB); /* 4020000 KiB = 3925.78 MiB, rounded up */
        r = (struct provsize){ .milli = 1000, .pct = 10 };
        assert_int_equal(provplan_size(&r, 4 * 1024 * 1024, &b), 0);
        assert_int_equal(b, 4506 * MIB); /* 4096 MiB + 409.6, up */
        r = (struct provsize){ .milli = 1500 };
        assert_int_equal(provplan_size(&r, 2 * 1024 * 1024, &b), 0);
        assert_int_equal(b, 3 * GIB);
        r = (struct provsize){ .milli = 1000, .add = 512 * MIB };
        assert_int_equal(provplan_size(&r, 1024 * 1024, &b), 0);
        assert_int_equal(b, GIB + 512 * MIB);
        /* min= wins on a small machine. */
        r = (struct provsize){ .milli = 1000, .min = 2 * GIB };
        assert_int_equal(provplan_size(&r, 512 * 1024, &b), 0);
        assert_int_equal(b, 2 * GIB);
        /* Absurd values are refused, never wrapped. */
        r = (struct provsize){ .milli = 1000000 };
        assert_int_equal(provplan_size(&r, UINT64_MAX / 1024, &b), -ERANGE);
        r = (struct provsize){ .milli = 1000, .add = UINT64_C(1) << 62 };
        assert_int_equal(provplan_size(&r, 1024, &b), -ERANGE);
        assert_int_equal(b, 2 * GIB); /* untouched */
}

static struct provconf swapfile_conf(void)
{
        struct provconf c = { .swapfile = "/swapfile", .key = "tpm2", .name = "thaw-swap",
                              .size = { .milli = 1000, .pct = 10 } };
        return c;
}

/* A 4 GiB machine with a TPM2: the rule ram+10% asks for 4506 MiB. */
static struct provstate machine(void)
{
        struct provstate s = { .mem_total_kib = 4 * 1024 * 1024, .room = 20 * GIB, .tpm2 = true };
        return s;
}

static struct provplan decide(const struct provconf *c, const struct provstate *s)
{
        struct provplan p;

        assert_int_equal(provplan_decide(c, s, &p), 0);
        return p;
}

static void says(const struct provplan *p, enum provplan_action a, const char *want)
{
        if (p->action != a)
                fail_msg("%s, not %s: %s", provplan_action_name(p->action), provplan_action_name(a), p->why);
        if (!strstr(p->why, want))
                fail_msg("\"%s\" does not say \"%s\"", p->why, want);
}

static void test_provplan_swapfile(void **state)
{
        struct provconf c = swapfile_conf();
        struct provstate s = machine(), set;
        struct provplan p;

        (void)state;
        /* A first boot: no thaw.conf, no file. */
        p = decide(&c, &s);
        says(&p, PROVPLAN_FIRST, "make /swapfile with 4506 MiB, enroll key=tpm2");
        assert_int_equal(p.want, 4506 * MIB);
        assert_false(p.replace_leftover);
        /* The root too full. */
        s.room = 4600 * MIB;
        p = decide(&c, &s);
        says(&p, PROVPLAN_REFUSE_ROOM, "asks for 4506 MiB of swap in /swapfile, but its file system has 4600 MiB");
        /* A power cut in the first setup left PATH.thaw-new, no thaw.conf: that name goes. */
        s = machine();
        s.fresh = s.fresh_regular = true;
        p = decide(&c, &s);
        says(&p, PROVPLAN_FIRST, "removing the .thaw-new file a stopped setup left");
        assert_true(p.remove_fresh && !p.replace_leftover);
        s.fresh_regular = false;
        says((p = decide(&c, &s), &p), PROVPLAN_REFUSE_OTHER, ".thaw-new exists and is not a regular file");
        /* Plain swap at PATH (no image, not active) and no thaw.conf: replaced. */
        s = machine();
        s.exists = s.regular = true;
        s.bytes = 4506 * MIB;
        s.kind_known = true;
        s.kind = SWSUSP_SWAP;
        p = decide(&c, &s);
        says(&p, PROVPLAN_FIRST, "replacing the plain swap file there");
        assert_true(p.replace_leftover);
        /* A first page of zeros is no sign of thaw's: a disk image, a database can start so. */
        s.kind = SWSUSP_OTHER;
        s.blank = true;
        says((p = decide(&c, &s), &p), PROVPLAN_REFUSE_OTHER, "/swapfile exists and is not swap");
        assert_false(p.replace_leftover);
        /* Anything else there is never removed. */
        s.blank = false;
        says((p = decide(&c, &s), &p), PROVPLAN_REFUSE_OTHER, "/swapfile exists and is not swap");
        s.kind_known = false;
        says((p = decide(&c, &s), &p), PROVPLAN_REFUSE_OTHER, "exists and is not swap");
        s.kind_known = true;
        s.kind = SWSUSP_SWAP;
        s.active = true;
        says((p = decide(&c, &s), &p), PROVPLAN_REFUSE_OTHER, "active swap not set up by thaw");
        s.active = false;
        s.kind = SWSUSP_IMAGE;
        says((p = decide(&c, &s), &p), PROVPLAN_REFUSE_IMAGE, "holds a hibernation image");

        /* Set up: the same boot again changes nothing. */
        set = machine();
        set.configured = true;
        set.conf_offset = 34816;
        set.exists = set.regular = true;
        set.bytes = 4506 * MIB;
        set.kind_known = true;
        set.kind = SWSUSP_SWAP;
        says((p = decide(&c, &set), &p), PROVPLAN_NOTHING, "/swapfile has 4506 MiB, the size rule asks for 4506 MiB");
        /* Only thaw's swap file is grown or repointed: not a link, not a file that is not swap. */
        s = set;
        s.mem_total_kib = 8 * 1024 * 1024;
        s.regular = false;
        says((p = decide(&c, &s), &p), PROVPLAN_REFUSE_OTHER, "/swapfile is not a regular file");
        s.regular = true;
        s.kind = SWSUSP_OTHER;
        says((p = decide(&c, &s), &p), PROVPLAN_REFUSE_OTHER, "/swapfile is not swap");
        s.offset_known = true;
        s.file_offset = 1;
        says((p = decide(&c, &s), &p), PROVPLAN_REFUSE_OTHER, "/swapfile is not swap");
        s.kind_known = false;
        says((p = decide(&c, &s), &p), PROVPLAN_REFUSE_OTHER, "/swapfile is not swap");
        /* A directory on the path others can write: refused, whatever else is there. */
        s = set;
        snprintf(s.unsafe_dir, sizeof(s.unsafe_dir), "/var/swap");
        says((p = decide(&c, &s), &p), PROVPLAN_REFUSE_OTHER, "/var/swap is not a root-owned directory");
        s = machine();
        snprintf(s.unsafe_dir, sizeof(s.unsafe_dir), "/");
        says((p = decide(&c, &s), &p), PROVPLAN_REFUSE_OTHER, "/swapfile: / is not a root-owned directory");
        p = decide(&c, &set);
        assert_int_equal(p.have, 4506 * MIB);
        assert_false(p.rebuild_initramfs);
        /* A change to thaw.conf the initramfs does not carry yet (dracut failed, a power cut, --no-initramfs). */
        s = set;
        s.initramfs_stale = true;
        says((p = decide(&c, &s), &p), PROVPLAN_NOTHING, "but the initramfs does not carry /etc/thaw/thaw.conf yet");
        assert_true(p.rebuild_initramfs);
        /* Started with less memory: never shrunk. */
        s = set;
        s.mem_total_kib = 2 * 1024 * 1024;
        says((p = decide(&c, &s), &p), PROVPLAN_NOTHING, "nothing to change");
        /* Started with more memory: grow... */
        s = set;
        s.mem_total_kib = 8 * 1024 * 1024;
        says((p = decide(&c, &s), &p), PROVPLAN_GROW, "/swapfile has 4506 MiB, the size rule asks for 9012 MiB");
        assert_true(p.rebuild_initramfs);
        assert_false(p.remove_fresh);
        /* A grow a power cut stopped left PATH.thaw-new: removed first, and its room counts as free. */
        s.room = 9012 * MIB;
        says((p = decide(&c, &s), &p), PROVPLAN_REFUSE_ROOM, "its file system has 9012 MiB free");
        s.fresh = s.fresh_regular = true;
        s.fresh_bytes = 4000 * MIB;
        says((p = decide(&c, &s), &p), PROVPLAN_GROW, "(first removing the .thaw-new file a stopped grow left, "
                                                      "4000 MiB)");
        assert_true(p.remove_fresh);
        s.fresh_regular = false;
        s.fresh_bytes = 0;
        says((p = decide(&c, &s), &p), PROVPLAN_REFUSE_OTHER, ".thaw-new exists and is not a regular file");
        s.fresh = false;
        s.room = set.room;
        /* ...unless an image is on it (a boot that did not resume it)... */
        s.kind = SWSUSP_IMAGE;
        says((p = decide(&c, &s), &p), PROVPLAN_REFUSE_IMAGE, "holds a hibernation image: not touched");
        /* ...or the new file does not fit beside the old one. */
        s.kind = SWSUSP_SWAP;
        s.room = 9012 * MIB;
        says((p = decide(&c, &s), &p), PROVPLAN_REFUSE_ROOM, "its file system has 9012 MiB free (9268 MiB needed");
        /* An image on a swap file large enough: nothing to change either. */
        s = set;
        s.kind = SWSUSP_IMAGE;
        says((p = decide(&c, &s), &p), PROVPLAN_NOTHING, "holds a hibernation image and is large enough");
        /* A grow cut short after the new file took the name, before thaw.conf: the file is the truth. */
        s = set;
        s.offset_known = true;
        s.file_offset = 99999;
        s.mem_total_kib = 8 * 1024 * 1024;
        says((p = decide(&c, &s), &p), PROVPLAN_REPOINT, "/swapfile starts at page 99999, /etc/thaw/thaw.conf "
                                                         "says offset=34816: write offset=99999");
        assert_int_equal(p.offset, 99999);
        s.file_offset = 34816;
        says((p = decide(&c, &s), &p), PROVPLAN_GROW, "make it again");
        /* thaw.conf set up by hand for something else. */
        s = set;
        s.conf_offset = 0;
        snprintf(s.conf_device, sizeof(s.conf_device), "UUID=abcd");
        says((p = decide(&c, &s), &p), PROVPLAN_REFUSE_OTHER, "names a swap device (UUID=abcd)");
        s = set;
        s.exists = false;
        says((p = decide(&c, &s), &p), PROVPLAN_REFUSE_OTHER, "but /swapfile is missing");
}

static void test_provplan_device(void **state)
{
        struct provconf c = { .device = "PARTLABEL=swap", .key = "fwcfg:opt/k", .name = "thaw-swap",
                              .size = { .milli = 1000 } };
        struct provstate s = machine(), set;
        struct provplan p;

        (void)state;
        says((p = decide(&c, &s), &p), PROVPLAN_REFUSE_OTHER, "device=PARTLABEL=swap is not there");
        s.exists = true;
        s.bytes = 4096 * MIB + PROVPLAN_LUKS_BYTES;
        says((p = decide(&c, &s), &p), PROVPLAN_FIRST, "format PARTLABEL=swap as LUKS2 swap (4096 MiB; the size "
                                                       "rule asks for 4096 MiB), open it as /dev/mapper/thaw-swap");
        /* The spec resolved once under the root: the plan names what is formatted. */
        snprintf(s.device, sizeof(s.device), "/r/dev/vdb");
        s.device_root = 2;
        says((p = decide(&c, &s), &p), PROVPLAN_FIRST, "format /dev/vdb (PARTLABEL=swap) as LUKS2 swap");
        s.device[0] = '\0';
        /* Never formatted over something. */
        snprintf(s.signature, sizeof(s.signature), "ext4");
        says((p = decide(&c, &s), &p), PROVPLAN_REFUSE_OTHER, "holds ext4 and /etc/thaw/thaw.conf is missing");
        s.signature[0] = '\0';
        snprintf(s.luks_uuid, sizeof(s.luks_uuid), "1234");
        says((p = decide(&c, &s), &p), PROVPLAN_REFUSE_OTHER, "holds LUKS2");
        s.luks_uuid[0] = '\0';
        snprintf(s.in_use, sizeof(s.in_use), "it is mounted");
        says((p = decide(&c, &s), &p), PROVPLAN_REFUSE_OTHER, "is in use: it is mounted");
        s.in_use[0] = '\0';
        s.bytes = 4000 * MIB;
        says((p = decide(&c, &s), &p), PROVPLAN_REFUSE_ROOM, "gives 3984 MiB of swap, the size rule asks for 4096");

        set = machine();
        set.configured = true;
        set.exists = true;
        set.bytes = 4096 * MIB + PROVPLAN_LUKS_BYTES;
        snprintf(set.luks_uuid, sizeof(set.luks_uuid), "1234");
        snprintf(set.conf_device, sizeof(set.conf_device), "UUID=1234");
        says((p = decide(&c, &set), &p), PROVPLAN_NOTHING, "nothing to change");
        /* More memory: a partition cannot grow here. */
        s = set;
        s.mem_total_kib = 8 * 1024 * 1024;
        says((p = decide(&c, &s), &p), PROVPLAN_REFUSE_ROOM, "a partition cannot grow here");
        s.kind_known = true;
        s.kind = SWSUSP_IMAGE;
        says((p = decide(&c, &s), &p), PROVPLAN_REFUSE_IMAGE, "holds a hibernation image");
        /* thaw.conf names another device. */
        s = set;
        snprintf(s.conf_device, sizeof(s.conf_device), "UUID=5678");
        says((p = decide(&c, &s), &p), PROVPLAN_REFUSE_OTHER, "names device=UUID=5678, which is not PARTLABEL=swap");
}

/*
 * One image for instance types with a TPM2 and without: the first setup enrolls key= as written
 * where there is one, and leaves out its tpm2 sources where there is none, and says so.
 */
static void test_provplan_no_tpm2(void **state)
{
        struct provconf c = swapfile_conf(), d = { .device = "/dev/vdb", .name = "thaw-swap",
                                                   .size = { .milli = 1000 } };
        struct provstate s = machine();
        struct provplan p;

        (void)state;
        snprintf(c.key, sizeof(c.key), "tpm2:pcrs=7,bank=sha256,fwcfg:opt/thaw/key");
        p = decide(&c, &s);
        says(&p, PROVPLAN_FIRST, "enroll key=tpm2:pcrs=7,bank=sha256,fwcfg:opt/thaw/key in the root's LUKS2 "
                                 "container");
        assert_string_equal(p.key, c.key);
        assert_null(strstr(p.why, "no TPM2"));
        s.tpm2 = false;
        p = decide(&c, &s);
        says(&p, PROVPLAN_FIRST, "enroll key=fwcfg:opt/thaw/key in the root's LUKS2 container (this instance has "
                                 "no TPM2: no /dev/tpmrm0, no ACPI TPM2 table; key='s tpm2 left out)");
        assert_string_equal(p.key, "fwcfg:opt/thaw/key");
        /* Only tpm2: nothing could bring the key to the next boot. */
        snprintf(c.key, sizeof(c.key), "tpm2");
        p = decide(&c, &s);
        says(&p, PROVPLAN_REFUSE_OTHER, "key=tpm2 needs a TPM2 and this instance has none");
        assert_string_equal(p.key, "");
        /* The same for a partition. */
        snprintf(d.key, sizeof(d.key), "fwcfg:a,tpm2,smbios:b");
        s.exists = true;
        s.bytes = 8192 * MIB;
        p = decide(&d, &s);
        says(&p, PROVPLAN_FIRST, "open it as /dev/mapper/thaw-swap, enroll key=fwcfg:a,smbios:b (this instance has "
                                 "no TPM2");
        snprintf(d.key, sizeof(d.key), "tpm2:pcrs=7");
        says((p = decide(&d, &s), &p), PROVPLAN_REFUSE_OTHER, "key=tpm2:pcrs=7 needs a TPM2");
        /* Later boots enroll nothing: set up, they are left as they are, TPM2 or not. */
        s.configured = true;
        snprintf(s.luks_uuid, sizeof(s.luks_uuid), "1234");
        snprintf(s.conf_device, sizeof(s.conf_device), "UUID=1234");
        says((p = decide(&d, &s), &p), PROVPLAN_NOTHING, "nothing to change");
}

/* What provplan_observe() sees in a fixture root: thaw.conf, the swap file and its first page, memory. */
static void test_provplan_observe(void **state)
{
        struct provconf c = swapfile_conf();
        struct provstate s;
        uint8_t page[4096] = { 0 };
        char path[PATH_MAX];

        (void)state;
        assert_int_equal(provplan_observe(ft_root, &c, &s), -ENOENT); /* no meminfo */
        ft_puts("/proc/meminfo", "MemTotal: 4020000 kB\nAnonPages: 1 kB\nShmem: 1 kB\n");
        ft_puts("/proc/swaps", "Filename Type Size Used Priority\n");
        assert_int_equal(provplan_observe(ft_root, &c, &s), 0);
        assert_int_equal(s.mem_total_kib, 4020000);
        assert_false(s.configured);
        assert_false(s.exists);
        assert_true(s.room > 0);
        /* A blank file (a power cut right after it was allocated). */
        ft_put("/swapfile", page, sizeof(page));
        assert_int_equal(provplan_observe(ft_root, &c, &s), 0);
        assert_true(s.exists && s.regular && s.kind_known && s.blank && !s.active);
        assert_int_equal(s.bytes, 4096);
        assert_string_equal(s.unsafe_dir, "");
        /* A directory on the path that group or others can write. */
        snprintf(c.swapfile, sizeof(c.swapfile), "/var/swap/swapfile");
        ft_put("/var/swap/swapfile", page, sizeof(page));
        ft_abs(path, sizeof(path), "/var");
        assert_int_equal(chmod(path, 0775), 0);
        assert_int_equal(provplan_observe(ft_root, &c, &s), 0);
        assert_string_equal(s.unsafe_dir, "/var");
        assert_int_equal(chmod(path, 0755), 0);
        ft_abs(path, sizeof(path), "/var/swap");
        assert_int_equal(chmod(path, 01777), 0);
        assert_int_equal(provplan_observe(ft_root, &c, &s), 0);
        assert_string_equal(s.unsafe_dir, "/var/swap");
        assert_int_equal(chmod(path, 0700), 0);
        assert_int_equal(provplan_observe(ft_root, &c, &s), 0);
        assert_string_equal(s.unsafe_dir, "");
        /* A symbolic link at the path: not a regular file. */
        ft_abs(path, sizeof(path), "/var/swap/swapfile");
        assert_int_equal(unlink(path), 0);
        assert_int_equal(symlink("/swapfile", path), 0);
        assert_int_equal(provplan_observe(ft_root, &c, &s), 0);
        assert_true(s.exists && !s.regular && !s.kind_known);
        c = swapfile_conf();
        /* A hibernation image's header page. */
        memcpy(page + 4076, "SWAPSPACE2", 10);
        memcpy(page + 4086, "S1SUSPEND", 10);
        ft_put("/swapfile", page, sizeof(page));
        assert_int_equal(provplan_observe(ft_root, &c, &s), 0);
        assert_true(s.kind == SWSUSP_IMAGE && !s.blank);
        ft_puts("/proc/swaps", "Filename Type Size Used Priority\n/swapfile file 4 0 -2\n");
        ft_puts("/etc/thaw/thaw.conf", "device=UUID=1234\nkey=tpm2\nname=root\noffset=34816\n");
        assert_int_equal(provplan_observe(ft_root, &c, &s), 0);
        assert_true(s.configured && s.active && !s.initramfs_stale);
        ft_puts("/var/lib/thaw/initramfs-stale", "");
        assert_int_equal(provplan_observe(ft_root, &c, &s), 0);
        assert_true(s.initramfs_stale);
        assert_int_equal(s.conf_offset, 34816);
        assert_string_equal(s.conf_device, "UUID=1234");
        /* A TPM2: its device, or the firmware's table before the driver made the device. */
        assert_false(s.tpm2);
        ft_puts("/sys/firmware/acpi/tables/TPM2", "");
        assert_int_equal(provplan_observe(ft_root, &c, &s), 0);
        assert_true(s.tpm2);
        ft_abs(path, sizeof(path), "/sys/firmware/acpi/tables/TPM2");
        assert_int_equal(unlink(path), 0);
        ft_puts("/dev/tpmrm0", "");
        assert_int_equal(provplan_observe(ft_root, &c, &s), 0);
        assert_true(s.tpm2);
        /* Any thaw.conf, even one that names no key, is never set up over. */
        ft_puts("/etc/thaw/thaw.conf", "device=UUID=1234\nbogus line\n");
        assert_int_equal(provplan_observe(ft_root, &c, &s), 0);
        assert_true(s.configured);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_provplan_size),
                cmocka_unit_test(test_provplan_swapfile),
                cmocka_unit_test(test_provplan_device),
                cmocka_unit_test(test_provplan_no_tpm2),
                cmocka_unit_test_setup_teardown(test_provplan_observe, ft_setup, ft_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}

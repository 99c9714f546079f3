/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* thaw doctor's checks: the running kernel's config against kernel/thaw.config, and /sys/power. */
#include "system/doctor.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "args.h"
#include "system/kconfig.h"
#include "system/power.h"
#include "base/util.h"

#define DOCTOR_FILE_MAX 16384

const char *doctor_state_name(enum doctor_state s)
{
        switch (s) {
        case DOCTOR_OK: return "ok";
        case DOCTOR_MISSING: return "missing";
        case DOCTOR_OPTIONAL: return "optional";
        default: return "skip";
        }
}

__attribute__((format(printf, 4, 5)))
static void add(struct doctor_report *rep, enum doctor_state state, const char *what, const char *fmt, ...)
{
        struct doctor_item *it;
        va_list ap;

        if (rep->n == DOCTOR_ITEMS_MAX)
                return;
        it = &rep->items[rep->n++];
        it->state = state;
        /* Report lines only: one cut short still says what is wrong, so truncation is accepted. */
        snprintf(it->what, sizeof(it->what), "%s", what);
        va_start(ap, fmt);
        vsnprintf(it->text, sizeof(it->text), fmt, ap);
        va_end(ap);
}

/* The release from ROOT/proc/sys/kernel/osrelease; with no root, uname() if that is unreadable. */
static void read_release(const char *root, char *buf, size_t size)
{
        struct utsname u;

        if (util_read_text_at(root, "/proc/sys/kernel/osrelease", buf, size) >= 0) {
                util_rstrip(buf);
                return;
        }
        buf[0] = '\0';
        if ((!root || !*root) && uname(&u) == 0)
                snprintf(buf, size, "%s", u.release);
}

static void check_option(struct doctor_report *rep, const struct kconfig_want *w, const char *config,
                         unsigned major, unsigned minor)
{
        enum doctor_state bad = w->optional ? DOCTOR_OPTIONAL : DOCTOR_MISSING;
        char have = kconfig_value(config, w->name);

        if (!kconfig_applies(w, major, minor)) {
                add(rep, DOCTOR_SKIP, w->name, "only from %u.%u on: %s", w->since_major, w->since_minor,
                    w->why);
                return;
        }
        if (have == 'y' || (have == 'm' && w->value == 'm')) {
                add(rep, DOCTOR_OK, w->name, "%c", have);
                return;
        }
        if (have == 'm')
                add(rep, bad, w->name, "=m, but must be built in: %s Rebuild with %s=y.", w->why, w->name);
        else
                add(rep, bad, w->name, "not set: %s Rebuild with %s=%c (kernel/thaw.config).", w->why,
                    w->name, w->value);
}

static int check_config(struct doctor_report *rep, const char *root, const char *fragment)
{
        struct kconfig_want *want;
        unsigned major = 0, minor = 0;
        char *config = NULL, src[300];
        int n, r;

        want = calloc(KCONFIG_WANT_MAX, sizeof(*want));
        if (!want)
                return -ENOMEM;
        n = kconfig_parse_fragment(fragment ? fragment : kconfig_thaw_fragment(), want, KCONFIG_WANT_MAX);
        if (n < 0) {
                r = n;
                goto out;
        }
        if (!rep->release[0] || kconfig_parse_release(rep->release, &major, &minor) < 0) {
                add(rep, DOCTOR_SKIP, "kernel config",
                    "kernel release unknown (/proc/sys/kernel/osrelease): options not checked");
                r = 0;
                goto out;
        }
        r = kconfig_load(root, rep->release, &config, src, sizeof(src));
        if (r == -ENOMEM)
                goto out;
        if (r < 0) {
                add(rep, DOCTOR_SKIP, "kernel config",
                    "cannot read /proc/config.gz or /boot/config-%s (%s): options not checked "
                    "(CONFIG_IKCONFIG_PROC=y, or install the config file)",
                    rep->release, strerror(-r));
                r = 0;
                goto out;
        }
        add(rep, DOCTOR_OK, "kernel config", "%s, from %s", rep->release, src);
        for (int i = 0; i < n; i++)
                check_option(rep, &want[i], config, major, minor);
        r = 0;
out:
        free(config);
        free(want);
        return r;
}

/* Why /sys/power/disk says [disabled]: lockdown, the command line, or something else. */
static void disabled_reason(const char *root, char *why, size_t size)
{
        char buf[DOCTOR_FILE_MAX];

        if (util_read_text_at(root, "/sys/kernel/security/lockdown", buf, sizeof(buf)) >= 0 &&
            (strstr(buf, "[integrity]") || strstr(buf, "[confidentiality]"))) {
                snprintf(why, size, "disabled by kernel lockdown (%s): lockdown=integrity or stronger "
                         "forbids hibernation; distribution kernels turn it on under UEFI Secure Boot. "
                         "Boot without lockdown (Secure Boot off, or a kernel without "
                         "LOCK_DOWN_IN_EFI_SECURE_BOOT) to hibernate",
                         strstr(buf, "[integrity]") ? "integrity" : "confidentiality");
                return;
        }
        if (util_read_text_at(root, "/proc/cmdline", buf, sizeof(buf)) >= 0) {
                const char *p = buf;
                char tok[ARGS_CMDLINE_MAX];

                /* As the kernel's hibernate_setup(): any hibernate=no… but noresume and nocompress. */
                while (args_next_token(&p, tok, sizeof(tok)) > 0) {
                        const char *v = tok + 10;

                        if (strcmp(tok, "nohibernate") == 0 ||
                            (strncmp(tok, "hibernate=no", 12) == 0 && strncmp(v, "noresume", 8) != 0 &&
                             strncmp(v, "nocompress", 10) != 0)) {
                                snprintf(why, size,
                                         "disabled by %.40s on the kernel command line: remove it", tok);
                                return;
                        }
                }
        }
        snprintf(why, size, "/sys/power/disk says [disabled] (nohibernate, kernel lockdown, a "
                 "memfd_secret() user or CXL memory)");
}

static void check_power(struct doctor_report *rep, const char *root)
{
        char why[DOCTOR_TEXT_MAX], buf[DOCTOR_FILE_MAX];
        int r;

        r = power_hibernation_available(root, why, sizeof(why));
        if (r > 0) {
                add(rep, DOCTOR_OK, "hibernation",
                    "available (/sys/power/disk, \"disk\" in /sys/power/state)");
        } else if (r == 0) {
                if (util_read_text_at(root, "/sys/power/disk", buf, sizeof(buf)) >= 0 &&
                    strstr(buf, "[disabled]"))
                        disabled_reason(root, why, sizeof(why));
                add(rep, DOCTOR_MISSING, "hibernation", "%s", why);
        } else {
                add(rep, DOCTOR_MISSING, "hibernation", "cannot read /sys/power (%s)", strerror(-r));
        }

        r = util_read_text_at(root, "/sys/kernel/security/lockdown", buf, sizeof(buf));
        if (r >= 0)
                util_rstrip(buf);
        if (r < 0)
                add(rep, DOCTOR_SKIP, "lockdown", "/sys/kernel/security/lockdown unreadable "
                    "(%s; securityfs not mounted, or no lockdown LSM)", strerror(-r));
        else if (strstr(buf, "[integrity]") || strstr(buf, "[confidentiality]"))
                add(rep, DOCTOR_MISSING, "lockdown", "%s: kernel lockdown disables hibernation and resume",
                    buf);
        else
                add(rep, DOCTOR_OK, "lockdown", "%s", buf);
}

static void check_devices(struct doctor_report *rep, const char *root)
{
        char path[4096], buf[DOCTOR_FILE_MAX];
        int swaps = 0, r;

        if (util_path(path, sizeof(path), root, "/dev/mapper/control") == 0 && util_exists(path))
                add(rep, DOCTOR_OK, "device-mapper", "/dev/mapper/control present");
        else
                add(rep, DOCTOR_MISSING, "device-mapper", "no /dev/mapper/control: modprobe dm_mod");

        if (util_path(path, sizeof(path), root, "/sys/firmware/qemu_fw_cfg") == 0 && util_exists(path))
                add(rep, DOCTOR_OK, "fw_cfg", "/sys/firmware/qemu_fw_cfg present (fwcfg: key source)");
        else
                add(rep, DOCTOR_OPTIONAL, "fw_cfg", "no /sys/firmware/qemu_fw_cfg: only QEMU guests using "
                    "the fwcfg: key source need it (modprobe qemu_fw_cfg)");

        r = util_read_text_at(root, "/proc/swaps", buf, sizeof(buf));
        if (r < 0) {
                add(rep, DOCTOR_SKIP, "swap", "cannot read /proc/swaps (%s)", strerror(-r));
                return;
        }
        for (char *line = strchr(buf, '\n'); line && line[1]; line = strchr(line + 1, '\n'))
                swaps++; /* every line after the heading is one swap area */
        if (swaps > 0)
                add(rep, DOCTOR_OK, "swap", "%d active swap area%s (/proc/swaps)", swaps,
                    swaps > 1 ? "s" : "");
        else
                add(rep, DOCTOR_MISSING, "swap", "no active swap: the image needs one (thaw setup, then "
                    "swapon /dev/mapper/" ARGS_NAME_DEFAULT ")");
}

int doctor_run(const char *root, const char *fragment, struct doctor_report *rep)
{
        int missing = 0, r;

        memset(rep, 0, sizeof(*rep));
        read_release(root, rep->release, sizeof(rep->release));
        r = check_config(rep, root, fragment);
        if (r < 0)
                return r;
        check_power(rep, root);
        check_devices(rep, root);
        for (size_t i = 0; i < rep->n; i++)
                missing += rep->items[i].state == DOCTOR_MISSING;
        return missing;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The subcommands of the thaw program and the status each returns to main(). */
#pragma once
#include <stdint.h>

enum cmd_status {
        CMD_OK,     /* done (thaw resume: whatever happened at runtime) */
        CMD_FAILED, /* a check or a step failed; a message said why */
        CMD_USAGE,  /* bad command line */
};

/* Each takes argv with argv[0] = the subcommand name. */
enum cmd_status cmd_resume(int argc, char **argv);
enum cmd_status cmd_setup(int argc, char **argv);
enum cmd_status cmd_enroll(int argc, char **argv);
enum cmd_status cmd_hibernate(int argc, char **argv);
enum cmd_status cmd_doctor(int argc, char **argv);
enum cmd_status cmd_inspect(int argc, char **argv);
enum cmd_status cmd_status(int argc, char **argv);
enum cmd_status cmd_swapin(int argc, char **argv);
enum cmd_status cmd_config(int argc, char **argv);
enum cmd_status cmd_provision(int argc, char **argv);

/* thaw setup's one flow, for thaw provision: a swap device (device), or a swap file (swapfile, size). */
struct cmd_setup_req {
        const char *root;
        const char *device;    /* or */
        const char *swapfile;
        uint64_t size;         /* swapfile: bytes, whole pages */
        const char *key;       /* the chain to enroll */
        const char *unlock;    /* swapfile: a key the root's container takes already, or NULL */
        const char *rename_to; /* swapfile: made under swapfile, renamed to this when complete, or NULL */
        const char *name;      /* device: the mapping */
};
enum cmd_status cmd_setup_run(const struct cmd_setup_req *req);
/*
 * Make swap file path (size bytes) as thaw setup --swapfile does: without holes, swap signature,
 * its first page (resume_offset=) in *offset; removed again on failure (said). 0, or -errno.
 */
int cmd_setup_make_swapfile(const char *path, uint64_t size, uint64_t *offset);

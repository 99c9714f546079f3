/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The subcommands of the thaw program and the status each returns to main(). */
#pragma once

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

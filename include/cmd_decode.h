/* SPDX-License-Identifier: MIT */
/*
 * What decode and report share: the options that name a trace and its memory
 * image, with their parser (cmd_decode_opts.h), and the run with its
 * diagnostics and progress.
 */
#ifndef PTC_CMD_DECODE_H
#define PTC_CMD_DECODE_H

#include "cmd_decode_opts.h"

/* Parse @argv by @v's table, decode, report diagnostics: the exit status. */
int cmd_decode_run(int argc, char **argv, const struct decode_variant *v);

#endif

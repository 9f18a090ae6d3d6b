/* SPDX-License-Identifier: MIT */
/*
 * Parsers for the values users type on command lines: sizes, perf's -m,
 * CPU and PID lists, durations. Plain functions: 0, or -EINVAL with a usage
 * error whose why names what is wrong and what is valid; the caller puts the
 * option in front (err_what()).
 */
#ifndef PTC_CLI_H
#define PTC_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

#define CLI_MAX_CPUS 4096
#define CLI_MAX_PIDS 256

/* "4096", "64K", "4M", "1G" (binary units; B/KB/KiB accepted). */
int cli_parse_size(const char *s, uint64_t *bytes, struct error *e);

/*
 * perf's -m DATA[,AUX]: each part is pages (a plain number) or a size with a
 * unit; either part may be empty (keeps the default, reported as 0). Both
 * must be powers of two in pages. Returned in bytes.
 */
int cli_parse_mmap(const char *s, uint64_t *data_bytes, uint64_t *aux_bytes, struct error *e);

/* "0-3,5": sets cpus[n] (ascending, no duplicates); max CLI_MAX_CPUS entries. */
int cli_parse_cpulist(const char *s, int *cpus, int *nr, struct error *e);

/* "123,456": positive pids, at most CLI_MAX_PIDS. */
int cli_parse_pidlist(const char *s, pid_t *pids, int *nr, struct error *e);

/* "5", "2.5", "100ms", "1.5s", "2m": seconds, > 0. */
int cli_parse_duration(const char *s, double *seconds, struct error *e);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The recording plan: what `record` resolved from its command line before
 * anything is opened. --dry-run prints it; the session carries it out.
 */
#ifndef PTC_RECORD_H
#define PTC_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cli.h"
#include "evconfig.h"
#include "pmu.h"

enum target_kind {
	TARGET_NONE,
	TARGET_COMMAND,		/* -- COMMAND: fork, enable on exec */
	TARGET_PID,		/* -p: every thread of these processes */
	TARGET_TID,		/* -t: these threads only */
	TARGET_CPU,		/* -a / -C: whole CPUs */
};

struct record_opts {
	const char *event;	/* -e, EVCONFIG_DEFAULT when not given */
	const char *filter;	/* --filter, NULL when not given */
	const char *output;	/* -o */
	bool force;		/* -f: replace an existing output directory */
	bool dry_run;		/* print the plan, open nothing */
	bool quiet;		/* -q: no status line, no summary */
	bool per_thread;	/* one buffer per thread instead of per CPU */
	bool all_cpus;		/* -a */
	bool kcore;		/* --kcore: keep the kernel's text for decoding */
	bool cpus_given;	/* -C */
	pid_t pids[CLI_MAX_PIDS];
	int nr_pids;
	pid_t tids[CLI_MAX_PIDS];
	int nr_tids;
	int cpus[CLI_MAX_CPUS];
	int nr_cpus;
	uint64_t data_bytes, aux_bytes;	/* -m; 0 = default */
	double duration;	/* --duration seconds; 0 = none */
	uint64_t max_size;	/* --max-size bytes; 0 = none */
	int command_argc;
	char **command;
	int argc;		/* record's own arguments, for the manifest */
	char **argv;
};

struct record_plan {
	struct record_opts opts;
	struct pmu pmu;
	struct evconfig ev;
	enum target_kind target;
	bool per_thread;	/* the mode actually used */
	uint64_t data_bytes, aux_bytes;
	char *filter;		/* kernel filter string or NULL */
};

const char *record_target_name(enum target_kind k);

#endif

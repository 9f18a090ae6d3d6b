/* SPDX-License-Identifier: MIT */
/*
 * The recording plan: everything `record` decides from its command line and
 * the system before anything is opened: the PMU and the exact attr, the
 * filter, the target and its threads, every stream (CPU or thread) with its
 * file names and ring sizes, the locked-memory need against the budget, and
 * what happens to the output directory. Every check is made here, once;
 * --dry-run prints the plan, and the session only carries it out.
 */
#ifndef PTC_PLAN_H
#define PTC_PLAN_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cli.h"
#include "error.h"
#include "evconfig.h"
#include "manifest.h"
#include "plan_script.h"
#include "pmu.h"
#include "events.h"
#include "stream.h"
#include "user.h"

#define PLAN_DEFAULT_OUTPUT	"ptcollect.data"
#define PLAN_DEFAULT_DATA	(256ULL << 10)
#define PLAN_DEFAULT_AUX_PRIV	(4ULL << 20)	/* perf's default for a privileged user */
#define PLAN_DEFAULT_AUX_UNPRIV	(128ULL << 10)	/* and for everybody else */

/* What the command line says, syntax checked, nothing looked up. */
struct record_opts {
	const char *event;	/* -e, EVCONFIG_DEFAULT when not given */
	const char *filter;	/* --filter, NULL when not given */
	const char *output;	/* -o */
	const char *user;	/* --user: the workload's user, NULL when not given */
	bool force;		/* -f: replace an existing bundle */
	bool dry_run;		/* print the plan, open nothing */
	bool quiet;		/* -q: no status line, no summary */
	bool per_thread;	/* one buffer per thread instead of per CPU */
	bool all_cpus;		/* -a */
	bool kcore;		/* --kcore: keep the kernel's text for decoding */
	bool archive;		/* --archive: copy the mapped files in at the end */
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
	struct script_opts script;	/* -S, --trigger, --control, --ready, --no-trace */
	int argc;		/* record's own arguments, for the manifest */
	char **argv;
};

enum plan_output {
	PLAN_OUTPUT_NEW,	/* -o does not exist: create it */
	PLAN_OUTPUT_REPLACE,	/* --force over a ptcollect bundle: move it aside, remove it
				 * once the new recording has started */
};

struct plan {
	struct record_opts opts;
	struct pmu pmu;
	struct evconfig ev;
	struct perf_event_attr attr;	/* exactly what perf_event_open gets */
	char *filter;		/* the kernel's filter string, or NULL */
	enum target_kind target;
	bool per_thread;
	char *exec_path;	/* the workload's file, found as execvp finds it */
	struct user user;	/* with opts.user: who the workload runs as */
	pid_t *tids;		/* the task target's threads now (not the workload's) */
	int nr_tids;
	int nr_online;		/* online CPUs (the kernel's mlock rule counts them) */
	struct stream *streams;	/* one per ring; fds closed, names set */
	int nr_streams;
	uint64_t data_bytes, aux_bytes;
	uint64_t mlock_need, mlock_budget;	/* bytes; budget UINT64_MAX: unlimited */
	uint64_t fd_need;	/* descriptors: events, the streams' files, and some to spare */
	enum plan_output output;
	struct script_plan script;	/* snapshots, triggers, control, ready */
	struct warnings warn;	/* said before recording; nothing stops for them */
};

/*
 * Resolve @p->opts (filled by the command line parser) against the system.
 * Returns 0, or a negative errno with @e (usage: bad input, exit 2; else a
 * runtime problem such as no PMU). Nothing is opened or created.
 */
int plan_resolve(struct plan *p, struct error *e);
void plan_free(struct plan *p);

/* What the events of @p's streams are opened and mapped with. */
void plan_events(const struct plan *p, struct events_config *c);

/* The manifest's part that the plan knows (command, target, attr, machine). */
int plan_describe(const struct plan *p, struct manifest *m);

#endif

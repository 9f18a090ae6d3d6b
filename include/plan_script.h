/* SPDX-License-Identifier: MIT */
/*
 * The plan's part for scripted sessions: snapshot mode (-S), triggers
 * (--trigger, --trigger-count), the control channel (--control), the ready
 * signal (--ready) and recording without trace (--no-trace). The command
 * line parser fills struct script_opts (syntax only); script_resolve()
 * checks them against the system once, before anything is opened: specs
 * resolved to file offsets, actions decided, which processes triggers
 * watch, FIFOs and files that must exist or must not. The session carries
 * out what struct script_plan says.
 */
#ifndef PTC_PLAN_SCRIPT_H
#define PTC_PLAN_SCRIPT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "control.h"
#include "error.h"
#include "manifest.h"
#include "trigger.h"
#include "trigger_spec.h"

#define SCRIPT_SNAPSHOT_MIN_AUX	4096	/* perf's smallest AUX area in snapshot mode */

/* What the command line says, syntax checked. */
struct script_opts {
	bool snapshot;			/* -S */
	uint64_t snapshot_size;		/* -S SIZE; 0: perf's default (the AUX size) */
	bool no_final_snapshot;
	bool no_trace;			/* --no-trace: triggers and marks, no Intel PT */
	const char *triggers[TRIGGER_MAX];	/* --trigger SPEC, as written */
	int nr_triggers;
	uint64_t trigger_count;		/* --trigger-count N; 0: none */
	const char *control;		/* --control SPEC */
	const char *ready;		/* --ready FILE, or "ack" */
};

/* The target as far as triggers care (filled by the caller from the plan). */
struct script_target {
	bool workload;			/* a COMMAND the session starts */
	bool whole_system;		/* -a or -C: every process */
	const pid_t *pids;		/* -p, or the processes of -t */
	int nr_pids;
};

enum script_scope {
	SCOPE_NONE,			/* no triggers */
	SCOPE_WORKLOAD,			/* the workload, armed while it is held at its exec */
	SCOPE_PROCESS,			/* one running process: pid */
	SCOPE_EVERY_PROCESS,		/* uprobes on every process that runs the file */
};

struct script_plan {
	struct trigger_spec specs[TRIGGER_MAX];	/* resolved; no TRIGGER_ACT_DEFAULT left */
	int nr_specs;
	enum script_scope scope;
	pid_t pid;			/* SCOPE_PROCESS */
	bool guard;			/* breakpoints: the workload, or every thread of the -p
					   process, stays our tracee (exechold.h) */
	char fallback[256];		/* why breakpoints are armed as uprobes; "" when not */
	bool start_off;			/* a trigger starts tracing: it begins stopped */
	uint64_t trigger_count;		/* fires in all, then the recording ends; 0: no limit */
	bool has_control;
	const char *control_text;	/* --control as written */
	struct control_spec control;
	char *ready_path;		/* --ready FILE, or NULL */
	bool ready_ack;			/* --ready ack: the line "ready" on the control's ACK */
	uint64_t snapshot_size;		/* the window per stream; 0 when not in snapshot mode */
	bool snapshot;			/* snapshot mode (-S): the verdict session and steer read */
};

/*
 * A running process cannot be seized (@why): its breakpoint triggers are
 * armed as uprobes instead, which make no debug traps; guard is off.
 */
void script_fall_back(struct script_plan *sp, const char *why);

/*
 * A snapshot was asked for (a trigger, the control, SIGUSR2): 0 in snapshot
 * mode, else a usage error saying the recording is not in it. The one check.
 */
int script_snapshot_check(const struct script_plan *sp, struct error *e);

/*
 * -S's value as perf writes it: nothing (perf's default), a byte count in C
 * syntax (4096, 0x10000), optionally after 'e' (perf's snapshot at exit,
 * which ptcollect always takes unless --no-final-snapshot); ptcollect also
 * takes K, M and G. 0, or a usage error naming the value.
 */
int script_parse_snapshot(const char *arg, struct script_opts *o, struct error *e);

/*
 * Snapshot mode's sizes, perf's rules: no -m AUX and no SIZE: AUX is
 * @dflt_aux and the window all of it; SIZE alone: AUX is SIZE rounded up to
 * a power of two of pages; a window larger than the AUX area is refused.
 * @aux (0: not given) in, the AUX size out.
 */
int script_snapshot_sizes(const struct script_opts *o, uint64_t dflt_aux, uint64_t *aux,
			  uint64_t *window, struct error *e);

/*
 * The syntax of it all, and options that do not go together: checked before
 * anything is looked up, so a typo is bad input (exit 2) on any machine.
 */
int script_check_syntax(const struct script_opts *o, struct error *e);
/* Check @o against the system and fill @sp. 0, or a negative errno with @e (usage: exit 2). */
int script_resolve(const struct script_opts *o, const struct script_target *t,
		   struct script_plan *sp, struct error *e, struct warnings *w);
void script_plan_free(struct script_plan *sp);
/* The manifest's part of it: the mode, the snapshot size, the triggers as armed. 0 or -ENOMEM. */
int script_describe(const struct script_opts *o, const struct script_plan *sp,
		    struct manifest *m);

#endif

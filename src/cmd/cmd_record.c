// SPDX-License-Identifier: MIT
/* ptcollect record: options, the recording plan, --dry-run. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "msg.h"
#include "out.h"
#include "plan.h"
#include "session.h"
#include "trigger.h"

enum {
	OPT_DRY_RUN = 256,
	OPT_PER_THREAD,
	OPT_FILTER,
	OPT_DURATION,
	OPT_MAX_SIZE,
	OPT_KCORE,
	OPT_ARCHIVE,
	OPT_NO_FINAL_SNAPSHOT,
	OPT_TRIGGER,
	OPT_TRIGGER_COUNT,
	OPT_CONTROL,
	OPT_READY,
	OPT_NO_TRACE,
	OPT_USER,
};

static const struct cmd_option record_options[] = {
	CMD_OPT_TEXT("Targets (one of):\n"
		     "  -- COMMAND            run COMMAND and trace it (enabled at exec)"),
	CMD_OPT('p', "pid", REQUIRED, "PID[,PID]", 'p', "every thread of running processes"),
	CMD_OPT('t', "tid", REQUIRED, "TID[,TID]", 't', "these threads only"),
	CMD_OPT('a', "all-cpus", NONE, NULL, 'a', "every CPU"),
	CMD_OPT('C', "cpu", REQUIRED, "LIST", 'C', "these CPUs (e.g. 0-3,6)"),
	CMD_OPT_TEXT("  (with -a or -C, a COMMAND only sets how long to record, as in perf)"),
	CMD_OPT(0, "user", REQUIRED, "USER", OPT_USER, "run COMMAND as USER (name or uid; root "
		"only)"),
	CMD_OPT_TEXT("\nOptions:"),
	CMD_OPT('e', "event", REQUIRED, "EVENT", 'e', "intel_pt/TERMS/MODS in perf's syntax\n"
		"(default " EVCONFIG_DEFAULT ")"),
	CMD_OPT(0, "filter", REQUIRED, "FILTERS", OPT_FILTER, "address filters, perf's grammar "
		"(see\nptcollect-record(1))"),
	CMD_OPT('m', "mmap-pages", REQUIRED, "DATA[,AUX]", 'm', "ring sizes: pages, or sizes "
		"with K/M/G"),
	CMD_OPT(0, "per-thread", NONE, NULL, OPT_PER_THREAD, "one buffer per thread instead of "
		"one per CPU"),
	CMD_OPT('o', "output", REQUIRED, "DIR", 'o', "bundle directory (default "
		PLAN_DEFAULT_OUTPUT ")"),
	CMD_OPT('f', "force", NONE, NULL, 'f', "replace an existing output directory"),
	CMD_OPT(0, "duration", REQUIRED, "TIME", OPT_DURATION, "stop after TIME (e.g. 5, 2.5, "
		"500ms)"),
	CMD_OPT(0, "max-size", REQUIRED, "SIZE", OPT_MAX_SIZE, "stop when SIZE bytes of trace "
		"were captured"),
	CMD_OPT(0, "kcore", NONE, NULL, OPT_KCORE, "keep the running kernel's text (from "
		"/proc/kcore)"),
	CMD_OPT(0, "archive", NONE, NULL, OPT_ARCHIVE, "then copy the mapped files in "
		"(ptcollect archive)"),
	CMD_OPT('q', "quiet", NONE, NULL, 'q', "no status line and no summary"),
	CMD_OPT(0, "dry-run", NONE, NULL, OPT_DRY_RUN, "resolve and print the plan, open nothing"),
	CMD_OPT_JSON("the plan (--dry-run), or the result, as JSON"),
	CMD_OPT_HELP,
	CMD_OPT_TEXT("\nScripted sessions:"),
	CMD_OPT('S', "snapshot", OPTIONAL, "SIZE", 'S', "snapshot mode: windows of SIZE per "
		"stream\n(default the AUX area) on SIGUSR2, a trigger, the\ncontrol's snapshot, "
		"and at the end"),
	CMD_OPT(0, "no-final-snapshot", NONE, NULL, OPT_NO_FINAL_SNAPSHOT, "no snapshot at the "
		"end"),
	CMD_OPT(0, "trigger", REQUIRED, "SPEC", OPT_TRIGGER, "uprobe:FILE:SYMBOL[+OFF][=ACTION] "
		"or\nbreakpoint:...; ACTION snapshot (default with -S),\nstart, stop, mark"),
	CMD_OPT(0, "trigger-count", REQUIRED, "N", OPT_TRIGGER_COUNT, "end the recording after "
		"N fires"),
	CMD_OPT(0, "control", REQUIRED, "fifo:CTL[,ACK] | fd:CTL[,ACK]", OPT_CONTROL,
		"commands: enable, disable, snapshot, stop,\nping, status, mark TEXT"),
	CMD_OPT(0, "ready", REQUIRED, "FILE|ack", OPT_READY, "say when tracing is live: create "
		"FILE, or\nthe line \"ready\" on the control's ACK"),
	CMD_OPT(0, "no-trace", NONE, NULL, OPT_NO_TRACE, "no Intel PT: triggers, marks and the "
		"control only"),
	CMD_OPT_END,
};

void usage_record(FILE *f)
{
	fprintf(f,
		"usage: %s record [OPTIONS] [-- COMMAND [ARGS]]\n\n"
		"Record Intel PT trace and sideband into a bundle directory.\n\n", PTC_PROG);
	cmd_print_options(f, record_options);
}

const struct cmd_spec record_spec = { "record", record_options, usage_record, false };

/* A value the command line gave that its parser refused: "-m: why". */
static int bad_value(const char *opt, struct error *e)
{
	err_what(e, "%s", opt);
	return cmd_error("record", e);
}

/* The options of scripted sessions, their syntax. 0, or the exit code once said why not. */
static int script_opt(int c, const char *arg, struct script_opts *o)
{
	struct error e = { 0 };

	switch (c) {
	case 'S':
		if (script_parse_snapshot(arg, o, &e))
			return bad_value("-S", &e);
		break;
	case OPT_NO_FINAL_SNAPSHOT:
		o->no_final_snapshot = true;
		break;
	case OPT_TRIGGER:
		if (o->nr_triggers == TRIGGER_MAX)
			return cmd_bad_usage("record", "--trigger %s: at most %d triggers", arg,
					     TRIGGER_MAX);
		o->triggers[o->nr_triggers++] = arg;
		break;
	case OPT_TRIGGER_COUNT:
		if (trigger_count_parse(arg, &o->trigger_count, &e))
			return bad_value("--trigger-count", &e);
		break;
	case OPT_CONTROL:
		o->control = arg;
		break;
	case OPT_READY:
		o->ready = arg;
		break;
	case OPT_NO_TRACE:
		o->no_trace = true;
		break;
	}
	return 0;
}

/* One option's syntax: 0, or the exit code once said why not. */
static int record_option(void *opts, int c, char *arg)
{
	struct record_opts *o = opts;
	struct error e = { 0 };

	switch (c) {
	case 'e':
		o->event = arg;
		break;
	case 'p':
		if (cli_parse_pidlist(arg, o->pids, &o->nr_pids, &e))
			return bad_value("-p", &e);
		break;
	case 't':
		if (cli_parse_pidlist(arg, o->tids, &o->nr_tids, &e))
			return bad_value("-t", &e);
		break;
	case 'a':
		o->all_cpus = true;
		break;
	case 'C':
		if (cli_parse_cpulist(arg, o->cpus, &o->nr_cpus, &e))
			return bad_value("-C", &e);
		o->cpus_given = true;
		break;
	case 'm':
		if (cli_parse_mmap(arg, &o->data_bytes, &o->aux_bytes, &e))
			return bad_value("-m", &e);
		break;
	case 'o':
		if (!*arg)
			return cmd_bad_usage("record", "-o: the output directory name is empty");
		o->output = arg;
		break;
	case 'f':
		o->force = true;
		break;
	case 'q':
		o->quiet = true;
		break;
	case OPT_PER_THREAD:
		o->per_thread = true;
		break;
	case OPT_DRY_RUN:
		o->dry_run = true;
		break;
	case OPT_KCORE:
		o->kcore = true;
		break;
	case OPT_ARCHIVE:
		o->archive = true;
		break;
	case OPT_FILTER:
		o->filter = arg;
		break;
	case 'S':
	case OPT_NO_FINAL_SNAPSHOT:
	case OPT_TRIGGER:
	case OPT_TRIGGER_COUNT:
	case OPT_CONTROL:
	case OPT_READY:
	case OPT_NO_TRACE:
		return script_opt(c, arg, &o->script);
	case OPT_USER:
		o->user = arg;
		break;
	case OPT_DURATION:
		if (cli_parse_duration(arg, &o->duration, &e))
			return bad_value("--duration", &e);
		break;
	case OPT_MAX_SIZE:
		if (cli_parse_size(arg, &o->max_size, &e))
			return bad_value("--max-size", &e);
		if (!o->max_size)
			return cmd_bad_usage("record", "--max-size: the size must be "
					     "greater than 0");
		break;
	}
	return 0;
}

/* Options and their syntax only: nothing is looked up here. */
static int parse_opts(int argc, char **argv, struct record_opts *o)
{
	int targets, ret;

	memset(o, 0, sizeof(*o));
	o->argc = argc;
	o->argv = argv;
	o->event = EVCONFIG_DEFAULT;
	o->output = PLAN_DEFAULT_OUTPUT;
	ret = cmd_parse_options(&record_spec, argc, argv, record_option, o);
	if (ret != CMD_GO_ON)
		return ret == EXIT_OK ? -1 : ret;	/* -1: --help */
	if (optind < argc) {
		o->command = argv + optind;
		o->command_argc = argc - optind;
	}
	/* As perf: with -a or -C, a COMMAND only says how long to record. */
	targets = !!o->nr_pids + !!o->nr_tids + (o->all_cpus || o->cpus_given);
	if (o->command && (o->nr_pids || o->nr_tids))
		return cmd_bad_usage("record", "-p and -t trace running threads: they do not go "
				     "with a COMMAND");
	if (targets == 0 && !o->command)
		return cmd_bad_usage("record", "no target: give -- COMMAND, -p PID, -t TID, -a or "
				     "-C CPUS");
	if (targets > 1)
		return cmd_bad_usage("record", "more than one target: use only one of -- COMMAND, "
				     "-p, -t, -a/-C");
	if (o->per_thread && (o->all_cpus || o->cpus_given))
		return cmd_bad_usage("record", "--per-thread traces threads: it does not go with "
				     "-a or -C");
	return 0;
}

static void print_attr(const struct perf_event_attr *a)
{
	out_obj_begin("attr", "attr");
	out_u64("type", NULL, a->type);
	out_hex("config", NULL, a->config);
	out_hex("config1", NULL, a->config1);
	out_hex("config2", NULL, a->config2);
	out_bool("exclude_user", NULL, a->exclude_user);
	out_bool("exclude_kernel", NULL, a->exclude_kernel);
	out_bool("exclude_hv", NULL, a->exclude_hv);
	out_hex("sample_type", NULL, a->sample_type);
	out_bool("inherit", NULL, a->inherit);
	out_bool("enable_on_exec", NULL, a->enable_on_exec);
	out_u64("aux_watermark", NULL, a->aux_watermark);
	out_obj_end();
}

static void print_target(const struct plan *p)
{
	const struct record_opts *o = &p->opts;

	out_obj_begin("target", "target");
	out_str("kind", NULL, target_kind_name(p->target));
	if (o->command) {
		out_arr_begin("command", NULL);
		for (int i = 0; i < o->command_argc; i++)
			out_str(NULL, NULL, o->command[i]);
		out_arr_end();
		out_str("exec", "executes", p->exec_path);
	}
	if (o->user) {
		out_obj_begin("user", "runs as");
		out_str("name", NULL, p->user.name);
		out_u64("uid", NULL, p->user.uid);
		out_u64("gid", NULL, p->user.gid);
		out_obj_end();
	}
	if (p->target == TARGET_PID || p->target == TARGET_TID) {
		const pid_t *ids = p->target == TARGET_PID ? o->pids : o->tids;
		int n = p->target == TARGET_PID ? o->nr_pids : o->nr_tids;

		out_arr_begin("pids", NULL);
		for (int i = 0; i < n; i++)
			out_u64(NULL, NULL, (uint64_t)ids[i]);
		out_arr_end();
		out_arr_begin("threads", NULL);
		for (int i = 0; i < p->nr_tids; i++)
			out_u64(NULL, NULL, (uint64_t)p->tids[i]);
		out_arr_end();
	}
	out_obj_end();
}

/* The streams the recording will open; the workload's thread is known only at its start. */
static void print_streams(const struct plan *p)
{
	out_arr_begin("streams", "streams");
	for (int i = 0; i < p->nr_streams; i++) {
		const struct stream *st = &p->streams[i];
		bool workload = p->per_thread && st->tid == 0;

		out_obj_begin(NULL, NULL);
		out_str("file", NULL, workload ? NULL : st->trace);
		out_str("sideband", NULL, workload ? NULL : st->sideband);
		out_i64("cpu", NULL, st->cpu);
		out_i64("tid", NULL, workload ? -1 : st->tid);
		out_bool("workload", NULL, workload);
		out_obj_end();
	}
	out_arr_end();
}

/* Snapshots, triggers, the control channel and the ready signal, as resolved. */
static void print_script(const struct plan *p)
{
	const struct script_opts *o = &p->opts.script;
	const struct script_plan *sp = &p->script;
	static const char *const scopes[] = {
		[SCOPE_NONE] = "none", [SCOPE_WORKLOAD] = "workload",
		[SCOPE_PROCESS] = "process", [SCOPE_EVERY_PROCESS] = "every process",
	};

	if (o->snapshot) {
		out_obj_begin("snapshot", "snapshot mode");
		out_u64s("size", "window per stream (bytes)", sp->snapshot_size);
		out_bool("final", "a snapshot at the end", !o->no_final_snapshot);
		out_obj_end();
	}
	if (sp->nr_specs) {
		out_arr_begin("triggers", "triggers");
		for (int i = 0; i < sp->nr_specs; i++) {
			const struct trigger_spec *t = &sp->specs[i];

			out_obj_begin(NULL, NULL);
			out_str("spec", NULL, t->text);
			out_str("kind", NULL, trigger_kind_name(t->kind));
			out_str("action", NULL, trigger_action_name(t->action));
			out_str("path", NULL, t->path);
			out_hex("offset", "file offset", t->offset);
			out_obj_end();
		}
		out_arr_end();
		out_str("trigger_scope", "triggers watch", scopes[sp->scope]);
		if (sp->guard && sp->scope == SCOPE_PROCESS)
			out_str("breakpoint_guard", "stray debug traps",
				"swallowed (every thread of the process is ptcollect's tracee "
				"until the end)");
		else if (sp->guard)
			out_str("breakpoint_guard", "stray debug traps",
				"swallowed (the workload stays ptcollect's tracee)");
		else if (sp->fallback[0])
			out_str("breakpoint_guard", "stray debug traps",
				"none: breakpoint triggers armed as uprobes (the process cannot "
				"be seized)");
		if (sp->fallback[0])
			out_str("breakpoint_fallback", "armed as uprobes because", sp->fallback);
		if (sp->trigger_count)
			out_u64s("trigger_count", "fires before the end", sp->trigger_count);
		out_bool("starts_stopped", "tracing waits for a start trigger", sp->start_off);
	}
	if (sp->has_control)
		out_str("control", NULL, sp->control_text);
	if (o->ready)
		out_str("ready", NULL, o->ready);
}

static void print_plan(const struct plan *p)
{
	const struct record_opts *o = &p->opts;

	out_obj_begin(NULL, NULL);
	/* --no-trace has no PMU and no event: the rest of the plan is the same. */
	if (!o->script.no_trace) {
		out_obj_begin("pmu", "pmu");
		out_str("name", NULL, p->pmu.name);
		out_u64("type", NULL, (uint64_t)p->pmu.type);
		out_obj_end();
		out_str("event", NULL, o->event);
		print_attr(&p->attr);
		out_str("filter", NULL, p->filter);
	}
	print_target(p);
	out_str("mode", NULL, o->script.no_trace ? "none" : p->per_thread ? "per-thread" :
		"per-cpu");
	print_streams(p);
	print_script(p);
	out_u64s("data_bytes", "data ring bytes", p->data_bytes);
	out_u64s("aux_bytes", "AUX area bytes", p->aux_bytes);
	out_obj_begin("locked_memory", "locked memory");
	out_u64s("need", "needed (bytes)", p->mlock_need);
	if (p->mlock_budget == UINT64_MAX)
		out_str("budget", "budget", "unlimited");
	else
		out_u64s("budget", "budget (bytes)", p->mlock_budget);
	out_obj_end();
	out_obj_begin("output", "output");
	out_str("path", NULL, o->output);
	out_str("action", NULL, p->output == PLAN_OUTPUT_REPLACE ? "replace" : "create");
	out_obj_end();
	if (o->duration > 0)
		out_fmt("duration", NULL, "%g", o->duration);
	if (o->max_size)
		out_u64s("max_size", NULL, o->max_size);
	out_obj_end();
	out_finish();
}

/* ---- carrying the plan out ---------------------------------------------- */

struct reporter {
	bool status_line;
	bool printed;
};

static void report_warn(void *arg, const struct error *e)
{
	struct reporter *r = arg;

	if (r->printed && !msg_quiet) {
		fputc('\n', stderr);	/* off the status line */
		r->printed = false;
	}
	msg_warn("record: %s", e->why);
}

static void report_note(void *arg, const char *text)
{
	struct reporter *r = arg;

	if (r->printed && !msg_quiet) {
		fputc('\n', stderr);	/* off the status line */
		r->printed = false;
	}
	msg_note("record: %s", text);
}

static void report_tick(void *arg, double t, uint64_t bytes, uint64_t losses)
{
	struct reporter *r = arg;
	double mb = (double)bytes / 1e6;

	if (!r->status_line)
		return;
	fprintf(stderr, "\r%s: %6.1fs  %9.2f MB  %7.2f MB/s  losses %" PRIu64 "   ", PTC_PROG, t,
		mb, t > 0 ? mb / t : 0, losses);
	r->printed = true;
}

static void summary(const struct plan *p, const struct session_result *res)
{
	for (int i = 0; i < res->nr_streams; i++) {
		const struct stream *st = &res->streams[i];
		const struct auxring_stats *a = &st->ring.stats;
		uint64_t unreported;

		msg_note("%-12s %12" PRIu64 " bytes  truncated %" PRIu64 "  lost %" PRIu64
			 "  partial %" PRIu64 "  collision %" PRIu64, st->trace, a->aux_bytes,
			 a->truncated, a->lost, a->partial, a->collision);
		if (stream_unreported(st, &unreported) && unreported)
			msg_warn("record: %s: the kernel dropped %" PRIu64 " sideband record(s) that "
				 "no LOST record reports: the data ring was full and nothing came "
				 "after to say so (a larger -m DATA helps)", st->trace, unreported);
		if (a->data_full)
			msg_warn("record: %s: the sideband ring filled %" PRIu64 " time(s): a stop of "
				 "the hardware may have gone unrecorded; it was restarted each time "
				 "(a larger -m DATA helps)", st->trace, a->data_full);
	}
	if (res->manifest.nr_snapshots)
		msg_note("%d snapshot%s: %s/snap-1 to snap-%d", res->manifest.nr_snapshots,
			 res->manifest.nr_snapshots == 1 ? "" : "s", p->opts.output,
			 res->manifest.nr_snapshots);
	for (int i = 0; i < res->manifest.nr_triggers; i++) {
		const struct mtrigger *t = &res->manifest.triggers[i];

		msg_note("%s: %" PRIu64 " fire%s", t->spec, t->fires, t->fires == 1 ? "" : "s");
		if (t->dropped)
			msg_warn("record: %s: %" PRIu64 " more fire%s dropped by the kernel, its "
				 "ring full: not acted on (fires faster than they are read; a "
				 "limit, or a probe on a less hot function, avoids it)", t->spec,
				 t->dropped, t->dropped == 1 ? " was" : "s were");
		/* Before 6.0 a full ring that no fire came after drops fires unseen. */
		if (!t->dropped_counted)
			msg_warn("record: %s: this kernel does not count the fires a full ring "
				 "drops (Linux 6.0 does): %" PRIu64 " dropped is what its LOST "
				 "records said, and more may have been", t->spec, t->dropped);
		if (t->throttled)
			msg_warn("record: %s: the kernel throttled it %" PRIu64 " time(s) "
				 "(kernel.perf_event_max_sample_rate): the fires meanwhile were not "
				 "seen", t->spec, t->throttled);
		if (t->late)
			msg_warn("record: %s: %" PRIu64 " fire%s came late, after younger ones "
				 "(held up past the %llu us fires wait: a loaded machine or vCPU): "
				 "their order%s may be wrong; the manifest's fires have their "
				 "time_ns, and a less loaded machine makes it rarer", t->spec,
				 t->late, t->late == 1 ? "" : "s", TRIGGER_HOLD_NS / 1000,
				 t->limit ? ", and which fires the limit kept," : "");
	}
	if (p->opts.script.no_trace) {
		msg_note("no trace (--no-trace), in %s (%s)", p->opts.output,
			 res->stop_reason ? res->stop_reason : "stopped");
		return;
	}
	msg_note("%" PRIu64 " bytes of trace in %d stream%s, %" PRIu64 " loss record%s, in %s "
		 "(%s)", res->bytes, res->nr_streams, res->nr_streams == 1 ? "" : "s",
		 res->losses, res->losses == 1 ? "" : "s", p->opts.output,
		 res->stop_reason ? res->stop_reason : "stopped");
}

/* An array of the manifest's @n entries, each as @fn makes it. */
#define JSON_LIST(n, fn, arr)						\
	({								\
		json_t *a_ = json_array();				\
									\
		for (int i_ = 0; a_ && i_ < (n); i_++)			\
			json_array_append_new(a_, fn(&(arr)[i_]));	\
		a_;							\
	})

/* record --json: what the recording holds, in the manifest's types (ptcollect-record(1)). */
static void print_result(const struct plan *p, const struct session_result *res)
{
	const struct manifest *m = &res->manifest;

	out_obj_begin(NULL, NULL);
	out_str("output", NULL, p->opts.output);
	out_bool("complete", NULL, m->complete);
	out_str("stop_reason", NULL, res->stop_reason);
	out_u64s("duration_ns", NULL, (uint64_t)(res->seconds * 1e9));
	out_value("workload", NULL, res->workload_ran ?
		  json_pack("{s:i}", "exit_status", res->workload_status) : json_null());
	out_u64s("bytes", NULL, res->bytes);
	out_u64s("losses", NULL, res->losses);
	out_value("streams", NULL, JSON_LIST(m->nr_streams, manifest_stream_to_json, m->streams));
	out_value("snapshots", NULL, JSON_LIST(m->nr_snapshots, manifest_snapshot_to_json,
					       m->snapshots));
	out_value("triggers", NULL, JSON_LIST(m->nr_triggers, manifest_trigger_to_json,
					      m->triggers));
	out_value("fires", NULL, JSON_LIST(m->nr_fires, manifest_fire_to_json, m->fires));
	out_value("marks", NULL, JSON_LIST(m->nr_marks, manifest_mark_to_json, m->marks));
	out_obj_end();
	out_finish();
}

/* Carry out the plan; the exit code follows the table in ptcollect(1). */
static int record_run(const struct plan *p)
{
	struct reporter rep = { .status_line = !p->opts.quiet && isatty(STDERR_FILENO) };
	struct session_ops ops = { .arg = &rep, .warn = report_warn, .note = report_note,
				   .tick = report_tick };
	const struct script_plan *sp = &p->script;
	struct session_result res;
	struct error e = { 0 };
	int ret, status;

	if (sp->fallback[0])
		msg_warn("record: %s: breakpoint trigger(s) armed as uprobes instead, which make "
			 "no debug traps", sp->fallback);
	ret = session_run(p, &ops, &res, &e);

	if (rep.printed)
		report_tick(&rep, res.seconds, res.bytes, res.losses), fputc('\n', stderr);
	/* A summary only of what the manifest on disk says. */
	if (res.began && res.manifest_written)
		summary(p, &res);
	if (ret) {
		status = cmd_error("record", &e);
		if (res.began && res.manifest_written)
			msg_note("record: %s keeps the %" PRIu64 " bytes of trace captured before the "
				 "failure; its manifest says what is missing", p->opts.output,
				 res.bytes);
		else if (res.began)
			msg_note("record: %s keeps trace files, but its last manifest could not be "
				 "written: manifest.json describes an earlier moment and says less "
				 "than the files hold", p->opts.output);
	} else {
		/* As perf: the workload's status when the recording itself succeeded. */
		status = res.workload_ran ? res.workload_status : EXIT_OK;
		if (out_json) {
			print_result(p, &res);
			if (cmd_flush_stdout() != EXIT_OK && status == EXIT_OK)
				status = EXIT_RUNTIME;
		}
	}
	if (res.began && p->opts.archive && cmd_archive_bundle(p->opts.output) && !ret)
		status = EXIT_RUNTIME;
	session_result_free(&res);
	return status;
}

int do_record(int argc, char **argv)
{
	struct plan *plan = calloc(1, sizeof(*plan));
	struct error e = { 0 };
	int ret;

	if (!plan) {
		msg_err("record: out of memory");
		return EXIT_RUNTIME;
	}
	ret = parse_opts(argc, argv, &plan->opts);
	if (ret < 0) {
		ret = EXIT_OK;	/* --help */
		goto out;
	}
	if (ret)
		goto out;
	msg_quiet = plan->opts.quiet;
	if (plan_resolve(plan, &e)) {
		ret = cmd_error("record", &e);
		goto out;
	}
	cmd_warnings("record", &plan->warn);
	if (plan->opts.dry_run)
		print_plan(plan);
	else
		ret = record_run(plan);
out:
	plan_free(plan);
	free(plan);
	return ret;
}

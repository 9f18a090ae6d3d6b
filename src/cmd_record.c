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
#include "filter.h"
#include "msg.h"
#include "out.h"
#include "privs.h"
#include "record.h"
#include "session.h"

#define DEFAULT_OUTPUT		"ptcollect.data"
#define DEFAULT_DATA_BYTES	(256ULL << 10)
#define DEFAULT_AUX_PRIV	(4ULL << 20)	/* perf's default for a privileged user */
#define DEFAULT_AUX_UNPRIV	(128ULL << 10)	/* and for everybody else */

enum {
	OPT_DRY_RUN = 256,
	OPT_PER_THREAD,
	OPT_FILTER,
	OPT_DURATION,
	OPT_MAX_SIZE,
	OPT_KCORE,
};

void usage_record(FILE *f)
{
	fprintf(f,
		"usage: %s record [OPTIONS] [-- COMMAND [ARGS]]\n\n"
		"Record Intel PT trace and sideband into a bundle directory.\n\n"
		"Targets (one of):\n"
		"  -- COMMAND          run COMMAND and trace it (enabled at exec)\n"
		"  -p, --pid PID[,PID] every thread of running processes\n"
		"  -t, --tid TID[,TID] these threads only\n"
		"  -a, --all-cpus      every CPU\n"
		"  -C, --cpu LIST      these CPUs (e.g. 0-3,6)\n"
		"  (with -a or -C, a COMMAND only sets how long to record, as in perf)\n\n"
		"Options:\n"
		"  -e, --event EVENT   intel_pt/TERMS/MODS in perf's syntax (default %s)\n"
		"      --filter FILTERS address filters, perf's grammar (see ptcollect-record(1))\n"
		"  -m, --mmap-pages DATA[,AUX]  ring sizes: pages, or sizes with K/M/G\n"
		"      --per-thread    one buffer per thread instead of one per CPU\n"
		"  -o, --output DIR    bundle directory (default %s)\n"
		"  -f, --force         replace an existing output directory\n"
		"      --duration TIME stop after TIME (e.g. 5, 2.5, 500ms)\n"
		"      --max-size SIZE stop when SIZE bytes of trace were captured\n"
		"      --kcore         keep the running kernel's text (from /proc/kcore)\n"
		"  -q, --quiet         no status line and no summary\n"
		"      --dry-run       resolve and print the plan, open nothing\n"
		"  -j, --json          print the plan (--dry-run) as JSON\n",
		PTC_PROG, EVCONFIG_DEFAULT, DEFAULT_OUTPUT);
}

const char *record_target_name(enum target_kind k)
{
	switch (k) {
	case TARGET_COMMAND: return "command";
	case TARGET_PID: return "pid";
	case TARGET_TID: return "tid";
	case TARGET_CPU: return "cpu";
	default: return "none";
	}
}

static int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad(const char *fmt, ...)
{
	va_list ap;
	char buf[1024];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return cmd_bad_usage("record", "%s", buf);
}

/* Options and their syntax only: nothing is looked up here. */
static int parse_opts(int argc, char **argv, struct record_opts *o)
{
	static const struct option opts[] = {
		{ "event",	required_argument, NULL, 'e' },
		{ "pid",	required_argument, NULL, 'p' },
		{ "tid",	required_argument, NULL, 't' },
		{ "all-cpus",	no_argument,       NULL, 'a' },
		{ "cpu",	required_argument, NULL, 'C' },
		{ "mmap-pages",	required_argument, NULL, 'm' },
		{ "output",	required_argument, NULL, 'o' },
		{ "force",	no_argument,       NULL, 'f' },
		{ "quiet",	no_argument,       NULL, 'q' },
		{ "help",	no_argument,       NULL, 'h' },
		{ "per-thread",	no_argument,       NULL, OPT_PER_THREAD },
		{ "filter",	required_argument, NULL, OPT_FILTER },
		{ "duration",	required_argument, NULL, OPT_DURATION },
		{ "max-size",	required_argument, NULL, OPT_MAX_SIZE },
		{ "dry-run",	no_argument,       NULL, OPT_DRY_RUN },
		{ "kcore",	no_argument,       NULL, OPT_KCORE },
		{ NULL, 0, NULL, 0 },
	};
	struct error e = { 0 };
	int c, targets;

	memset(o, 0, sizeof(*o));
	o->argc = argc;
	o->argv = argv;
	o->event = EVCONFIG_DEFAULT;
	o->output = DEFAULT_OUTPUT;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+e:p:t:aC:m:o:fqh", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			o->event = optarg;
			break;
		case 'p':
			if (cli_parse_pidlist(optarg, o->pids, &o->nr_pids, &e))
				return bad("-p: %s", e.why);
			break;
		case 't':
			if (cli_parse_pidlist(optarg, o->tids, &o->nr_tids, &e))
				return bad("-t: %s", e.why);
			break;
		case 'a':
			o->all_cpus = true;
			break;
		case 'C':
			if (cli_parse_cpulist(optarg, o->cpus, &o->nr_cpus, &e))
				return bad("-C: %s", e.why);
			o->cpus_given = true;
			break;
		case 'm':
			if (cli_parse_mmap(optarg, &o->data_bytes, &o->aux_bytes, &e))
				return bad("-m: %s", e.why);
			break;
		case 'o':
			if (!*optarg)
				return bad("-o: the output directory name is empty");
			o->output = optarg;
			break;
		case 'f':
			o->force = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			usage_record(stdout);
			return -1;
		case OPT_PER_THREAD:
			o->per_thread = true;
			break;
		case OPT_DRY_RUN:
			o->dry_run = true;
			break;
		case OPT_KCORE:
			o->kcore = true;
			break;
		case OPT_FILTER:
			o->filter = optarg;
			break;
		case OPT_DURATION:
			if (cli_parse_duration(optarg, &o->duration, &e))
				return bad("--duration: %s", e.why);
			break;
		case OPT_MAX_SIZE:
			if (cli_parse_size(optarg, &o->max_size, &e) || !o->max_size)
				return bad("--max-size: %s", o->max_size ? e.why :
					   "the size must be greater than 0");
			break;
		case ':':
			return bad("option '%s' needs a value", argv[optind - 1]);
		default:
			return bad("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc) {
		o->command = argv + optind;
		o->command_argc = argc - optind;
	}
	/* As perf: with -a or -C, a COMMAND only says how long to record. */
	targets = !!o->nr_pids + !!o->nr_tids + (o->all_cpus || o->cpus_given);
	if (o->command && (o->nr_pids || o->nr_tids))
		return bad("-p and -t trace running threads: they do not go with a COMMAND");
	if (targets == 0 && !o->command)
		return bad("no target: give -- COMMAND, -p PID, -t TID, -a or -C CPUS");
	if (targets > 1)
		return bad("more than one target: use only one of -- COMMAND, -p, -t, -a/-C");
	if (o->per_thread && (o->all_cpus || o->cpus_given))
		return bad("--per-thread traces threads: it does not go with -a or -C");
	return 0;
}

/* Syntax first, before sysfs is read (exit 2 for a typo, not 1 for a missing PMU). */
static int check_event_syntax(const char *spec)
{
	struct evconfig ev;
	struct error e = { 0 };

	if (evconfig_parse(spec, NULL, &ev, &e))
		return bad("-e %s: %s", spec, e.why);
	if (strcmp(ev.pmu_name, "intel_pt"))
		return bad("-e %s: PMU '%s' is not supported: ptcollect records intel_pt events "
			   "(e.g. intel_pt//u)", spec, ev.pmu_name);
	return 0;
}

/* execvp's search, done early so that a typo is bad input, not a failed recording. */
static int check_command(const char *cmd)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (strchr(cmd, '/')) {
		if (access(cmd, X_OK) == 0)
			return 0;
		return bad("cannot execute '%s': %s", cmd, strerror(errno));
	}
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, n ? p : ".", cmd);
		if (access(buf, X_OK) == 0)
			return 0;
		p += n + (p[n] == ':');
	}
	return bad("cannot execute '%s': command not found in PATH", cmd);
}

static bool pid_exists(pid_t pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
}

/* Everything that needs sysfs or /proc; still nothing is opened. */
static int resolve_plan(struct record_plan *p)
{
	struct record_opts *o = &p->opts;
	struct error e = { 0 };
	struct stat st;
	struct privs pv;
	int ret;

	ret = pmu_load(&p->pmu, "intel_pt", &e);
	if (ret) {
		msg_err("record: %s", e.why);
		if (ret == -ENOENT)
			msg_hint("this machine has no Intel PT; '%s caps' says why", PTC_PROG);
		return EXIT_RUNTIME;
	}
	if (evconfig_parse(o->event, &p->pmu, &p->ev, &e))
		return bad("-e %s: %s", o->event, e.why);
	if (o->kcore && p->ev.exclude_kernel)
		return bad("--kcore keeps the kernel's text, but -e %s does not trace the kernel; "
			   "use a k modifier (e.g. intel_pt//k or intel_pt//uk)", o->event);
	if (p->ev.forced_pt)
		msg_warn("-e %s: pt=0 makes no sense; using pt=1, as perf does", o->event);

	if (o->filter) {
		struct filter_opts fo = {
			.traces_kernel = !p->ev.exclude_kernel,
			.task_target = !(o->all_cpus || o->cpus_given),
			.nr_addr_filters = p->pmu.nr_addr_filters > 0 ? p->pmu.nr_addr_filters : 0,
			.num_address_ranges = pmu_has_cap(&p->pmu, "num_address_ranges") ?
				(int)pmu_cap(&p->pmu, "num_address_ranges", 0) : -1,
			.kallsyms = getenv("PTCOLLECT_KALLSYMS"),
		};
		struct warnings w = { 0 };

		ret = filter_build(o->filter, &fo, &p->filter, &e, &w);
		if (ret && !e.usage) {
			msg_err("record: --filter '%s': %s", o->filter, e.why);
			return EXIT_RUNTIME;
		}
		if (ret) {
			ret = bad("--filter '%s': %s", o->filter, e.why);
			if (e.hint[0])
				msg_hint("%s", e.hint);
			return ret;
		}
		for (int i = 0; i < w.nr; i++)
			msg_warn("--filter: %s", w.msg[i]);
	}
	for (int i = 0; i < o->nr_pids; i++)
		if (!pid_exists(o->pids[i]))
			return bad("-p %d: no such process", o->pids[i]);
	for (int i = 0; i < o->nr_tids; i++)
		if (!pid_exists(o->tids[i]))
			return bad("-t %d: no such thread", o->tids[i]);
	for (int i = 0; i < o->nr_cpus; i++) {
		long n = sysconf(_SC_NPROCESSORS_CONF);

		if (o->cpus[i] >= n)
			return bad("-C: CPU %d does not exist (this machine has CPUs 0-%ld)",
				   o->cpus[i], n - 1);
	}

	if (o->command && (ret = check_command(o->command[0])))
		return ret;
	if (o->all_cpus || o->cpus_given)
		p->target = TARGET_CPU;
	else if (o->command)
		p->target = TARGET_COMMAND;
	else if (o->nr_pids)
		p->target = TARGET_PID;
	else
		p->target = TARGET_TID;
	p->per_thread = o->per_thread;

	privs_read(&pv);
	p->data_bytes = o->data_bytes ? o->data_bytes : DEFAULT_DATA_BYTES;
	p->aux_bytes = o->aux_bytes ? o->aux_bytes :
		       (privs_privileged(&pv) ? DEFAULT_AUX_PRIV : DEFAULT_AUX_UNPRIV);

	/* The kernel's mlock rule, checked before anything is mapped. */
	{
		long cpus = sysconf(_SC_NPROCESSORS_ONLN), page = sysconf(_SC_PAGESIZE);
		uint64_t rings = p->per_thread ? (uint64_t)(o->nr_pids + o->nr_tids > 0 ?
				 o->nr_pids + o->nr_tids : 1) :
				 (uint64_t)(o->cpus_given ? o->nr_cpus : cpus);
		uint64_t want = rings * (p->data_bytes + p->aux_bytes + (uint64_t)page);
		uint64_t budget = privs_mlock_budget(&pv, cpus > 0 ? (unsigned int)cpus : 1);

		if (want > budget)
			return bad("-m: %" PRIu64 " ring(s) of %" PRIu64 " KiB data + %" PRIu64 " KiB "
				   "AUX need %" PRIu64 " KiB of locked memory, but this user may lock %"
				   PRIu64 " KiB (perf_event_mlock_kb=%ld per CPU, RLIMIT_MEMLOCK=%" PRIu64
				   " KiB); use smaller rings (-m ,%" PRIu64 "K), raise 'sysctl "
				   "kernel.perf_event_mlock_kb', or 'ulimit -l'", rings,
				   p->data_bytes >> 10, p->aux_bytes >> 10, want >> 10, budget >> 10,
				   pv.mlock_kb, pv.rlimit_memlock >> 10,
				   (p->aux_bytes >> 12) ? p->aux_bytes >> 12 : 4);
	}
	if (!o->force && lstat(o->output, &st) == 0)
		return bad("-o %s: it exists already; choose another name or add --force "
			   "to replace it", o->output);
	return 0;
}

static void print_plan(const struct record_plan *p)
{
	const struct record_opts *o = &p->opts;

	out_obj_begin(NULL, NULL);
	out_obj_begin("pmu", "pmu");
	out_str("name", NULL, p->pmu.name);
	out_u64("type", NULL, p->pmu.type);
	out_obj_end();
	out_obj_begin("attr", "attr");
	out_hex("config", NULL, p->ev.config);
	out_hex("config1", NULL, p->ev.config1);
	out_hex("config2", NULL, p->ev.config2);
	out_bool("exclude_user", NULL, p->ev.exclude_user);
	out_bool("exclude_kernel", NULL, p->ev.exclude_kernel);
	out_bool("exclude_hv", NULL, p->ev.exclude_hv);
	out_obj_end();
	out_str("event", NULL, o->event);
	out_str("filter", NULL, p->filter);
	out_obj_begin("target", "target");
	out_str("kind", NULL, record_target_name(p->target));
	if (o->command) {
		out_arr_begin("command", NULL);
		for (int i = 0; i < o->command_argc; i++)
			out_str(NULL, NULL, o->command[i]);
		out_arr_end();
	}
	if (p->target == TARGET_PID || p->target == TARGET_TID) {
		const pid_t *ids = p->target == TARGET_PID ? o->pids : o->tids;
		int n = p->target == TARGET_PID ? o->nr_pids : o->nr_tids;

		out_arr_begin("pids", NULL);
		for (int i = 0; i < n; i++)
			out_u64(NULL, NULL, (uint64_t)ids[i]);
		out_arr_end();
	} else if (p->target == TARGET_CPU) {
		out_arr_begin("cpus", NULL);
		if (o->cpus_given)
			for (int i = 0; i < o->nr_cpus; i++)
				out_u64(NULL, NULL, (uint64_t)o->cpus[i]);
		else
			out_str(NULL, NULL, "all");
		out_arr_end();
	}
	out_obj_end();
	out_str("mode", NULL, p->per_thread ? "per-thread" : "per-cpu");
	out_u64("data_bytes", "data ring bytes", p->data_bytes);
	out_u64("aux_bytes", "AUX area bytes", p->aux_bytes);
	out_str("output", NULL, o->output);
	if (o->duration > 0)
		out_fmt("duration", NULL, "%g", o->duration);
	if (o->max_size)
		out_u64("max_size", NULL, o->max_size);
	out_obj_end();
	out_finish();
}

/* Carry out the plan; the exit code follows the table in ptcollect(1). */
static int record_run(const struct record_plan *plan)
{
	struct session_result res;
	int ret = session_run(plan, &res);

	if (ret) {
		msg_err("record: %s", res.err);
		if (res.hint[0])
			msg_hint("%s", res.hint);
		if (res.bytes)
			msg_note("record: %s keeps the %" PRIu64 " bytes of trace captured before "
				 "the failure; its manifest says what is missing",
				 plan->opts.output, res.bytes);
		return res.usage_error ? EXIT_USAGE : EXIT_RUNTIME;
	}
	/* As perf: the workload's status when the recording itself succeeded. */
	if (res.workload_ran)
		return res.workload_status;
	return EXIT_OK;
}

int do_record(int argc, char **argv)
{
	struct record_plan *plan;
	int ret;

	plan = calloc(1, sizeof(*plan));
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
	ret = check_event_syntax(plan->opts.event);
	if (ret)
		goto out;
	if (!plan->opts.dry_run && pmu_sysfs_is_fixture()) {
		ret = bad("PTCOLLECT_SYSFS=%s is a fixture: its PMU type is not a real one, so "
			  "only --dry-run can use it; unset PTCOLLECT_SYSFS to record",
			  pmu_sysfs_root());
		goto out;
	}
	ret = resolve_plan(plan);
	if (ret)
		goto out;
	if (plan->opts.dry_run) {
		print_plan(plan);
		goto out;
	}
	ret = record_run(plan);
out:
	free(plan->filter);
	free(plan);
	return ret;
}

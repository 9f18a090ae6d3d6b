// SPDX-License-Identifier: MIT
/* The recording plan: every decision and every check, made once, before anything is opened. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "auxring.h"
#include "bundle.h"
#include "cpu.h"
#include "cpuset.h"
#include "fileio.h"
#include "filter.h"
#include "iptcaps.h"
#include "plan.h"
#include "privs.h"
#include "procfs.h"
#include "sideband.h"

/* Syntax first, before sysfs is read: a typo is bad input (2), not a missing PMU (1). */
static int check_event_syntax(const char *spec, struct error *e)
{
	struct evconfig ev;
	int ret = evconfig_parse(spec, NULL, &ev, e);

	if (!ret && strcmp(ev.pmu_name, "intel_pt"))
		ret = err_usage(e, "PMU '%s' is not supported: ptcollect records intel_pt events "
				"(e.g. intel_pt//u)", ev.pmu_name);
	if (ret)
		err_what(e, "-e %s", spec);
	return ret;
}

/*
 * Packets the config makes that the linked libipt does not decode (the event term's Event
 * Trace with libipt 2.0.5): the trace is recorded all the same, other decoders read it.
 */
static void warn_undecodable(struct plan *p)
{
	const struct pmu_term *t = pmu_term_find(&p->pmu, "event");
	struct iptcaps caps;
	char lacks[160];

	if (!t || t->field != PMU_FIELD_CONFIG || !pmu_term_extract(t, p->ev.config))
		return;
	iptcaps_get(&caps);
	if (iptcaps_decodes(&caps, IPTCAPS_EVENT_TRACE))
		return;
	iptcaps_lacks(&caps, IPTCAPS_EVENT_TRACE, lacks, sizeof(lacks));
	warn_add(&p->warn, "-e %s: the event term makes Event Trace packets (CFE, EVD) and %s: "
		 "the trace is recorded (perf and libipt 2.1 or later decode it), but 'ptcollect "
		 "decode' stops at the first of them until the next PSB", p->opts.event, lacks);
}

static int resolve_event(struct plan *p, struct error *e)
{
	const struct record_opts *o = &p->opts;
	int ret;

	ret = check_event_syntax(o->event, e);
	if (ret)
		return ret;
	if (!o->dry_run && pmu_sysfs_is_fixture())
		return err_usage(e, "PTCOLLECT_SYSFS=%s is a fixture: its PMU type is not a real "
				 "one, so only --dry-run can use it; unset PTCOLLECT_SYSFS to record",
				 pmu_sysfs_root());
	ret = pmu_load(&p->pmu, "intel_pt", e);
	if (ret == -ENOENT)
		err_hint(e, "this machine has no Intel PT; 'ptcollect caps' says why");
	if (ret)
		return ret;
	ret = evconfig_parse(o->event, &p->pmu, &p->ev, e);
	if (ret) {
		err_what(e, "-e %s", o->event);
		return ret;
	}
	if (p->ev.forced_pt)
		warn_add(&p->warn, "-e %s: pt=0 makes no sense; using pt=1, as perf does",
			 o->event);
	warn_undecodable(p);
	if (o->kcore && p->ev.exclude_kernel)
		return err_usage(e, "--kcore keeps the kernel's text, but -e %s does not trace the "
				 "kernel; use a k modifier (e.g. intel_pt//k or intel_pt//uk)",
				 o->event);
	return 0;
}

static int resolve_filter(struct plan *p, struct error *e)
{
	const struct record_opts *o = &p->opts;
	int ret, before;
	struct filter_opts fo = {
		.traces_kernel = !p->ev.exclude_kernel,
		.task_target = p->target != TARGET_CPU,
		.nr_addr_filters = p->pmu.nr_addr_filters > 0 ? p->pmu.nr_addr_filters : 0,
		.num_address_ranges = pmu_has_cap(&p->pmu, "num_address_ranges") ?
			(int)pmu_cap(&p->pmu, "num_address_ranges", 0) : -1,
		.kallsyms = getenv("PTCOLLECT_KALLSYMS"),
	};

	if (!o->filter)
		return 0;
	before = p->warn.nr;
	ret = filter_build(o->filter, &fo, &p->filter, e, &p->warn);
	if (ret)
		err_what(e, "--filter '%s'", o->filter);
	/* Say which option a warning is about. */
	for (int i = before; i < p->warn.nr; i++) {
		char msg[sizeof(p->warn.msg[0])];

		memcpy(msg, p->warn.msg[i], sizeof(msg));
		if (snprintf(p->warn.msg[i], sizeof(msg), "--filter: %s", msg) < 0)
			p->warn.msg[i][0] = '\0';
	}
	return ret;
}

static int add_tids(struct plan *p, const pid_t *tids, int nr)
{
	pid_t *n = realloc(p->tids, ((size_t)p->nr_tids + (size_t)nr) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	p->tids = n;
	for (int i = 0; i < nr; i++) {
		bool dup = false;

		for (int j = 0; j < p->nr_tids && !dup; j++)
			dup = p->tids[j] == tids[i];
		if (!dup)
			p->tids[p->nr_tids++] = tids[i];
	}
	return 0;
}

/*
 * The live threads of process @pid. A thread that exited and waits to be
 * reaped (a main thread that called pthread_exit() while the others run: a
 * zombie leader) has no events to open: the kernel refuses them (ESRCH).
 */
static int add_live_tids(struct plan *p, pid_t pid, const pid_t *tids, int nr)
{
	for (int i = 0; i < nr; i++) {
		char st = procfs_state(tids[i]);
		int ret;

		if (st == 'Z' || st == 'X') {
			warn_add(&p->warn, "-p %d: thread %d%s has exited (a zombie until its process "
				 "ends): it is not traced; the process's other threads are",
				 (int)pid, (int)tids[i],
				 tids[i] == pid ? " (the main thread)" : "");
			continue;
		}
		ret = add_tids(p, &tids[i], 1);
		if (ret)
			return ret;
	}
	return 0;
}

/* The threads of -p and -t now; a process with no live thread does not exist. */
static int resolve_threads(struct plan *p, struct error *e)
{
	const struct record_opts *o = &p->opts;

	for (int i = 0; i < o->nr_pids; i++) {
		pid_t *tids;
		int nr, ret = procfs_tasks(o->pids[i], &tids, &nr);

		if (ret == -ESRCH)
			return err_usage_code(e, -ESRCH, "-p %d: no such process", o->pids[i]);
		if (!ret)
			ret = add_live_tids(p, o->pids[i], tids, nr);
		free(tids);
		if (ret)
			return err_runtime(e, ret, "-p %d: %s", o->pids[i], strerror(-ret));
	}
	for (int i = 0; i < o->nr_tids; i++) {
		char st = procfs_state(o->tids[i]);

		if (!st || st == 'Z' || st == 'X')
			return err_usage_code(e, -ESRCH, "-t %d: no such thread", o->tids[i]);
		if (add_tids(p, &o->tids[i], 1))
			return err_runtime(e, -ENOMEM, "out of memory");
	}
	return 0;
}

static bool executable(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode) && !access(path, X_OK);
}

/* execvp's search, once: the session runs what was found here. */
static int resolve_command(struct plan *p, struct error *e)
{
	const char *cmd = p->opts.command[0], *path = getenv("PATH");
	char buf[PATH_MAX], dflt[256];

	if (strchr(cmd, '/')) {
		struct stat st;

		if (stat(cmd, &st))
			return err_usage_code(e, -errno, "cannot execute '%s': %s", cmd,
					      strerror(errno));
		if (!S_ISREG(st.st_mode) || access(cmd, X_OK))
			return err_usage_code(e, -EACCES, "cannot execute '%s': %s", cmd,
					      S_ISDIR(st.st_mode) ? "it is a directory" :
					      strerror(EACCES));
		p->exec_path = strdup(cmd);
		return p->exec_path ? 0 : err_runtime(e, -ENOMEM, "out of memory");
	}
	if (!path) {
		/* What execvp searches when PATH is not set. */
		if (!confstr(_CS_PATH, dflt, sizeof(dflt)))
			snprintf(dflt, sizeof(dflt), "/bin:/usr/bin");
		path = dflt;
	}
	for (const char *d = path;; d += strcspn(d, ":") + 1) {
		size_t n = strcspn(d, ":");

		/* An empty entry is the working directory. */
		if (snprintf(buf, sizeof(buf), "%.*s%s%s", (int)n, d, n ? "/" : "", cmd) <
		    (int)sizeof(buf) && executable(buf)) {
			p->exec_path = strdup(buf);
			return p->exec_path ? 0 : err_runtime(e, -ENOMEM, "out of memory");
		}
		if (!d[n])
			break;
	}
	return err_usage_code(e, -ENOENT, "cannot execute '%s': command not found in PATH", cmd);
}

/* --user: root runs the workload as another user; nobody else can, and only a workload. */
static int resolve_user(struct plan *p, struct error *e)
{
	const char *u = p->opts.user;
	int ret;

	if (!u)
		return 0;
	if (!p->opts.command)
		return err_usage(e, "--user %s: only a workload (-- COMMAND) runs as another user", u);
	if (geteuid())
		return err_usage_code(e, -EPERM, "--user %s: only root can run the workload as "
				      "another user", u);
	ret = user_resolve(u, &p->user, e);
	if (ret)
		err_what(e, "--user");
	return ret;
}

static int resolve_target(struct plan *p, int *cpus, int nr_cpus, struct error *e)
{
	const struct record_opts *o = &p->opts;
	int ret;

	if (o->all_cpus || o->cpus_given)
		p->target = TARGET_CPU;
	else if (o->command)
		p->target = TARGET_COMMAND;
	else if (o->nr_pids)
		p->target = TARGET_PID;
	else
		p->target = TARGET_TID;
	p->per_thread = o->per_thread;
	ret = resolve_threads(p, e);
	if (!ret && o->command)
		ret = resolve_command(p, e);
	if (!ret)
		ret = resolve_user(p, e);
	if (ret)
		return ret;
	for (int i = 0; i < o->nr_cpus; i++) {
		bool online = false;

		for (int j = 0; j < nr_cpus && !online; j++)
			online = cpus[j] == o->cpus[i];
		if (!online) {
			char list[256];

			cpuset_format(cpus, nr_cpus, list, sizeof(list));
			return err_usage(e, "-C: CPU %d is not online (online: %s)", o->cpus[i],
					 list);
		}
	}
	return 0;
}

/* One stream per ring: a CPU, or in per-thread mode a thread. */
static int plan_streams(struct plan *p, const int *online, int nr_online)
{
	const struct record_opts *o = &p->opts;
	const int *cpus = o->cpus_given ? o->cpus : online;
	int n = o->cpus_given ? o->nr_cpus : nr_online;

	if (p->per_thread)
		n = p->target == TARGET_COMMAND ? 1 : p->nr_tids;
	p->streams = calloc((size_t)n, sizeof(*p->streams));
	if (!p->streams)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		if (!p->per_thread)
			stream_init(&p->streams[i], cpus[i], -1);
		else
			stream_init(&p->streams[i], -1, p->target == TARGET_COMMAND ? 0 :
				    p->tids[i]);
	}
	p->nr_streams = n;
	return 0;
}

/* The largest AUX area (a power of two of pages, in bytes) whose rings fit in @budget; 0: none. */
static uint64_t fit_aux(uint64_t budget, int nr_streams, uint64_t data_bytes)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), per, aux;

	per = budget / (uint64_t)(nr_streams > 0 ? nr_streams : 1);
	if (per < data_bytes + 2 * page)
		return 0;
	for (aux = page; aux * 2 <= per - data_bytes - page && aux < (1ULL << 40); aux *= 2)
		;
	return aux;
}

/* What to suggest when the rings do not fit: an AUX size that does, else smaller -m DATA. */
static void fit_hint(struct error *e, uint64_t budget, const struct plan *p, const char *more)
{
	uint64_t aux = fit_aux(budget, p->nr_streams, p->data_bytes);

	if (aux)
		err_hint(e, "use smaller rings (-m ,%" PRIu64 "K fits)%s", aux >> 10, more);
	else
		err_hint(e, "even one-page AUX areas do not fit beside %" PRIu64 " KiB data rings: "
			 "use a smaller -m DATA or fewer streams%s", p->data_bytes >> 10, more);
}

/* The kernel's mlock rule, and for an unlimited user the machine's memory. */
static int check_memory(struct plan *p, struct error *e)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), avail;
	struct privs pv;

	privs_read(&pv);
	p->mlock_need = (uint64_t)p->nr_streams * (p->data_bytes + p->aux_bytes + page);
	p->mlock_budget = privs_mlock_budget(&pv, (unsigned int)p->nr_online);
	if (p->mlock_need > p->mlock_budget) {
		err_usage(e, "%d ring(s) of %" PRIu64 " KiB data + %" PRIu64 " KiB AUX need %"
			  PRIu64 " KiB of locked memory, but this user may lock %" PRIu64 " KiB "
			  "(perf_event_mlock_kb=%ld per CPU, RLIMIT_MEMLOCK=%" PRIu64 " KiB)",
			  p->nr_streams, p->data_bytes >> 10, p->aux_bytes >> 10,
			  p->mlock_need >> 10, p->mlock_budget >> 10, pv.mlock_kb,
			  pv.rlimit_memlock >> 10);
		err_what(e, "-m");
		fit_hint(e, p->mlock_budget, p, ", raise 'sysctl kernel.perf_event_mlock_kb', or "
			 "'ulimit -l'");
		return -EINVAL;
	}
	/* Nothing limits root: the rings must still fit in the machine. */
	avail = privs_mem_available();
	if (avail && p->mlock_need > avail) {
		err_usage(e, "%d ring(s) of %" PRIu64 " KiB data + %" PRIu64 " KiB AUX need %"
			  PRIu64 " KiB of memory, but this machine has %" PRIu64 " KiB available",
			  p->nr_streams, p->data_bytes >> 10, p->aux_bytes >> 10,
			  p->mlock_need >> 10, avail >> 10);
		err_what(e, "-m");
		fit_hint(e, avail / 2, p, "");
		return -EINVAL;
	}
	return 0;
}

#define FD_SPARE 64	/* descriptors besides events and stream files: sysfs, /proc, the bundle */

/*
 * Descriptors: an event per thread and CPU (-p, -t per CPU), else one per
 * ring, and two files per ring. The session raises the soft limit to the
 * hard one when it must; past the hard limit the recording cannot be opened.
 */
static int check_descriptors(struct plan *p, struct error *e)
{
	bool per_task_cpu = !p->per_thread && (p->target == TARGET_PID || p->target == TARGET_TID);
	uint64_t events = (uint64_t)p->nr_streams * (per_task_cpu ? (uint64_t)p->nr_tids : 1);
	uint64_t soft, hard;

	p->fd_need = events + 2 * (uint64_t)p->nr_streams + FD_SPARE;
	privs_nofile(&soft, &hard);
	if (p->fd_need <= hard)
		return 0;
	err_usage(e, "%" PRIu64 " events and %d ring(s) need %" PRIu64 " file descriptors, but "
		  "RLIMIT_NOFILE allows %" PRIu64, events, p->nr_streams, p->fd_need, hard);
	err_hint(e, "raise the hard limit ('ulimit -Hn' as root), or trace fewer threads (-t) "
		 "or CPUs (-C)%s", per_task_cpu ? ", or use --per-thread" : "");
	return -EINVAL;
}

/* -o without its trailing slashes: "out/" must not reach through a link named out. */
static char *output_path(const char *o)
{
	char *s = strdup(o);
	size_t n = s ? strlen(s) : 0;

	while (n > 1 && s[n - 1] == '/')
		s[--n] = '\0';
	return s;
}

/* Is @st the working directory, or a directory it is in? By device and inode, up to /. */
static bool cwd_or_ancestor(const struct stat *st)
{
	int fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC), up;
	struct stat cur, parent;
	bool found = false;

	while (fd >= 0 && !fstat(fd, &cur)) {
		found = cur.st_dev == st->st_dev && cur.st_ino == st->st_ino;
		up = found ? -1 : openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		close(fd);
		fd = up;
		/* The root is its own parent. */
		if (fd >= 0 && (fstat(fd, &parent) ||
				(parent.st_dev == cur.st_dev && parent.st_ino == cur.st_ino))) {
			close(fd);
			fd = -1;
		}
	}
	if (fd >= 0)
		close(fd);
	return found;
}

static int check_output(struct plan *p, struct error *e)
{
	const char *o = p->opts.output;
	char *path = output_path(o), *dir, *base;
	struct stat st;
	int fd, ret = 0;
	size_t len;

	if (!path)
		return err_runtime(e, -ENOMEM, "out of memory");
	base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	if (!strcmp(base, ".") || !strcmp(base, "..") || !strcmp(path, "/")) {
		ret = err_usage(e, "-o %s: name a new directory for the bundle, not an existing "
				"one such as the working directory", o);
		goto out;
	}
	if (lstat(path, &st)) {
		if (errno != ENOENT) {
			ret = err_usage_code(e, -errno, "-o %s: %s", o, strerror(errno));
			goto out;
		}
		len = strlen(base);
		dir = dirname(path);	/* path is not needed after this */
		if (stat(dir, &st) || !S_ISDIR(st.st_mode))
			ret = err_usage_code(e, -ENOENT, "-o %s: the directory %s does not exist",
					     o, dir);
		else if ((ret = fileio_try_create_in(dir, len)))
			err_usage_code(e, ret, "-o %s: cannot create a directory in %s: %s", o,
				       dir, strerror(-ret));
		p->output = PLAN_OUTPUT_NEW;
		goto out;
	}
	/* Any spelling of them: "$PWD", "../..", a path through a link. */
	if (S_ISDIR(st.st_mode) && cwd_or_ancestor(&st)) {
		ret = err_usage(e, "-o %s: name a new directory for the bundle, not an existing "
				"one such as the working directory or a directory it is in", o);
		goto out;
	}
	if (!p->opts.force) {
		ret = err_usage_code(e, -EEXIST, "-o %s: it exists already; choose another name "
				     "or add --force to replace it", o);
		goto out;
	}
	if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode)) {
		ret = err_usage_code(e, -ENOTDIR, "-o %s: exists and is %s; --force only replaces "
				     "a ptcollect bundle", o, S_ISLNK(st.st_mode) ?
				     "a symbolic link" : "not a directory");
		goto out;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		ret = err_usage_code(e, -errno, "-o %s: %s", o, strerror(errno));
		goto out;
	}
	ret = bundle_replaceable(fd, o, e);
	close(fd);
	/* The old one is moved aside beside it, and the new one made there. */
	len = strlen(base);
	if (!ret && (ret = fileio_try_create_in(dirname(path), len)))
		err_usage_code(e, ret, "-o %s: cannot replace it: %s", o, strerror(-ret));
	if (!ret)
		p->output = PLAN_OUTPUT_REPLACE;
out:
	free(path);
	return ret;
}

/* attr.build_id came with Linux 5.12; an older kernel refuses an attr that sets it. */
static bool kernel_has_mmap_build_id(void)
{
	struct utsname u;
	unsigned int major, minor;

	return !uname(&u) && sscanf(u.release, "%u.%u", &major, &minor) == 2 &&
	       (major > 5 || (major == 5 && minor >= 12));
}

/* What perf_event_open gets: the event, and sideband on the PT event itself. */

static void plan_attr(struct plan *p)
{
	struct perf_event_attr *a = &p->attr;

	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = (uint32_t)p->pmu.type;
	a->config = p->ev.config;
	a->config1 = p->ev.config1;
	a->config2 = p->ev.config2;
	a->exclude_user = p->ev.exclude_user;
	a->exclude_kernel = p->ev.exclude_kernel;
	a->exclude_hv = p->ev.exclude_hv;
	a->sample_period = 1;	/* as perf: PT never samples, but the period must be set */
	a->sample_type = SIDEBAND_SAMPLE_TYPE;
	a->sample_id_all = 1;
	a->disabled = 1;
	/* A trigger that starts tracing enables the events; until then they stay off. */
	a->enable_on_exec = p->target == TARGET_COMMAND && !p->script.start_off;
	/* New threads of a traced task follow it into the per-CPU rings. */
	a->inherit = !p->per_thread && (p->target == TARGET_COMMAND || p->target == TARGET_PID);
	a->mmap = 1;
	a->mmap2 = 1;
	/* The build-id of each file as it is mapped, for archive to hold the file against. */
	a->build_id = kernel_has_mmap_build_id();
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->context_switch = 1;
	a->aux_watermark = auxring_watermark(p->aux_bytes);
}

/* Triggers watch the target: which processes that is, as far as they care. */
static int resolve_script(struct plan *p, struct error *e)
{
	const struct record_opts *o = &p->opts;
	struct script_target t = {
		.workload = o->command != NULL,
		.whole_system = p->target == TARGET_CPU,
		.pids = p->tids,
		.nr_pids = p->nr_tids,
	};

	if (o->nr_pids) {
		t.pids = o->pids;
		t.nr_pids = o->nr_pids;
	}
	return script_resolve(&o->script, &t, &p->script, e, &p->warn);
}

/* --no-trace: no PMU, no streams, no rings; the target, the output and the script. */
static int resolve_no_trace(struct plan *p, struct error *e)
{
	const struct record_opts *o = &p->opts;
	int online[CLI_MAX_CPUS], nr_online, ret;

	if (o->filter || o->kcore || o->per_thread || o->data_bytes || o->aux_bytes)
		return err_usage(e, "--no-trace records no trace: %s has nothing to act on",
				 o->filter ? "--filter" : o->kcore ? "--kcore" : o->per_thread ?
				 "--per-thread" : "-m");
	ret = cpuset_online(online, &nr_online, e);
	if (!ret)
		ret = resolve_target(p, online, nr_online, e);
	if (!ret)
		ret = check_output(p, e);
	if (!ret)
		ret = resolve_script(p, e);
	p->nr_online = nr_online;
	return ret;
}

/* The AUX size: perf's default, and in snapshot mode perf's rules for it and the window. */
static int resolve_sizes(struct plan *p, struct error *e)
{
	const struct record_opts *o = &p->opts;
	struct privs pv;
	uint64_t dflt;

	privs_read(&pv);
	dflt = privs_privileged(&pv) ? PLAN_DEFAULT_AUX_PRIV : PLAN_DEFAULT_AUX_UNPRIV;
	p->data_bytes = o->data_bytes ? o->data_bytes : PLAN_DEFAULT_DATA;
	p->aux_bytes = o->aux_bytes ? o->aux_bytes : dflt;
	if (!o->script.snapshot)
		return 0;
	p->aux_bytes = o->aux_bytes;
	return script_snapshot_sizes(&o->script, dflt, &p->aux_bytes, &p->script.snapshot_size,
				     e);
}

int plan_resolve(struct plan *p, struct error *e)
{
	const struct record_opts *o = &p->opts;
	int online[CLI_MAX_CPUS], nr_online, ret;

	ret = script_check_syntax(&o->script, e);
	if (ret)
		return ret;
	if (o->script.no_trace)
		return resolve_no_trace(p, e);
	ret = resolve_event(p, e);
	if (!ret)
		ret = cpuset_online(online, &nr_online, e);
	if (!ret)
		ret = resolve_target(p, online, nr_online, e);
	if (!ret)
		ret = resolve_filter(p, e);
	if (!ret)
		ret = resolve_script(p, e);
	if (!ret)
		ret = resolve_sizes(p, e);
	if (ret)
		return ret;
	p->nr_online = nr_online;
	if (plan_streams(p, online, nr_online))
		return err_runtime(e, -ENOMEM, "out of memory");
	ret = check_memory(p, e);
	if (!ret)
		ret = check_descriptors(p, e);
	if (!ret)
		ret = check_output(p, e);
	if (!ret)
		plan_attr(p);
	return ret;
}

void plan_events(const struct plan *p, struct events_config *c)
{
	*c = (struct events_config){
		.attr = p->attr,
		.filter = p->filter,
		.pmu_type = p->pmu.type,
		.nr_addr_filters = p->pmu.nr_addr_filters,
		.cpu_wide = p->target == TARGET_CPU,
		.data_bytes = p->data_bytes,
		.aux_bytes = p->aux_bytes,
		.overwrite = p->opts.script.snapshot,
		.mlock_need = p->mlock_need,
		.mlock_budget = p->mlock_budget,
		.nr_streams = p->nr_streams,
	};
}

void plan_free(struct plan *p)
{
	script_plan_free(&p->script);
	free(p->filter);
	free(p->exec_path);
	free(p->tids);
	free(p->streams);
	p->filter = p->exec_path = NULL;
	p->tids = NULL;
	p->streams = NULL;
}

static unsigned int mtc_freq(const struct plan *p)
{
	const struct pmu_term *t = pmu_term_find(&p->pmu, "mtc_period");

	return t ? (unsigned int)pmu_term_extract(t, p->ev.config) : 0;
}

int plan_describe(const struct plan *p, struct manifest *m)
{
	const struct record_opts *o = &p->opts;
	char **self = calloc((size_t)o->argc + 2, sizeof(*self));
	struct cpu_id cpu;
	int ret;

	if (!self)
		return -ENOMEM;
	/* ptcollect's own command line: "ptcollect", then record's arguments. */
	self[0] = "ptcollect";
	for (int i = 0; i < o->argc; i++)
		self[i + 1] = o->argv[i];
	cpu_identify(&cpu);
	ret = manifest_set(&m->tool_version, PTC_VERSION);
	ret = ret ?: manifest_set_argv(&m->command, &m->command_argc, self, o->argc + 1);
	free(self);
	if (o->command)
		ret = ret ?: manifest_set_argv(&m->target.command, &m->target.command_argc,
					       o->command, o->command_argc);
	m->target.kind = p->target;
	m->target.pids = calloc((size_t)o->nr_pids + (size_t)o->nr_tids + 1, sizeof(pid_t));
	if (!m->target.pids)
		return -ENOMEM;
	for (int i = 0; i < o->nr_pids; i++)
		m->target.pids[m->target.nr_pids++] = o->pids[i];
	for (int i = 0; i < o->nr_tids; i++)
		m->target.pids[m->target.nr_pids++] = o->tids[i];
	m->per_thread = p->per_thread;
	ret = ret ?: manifest_set(&m->event, o->script.no_trace ? NULL : o->event);
	ret = ret ?: manifest_set(&m->pmu_name, o->script.no_trace ? NULL : p->pmu.name);
	ret = ret ?: manifest_set(&m->filter, p->filter);
	ret = ret ?: manifest_set(&m->cpu.vendor, cpu.vendor);
	m->pmu_type = p->pmu.type;
	m->attr.config = p->attr.config;
	m->attr.config1 = p->attr.config1;
	m->attr.config2 = p->attr.config2;
	m->attr.exclude_user = p->attr.exclude_user;
	m->attr.exclude_kernel = p->attr.exclude_kernel;
	m->attr.exclude_hv = p->attr.exclude_hv;
	m->attr.sample_type = p->attr.sample_type;
	m->cpu.family = cpu.family;
	m->cpu.model = cpu.model;
	m->cpu.stepping = cpu.stepping;
	m->nom_freq = p->pmu.max_nonturbo_ratio;
	m->has_cpuid_0x15 = cpu.has_leaf_0x15;
	m->cpuid_0x15_eax = cpu.cpuid_0x15_eax;
	m->cpuid_0x15_ebx = cpu.cpuid_0x15_ebx;
	m->mtc_freq = mtc_freq(p);
	return ret ?: script_describe(&o->script, &p->script, m);
}

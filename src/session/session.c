// SPDX-License-Identifier: MIT
/*
 * The record loop. Events are opened disabled; a workload is forked and held
 * before exec so its events exist before its first instruction (enable on
 * exec, as perf does); running targets are enabled once every ring is
 * mapped. One poll loop serves every ring, the signals and the timers.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "bundle.h"
#include "events.h"
#include "freeze.h"
#include "images.h"
#include "kimage.h"
#include "perfmaps.h"
#include "privs.h"
#include "procfs.h"
#include "session.h"
#include "sideband.h"
#include "snapshot.h"
#include "steer.h"
#include "vdso.h"
#include "workload.h"

#define RESCANS		8	/* passes over /proc for threads a -p target starts meanwhile */
#define GRACE_SECONDS	5	/* a workload gets this long between SIGTERM and SIGKILL */
#define SNAPSHOTS_UNTRIGGERED 64	/* room kept for snapshots by signal and control */

struct session {
	const struct plan *p;
	struct events_config ev;	/* what the plan opens, for the kernel layer */
	const struct session_ops *ops;
	struct session_result *res;
	struct bundle *bundle;
	struct manifest m;
	struct stream *streams;
	int nr_streams;
	pid_t *tids;		/* the task target's threads, as opened */
	int nr_tids;
	struct workload w;
	struct steer *steer;	/* triggers, control, ready */
	const struct script_plan *sp;	/* the plan's, or script when -p could not be seized */
	struct script_plan *script;	/* a copy with breakpoints armed as uprobes, or NULL */
	struct exechold_group *pg;	/* -p with breakpoints: its threads, our tracees */
	struct freezer *fz;	/* early freezes for snapshot triggers, or NULL */
	struct snapshots snaps;
	bool tracing;		/* the events are on (not stopped by a trigger or the control) */
	int proc_fd;		/* proc.pevent, -1 until a running target needs it */
	int sig_fd, timer_fd;
	sigset_t old_mask;
	bool stop;
	bool child_signalled;	/* a stop signal was passed on to the workload */
	unsigned int ticks;
	struct timespec t0;
	struct error write_err;	/* the first write that failed while tracing */
};

__attribute__((format(printf, 3, 4)))
static void warn(struct session *s, int code, const char *fmt, ...)
{
	struct error e = { 0 };
	va_list ap;

	va_start(ap, fmt);
	err_vset(&e, code, false, fmt, ap);
	va_end(ap);
	if (s->ops && s->ops->warn)
		s->ops->warn(s->ops->arg, &e);
}

static void stop(struct session *s, const char *why)
{
	if (s->stop)
		return;
	s->stop = true;
	s->res->stop_reason = why;
}

static double elapsed(const struct session *s)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - s->t0.tv_sec) + (double)(t.tv_nsec - s->t0.tv_nsec) / 1e9;
}

/* ---- events ----------------------------------------------------------- */

static int target_gone(struct error *e)
{
	return err_runtime(e, -ESRCH, "every thread of the target exited before tracing began");
}

static bool has_tid(const struct session *s, pid_t tid)
{
	for (int i = 0; i < s->nr_tids; i++)
		if (s->tids[i] == tid)
			return true;
	return false;
}

/*
 * Open the events of thread @tid on every CPU stream. A thread that exited
 * meanwhile is no error: it is simply not traced. A thread @found_later, on a
 * rescan, may have been started by a traced thread since: it then inherited
 * its events already, and intel_pt (an exclusive PMU) refuses a second one on
 * the same CPU with EBUSY.
 */
static int open_thread(struct session *s, pid_t tid, bool found_later, struct error *e)
{
	pid_t *n;
	int ret;

	for (int c = 0; c < s->nr_streams; c++) {
		ret = events_open(&s->ev, &s->streams[c], tid, s->streams[c].cpu, e);
		if (ret == -ESRCH) {
			err_clear(e);	/* a refusal that is no failure leaves no words behind */
			return 0;
		}
		if (ret == -EBUSY && found_later && c == 0) {
			err_clear(e);
			break;	/* traced through its inherited events */
		}
		if (ret)
			return ret;
	}
	n = realloc(s->tids, ((size_t)s->nr_tids + 1) * sizeof(*n));
	if (!n)
		return err_runtime(e, -ENOMEM, "out of memory");
	s->tids = n;
	s->tids[s->nr_tids++] = tid;
	return 0;
}

/* -p: threads started between the plan and now are found by scanning again. */
static int open_new_threads(struct session *s, struct error *e)
{
	const struct record_opts *o = &s->p->opts;

	for (int pass = 0; pass < RESCANS; pass++) {
		bool found = false;

		for (int i = 0; i < o->nr_pids; i++) {
			pid_t *tids;
			int nr, ret = procfs_tasks(o->pids[i], &tids, &nr);

			for (int j = 0; !ret && j < nr; j++) {
				char st;

				if (has_tid(s, tids[j]))
					continue;
				/* A zombie (the plan left it out and said so) has no events. */
				st = procfs_state(tids[j]);
				if (st == 'Z' || st == 'X')
					continue;
				found = true;
				ret = open_thread(s, tids[j], true, e);
			}
			if (ret != -ESRCH)
				free(tids);
			if (ret && ret != -ESRCH)
				return ret;
		}
		if (!found)
			break;
	}
	return 0;
}

static int open_per_cpu(struct session *s, struct error *e)
{
	const struct plan *p = s->p;
	int ret = 0;

	if (p->target == TARGET_CPU) {
		for (int c = 0; !ret && c < s->nr_streams; c++)
			ret = events_open(&s->ev, &s->streams[c], -1, s->streams[c].cpu, e);
		return ret;
	}
	if (p->target == TARGET_COMMAND)
		return open_thread(s, s->w.pid, false, e);
	for (int i = 0; !ret && i < p->nr_tids; i++)
		ret = open_thread(s, p->tids[i], false, e);
	if (!ret && p->target == TARGET_PID)
		ret = open_new_threads(s, e);
	if (!ret && !s->nr_tids)
		ret = target_gone(e);
	return ret;
}

/* Per-thread mode: a stream whose thread exited meanwhile is dropped. */
static int open_per_thread(struct session *s, struct error *e)
{
	int kept = 0, ret;

	for (int i = 0; i < s->nr_streams; i++) {
		struct stream *st = &s->streams[i];

		if (st->tid == 0) {	/* the workload's own stream */
			st->tid = s->w.pid;
			stream_name(st);
		}
		ret = events_open(&s->ev, st, st->tid, -1, e);
		if (ret == -ESRCH) {
			err_clear(e);
			warn(s, ret, "thread %d exited before tracing began: it is not traced",
			     (int)st->tid);
			events_close(st);
			continue;
		}
		if (ret)
			return ret;
		s->streams[kept++] = *st;
	}
	s->nr_streams = kept;
	if (!kept)
		return target_gone(e);
	return 0;
}

/* ---- the bundle's files ------------------------------------------------ */

static int sync_manifest(struct session *s, struct error *e)
{
	struct mstream *ms;

	for (int i = 0; i < s->m.nr_streams; i++) {
		free(s->m.streams[i].file);
		free(s->m.streams[i].sideband);
	}
	s->m.nr_streams = 0;
	for (int i = 0; i < s->nr_streams; i++) {
		ms = manifest_add_stream(&s->m);
		if (!ms || bundle_describe_stream(&s->streams[i], ms))
			return err_runtime(e, -ENOMEM, "out of memory");
		/* In snapshot mode a stream's bytes are in its snapshots' windows. */
		if (s->p->opts.script.snapshot && manifest_set(&ms->file, NULL))
			return err_runtime(e, -ENOMEM, "out of memory");
	}
	if (s->steer)
		steer_sync(s->steer);
	return bundle_write_manifest(s->bundle, &s->m, e);
}

/* What decoders need besides the streams; a failure costs decoding, not the trace. */
/* A saved file's close is its last write: a failure there is the save's failure. */
static int close_saved(int fd, int ret, struct error *e)
{
	if (fd >= 0 && close(fd) && !ret)
		ret = err_runtime(e, -errno, "%s", strerror(errno));
	return ret;
}

static void save_vdso(struct session *s)
{
	struct error e = { 0 };
	int fd, ret;

	ret = bundle_mkdir(s->bundle, BUNDLE_SYSROOT, &e);
	fd = ret ? ret : bundle_create_file(s->bundle, BUNDLE_VDSO, &e);
	ret = close_saved(fd, fd < 0 ? fd : vdso_save(fd, &e), &e);
	if (ret)
		warn(s, ret, "the vdso is not saved (%s); decoders will miss its code", e.why);
	else if (manifest_set(&s->m.vdso, BUNDLE_VDSO))
		warn(s, -ENOMEM, "out of memory");
}

static void save_kernel(struct session *s)
{
	struct error e = { 0 };
	struct kimage k;
	int fd, ret;

	fd = bundle_create_file(s->bundle, BUNDLE_KALLSYMS, &e);
	ret = close_saved(fd, fd < 0 ? fd : kimage_save_kallsyms("/proc/kallsyms", fd, &k, &e),
			  &e);
	if (ret) {
		warn(s, ret, "%s; kernel addresses cannot be decoded", e.why);
		return;
	}
	s->m.kernel.start = k.start;
	if (manifest_set(&s->m.kernel.kallsyms, BUNDLE_KALLSYMS)) {
		warn(s, -ENOMEM, "out of memory: the manifest does not name %s", BUNDLE_KALLSYMS);
		return;
	}
	if (!s->p->opts.kcore)
		return;
	fd = bundle_create_file(s->bundle, BUNDLE_KCORE, &e);
	ret = close_saved(fd, fd < 0 ? fd : kimage_save_text("/proc/kcore", fd, &k, &e), &e);
	if (ret) {
		warn(s, ret, "%s", e.why);
		return;
	}
	s->m.kernel.kcore_base = k.text_start;
	if (manifest_set(&s->m.kernel.kcore, BUNDLE_KCORE))
		warn(s, -ENOMEM, "out of memory: the manifest does not name %s", BUNDLE_KCORE);
}

/* ---- the loop --------------------------------------------------------- */

/* A pass over a stream's ring; a failed write stops the recording. */
static void drain(struct session *s, struct stream *st, bool final)
{
	int ret = auxring_pass(&st->ring, st->trace_fd, st->sb_fd, final,
			       s->stop || !s->tracing ? NULL : events_restart, st);

	if (ret && !s->write_err.code) {
		err_runtime(&s->write_err, ret, "writing %s/%s: %s", bundle_path(s->bundle),
			    st->trace, strerror(-ret));
		stop(s, ret == -ENOSPC ? "the disk is full" : "a write failed");
	}
}

static void drain_all(struct session *s, bool final)
{
	for (int i = 0; i < s->nr_streams; i++)
		drain(s, &s->streams[i], final);
}

static void totals(const struct session *s, uint64_t *bytes, uint64_t *losses)
{
	*bytes = *losses = 0;
	for (int i = 0; i < s->nr_streams; i++) {
		const struct auxring_stats *a = &s->streams[i].ring.stats;

		*bytes += a->aux_bytes;
		*losses += a->truncated + a->partial + a->collision + a->lost;
	}
}

/* ---- what triggers, the control channel and SIGUSR2 ask for ------------------ */

static int act_snapshot(void *arg, const struct snapshot_cause *why, struct error *e)
{
	struct session *s = arg;
	int ret;

	ret = script_snapshot_check(&s->p->script, e);
	if (ret)
		return ret;
	ret = snapshot_take(&s->snaps, s->bundle, s->streams, s->nr_streams, why,
			    s->tracing && !s->stop, &s->m, e);
	if (ret && !s->write_err.code) {
		s->write_err = *e;
		stop(s, ret == -ENOSPC ? "the disk is full" : "a write failed");
	}
	return ret ? ret : (int)s->snaps.number;
}

static int act_tracing(void *arg, bool on, struct error *e)
{
	struct session *s = arg;

	if (s->p->opts.script.no_trace)
		return err_usage(e, "there is no trace to turn %s (--no-trace)", on ? "on" : "off");
	if (s->tracing == on)
		return 0;
	for (int i = 0; i < s->nr_streams; i++)
		(on ? events_enable : events_disable)(&s->streams[i]);
	s->tracing = on;
	return 0;
}

static void act_stop(void *arg, const char *why)
{
	stop(arg, why);
}

static void act_status(void *arg, struct steer_status *st)
{
	struct session *s = arg;

	st->state = s->p->opts.script.no_trace ? "no-trace" : s->tracing ? "tracing" : "stopped";
	st->seconds = elapsed(s);
	totals(s, &st->bytes, &st->losses);
	st->streams = s->nr_streams;
	st->workload = s->w.pid;
}

static void act_warn(void *arg, const struct error *e)
{
	struct session *s = arg;

	if (s->ops && s->ops->warn)
		s->ops->warn(s->ops->arg, e);
}

static void signal_snapshot(struct session *s)
{
	struct error e = { 0 };

	if (act_snapshot(s, &(struct snapshot_cause){ .what = "signal", .trigger = -1, .cpu = -1 },
			 &e) >= 0)
		return;
	if (e.usage)
		warn(s, e.code, "SIGUSR2 asks for a snapshot, but %s: ignored", e.why);
	else
		warn(s, e.code, "%s", e.why);
}

static void handle_signals(struct session *s)
{
	struct signalfd_siginfo si;

	while (read(s->sig_fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			continue;	/* reaped below */
		if (si.ssi_signo == SIGUSR2) {
			signal_snapshot(s);
			continue;
		}
		stop(s, strsignal((int)si.ssi_signo));
		/* The workload got the terminal's signal too; a sent one goes on to it. */
		if (s->w.pid > 0 && si.ssi_pid != 0 && (pid_t)si.ssi_pid != s->w.pid &&
		    !s->child_signalled) {
			workload_signal(&s->w, (int)si.ssi_signo);
			s->child_signalled = true;
		}
	}
}

static void on_tick(struct session *s)
{
	uint64_t ticks, bytes, losses;
	struct error e = { 0 };

	if (read(s->timer_fd, &ticks, sizeof(ticks)) < 0)
		return;
	totals(s, &bytes, &losses);
	if (s->ops && s->ops->tick)
		s->ops->tick(s->ops->arg, elapsed(s), bytes, losses);
	/* Keep the manifest close to the truth in case we are killed. */
	if (++s->ticks % 5 == 0 && sync_manifest(s, &e))
		warn(s, e.code, "%s: %s", e.what, e.why);
}

static void check_limits(struct session *s)
{
	const struct record_opts *o = &s->p->opts;
	uint64_t bytes, losses;
	bool live = false;

	if (s->pg)
		exechold_group_poll(s->pg, &s->w.traps);
	if (s->w.pid > 0 && workload_reap(&s->w))
		stop(s, "the workload exited");
	if (o->duration > 0 && elapsed(s) >= o->duration)
		stop(s, "--duration reached");
	totals(s, &bytes, &losses);
	if (o->max_size && bytes >= o->max_size)
		stop(s, "--max-size reached");
	for (int i = 0; i < s->nr_streams; i++)
		live |= !s->streams[i].hup;
	/* --no-trace has no events to tell: ask /proc. */
	for (int i = 0; !s->nr_streams && i < s->p->nr_tids && !live; i++) {
		char st = procfs_state(s->p->tids[i]);

		live = st && st != 'Z' && st != 'X';
	}
	if (!live && s->p->target != TARGET_CPU && s->p->target != TARGET_COMMAND)
		stop(s, "every traced thread exited");
}

/* What the triggers and the control ask; then the early freezes are taken back. */
static void steer_loop(struct session *s, const struct pollfd *pf, int n)
{
	bool any = false;

	for (int i = 0; i < n; i++)
		any |= pf[i].revents != 0;
	if (!any && !steer_pending(s->steer))
		return;
	steer_handle(s->steer, pf, n);
	freeze_release(s->fz, s->tracing && !s->stop);
}

/* Fires and commands that wait now, without waiting for more (a long task in between). */
static void steer_now(struct session *s)
{
	struct pollfd pf[STEER_MAX_FDS];
	int n = steer_fds(s->steer, pf);

	if (n && poll(pf, (nfds_t)n, 0) > 0)
		steer_loop(s, pf, n);
}

static int loop(struct session *s, struct error *e)
{
	int n = s->nr_streams + 2, ns, ret = 0;
	struct pollfd *pf = calloc((size_t)n + STEER_MAX_FDS, sizeof(*pf));

	if (!pf) {
		stop(s, "out of memory");
		return err_runtime(e, -ENOMEM, "out of memory");
	}
	while (!s->stop) {
		for (int i = 0; i < s->nr_streams; i++) {
			pf[i].fd = s->streams[i].hup ? -1 : s->streams[i].ring_fd;
			pf[i].events = POLLIN;
		}
		pf[n - 2] = (struct pollfd){ .fd = s->sig_fd, .events = POLLIN };
		pf[n - 1] = (struct pollfd){ .fd = s->timer_fd, .events = POLLIN };
		ns = steer_fds(s->steer, pf + n);
		/* Commands a batch left are handled without waiting, between the signals. */
		if (poll(pf, (nfds_t)(n + ns), steer_pending(s->steer) ? 0 : -1) < 0) {
			if (errno == EINTR)
				continue;
			ret = err_runtime(e, -errno, "poll: %s", strerror(errno));
			stop(s, "waiting for the rings failed (poll)");
			break;
		}
		/* A trigger first: its snapshot should freeze the trace at once. */
		steer_loop(s, pf + n, ns);
		for (int i = 0; i < s->nr_streams; i++) {
			drain(s, &s->streams[i], false);
			if (pf[i].revents & (POLLHUP | POLLERR))
				s->streams[i].hup = true;
		}
		if (pf[n - 2].revents)
			handle_signals(s);
		if (pf[n - 1].revents)
			on_tick(s);
		check_limits(s);
	}
	free(pf);
	return ret;
}

/* COMM and MMAP2 of every process the recording found running (proc.pevent). */
static void synthesize(struct session *s, pid_t pid, bool quiet)
{
	struct error e = { 0 };
	int ret;

	if (s->proc_fd < 0) {
		s->proc_fd = bundle_create_file(s->bundle, BUNDLE_PROC, &e);
		if (s->proc_fd < 0) {
			warn(s, e.code, "%s; decoders will not find the code of running processes",
			     e.why);
			return;
		}
		if (manifest_set(&s->m.proc_sideband, BUNDLE_PROC))
			warn(s, -ENOMEM, "out of memory: the manifest does not name %s; decoders "
			     "will not find the code of running processes", BUNDLE_PROC);
	}
	ret = sideband_synthesize_proc(pid, s->proc_fd, &e);
	/* Processes come and go, and some are not ours to read. */
	if (ret < 0 && !(quiet && (ret == -ESRCH || ret == -EACCES)))
		warn(s, ret, "%s; proc.pevent misses it, decoders may not find its code", e.why);
}

static void synthesize_running(struct session *s)
{
	const struct plan *p = s->p;
	pid_t *pids, done[CLI_MAX_PIDS];
	int nr, nr_done = 0;

	if (p->target == TARGET_PID) {
		for (int i = 0; i < p->opts.nr_pids; i++)
			synthesize(s, p->opts.pids[i], false);
	} else if (p->target == TARGET_TID) {
		for (int i = 0; i < p->opts.nr_tids; i++) {
			pid_t pid = procfs_tgid(p->opts.tids[i]);
			bool seen = false;

			for (int j = 0; j < nr_done; j++)
				seen |= done[j] == pid;
			if (!pid || seen)
				continue;
			done[nr_done++] = pid;
			synthesize(s, pid, false);
		}
	} else if (!procfs_pids(&pids, &nr)) {
		/* A stop signal ends the pass: the loop would only see it after the last pid. */
		for (int i = 0; i < nr && !s->stop; i++) {
			/* The hardware is running: keep its rings drained while we read /proc. */
			drain_all(s, false);
			steer_now(s);
			handle_signals(s);
			synthesize(s, pids[i], true);
		}
		free(pids);
	}
}

static int setup_signals(struct session *s, struct error *e)
{
	struct itimerspec its = { .it_interval = { 1, 0 }, .it_value = { 1, 0 } };
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGUSR2);	/* a snapshot, as perf record -S takes one */
	/*
	 * Blocked until the process exits: restoring the mask at the end would
	 * deliver a signal that arrived during the final drain, and kill us.
	 */
	if (sigprocmask(SIG_BLOCK, &set, &s->old_mask))
		return err_runtime(e, -errno, "sigprocmask: %s", strerror(errno));
	s->sig_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (s->sig_fd < 0)
		return err_runtime(e, -errno, "signalfd: %s", strerror(errno));
	s->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (s->timer_fd < 0 || timerfd_settime(s->timer_fd, 0, &its, NULL))
		return err_runtime(e, -errno, "timerfd: %s", strerror(errno));
	return 0;
}

/*
 * The workload outlives a stop by a limit: it is ours to end. SIGTERM, then
 * SIGKILL after a grace period, or at once on another stop signal.
 */
static void end_workload(struct session *s)
{
	struct timespec t0, t;

	if (s->w.pid <= 0)
		return;
	if (!s->child_signalled)
		workload_signal(&s->w, SIGTERM);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!workload_reap(&s->w)) {
		struct pollfd pf = { .fd = s->sig_fd, .events = POLLIN };
		struct signalfd_siginfo si;
		bool again = false;

		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec >= GRACE_SECONDS)
			break;
		if (poll(&pf, 1, 100) > 0)
			while (read(s->sig_fd, &si, sizeof(si)) == sizeof(si))
				again |= si.ssi_signo != SIGCHLD;
		if (again)
			break;
	}
	if (s->w.pid > 0) {
		warn(s, -ETIMEDOUT, "the workload (pid %d) did not end within %d s of SIGTERM: "
		     "it was killed", (int)s->w.pid, GRACE_SECONDS);
		workload_kill(&s->w);
	}
}

static bool uprobes(const struct script_plan *sp)
{
	for (int i = 0; i < sp->nr_specs; i++)
		if (sp->specs[i].kind == TRIGGER_UPROBE)
			return true;
	return false;
}

static int finish(struct session *s, int ret, struct error *e)
{
	const struct exechold_traps *t = &s->w.traps;
	struct warnings iw = { 0 };
	struct error fe = { 0 };

	if (s->p->script.scope == SCOPE_WORKLOAD || s->p->script.scope == SCOPE_PROCESS) {
		uint64_t missed;
		int follows = steer_children(s->steer, &missed);

		if (!follows && uprobes(s->sp))
			warn(s, -EOPNOTSUPP, "uprobe triggers counted the traced process only, not "
			     "its children: following them needs the kernel's BTF "
			     "(/sys/kernel/btf/vmlinux)");
		if (missed)
			warn(s, -E2BIG, "uprobe triggers missed %" PRIu64 " child process(es) of "
			     "the traced one: the BPF map of followed processes was full", missed);
	}
	if (t->swallowed && s->sp->scope == SCOPE_PROCESS)
		warn(s, -EINTR, "the kernel sent process %d %" PRIu64 " debug trap(s) no "
		     "breakpoint claimed (SIGTRAP TRAP_HWBKPT, the last at 0x%" PRIx64 " in "
		     "thread %d on CPU %d): kept from it, which would have died of them",
		     (int)s->sp->pid, t->swallowed, t->last_addr, (int)t->last_tid, t->last_cpu);
	else if (t->swallowed)
		warn(s, -EINTR, "the kernel sent the workload %" PRIu64 " debug trap(s) no "
		     "breakpoint claimed (SIGTRAP TRAP_HWBKPT, the last at 0x%" PRIx64 " in "
		     "thread %d on CPU %d): kept from it, which would have died of them",
		     t->swallowed, t->last_addr, (int)t->last_tid, t->last_cpu);
	for (int i = 0; i < s->m.nr_triggers; i++)
		if (s->m.triggers[i].guard && !strcmp(s->m.triggers[i].guard, "tracee"))
			s->m.triggers[i].stray_traps = t->swallowed;

	for (int i = 0; i < s->nr_streams; i++)
		if (bundle_close_stream(s->bundle, &s->streams[i], &fe) && !ret)
			ret = fe.code, *e = fe;
	if (s->proc_fd >= 0 && close(s->proc_fd) && !ret)
		ret = err_runtime(e, -errno, "%s/%s: %s", bundle_path(s->bundle), BUNDLE_PROC,
				  strerror(errno));
	s->proc_fd = -1;
	if (images_collect(bundle_dirfd(s->bundle), &s->m, &fe))
		warn(s, fe.code, "the list of mapped files is incomplete: %s", fe.why);
	images_check(&s->m, &iw);
	for (int i = 0; i < iw.nr; i++)
		warn(s, -ESTALE, "%s", iw.msg[i]);
	if (iw.dropped)
		warn(s, -ESTALE, "... and %d more warning(s) about the mapped files, not shown",
		     iw.dropped);
	/* JIT code's names: its perf maps live in /tmp only as long as nobody cleans it. */
	memset(&iw, 0, sizeof(iw));
	perfmaps_copy(bundle_dirfd(s->bundle), "/tmp", s->p->target != TARGET_COMMAND ?
		      PERFMAPS_OWNER_OF_PROCESS : s->p->opts.user ? s->p->user.uid : geteuid(),
		      &s->m, &iw);
	for (int i = 0; i < iw.nr; i++)
		warn(s, -EPERM, "%s", iw.msg[i]);
	clock_gettime(CLOCK_REALTIME, &s->m.end_time);
	/* No failure ends a recording without a word in its manifest. */
	if (ret && !s->res->stop_reason)
		s->res->stop_reason = "an error ended the recording";
	if (manifest_set(&s->m.stop_reason, s->res->stop_reason) && !ret)
		ret = err_runtime(e, -ENOMEM, "out of memory: the manifest has no stop reason");
	s->m.complete = !ret;
	s->m.target.exited = s->w.ran;
	s->m.target.exit_status = s->w.status;
	/* The room kept for this manifest, in case the disk filled. */
	bundle_unreserve(s->bundle);
	if (sync_manifest(s, &fe) && fe.code == -ENOSPC && s->m.nr_images) {
		/* The room kept did not count the mapped files: the sideband still names them. */
		warn(s, fe.code, "%s: the disk is full: the list of mapped files is left out of "
		     "the manifest", bundle_path(s->bundle));
		err_clear(&fe);
		for (int i = 0; i < s->m.nr_images; i++) {
			free(s->m.images[i].path);
			free(s->m.images[i].build_id);
		}
		s->m.nr_images = 0;
		sync_manifest(s, &fe);
	}
	s->res->manifest_written = !fe.code;
	if (fe.code && !ret)
		ret = fe.code, *e = fe;
	return ret;
}

/*
 * The room the last manifest needs at most (manifest_size_bound): the fires
 * the triggers' limits allow (MANIFEST_MAX_FIRES without one), and in
 * snapshot mode a snapshot per fire and SNAPSHOTS_UNTRIGGERED more.
 */
static size_t last_manifest_room(const struct session *s)
{
	uint64_t fires = 0, snaps;

	for (int i = 0; i < s->m.nr_triggers; i++)
		fires += s->m.triggers[i].limit ? s->m.triggers[i].limit : MANIFEST_MAX_FIRES;
	if (fires > MANIFEST_MAX_FIRES)
		fires = MANIFEST_MAX_FIRES;
	snaps = s->p->opts.script.snapshot ? fires + SNAPSHOTS_UNTRIGGERED : 0;
	return manifest_size_bound(&s->m, fires, snaps);
}

static int reserve(struct session *s, struct error *e)
{
	size_t room = last_manifest_room(s);

	return room ? bundle_reserve(s->bundle, room, e) : err_runtime(e, -ENOMEM,
								    "out of memory");
}

/* The streams' events, rings and files: the sideband alone in snapshot mode. */
static int open_streams(struct session *s, struct error *e)
{
	const struct plan *p = s->p;
	int ret;

	ret = p->per_thread ? open_per_thread(s, e) : open_per_cpu(s, e);
	for (int i = 0; !ret && i < s->nr_streams; i++)
		ret = events_map(&s->ev, &s->streams[i], e);
	if (!ret)
		ret = bundle_create(&s->bundle, p->opts.output, p->output == PLAN_OUTPUT_REPLACE,
				    e);
	for (int i = 0; !ret && i < s->nr_streams; i++) {
		struct stream *st = &s->streams[i];

		if (!p->opts.script.snapshot) {
			ret = bundle_open_stream(s->bundle, st, e);
			continue;
		}
		st->sb_fd = bundle_create_file(s->bundle, st->sideband, e);
		ret = st->sb_fd < 0 ? st->sb_fd : 0;
	}
	return ret;
}

static void note_time_conv(struct session *s)
{
	const struct perf_event_mmap_page *pc;

	if (!s->nr_streams)
		return;
	pc = auxring_ctrl(&s->streams[0].ring);
	/* perf's rule: the fields mean something only with cap_user_time_zero. */
	s->m.time_conv.cap_user_time_zero = pc->cap_user_time_zero;
	s->m.time_conv.time_zero = pc->time_zero;
	s->m.time_conv.time_mult = pc->time_mult;
	s->m.time_conv.time_shift = pc->time_shift;
}

/* Per-CPU snapshot mode where every trigger takes a snapshot: early freezes pay. */
static bool freezes(const struct plan *p)
{
	if (!p->opts.script.snapshot || p->per_thread || !p->script.nr_specs)
		return false;
	for (int i = 0; i < p->script.nr_specs; i++)
		if (p->script.specs[i].action != TRIGGER_ACT_SNAPSHOT)
			return false;
	return true;
}

/*
 * Tracing begins: running targets' events are enabled now (a workload's at
 * its exec), unless a trigger is to start them; the triggers are armed
 * before that, a workload's while it is held after its exec; then the
 * script hears that it is live.
 */
static int begin(struct session *s, struct error *e)
{
	const struct plan *p = s->p;
	int ret;

	s->tracing = !p->script.start_off && !p->opts.script.no_trace;
	if (p->target != TARGET_COMMAND || p->script.scope != SCOPE_WORKLOAD) {
		ret = steer_arm(s->steer, -1, e);
		if (ret)
			return ret;
	}
	if (p->target != TARGET_COMMAND && s->tracing)
		for (int i = 0; i < s->nr_streams; i++)
			events_enable(&s->streams[i]);
	if (p->opts.command) {
		ret = workload_release(&s->w, p->opts.command[0], e);
		if (!ret && p->script.scope == SCOPE_WORKLOAD)
			ret = steer_arm(s->steer, s->w.pid, e);
		if (!ret)
			ret = workload_run(&s->w, p->script.guard, e);
		if (ret)
			return ret;
	}
	s->res->began = true;
	if (freezes(p) && freeze_start(&s->fz, s->streams, s->nr_streams,
				       steer_trigger_fd(s->steer), e))
		warn(s, e->code, "%s; snapshots come a little later after a fire", e->why);
	err_clear(e);
	if (bundle_begun(s->bundle, e))
		warn(s, e->code, "%s", e->why);
	err_clear(e);
	if (steer_ready(s->steer, e))
		warn(s, e->code, "%s", e->why);
	err_clear(e);
	return 0;
}

/*
 * -p with breakpoint triggers: every thread of the process becomes our
 * tracee before they are armed, so that a stray debug trap is kept from it.
 * When ptrace refuses (traced already, ptrace_scope, permission), the
 * breakpoints are armed as uprobes instead, and the manifest says so.
 */
static int guard_process(struct session *s, struct error *e)
{
	char why[sizeof(s->p->script.fallback)] = "";
	int ret = exechold_group_seize(&s->pg, s->p->script.pid, why, sizeof(why), e);

	if (!ret) {
		if (s->ops && s->ops->note) {
			snprintf(why, sizeof(why), "breakpoint triggers: every thread of process %d "
				 "is ptcollect's tracee until the end (stray debug traps are kept "
				 "from it)", (int)s->p->script.pid);
			s->ops->note(s->ops->arg, why);
		}
		return 0;
	}
	if (ret != -EPERM || !why[0])
		return ret;
	err_clear(e);
	s->script = malloc(sizeof(*s->script));
	if (!s->script)
		return err_runtime(e, -ENOMEM, "out of memory");
	/* A shallow copy: the specs' strings stay the plan's. */
	*s->script = s->p->script;
	script_fall_back(s->script, why);
	s->sp = s->script;
	for (int i = 0; i < s->sp->nr_specs && i < s->m.nr_triggers; i++) {
		struct mtrigger *t = &s->m.triggers[i];

		if (!s->sp->specs[i].fallback)
			continue;
		if (manifest_set(&t->kind, "uprobe") || manifest_set(&t->guard, "uprobe") ||
		    manifest_set(&t->fallback, why))
			return err_runtime(e, -ENOMEM, "out of memory");
	}
	warn(s, -EPERM, "%s: breakpoint trigger(s) armed as uprobes instead, which make no "
	     "debug traps", why);
	return 0;
}

static void release_process(struct session *s)
{
	int left;

	if (!s->pg)
		return;
	left = exechold_group_release(s->pg, &s->w.traps);
	if (left)
		warn(s, -ETIMEDOUT, "%d thread(s) of process %d did not stop to be let go within "
		     "2 s: they stay ptcollect's tracees until it exits", left,
		     (int)s->sp->pid);
	exechold_group_free(s->pg);
	s->pg = NULL;
}

/* The last snapshot, then stop the hardware and take what it wrote before it stopped. */
static void end(struct session *s)
{
	const struct script_opts *o = &s->p->opts.script;
	struct error e = { 0 };

	freeze_stop(s->fz);
	s->fz = NULL;
	steer_quiet(s->steer);
	/* The breakpoints are off: the -p process's threads are let go. */
	release_process(s);
	if (o->snapshot && !o->no_final_snapshot && !s->write_err.code)
		act_snapshot(s, &(struct snapshot_cause){ .what = "final", .trigger = -1, .cpu = -1 },
			     &e);
	for (int i = 0; i < s->nr_streams; i++)
		events_disable(&s->streams[i]);
	drain_all(s, true);
	end_workload(s);
}

static int run(struct session *s, struct error *e)
{
	const struct plan *p = s->p;
	struct steer_ops ops = {
		.arg = s, .snapshot = act_snapshot, .tracing = act_tracing, .stop = act_stop,
		.status = act_status, .warn = act_warn,
	};
	int ret = 0;

	if (p->script.scope == SCOPE_PROCESS && p->script.guard)
		ret = guard_process(s, e);
	if (!ret)
		ret = steer_open(&s->steer, s->sp, &ops, &s->m, e);
	if (!ret && p->opts.command)
		ret = workload_start(&s->w, p->exec_path, p->opts.command, &s->old_mask,
				     p->script.scope == SCOPE_WORKLOAD,
				     p->opts.user ? &p->user : NULL, e);
	if (!ret)
		ret = open_streams(s, e);
	if (ret)
		return ret;
	s->snaps.size = p->script.snapshot_size;
	clock_gettime(CLOCK_MONOTONIC, &s->t0);
	clock_gettime(CLOCK_REALTIME, &s->m.start_time);
	note_time_conv(s);
	if (!p->opts.script.no_trace) {
		save_vdso(s);
		if (!p->attr.exclude_kernel)
			save_kernel(s);
	}
	ret = sync_manifest(s, e);
	/* A disk without room for the last manifest is refused before tracing. */
	if (!ret)
		ret = reserve(s, e);
	if (!ret)
		ret = begin(s, e);
	if (ret)
		return ret;
	/* What was running before us: after enabling, so nothing falls between. */
	if (p->target != TARGET_COMMAND && !p->opts.script.no_trace)
		synthesize_running(s);
	ret = loop(s, e);
	end(s);
	if (!ret && s->write_err.code) {
		*e = s->write_err;
		ret = e->code;
	}
	return ret;
}

int session_run(const struct plan *p, const struct session_ops *ops,
		struct session_result *res, struct error *e)
{
	struct session s = {
		.p = p, .sp = &p->script, .ops = ops, .res = res, .proc_fd = -1, .sig_fd = -1, .timer_fd = -1,
		.w = { .go_fd = -1, .exec_err_fd = -1 },
	};
	int ret;

	plan_events(p, &s.ev);
	memset(res, 0, sizeof(*res));
	manifest_init(&s.m);
	s.streams = calloc((size_t)p->nr_streams + 1, sizeof(*s.streams));
	if (!s.streams || plan_describe(p, &s.m)) {
		ret = err_runtime(e, -ENOMEM, "out of memory");
		goto out;
	}
	if (p->nr_streams)
		memcpy(s.streams, p->streams, (size_t)p->nr_streams * sizeof(*s.streams));
	s.nr_streams = p->nr_streams;
	/* The plan checked the hard limit; a soft one below the need is raised to it. */
	ret = privs_raise_nofile(p->fd_need);
	if (ret)
		warn(&s, ret, "RLIMIT_NOFILE cannot be raised: %s", strerror(-ret));
	ret = setup_signals(&s, e);
	if (!ret)
		ret = run(&s, e);
	if (s.bundle && res->began)
		ret = finish(&s, ret, e);
	else if (s.bundle)
		bundle_discard(s.bundle);
	totals(&s, &res->bytes, &res->losses);
	res->seconds = res->began ? elapsed(&s) : 0;
	res->workload_ran = s.w.ran;
	res->workload_status = s.w.status;
out:
	workload_kill(&s.w);
	workload_close(&s.w);
	for (int i = 0; i < s.nr_streams; i++) {
		events_close(&s.streams[i]);
		if (s.bundle)
			bundle_close_stream(s.bundle, &s.streams[i], NULL);
	}
	res->streams = s.streams;
	res->nr_streams = s.nr_streams;
	if (s.proc_fd >= 0)
		close(s.proc_fd);
	bundle_free(s.bundle);
	free(s.tids);
	steer_close(s.steer);
	release_process(&s);
	free(s.script);
	/* The caller reports from it (record --json). */
	res->manifest = s.m;
	if (s.sig_fd >= 0)
		close(s.sig_fd);
	if (s.timer_fd >= 0)
		close(s.timer_fd);
	return ret;
}

void session_result_free(struct session_result *res)
{
	manifest_free(&res->manifest);
	free(res->streams);
	res->streams = NULL;
	res->nr_streams = 0;
}

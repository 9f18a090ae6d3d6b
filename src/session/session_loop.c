// SPDX-License-Identifier: MIT
/*
 * A recording's loop: one poll serves every ring, the signals, the timer and
 * what the triggers and the control channel ask; the rings are drained into
 * the bundle until a stop condition. Also the sideband of the processes that
 * were running before (drained meanwhile).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "procfs.h"
#include "session_loop.h"
#include "sideband.h"

/* ---- the loop --------------------------------------------------------- */

/* A pass over a stream's ring; a failed write stops the recording. */
static void drain(struct session *s, struct stream *st, bool final)
{
	int ret = auxring_pass(&st->ring, st->trace_fd, st->sb_fd, final,
			       s->stop || !s->tracing ? NULL : events_restart, st);

	if (ret && !s->write_err.code) {
		err_runtime(&s->write_err, ret, "writing %s/%s: %s", bundle_path(s->bundle),
			    st->trace, strerror(-ret));
		session_stop(s, ret == -ENOSPC ? "the disk is full" : "a write failed");
	}
}

void session_drain_all(struct session *s, bool final)
{
	for (int i = 0; i < s->nr_streams; i++)
		drain(s, &s->streams[i], final);
}

/* ---- what triggers, the control channel and SIGUSR2 ask for ------------------ */

int session_act_snapshot(void *arg, const struct snapshot_cause *why, struct error *e)
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
		session_stop(s, ret == -ENOSPC ? "the disk is full" : "a write failed");
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
	session_stop(arg, why);
}

static void act_status(void *arg, struct steer_status *st)
{
	struct session *s = arg;

	st->state = s->p->opts.script.no_trace ? "no-trace" : s->tracing ? "tracing" : "stopped";
	st->seconds = session_elapsed(s);
	session_totals(s, &st->bytes, &st->losses);
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

	if (session_act_snapshot(s, &(struct snapshot_cause){ .what = "signal", .trigger = -1,
							      .cpu = -1 }, &e) >= 0)
		return;
	if (e.usage)
		session_warn(s, e.code, "SIGUSR2 asks for a snapshot, but %s: ignored", e.why);
	else
		session_warn(s, e.code, "%s", e.why);
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
		session_stop(s, strsignal((int)si.ssi_signo));
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
	session_totals(s, &bytes, &losses);
	if (s->ops && s->ops->tick)
		s->ops->tick(s->ops->arg, session_elapsed(s), bytes, losses);
	/* Keep the manifest close to the truth in case we are killed. */
	if (++s->ticks % 5 == 0 && session_sync_manifest(s, &e))
		session_warn(s, e.code, "%s: %s", e.what, e.why);
}

static void check_limits(struct session *s)
{
	const struct record_opts *o = &s->p->opts;
	uint64_t bytes, losses;
	bool live = false;

	if (s->pg)
		exechold_group_poll(s->pg, &s->w.traps);
	if (s->w.pid > 0 && workload_reap(&s->w))
		session_stop(s, "the workload exited");
	if (o->duration > 0 && session_elapsed(s) >= o->duration)
		session_stop(s, "--duration reached");
	session_totals(s, &bytes, &losses);
	if (o->max_size && bytes >= o->max_size)
		session_stop(s, "--max-size reached");
	for (int i = 0; i < s->nr_streams; i++)
		live |= !s->streams[i].hup;
	/* --no-trace has no events to tell: ask /proc. */
	for (int i = 0; !s->nr_streams && i < s->p->nr_tids && !live; i++) {
		char st = procfs_state(s->p->tids[i]);

		live = st && st != 'Z' && st != 'X';
	}
	if (!live && s->p->target != TARGET_CPU && s->p->target != TARGET_COMMAND)
		session_stop(s, "every traced thread exited");
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
	/* A fire held for its order ends a snapshot window when it is acted on: keep its freeze. */
	if (!steer_holding(s->steer))
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

int session_loop(struct session *s, struct error *e)
{
	int n = s->nr_streams + 2, ns, ret = 0;
	struct pollfd *pf = calloc((size_t)n + STEER_MAX_FDS, sizeof(*pf));

	if (!pf) {
		session_stop(s, "out of memory");
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
			session_stop(s, "waiting for the rings failed (poll)");
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
			session_warn(s, e.code, "%s; decoders will not find the code of running "
				     "processes", e.why);
			return;
		}
		if (manifest_set(&s->m.proc_sideband, BUNDLE_PROC))
			session_warn(s, -ENOMEM, "out of memory: the manifest does not name %s; "
				     "decoders will not find the code of running processes",
				     BUNDLE_PROC);
	}
	ret = sideband_synthesize_proc(pid, s->proc_fd, &e);
	/* Processes come and go, and some are not ours to read. */
	if (ret < 0 && !(quiet && (ret == -ESRCH || ret == -EACCES)))
		session_warn(s, ret, "%s; proc.pevent misses it, decoders may not find its code",
			     e.why);
}

void session_synthesize_running(struct session *s)
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
			session_drain_all(s, false);
			steer_now(s);
			handle_signals(s);
			synthesize(s, pids[i], true);
		}
		free(pids);
	}
}

int session_setup_signals(struct session *s, struct error *e)
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

struct steer_ops session_steer_ops(struct session *s)
{
	return (struct steer_ops){
		.arg = s, .snapshot = session_act_snapshot, .tracing = act_tracing,
		.stop = act_stop, .status = act_status, .warn = act_warn,
	};
}

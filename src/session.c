// SPDX-License-Identifier: MIT
/*
 * The record loop. Events are opened disabled; a workload is forked and held
 * before exec so its events exist before its first instruction (enable on
 * exec, as perf does); running targets are enabled once every ring is
 * mapped. One poll loop serves every ring, the signals and the timers.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "auxring.h"
#include "bundle.h"
#include "msg.h"
#include "privs.h"
#include "session.h"
#include "sideband.h"

struct stream {
	int cpu;		/* -1 in per-thread mode */
	pid_t tid;		/* -1 in per-CPU mode */
	int ring_fd;		/* the event whose ring this is */
	int *fds;		/* every event writing into the ring */
	int nr_fds;
	struct auxring ring;
	int idx;		/* the bundle's stream index */
	bool mapped;
	bool hup;		/* every event of the stream has exited */
};

struct session {
	const struct record_plan *plan;
	struct session_result *res;
	struct bundle *bundle;
	struct stream *streams;
	int nr_streams;
	pid_t *tids;		/* the task target's threads */
	int nr_tids;
	int cpus[CLI_MAX_CPUS];
	int nr_cpus;
	pid_t child;
	int go_fd, exec_err_fd;	/* workload: release it; learn whether exec failed */
	int sig_fd, timer_fd;
	sigset_t old_mask;
	bool mask_set;
	bool stop;
	bool child_signalled;	/* a stop signal was passed on to the workload */
	unsigned int ticks;	/* status timer ticks */
	bool began;		/* tracing started: from here on, a failure keeps the bundle */
	const char *stop_reason;
	struct timespec t0;
	bool status_line;
};

__attribute__((format(printf, 3, 4)))
static int fail(struct session *s, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->res->err, sizeof(s->res->err), fmt, ap);
	va_end(ap);
	return err < 0 ? err : -err;
}

__attribute__((format(printf, 2, 3)))
static void hint(struct session *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->res->hint, sizeof(s->res->hint), fmt, ap);
	va_end(ap);
}

static double elapsed(const struct session *s)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - s->t0.tv_sec) + (t.tv_nsec - s->t0.tv_nsec) / 1e9;
}

/* ---- targets ---------------------------------------------------------- */

static int online_cpus(struct session *s)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	struct error e = { 0 };
	char line[4096];
	int ret;

	if (!f)
		return fail(s, errno, "cannot read /sys/devices/system/cpu/online: %s",
			    strerror(errno));
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	line[strcspn(line, "\n")] = '\0';
	ret = cli_parse_cpulist(line, s->cpus, &s->nr_cpus, &e);
	if (ret)
		return fail(s, EINVAL, "/sys/devices/system/cpu/online: %s", e.why);
	return 0;
}

static int add_tid(struct session *s, pid_t tid)
{
	pid_t *n;

	for (int i = 0; i < s->nr_tids; i++)
		if (s->tids[i] == tid)
			return 0;
	n = realloc(s->tids, (s->nr_tids + 1) * sizeof(*n));
	if (!n)
		return fail(s, ENOMEM, "out of memory");
	s->tids = n;
	s->tids[s->nr_tids++] = tid;
	return 0;
}

/* Every thread of @pid now; ESRCH when the process is gone. */
static int add_threads(struct session *s, pid_t pid)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return fail(s, ESRCH, "-p %d: no such process", pid);
	while (!ret && (de = readdir(d)))
		if (de->d_name[0] != '.')
			ret = add_tid(s, (pid_t)atoi(de->d_name));
	closedir(d);
	return ret;
}

/*
 * Fork the workload and hold it until the events exist. The exec error
 * pipe is close-on-exec: EOF means the exec worked, an int means errno.
 */
static int start_workload(struct session *s)
{
	const struct record_opts *o = &s->plan->opts;
	int go[2], ep[2];

	if (pipe2(go, O_CLOEXEC) || pipe2(ep, O_CLOEXEC))
		return fail(s, errno, "pipe: %s", strerror(errno));
	s->child = fork();
	if (s->child < 0)
		return fail(s, errno, "fork: %s", strerror(errno));
	if (s->child == 0) {
		char c;
		int e;

		close(go[1]);
		close(ep[0]);
		sigprocmask(SIG_SETMASK, &s->old_mask, NULL);
		if (read(go[0], &c, 1) != 1)
			_exit(127);	/* the collector gave up */
		execvp(o->command[0], o->command);
		e = errno;
		if (write(ep[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ep[1]);
	s->go_fd = go[1];
	s->exec_err_fd = ep[0];
	return add_tid(s, s->child);
}

static int release_workload(struct session *s)
{
	const struct record_opts *o = &s->plan->opts;
	ssize_t n;
	int e = 0;

	if (write(s->go_fd, "g", 1) != 1)
		return fail(s, errno, "cannot start the workload: %s", strerror(errno));
	close(s->go_fd);
	s->go_fd = -1;
	n = read(s->exec_err_fd, &e, sizeof(e));
	close(s->exec_err_fd);
	s->exec_err_fd = -1;
	if (n == sizeof(e)) {
		s->res->usage_error = e == ENOENT || e == EACCES;
		return fail(s, e, "cannot execute '%s': %s", o->command[0], strerror(e));
	}
	s->res->workload_ran = true;
	return 0;
}

/* ---- events ----------------------------------------------------------- */

static void fill_attr(const struct session *s, struct perf_event_attr *a)
{
	const struct record_plan *p = s->plan;

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
	a->enable_on_exec = p->target == TARGET_COMMAND;
	/* New threads of a traced task follow it into the per-CPU rings. */
	a->inherit = !p->per_thread && (p->target == TARGET_COMMAND || p->target == TARGET_PID);
	/* Sideband on the PT event itself: one ring holds the trace's context. */
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->context_switch = 1;
	a->aux_watermark = auxring_watermark(p->aux_bytes);
}

static int open_error(struct session *s, int e, pid_t pid, int cpu)
{
	struct privs pv;
	char where[64];

	if (cpu >= 0 && pid >= 0)
		snprintf(where, sizeof(where), "thread %d on CPU %d", pid, cpu);
	else if (cpu >= 0)
		snprintf(where, sizeof(where), "CPU %d", cpu);
	else
		snprintf(where, sizeof(where), "thread %d", pid);
	privs_read(&pv);
	switch (e) {
	case EACCES:
	case EPERM:
		hint(s, "perf_event_paranoid is %d: run as root, give the binary CAP_PERFMON "
		     "(setcap cap_perfmon+ep), or lower it with 'sysctl kernel.perf_event_paranoid=%d'",
		     pv.paranoid, s->plan->target == TARGET_CPU ? 0 : 1);
		return fail(s, e, "perf_event_open for %s: permission denied", where);
	case EBUSY:
		hint(s, "another tool is using Intel PT (a perf record, another ptcollect?); "
		     "stop it and try again");
		return fail(s, e, "perf_event_open for %s: Intel PT is busy", where);
	case ESRCH:
		return fail(s, e, "perf_event_open for %s: the thread does not exist any more",
			    where);
	case ENOENT:
	case ENODEV:
		hint(s, "'ptcollect caps' says whether Intel PT is usable here");
		return fail(s, e, "perf_event_open for %s: the kernel has no PMU of type %d",
			    where, s->plan->pmu.type);
	case EINVAL:
		hint(s, "the kernel refused config=0x%" PRIx64 "; 'ptcollect caps' lists what "
		     "this PMU supports", s->plan->ev.config);
		return fail(s, e, "perf_event_open for %s: invalid argument", where);
	default:
		return fail(s, e, "perf_event_open for %s: %s", where, strerror(e));
	}
}

static int stream_add_fd(struct session *s, struct stream *st, int fd)
{
	int *n = realloc(st->fds, (st->nr_fds + 1) * sizeof(*n));

	if (!n) {
		close(fd);
		return fail(s, ENOMEM, "out of memory");
	}
	st->fds = n;
	st->fds[st->nr_fds++] = fd;
	return 0;
}

static int set_filter(struct session *s, int fd)
{
	if (!s->plan->filter)
		return 0;
	if (ioctl(fd, PERF_EVENT_IOC_SET_FILTER, s->plan->filter) == 0)
		return 0;
	s->res->usage_error = errno == EOPNOTSUPP || errno == EINVAL;
	hint(s, "the intel_pt driver refuses 'start' filters, zero-size ranges and more "
	     "ranges than the PMU has (%d)", s->plan->pmu.nr_addr_filters);
	return fail(s, errno, "the kernel refused the address filter '%s': %s",
		    s->plan->filter, strerror(errno));
}

/* Open one event into @st; the first event of a stream owns its ring (see map_rings). */
static int open_into(struct session *s, struct stream *st, pid_t pid, int cpu)
{
	struct perf_event_attr a;
	int fd, ret;

	fill_attr(s, &a);
	fd = (int)syscall(SYS_perf_event_open, &a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return open_error(s, errno, pid, cpu);
	ret = stream_add_fd(s, st, fd);
	if (ret)
		return ret;
	if (st->ring_fd < 0)
		st->ring_fd = fd;
	return set_filter(s, fd);
}

static struct stream *new_stream(struct session *s, int cpu, pid_t tid)
{
	struct stream *st = &s->streams[s->nr_streams++];

	memset(st, 0, sizeof(*st));
	st->cpu = cpu;
	st->tid = tid;
	st->ring_fd = -1;
	st->idx = -1;
	return st;
}

static int open_events(struct session *s)
{
	const struct record_plan *p = s->plan;
	int n = p->per_thread ? s->nr_tids : s->nr_cpus, ret;

	s->streams = calloc(n, sizeof(*s->streams));
	if (!s->streams)
		return fail(s, ENOMEM, "out of memory");
	if (p->per_thread) {
		for (int i = 0; i < s->nr_tids; i++) {
			ret = open_into(s, new_stream(s, -1, s->tids[i]), s->tids[i], -1);
			if (ret)
				return ret;
		}
		return 0;
	}
	for (int c = 0; c < s->nr_cpus; c++) {
		struct stream *st = new_stream(s, s->cpus[c], -1);

		if (p->target == TARGET_CPU) {
			ret = open_into(s, st, -1, s->cpus[c]);
			if (ret)
				return ret;
			continue;
		}
		for (int i = 0; i < s->nr_tids; i++) {
			ret = open_into(s, st, s->tids[i], s->cpus[c]);
			if (ret)
				return ret;
		}
	}
	return 0;
}

static int map_error(struct session *s, int e)
{
	struct privs pv;
	uint64_t budget, want;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (e != EPERM && e != ENOMEM)
		return fail(s, e, "cannot map the ring buffers: %s", strerror(e));
	privs_read(&pv);
	budget = privs_mlock_budget(&pv, cpus > 0 ? (unsigned int)cpus : 1);
	want = (uint64_t)s->nr_streams * (s->plan->data_bytes + s->plan->aux_bytes);
	hint(s, "%d rings of %" PRIu64 " KiB data + %" PRIu64 " KiB AUX need %" PRIu64
	     " KiB of locked memory; this user may lock %" PRIu64 " KiB (perf_event_mlock_kb=%ld "
	     "per CPU, RLIMIT_MEMLOCK=%" PRIu64 " KiB). Use smaller rings (-m ,%" PRIu64 "K), "
	     "raise 'sysctl kernel.perf_event_mlock_kb', or 'ulimit -l'",
	     s->nr_streams, s->plan->data_bytes >> 10, s->plan->aux_bytes >> 10, want >> 10,
	     budget >> 10, pv.mlock_kb, pv.rlimit_memlock >> 10,
	     (s->plan->aux_bytes >> 11) ? s->plan->aux_bytes >> 11 : 4);
	return fail(s, e, "cannot map the ring buffers: the locked memory limit is reached");
}

static int map_rings(struct session *s)
{
	for (int i = 0; i < s->nr_streams; i++) {
		struct stream *st = &s->streams[i];
		int ret;

		ret = auxring_mmap(&st->ring, st->ring_fd, s->plan->data_bytes,
				   s->plan->aux_bytes, false);
		if (ret)
			return map_error(s, -ret);
		st->mapped = true;
		/* The other threads' events on this CPU write into the mapped ring. */
		for (int j = 1; j < st->nr_fds; j++)
			if (ioctl(st->fds[j], PERF_EVENT_IOC_SET_OUTPUT, st->ring_fd))
				return fail(s, errno, "cannot redirect a thread's event into the ring "
					    "of CPU %d: %s", st->cpu, strerror(errno));
		ret = bundle_stream_add(s->bundle, st->cpu, st->tid, &st->idx);
		if (ret)
			return fail(s, ret, "%s", bundle_error(s->bundle));
	}
	return 0;
}

/* @req on every event of a stream, or of every stream. */
static void ioctl_stream(const struct stream *st, unsigned long req)
{
	for (int j = 0; j < st->nr_fds; j++)
		ioctl(st->fds[j], req, 0);
}

static void ioctl_all(struct session *s, unsigned long req)
{
	for (int i = 0; i < s->nr_streams; i++)
		ioctl_stream(&s->streams[i], req);
}

/* ---- the loop --------------------------------------------------------- */

/*
 * Restart a stream's hardware after a stop. The core disables the event
 * after TRUNCATED, except on some kernels when the buffer filled on CPU 0:
 * a bare ENABLE then does nothing, DISABLE followed by ENABLE resumes in
 * both cases (tests/kernel/README.md, finding 2).
 */
static void restart_stream(void *arg)
{
	ioctl_stream(arg, PERF_EVENT_IOC_DISABLE);
	ioctl_stream(arg, PERF_EVENT_IOC_ENABLE);
}

/* A pass over a stream's ring; a failed write stops the recording. */
static void drain(struct session *s, struct stream *st, bool final)
{
	int ret = auxring_pass(&st->ring, bundle_trace_fd(s->bundle, st->idx),
			       bundle_sideband_fd(s->bundle, st->idx), final,
			       s->stop ? NULL : restart_stream, st);

	if (ret && !s->stop) {
		s->stop = true;
		s->stop_reason = ret == -ENOSPC ? "the disk is full" : "a write failed";
		snprintf(s->res->err, sizeof(s->res->err), "writing %s: %s",
			 bundle_trace_name(s->bundle, st->idx), strerror(-ret));
	}
	bundle_stream_update(s->bundle, st->idx, &st->ring.stats);
}

static uint64_t total_bytes(const struct session *s)
{
	uint64_t b = 0;

	for (int i = 0; i < s->nr_streams; i++)
		b += s->streams[i].ring.stats.aux_bytes;
	return b;
}

static uint64_t total_losses(const struct session *s)
{
	uint64_t l = 0;

	for (int i = 0; i < s->nr_streams; i++) {
		const struct auxring_stats *a = &s->streams[i].ring.stats;

		l += a->truncated + a->partial + a->collision + a->lost;
	}
	return l;
}

static void status(struct session *s, bool final)
{
	double t = elapsed(s), mb = total_bytes(s) / 1e6;

	if (!s->status_line)
		return;
	fprintf(stderr, "\r%s: %6.1fs  %9.2f MB  %7.2f MB/s  losses %" PRIu64 "%s", PTC_PROG, t,
		mb, t > 0 ? mb / t : 0, total_losses(s), final ? "\n" : "   ");
}

static void reap(struct session *s)
{
	int st;

	if (s->child <= 0 || waitpid(s->child, &st, WNOHANG) != s->child)
		return;
	s->res->workload_status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	s->child = 0;
	if (!s->stop) {
		s->stop = true;
		s->stop_reason = "the workload exited";
	}
}

static void handle_signals(struct session *s)
{
	struct signalfd_siginfo si;

	while (read(s->sig_fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			reap(s);
			continue;
		}
		if (!s->stop) {
			s->stop = true;
			s->stop_reason = strsignal((int)si.ssi_signo);
		}
		/* The workload got the terminal's signal too; a sent one goes on to it. */
		if (s->child > 0 && si.ssi_pid != 0 && (pid_t)si.ssi_pid != s->child &&
		    !s->child_signalled) {
			kill(s->child, (int)si.ssi_signo);
			s->child_signalled = true;
		}
	}
}

/* The process of thread @tid (its Tgid), or @tid itself if /proc does not say. */
static pid_t tgid_of(pid_t tid)
{
	char path[64], line[128];
	pid_t tgid = tid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "re");
	if (!f)
		return tid;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

/* COMM and MMAP2 of every process the recording found running (proc.pevent). */
static void synthesize_running(struct session *s)
{
	const struct record_opts *o = &s->plan->opts;
	char err[512];
	int failed = 0;

	if (s->plan->target == TARGET_PID) {
		for (int i = 0; i < o->nr_pids; i++)
			failed += bundle_add_process(s->bundle, o->pids[i], err, sizeof(err)) != 0;
	} else if (s->plan->target == TARGET_TID) {
		pid_t done[CLI_MAX_PIDS];
		int nr = 0;

		for (int i = 0; i < o->nr_tids; i++) {
			pid_t p = tgid_of(o->tids[i]);
			bool seen = false;

			for (int j = 0; j < nr; j++)
				seen |= done[j] == p;
			if (seen)
				continue;
			done[nr++] = p;
			failed += bundle_add_process(s->bundle, p, err, sizeof(err)) != 0;
		}
	} else {
		DIR *d = opendir("/proc");
		struct dirent *de;
		int ret;

		while (d && (de = readdir(d))) {
			char *end;
			long pid = strtol(de->d_name, &end, 10);

			/* Processes come and go: one that exited is simply not there. */
			if (*end || pid <= 0)
				continue;
			/* The hardware is running: keep its rings drained while we read /proc. */
			for (int i = 0; i < s->nr_streams; i++)
				drain(s, &s->streams[i], false);
			ret = bundle_add_process(s->bundle, (pid_t)pid, err, sizeof(err));
			failed += ret && ret != -ESRCH && ret != -EACCES;
		}
		if (d)
			closedir(d);
	}
	if (failed)
		msg_warn("record: %s; proc.pevent misses it, decoders may not find its code", err);
}

static int loop(struct session *s)
{
	const struct record_opts *o = &s->plan->opts;
	int n = s->nr_streams + 2;
	struct pollfd *pf = calloc(n, sizeof(*pf));

	if (!pf)
		return fail(s, ENOMEM, "out of memory");
	while (!s->stop) {
		int live = 0;

		for (int i = 0; i < s->nr_streams; i++) {
			pf[i].fd = s->streams[i].hup ? -1 : s->streams[i].ring_fd;
			pf[i].events = POLLIN;
		}
		pf[n - 2].fd = s->sig_fd;
		pf[n - 2].events = POLLIN;
		pf[n - 1].fd = s->timer_fd;
		pf[n - 1].events = POLLIN;
		if (poll(pf, n, -1) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < s->nr_streams; i++) {
			struct stream *st = &s->streams[i];

			drain(s, st, false);
			if (pf[i].revents & (POLLHUP | POLLERR))
				st->hup = true;
			live += !st->hup;
		}
		if (pf[n - 2].revents)
			handle_signals(s);
		if (pf[n - 1].revents) {
			uint64_t ticks;

			if (read(s->timer_fd, &ticks, sizeof(ticks)) < 0)
				ticks = 0;
			status(s, false);
			/* Keep the manifest close to the truth in case we are killed. */
			if (++s->ticks % 5 == 0) {
				char e[512];

				if (bundle_checkpoint(s->bundle, e, sizeof(e)))
					msg_warn("record: %s", e);
			}
		}
		reap(s);
		if (!s->stop && o->duration > 0 && elapsed(s) >= o->duration) {
			s->stop = true;
			s->stop_reason = "--duration reached";
		}
		if (!s->stop && o->max_size && total_bytes(s) >= o->max_size) {
			s->stop = true;
			s->stop_reason = "--max-size reached";
		}
		if (!s->stop && !live && s->plan->target != TARGET_CPU &&
		    s->plan->target != TARGET_COMMAND) {
			s->stop = true;
			s->stop_reason = "every traced thread exited";
		}
	}
	free(pf);
	return 0;
}

static int setup_signals(struct session *s)
{
	struct itimerspec its = { .it_interval = { 1, 0 }, .it_value = { 1, 0 } };
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, &s->old_mask))
		return fail(s, errno, "sigprocmask: %s", strerror(errno));
	s->mask_set = true;
	s->sig_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (s->sig_fd < 0)
		return fail(s, errno, "signalfd: %s", strerror(errno));
	s->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (s->timer_fd < 0 || timerfd_settime(s->timer_fd, 0, &its, NULL))
		return fail(s, errno, "timerfd: %s", strerror(errno));
	return 0;
}

static void summary(struct session *s)
{
	uint64_t total = 0;

	if (s->plan->opts.quiet)
		return;
	for (int i = 0; i < s->nr_streams; i++) {
		const struct stream *st = &s->streams[i];
		const struct auxring_stats *a = &st->ring.stats;

		if (st->idx < 0)
			continue;
		total += a->aux_bytes;
		fprintf(stderr, "%s: %-12s %12" PRIu64 " bytes  truncated %" PRIu64 "  lost %"
			PRIu64 "  partial %" PRIu64 "  collision %" PRIu64 "\n", PTC_PROG,
			bundle_trace_name(s->bundle, st->idx), a->aux_bytes, a->truncated,
			a->lost, a->partial, a->collision);
		if (a->data_full)
			msg_warn("record: %s: the sideband ring filled %" PRIu64 " time(s): a stop of "
				 "the hardware may have gone unrecorded; it was restarted each time "
				 "(a larger -m DATA helps)", bundle_trace_name(s->bundle, st->idx),
				 a->data_full);
	}
	fprintf(stderr, "%s: %" PRIu64 " bytes of trace in %d stream%s, %" PRIu64
		" loss record%s, in %s (%s)\n", PTC_PROG, total, s->nr_streams,
		s->nr_streams == 1 ? "" : "s", total_losses(s),
		total_losses(s) == 1 ? "" : "s", s->plan->opts.output,
		s->stop_reason ? s->stop_reason : "stopped");
}

static void cleanup(struct session *s)
{
	if (s->child > 0) {
		kill(s->child, SIGKILL);
		waitpid(s->child, NULL, 0);
	}
	if (s->go_fd >= 0)
		close(s->go_fd);
	if (s->exec_err_fd >= 0)
		close(s->exec_err_fd);
	for (int i = 0; i < s->nr_streams; i++) {
		struct stream *st = &s->streams[i];

		if (st->mapped)
			auxring_unmap(&st->ring);
		for (int j = 0; j < st->nr_fds; j++)
			close(st->fds[j]);
		free(st->fds);
	}
	free(s->streams);
	free(s->tids);
	if (s->sig_fd >= 0)
		close(s->sig_fd);
	if (s->timer_fd >= 0)
		close(s->timer_fd);
	if (s->mask_set)
		sigprocmask(SIG_SETMASK, &s->old_mask, NULL);
}

int session_run(const struct record_plan *plan, struct session_result *res)
{
	struct session s = {
		.plan = plan, .res = res, .go_fd = -1, .exec_err_fd = -1,
		.sig_fd = -1, .timer_fd = -1,
	};
	const struct record_opts *o = &plan->opts;
	char err[512];
	int ret;

	memset(res, 0, sizeof(*res));
	ret = setup_signals(&s);
	if (ret)
		goto out;
	if (plan->target == TARGET_CPU) {
		if (o->cpus_given) {
			memcpy(s.cpus, o->cpus, o->nr_cpus * sizeof(int));
			s.nr_cpus = o->nr_cpus;
		} else {
			ret = online_cpus(&s);
		}
	} else {
		ret = online_cpus(&s);
		for (int i = 0; !ret && i < o->nr_pids; i++)
			ret = add_threads(&s, o->pids[i]);
		for (int i = 0; !ret && i < o->nr_tids; i++)
			ret = add_tid(&s, o->tids[i]);
	}
	if (ret)
		goto out;
	ret = bundle_create(&s.bundle, plan, err, sizeof(err));
	if (ret) {
		/* An output directory that is in the way is the user's to move: bad input. */
		res->usage_error = ret == -EEXIST || ret == -ENOTDIR;
		ret = fail(&s, ret, "%s", err);
		goto out;
	}
	if (o->command) {
		ret = start_workload(&s);
		if (ret)
			goto out;
	}
	ret = open_events(&s);
	if (!ret)
		ret = map_rings(&s);
	if (ret)
		goto out;
	clock_gettime(CLOCK_MONOTONIC, &s.t0);
	bundle_started(s.bundle, auxring_ctrl(&s.streams[0].ring));
	if (bundle_save_sysroot(s.bundle, err, sizeof(err)))
		msg_warn("record: the vdso is not saved (%s); decoders will miss its code", err);
	if (!plan->ev.exclude_kernel) {
		if (bundle_save_kernel(s.bundle, err, sizeof(err)))
			msg_warn("record: %s; kernel addresses cannot be decoded", err);
		else if (o->kcore && bundle_save_kcore(s.bundle, err, sizeof(err)))
			msg_warn("record: %s", err);
	}
	ret = bundle_checkpoint(s.bundle, err, sizeof(err));
	if (ret) {
		ret = fail(&s, ret, "%s", err);
		goto out;
	}
	s.status_line = !o->quiet && isatty(STDERR_FILENO);
	/* A workload's own events start at its exec; everything else starts now. */
	if (plan->target != TARGET_COMMAND)
		ioctl_all(&s, PERF_EVENT_IOC_ENABLE);
	if (o->command)
		ret = release_workload(&s);
	if (ret)
		goto out;
	s.began = true;
	/* What was running before us: after enabling, so nothing falls between. */
	if (plan->target != TARGET_COMMAND)
		synthesize_running(&s);
	ret = loop(&s);
	/* Stop the hardware, then take what it wrote before it stopped. */
	ioctl_all(&s, PERF_EVENT_IOC_DISABLE);
	for (int i = 0; i < s.nr_streams; i++)
		drain(&s, &s.streams[i], true);
	status(&s, true);
	if (s.child > 0) {
		int st;

		/* The workload outlives a stop by a limit: it is ours to end. */
		if (!s.child_signalled)
			kill(s.child, SIGTERM);
		if (waitpid(s.child, &st, 0) == s.child)
			res->workload_status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		s.child = 0;
	}
	res->bytes = total_bytes(&s);
	res->lost_records = total_losses(&s);
	if (res->err[0])
		ret = -EIO;	/* a write failed: what was written is kept and said */
	summary(&s);
out:
	if (s.bundle) {
		if (ret && !s.began) {
			/* It failed before tracing began: leave nothing half-written behind. */
			bundle_discard(s.bundle);
		} else if (bundle_finish(s.bundle, ret == 0, s.stop_reason, res->workload_ran ?
					 res->workload_status : -1, err, sizeof(err)) && !ret) {
			ret = fail(&s, EIO, "%s", err);
		}
		bundle_free(s.bundle);
	}
	cleanup(&s);
	return ret;
}

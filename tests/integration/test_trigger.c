// SPDX-License-Identifier: MIT
/*
 * Triggers on this machine's kernel: trigtarget calls trig_hit() exactly N
 * times per thread and trig_other() once per thread; every fire must come
 * through the trigger set, in time order, from the target's threads, timed
 * between the go signal and the target's exit on CLOCK_MONOTONIC. A limit
 * K stops it after K. Failures to arm say why.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exechold.h"
#include "procfs.h"
#include "run.h"
#include "suitewatch.h"
#include "trigger.h"
#include "trigger_backend.h"

SUITEWATCH(watchdog, 60)

TestSuite(trigger, .init = watchdog);
TestSuite(trigger_latency, .init = watchdog);

struct target {
	pid_t pid;
	int go;			/* write a byte: it starts calling */
	FILE *out;		/* its stdout */
	/*
	 * Our tracee, as a session keeps a workload its breakpoint triggers watch: a
	 * hypervisor's stray debug trap (tests/kernel/README.md, "Stray debug traps") is
	 * swallowed and the breakpoint taken again, not the target killed by it.
	 */
	bool guarded;
	struct exechold_traps traps;
};

static uint64_t mono(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/*
 * Start trigtarget with @args; returns once it said "ready". @guard: seized before its
 * exec (it waits for a byte on a pipe of its own first) and kept as our tracee.
 */
static void target_start_as(struct target *t, const char *const *args, bool guard)
{
	char *prog = run_testprog("trigtarget"), line[64], c = 'x';
	struct error e = { 0 };
	int in[2], out[2], hold[2];

	memset(t, 0, sizeof(*t));
	t->guarded = guard;
	cr_assert_eq(pipe2(in, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(out, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(hold, O_CLOEXEC), 0);
	t->pid = fork();
	cr_assert_geq(t->pid, 0);
	if (!t->pid) {
		const char *argv[8] = { prog };

		for (int i = 0; args[i] && i < 6; i++)
			argv[i + 1] = args[i];
		if (guard && read(hold[0], &c, 1) != 1)
			_exit(127);
		dup2(in[0], 0);
		dup2(out[1], 1);
		execv(prog, (char *const *)argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	close(hold[0]);
	free(prog);
	if (guard) {
		int st;

		cr_assert_eq(exechold_seize(t->pid), 0, "cannot seize trigtarget: %s",
			     strerror(errno));
		cr_assert_eq(write(hold[1], &c, 1), 1);
		cr_assert_eq(exechold_wait(t->pid, &st, &e), 0, "%s", e.why);
		cr_assert_eq(exechold_keep(t->pid, &e), 0, "%s", e.why);
		cr_assert_eq(procfs_tracer(t->pid), getpid(), "trigtarget is not our tracee");
	}
	close(hold[1]);
	t->go = in[1];
	t->out = fdopen(out[0], "r");
	cr_assert(t->out);
	cr_assert(fgets(line, sizeof(line), t->out), "trigtarget said nothing");
	cr_assert(!strncmp(line, "ready ", 6), "%s", line);
}

static void target_start(struct target *t, const char *const *args)
{
	target_start_as(t, args, false);
}

/*
 * Whether the target has ended (its status in *@st): a guarded one's stops resumed, its
 * stray traps swallowed, and @block: waiting for the next thing that happens to it.
 */
static bool target_ended(struct target *t, int *st, bool block)
{
	siginfo_t si;

	if (!t->guarded)
		return waitpid(t->pid, st, block ? 0 : WNOHANG) == t->pid;
	while (!exechold_poll(t->pid, st, &t->traps)) {
		if (!block)
			return false;
		/* Not taken: exechold_poll() takes it, a stop resumed or the exit. */
		if (waitid(P_ALL, 0, &si, WEXITED | __WALL | WNOWAIT) && errno != EINTR)
			cr_assert_fail("waitid: %s", strerror(errno));
	}
	if (t->traps.swallowed)
		cr_log_info("%llu stray debug trap(s) of the breakpoints swallowed, the last at "
			    "%#llx (si_code %d)", (unsigned long long)t->traps.swallowed,
			    (unsigned long long)t->traps.last_swallowed.ip,
			    t->traps.last_swallowed.si_code);
	cr_expect_eq(t->traps.passed, 0, "trigtarget makes no trap of its own");
	return true;
}

static int target_wait(struct target *t)
{
	int st;

	if (t->go >= 0)
		close(t->go);
	t->go = -1;
	cr_assert(target_ended(t, &st, true));
	if (t->out)
		fclose(t->out);
	t->out = NULL;
	return st;
}

static void resolve(struct trigger_spec *s, const char *kind, const char *sym)
{
	char *prog = run_testprog("trigtarget"), text[4200];
	struct warnings w = { 0 };
	struct error e = { 0 };

	snprintf(text, sizeof(text), "%s:%s:%s", kind, prog, sym);
	free(prog);
	cr_assert_eq(trigger_spec_parse(text, s, &e), 0, "%s", e.why);
	cr_assert_eq(trigger_spec_resolve(s, &e, &w), 0, "%s", e.why);
}

/* Add kind:trigtarget:sym with @limit; returns its index. */
static int add(struct trigger_set *ts, const char *kind, const char *sym, uint64_t limit)
{
	struct trigger_spec s;
	struct error e = { 0 };
	int idx;

	resolve(&s, kind, sym);
	idx = trigger_add(ts, &s, limit, &e);
	cr_assert_geq(idx, 0, "%s", e.why);
	trigger_spec_free(&s);
	return idx;
}

/* Arm; a kernel that refuses says why, and the test says it too. */
static void arm(struct trigger_set *ts, pid_t pid)
{
	struct error e = { 0 };

	cr_assert_eq(trigger_arm(ts, pid, &e), 0, "arming failed: %s: %s (%s)", e.what, e.why,
		     e.hint);
	cr_assert_geq(trigger_fd(ts), 0);
}

struct seen {
	uint64_t count[TRIGGER_MAX];
	uint64_t first, last;
	pid_t tids[64];
	int ntids;
	bool ordered, all_ours;
};

static void note(struct seen *sn, const struct trigger_fire *f, pid_t pid, uint64_t prev)
{
	int k;

	sn->count[f->idx]++;
	if (!sn->first)
		sn->first = f->time;
	sn->last = f->time;
	if (f->time < prev)
		sn->ordered = false;
	if (f->pid != pid || f->cpu < 0)
		sn->all_ours = false;
	for (k = 0; k < sn->ntids && sn->tids[k] != f->tid; k++)
		;
	if (k == sn->ntids && k < 64)
		sn->tids[sn->ntids++] = f->tid;
}

/*
 * Poll the set the way a session would until the target has exited, then
 * flush what is left (the fires held for their order too). Only @pid's fires
 * count (a uprobe on every process also sees the other tests' targets).
 */
static void collect(struct trigger_set *ts, struct target *t, struct seen *sn)
{
	struct trigger_fire f[64];
	struct error e = { 0 };
	bool done = false;
	uint64_t prev = 0;
	int st, n;

	memset(sn, 0, sizeof(*sn));
	sn->ordered = sn->all_ours = true;
	while (!done) {
		struct pollfd p = { .fd = trigger_fd(ts), .events = POLLIN };

		poll(&p, 1, 20);
		done = target_ended(t, &st, false);
		/* Once it has exited every fire of its threads is in a ring: none to wait for. */
		while ((n = done ? trigger_flush_fires(ts, f, 64, &e)
				 : trigger_poll_fires(ts, f, 64, &e)) > 0) {
			for (int i = 0; i < n; i++) {
				if (f[i].pid != t->pid)
					continue;
				note(sn, &f[i], t->pid, prev);
				prev = f[i].time;
			}
		}
		cr_assert_geq(n, 0, "%s", e.why);
	}
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "trigtarget status %#x", st);
	t->go = -1;
	fclose(t->out);
	t->out = NULL;
}

static void run_target(struct trigger_set *ts, const char *const *args, pid_t arm_pid,
		       bool guard, struct seen *sn, uint64_t *t_go, uint64_t *t_end)
{
	struct target t;

	target_start_as(&t, args, guard);
	arm(ts, arm_pid == 0 ? t.pid : arm_pid);
	*t_go = mono();
	cr_assert_eq(write(t.go, "g", 1), 1);
	close(t.go);
	collect(ts, &t, sn);
	*t_end = mono();
}

static void fires_exactly(const char *kind, pid_t arm_pid, const char *n, const char *threads)
{
	const char *args[] = { n, threads, NULL };
	struct trigger_stats sh, so;
	struct trigger_set *ts;
	struct error e = { 0 };
	uint64_t t_go, t_end;
	struct seen sn;
	int hit, other;

	cr_assert_eq(trigger_set_new(&ts, &e), 0);
	hit = add(ts, kind, "trig_hit", 0);
	other = add(ts, kind, "trig_other", 0);
	run_target(ts, args, arm_pid, !strcmp(kind, "breakpoint"), &sn, &t_go, &t_end);
	trigger_get_stats(ts, hit, &sh);
	trigger_get_stats(ts, other, &so);
	cr_expect_eq(sn.count[hit], strtoull(n, NULL, 10) * strtoull(threads, NULL, 10),
		     "%s trig_hit: %llu fires", kind, (unsigned long long)sn.count[hit]);
	cr_expect_eq(sn.count[other], strtoull(threads, NULL, 10));
	cr_expect_eq(sn.ntids, atoi(threads), "fires from %d threads", sn.ntids);
	/* Late: written more than the set's margin after their time (a stalled writer). */
	cr_expect(sn.ordered, "fires come in time order (%llu + %llu came late)",
		  (unsigned long long)sh.late, (unsigned long long)so.late);
	cr_expect(sn.all_ours);
	cr_expect(sn.first >= t_go && sn.last <= t_end,
		  "fire times on CLOCK_MONOTONIC: go %llu first %llu last %llu end %llu",
		  (unsigned long long)t_go, (unsigned long long)sn.first,
		  (unsigned long long)sn.last, (unsigned long long)t_end);
	trigger_set_free(ts);
}

Test(trigger, uprobe_on_a_process_fires_exactly_n_times)
{
	fires_exactly("uprobe", 0, "1000", "1");
}

Test(trigger, uprobe_on_every_process_fires_exactly_n_times_per_thread)
{
	fires_exactly("uprobe", -1, "300", "3");
}

Test(trigger, breakpoint_fires_exactly_n_times)
{
	fires_exactly("breakpoint", 0, "1000", "1");
}

/* Threads started after arming are covered (inherited events). */
Test(trigger, breakpoint_fires_in_threads_started_later)
{
	fires_exactly("breakpoint", 0, "300", "4");
}

/*
 * A breakpoint's rings filled while nothing reads them, and no record after the reading:
 * the kernel writes a LOST record only before the next record that fits, so none said
 * what was dropped and the count was 0. Its own count (PERF_FORMAT_LOST) says it: every
 * hit is a fire or dropped, but for the hits a throttle let pass unsampled.
 */
Test(trigger, breakpoint_fires_a_full_ring_dropped_are_counted_with_no_record_after)
{
	const char *args[] = { "20000", "1", NULL };
	struct trigger_fire f[64];
	struct trigger_set *ts;
	struct trigger_stats st;
	struct error e = { 0 };
	struct target t;
	uint64_t fires = 0;
	int hit, n, status;

	cr_assert_eq(trigger_set_new(&ts, &e), 0);
	hit = add(ts, "breakpoint", "trig_hit", 0);
	target_start_as(&t, args, true);
	arm(ts, t.pid);
	cr_assert_eq(write(t.go, "g", 1), 1);
	close(t.go);
	t.go = -1;
	/* Nothing read until it has exited: 20,000 fires, rings of 16 pages a CPU. */
	cr_assert(target_ended(&t, &status, true));
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "trigtarget status %#x",
		  status);
	fclose(t.out);
	while ((n = trigger_flush_fires(ts, f, 64, &e)) > 0)
		for (int i = 0; i < n; i++)
			fires += f[i].idx == (unsigned int)hit && f[i].pid == t.pid;
	cr_assert_geq(n, 0, "%s", e.why);
	trigger_get_stats(ts, hit, &st);
	cr_log_info("fires %llu, dropped %llu, throttled %llu", (unsigned long long)fires,
		    (unsigned long long)st.dropped, (unsigned long long)st.throttled);
	cr_expect_lt(fires, 20000, "the rings held every fire: nothing was dropped to count");
	cr_expect_gt(st.dropped, 0, "%llu of 20,000 fires read, none counted as dropped",
		     (unsigned long long)fires);
	cr_expect(st.dropped_counted, "the kernel's count (Linux 6.0), not a floor");
	if (st.throttled)
		cr_expect_leq(fires + st.dropped, 20000);
	else
		cr_expect_eq(fires + st.dropped, 20000, "fires %llu + dropped %llu",
			     (unsigned long long)fires, (unsigned long long)st.dropped);
	trigger_set_free(ts);
}

static void stops_after(const char *kind, uint64_t k)
{
	const char *args[] = { "500", "2", NULL };
	struct trigger_set *ts;
	struct trigger_stats st;
	struct error e = { 0 };
	uint64_t t_go, t_end;
	struct seen sn;
	int hit;

	cr_assert_eq(trigger_set_new(&ts, &e), 0);
	hit = add(ts, kind, "trig_hit", k);
	trigger_get_stats(ts, hit, &st);
	cr_expect(!st.armed);
	run_target(ts, args, 0, !strcmp(kind, "breakpoint"), &sn, &t_go, &t_end);
	cr_expect_eq(sn.count[hit], k, "%s with limit %llu: %llu fires", kind,
		     (unsigned long long)k, (unsigned long long)sn.count[hit]);
	trigger_get_stats(ts, hit, &st);
	cr_expect_eq(st.fires, k);
	cr_expect_eq(st.limit, k);
	cr_expect(!st.armed, "disarmed after its limit");
	trigger_set_free(ts);
}

Test(trigger, uprobe_with_a_count_stops_after_k)
{
	stops_after("uprobe", 7);
}

Test(trigger, breakpoint_with_a_count_stops_after_k)
{
	stops_after("breakpoint", 7);
}

/* Both kinds in one set: one descriptor, fires merged in time order. */
Test(trigger, both_kinds_in_one_set_merge_in_time_order)
{
	const char *args[] = { "200", "2", NULL };
	struct trigger_set *ts;
	struct error e = { 0 };
	uint64_t t_go, t_end;
	struct seen sn;
	int up, bp;

	cr_assert_eq(trigger_set_new(&ts, &e), 0);
	up = add(ts, "uprobe", "trig_hit", 0);
	bp = add(ts, "breakpoint", "trig_other", 0);
	run_target(ts, args, 0, true, &sn, &t_go, &t_end);
	cr_expect_eq(sn.count[up], 400);
	cr_expect_eq(sn.count[bp], 2);
	cr_expect(sn.ordered);
	trigger_set_free(ts);
}

/*
 * A PIE workload held at its exec: the breakpoint goes in before its first
 * instruction, so the calls it makes at once are all caught.
 */
Test(trigger, breakpoint_on_a_workload_held_at_exec_sees_every_call)
{
	char *prog = run_testprog("trigtarget");
	struct trigger_set *ts;
	struct error e = { 0 };
	struct trigger_fire f[64];
	struct target t;
	uint64_t count = 0;
	int st, hit, n;
	pid_t pid;

	cr_assert_eq(trigger_set_new(&ts, &e), 0);
	hit = add(ts, "breakpoint", "trig_hit", 0);
	pid = fork();
	if (!pid) {
		exechold_child();
		execl(prog, prog, "--no-wait", "250", (char *)NULL);
		_exit(127);
	}
	free(prog);
	cr_assert_eq(exechold_wait(pid, &st, &e), 0, "%s", e.why);
	arm(ts, pid);
	/* Kept, as a session keeps it (its one thread: no clone to follow). */
	cr_assert_eq(exechold_keep(pid, &e), 0, "%s", e.why);
	t = (struct target){ .pid = pid, .go = -1, .guarded = true };
	cr_assert(target_ended(&t, &st, true));
	cr_assert(WIFEXITED(st) && !WEXITSTATUS(st), "trigtarget status %#x", st);
	while ((n = trigger_flush_fires(ts, f, 64, &e)) > 0)
		for (int i = 0; i < n; i++)
			count += f[i].idx == (unsigned)hit && f[i].pid == pid;
	cr_expect_eq(count, 250);
	trigger_set_free(ts);
}

Test(trigger, exec_that_fails_is_reported_by_the_hold)
{
	struct error e = { 0 };
	int st;
	pid_t pid = fork();

	if (!pid) {
		exechold_child();
		execl("/nonexistent/prog", "prog", (char *)NULL);
		_exit(127);
	}
	cr_assert_eq(exechold_wait(pid, &st, &e), -ECHILD);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 127);
	cr_expect(strstr(e.why, "ended before its exec"), "%s", e.why);
}

/* x86 has four debug address registers: a fifth breakpoint on one task has no slot. */
Test(trigger, fifth_breakpoint_has_no_slot_and_nothing_stays_armed)
{
	const char *args[] = { "10", "1", NULL };
	struct trigger_set *ts;
	struct error e = { 0 };
	struct target t;
	int ret;

	cr_assert_eq(trigger_set_new(&ts, &e), 0);
	for (int i = 0; i < 5; i++)
		add(ts, "breakpoint", i % 2 ? "trig_other" : "trig_hit", 0);
	target_start(&t, args);
	ret = trigger_arm(ts, t.pid, &e);
	cr_expect_eq(ret, -ENOSPC, "%d: %s", ret, e.why);
	cr_expect(strstr(e.why, "a breakpoint slot is taken"), "%s", e.why);
	cr_expect(strstr(e.what, "--trigger 'breakpoint:"), "%s", e.what);
	cr_expect(strstr(e.hint, "uprobe"), "%s", e.hint);
	for (unsigned i = 0; i < 5; i++) {
		struct trigger_stats st;

		trigger_get_stats(ts, i, &st);
		cr_expect(!st.armed, "trigger %u left armed", i);
	}
	trigger_set_free(ts);
	/* With the set gone, the target runs with no breakpoint left in it. */
	cr_assert_eq(write(t.go, "g", 1), 1);
	cr_expect_eq(target_wait(&t), 0);
}

/* A function of this test binary, which trigtarget never maps. */
__attribute__((noinline)) int trigger_test_unmapped(int x);
__attribute__((noinline)) int trigger_test_unmapped(int x)
{
	return x + 1;
}

Test(trigger, breakpoint_in_a_file_the_process_has_not_mapped)
{
	const char *args[] = { "1", "1", NULL };
	struct trigger_spec s;
	struct trigger_set *ts;
	struct warnings w = { 0 };
	struct error e = { 0 };
	struct target t;

	cr_assert_eq(trigger_spec_parse("breakpoint:/proc/self/exe:trigger_test_unmapped", &s,
					&e), 0);
	cr_assert_eq(trigger_spec_resolve(&s, &e, &w), 0, "%s", e.why);
	cr_assert_eq(trigger_set_new(&ts, &e), 0);
	cr_assert_eq(trigger_add(ts, &s, 0, &e), 0);
	target_start(&t, args);
	cr_expect_eq(trigger_arm(ts, t.pid, &e), -ENOENT);
	cr_expect(strstr(e.why, "is not mapped executable in process"), "%s", e.why);
	cr_expect(strstr(e.hint, "uprobe"), "%s", e.hint);
	trigger_set_free(ts);
	trigger_spec_free(&s);
	cr_assert_eq(write(t.go, "g", 1), 1);
	cr_expect_eq(target_wait(&t), 0);
}

/* A file offset to an address through /proc/PID/maps: this process, a file it maps. */
Test(trigger, file_offset_maps_to_where_the_process_mapped_it)
{
	char dir[] = "/tmp/ptc-maps-XXXXXX", m[64], mx[64];
	static char page[3 * 4096];
	uint64_t addr = 0;
	uint8_t *base;
	int fd;

	cr_assert(mkdtemp(dir));
	/* The mapped file is "m"; "mx" only begins with its name. */
	snprintf(m, sizeof(m), "%s/m", dir);
	snprintf(mx, sizeof(mx), "%s/mx", dir);
	fd = open(m, O_CREAT | O_RDWR | O_CLOEXEC, 0700);
	cr_assert_eq(write(fd, page, sizeof(page)), (ssize_t)sizeof(page));
	close(open(mx, O_CREAT | O_WRONLY | O_CLOEXEC, 0700));
	/* Pages 1 and 2 of the file, executable. */
	base = mmap(NULL, 2 * 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 4096);
	cr_assert_neq(base, MAP_FAILED);
	cr_expect_eq(trigger_map_address(getpid(), m, 4096 + 100, &addr), 0);
	cr_expect_eq(addr, (uint64_t)(uintptr_t)base + 100);
	cr_expect_eq(trigger_map_address(getpid(), m, 2 * 4096 + 7, &addr), 0);
	cr_expect_eq(addr, (uint64_t)(uintptr_t)base + 4096 + 7);
	cr_expect_eq(trigger_map_address(getpid(), m, 50, &addr), -ENOENT, "page 0 is not mapped");
	cr_expect_eq(trigger_map_address(getpid(), m, 3 * 4096, &addr), -ENOENT);
	cr_expect_eq(trigger_map_address(getpid(), mx, 4096 + 100, &addr), -ENOENT,
		     "a name that begins with a mapped file's is another file");
	munmap(base, 2 * 4096);
	cr_expect_eq(trigger_map_address(getpid(), m, 4096 + 100, &addr), -ENOENT);
	cr_expect_eq(trigger_map_address(1 << 30, m, 0, &addr), -ESRCH);
	close(fd);
	unlink(m);
	unlink(mx);
	rmdir(dir);
}

Test(trigger, breakpoint_without_a_process_is_a_usage_error)
{
	struct trigger_set *ts;
	struct error e = { 0 };

	cr_assert_eq(trigger_set_new(&ts, &e), 0);
	add(ts, "breakpoint", "trig_hit", 0);
	cr_expect_eq(trigger_arm(ts, -1, &e), -EINVAL);
	cr_expect(e.usage);
	cr_expect(strstr(e.why, "needs a process"), "%s", e.why);
	trigger_set_free(ts);
}

Test(trigger, set_is_armed_once_for_a_real_process)
{
	struct trigger_spec s;
	struct trigger_set *ts;
	struct error e = { 0 };

	cr_assert_eq(trigger_set_new(&ts, &e), 0);
	add(ts, "uprobe", "trig_hit", 0);
	cr_expect_eq(trigger_arm(ts, 0, &e), -EINVAL);
	cr_expect(strstr(e.why, "process 0: give a process id"), "%s", e.why);
	cr_expect_eq(trigger_arm(ts, getpid(), &e), 0, "%s", e.why);
	cr_expect_eq(trigger_arm(ts, getpid(), &e), -EINVAL);
	cr_expect(strstr(e.why, "armed once already"), "%s", e.why);
	resolve(&s, "uprobe", "trig_other");
	cr_expect_eq(trigger_add(ts, &s, 0, &e), -EINVAL);
	cr_expect(strstr(e.why, "added before arming"), "%s", e.why);
	trigger_spec_free(&s);
	trigger_set_free(ts);
}

/*
 * Without privileges (uid nobody, in a child): BPF is refused with the
 * capabilities to grant, a breakpoint on another user's process with
 * perf_event_paranoid's rule. The child reports through a pipe.
 */
static void unprivileged(const char *kind, pid_t target, int code, const char *says)
{
	struct passwd *pw = getpwnam("nobody");
	struct error e = { 0 };
	int p[2];
	pid_t pid;

	if (getuid() != 0 || !pw)
		cr_skip_test("needs root to drop to user nobody");
	cr_assert_eq(pipe(p), 0);
	pid = fork();
	if (!pid) {
		struct trigger_set *ts;
		int ret;

		close(p[0]);
		if (setgid(pw->pw_gid) || setuid(pw->pw_uid))
			_exit(1);
		trigger_set_new(&ts, &e);
		add(ts, kind, "trig_hit", 0);
		ret = trigger_arm(ts, target, &e);
		e.code = ret;
		if (write(p[1], &e, sizeof(e)) != (ssize_t)sizeof(e))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	cr_assert_eq(read(p[0], &e, sizeof(e)), (ssize_t)sizeof(e));
	close(p[0]);
	waitpid(pid, NULL, 0);
	cr_expect_eq(e.code, code, "%d: %s", e.code, e.why);
	cr_expect(strstr(e.why, says), "%s", e.why);
	cr_expect(e.hint[0], "a hint says what to change");
}

Test(trigger, uprobe_without_privilege_says_which_capabilities)
{
	unprivileged("uprobe", -1, -EPERM, "no permission to load a BPF program");
}

Test(trigger, breakpoint_on_another_users_process_is_refused)
{
	const char *args[] = { "1", "1", NULL };
	struct target t;

	target_start(&t, args);
	unprivileged("breakpoint", t.pid, -EPERM, "no permission to open a breakpoint");
	cr_assert_eq(write(t.go, "g", 1), 1);
	cr_expect_eq(target_wait(&t), 0);
}

/* Fires are on CLOCK_MONOTONIC; perf's default sample clock is measured against it. */
Test(trigger, perf_clock_offset_is_measured_tightly)
{
	struct error e = { 0 };
	int64_t off;
	uint64_t err;

	cr_assert_eq(trigger_perf_clock_offset(&off, &err, &e), 0, "%s", e.why);
	cr_expect_lt(err, 100000, "bracket %llu ns", (unsigned long long)err);
	fprintf(stderr, "trigger: perf clock - CLOCK_MONOTONIC = %lld ns (+-%llu)\n",
		(long long)off, (unsigned long long)err);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/*
 * Every fire of a spaced run reaches a session asleep in poll() on
 * trigger_fd(), in order. The cost of a fire as the session sees it (from the
 * fire's own time, taken in the kernel at the probe, to the moment
 * trigger_poll_fires() returns it) is printed, not judged: speed targets live
 * in make bench-kernel. Fires are 1 ms apart: one read while younger than
 * the set's margin is held for its order, and for the last one only the
 * set's own timer can wake the poll again.
 */
static void fire_latency(const char *kind)
{
	const char *args[] = { "--spaced", "1000", "400", "1", NULL };
	static uint64_t lat[400];
	struct trigger_set *ts;
	struct trigger_fire f[8];
	struct error e = { 0 };
	struct target t;
	uint64_t last = 0;
	size_t nr = 0;
	int st = 0;

	cr_assert_eq(trigger_set_new(&ts, &e), 0);
	add(ts, kind, "trig_hit", 0);
	target_start(&t, args);
	arm(ts, t.pid);
	cr_assert_eq(write(t.go, "g", 1), 1);
	while (nr < 400) {
		struct pollfd p = { .fd = trigger_fd(ts), .events = POLLIN };
		int n;

		cr_assert_geq(poll(&p, 1, 5000), 1, "no fire for 5 s after %zu", nr);
		n = trigger_poll_fires(ts, f, 8, &e);
		for (int i = 0; i < n && nr < 400; i++) {
			cr_assert(!nr || f[i].time >= last, "fire %zu is older than the one before", nr);
			last = f[i].time;
			lat[nr++] = mono() - f[i].time;
		}
	}
	cr_assert_eq(waitpid(t.pid, &st, 0), t.pid);
	close(t.go);
	fclose(t.out);
	qsort(lat, nr, sizeof(lat[0]), cmp_u64);
	fprintf(stderr, "trigger: %s: fire to trigger_poll_fires() return over %zu fires: "
		"median %.1f us, p90 %.1f us, max %.1f us\n", kind, nr, lat[nr / 2] / 1e3,
		lat[nr * 9 / 10] / 1e3, lat[nr - 1] / 1e3);
	trigger_set_free(ts);
}

Test(trigger_latency, every_uprobe_fire_reaches_a_session_in_poll)
{
	fire_latency("uprobe");
}

Test(trigger_latency, every_breakpoint_fire_reaches_a_session_in_poll)
{
	fire_latency("breakpoint");
}

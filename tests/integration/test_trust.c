// SPDX-License-Identifier: MIT
/*
 * Issue 21 (trust), on this machine's kernel through the built binary: -p on
 * a process whose main thread called pthread_exit() (a zombie leader) plans
 * and records its live threads; a target killed with SIGKILL ends the
 * recording with its stop reason; a failed wait of the record loop ends it
 * with a stop reason and a non-zero exit; warnings past the kept ones are
 * counted; one FIFO for both control ends is refused; SIGTERM ends a session
 * whose control channel is busy.
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "control.h"
#include "error.h"
#include "oracle.h"
#include "run.h"
#include "suitewatch.h"

SUITEWATCH(watchdog, 60)

TestSuite(trust, .init = watchdog);

/* ---- a zombie leader ------------------------------------------------------------ */

struct target {
	pid_t pid;
	int in;			/* its stdin: closing it ends its threads */
	char out[4096];		/* what it printed up to "ready" */
};

static void target_start(struct target *t, int threads)
{
	char *prog = run_testprog("zombielead"), nr[16];
	int in[2], out[2];
	ssize_t n, got = 0;

	snprintf(nr, sizeof(nr), "%d", threads);
	cr_assert_eq(pipe2(in, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(out, O_CLOEXEC), 0);
	t->pid = fork();
	cr_assert_geq(t->pid, 0);
	if (!t->pid) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execl(prog, prog, nr, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	t->in = in[1];
	/* "ready": the main thread is a zombie, the others run (the read is bounded by the watchdog). */
	while (!strstr(t->out, "ready\n") && !strstr(t->out, "not a zombie") &&
	       (n = read(out[0], t->out + got, sizeof(t->out) - 1 - (size_t)got)) > 0) {
		got += n;
		t->out[got] = '\0';
	}
	close(out[0]);
	cr_assert(strstr(t->out, "ready\n"), "zombielead: %s", t->out);
	free(prog);
}

static void target_end(struct target *t)
{
	if (t->in >= 0)
		close(t->in);
	t->in = -1;
	cr_assert_eq(waitpid(t->pid, NULL, 0), t->pid);
}

static bool has_tid(json_t *arr, long tid)
{
	size_t i;
	json_t *v;

	json_array_foreach(arr, i, v)
		if (json_integer_value(v) == tid)
			return true;
	return false;
}

/* record --dry-run: the zombie is left out, with a note naming it; its threads are in. */
static void dry_run(bool per_thread)
{
	struct oracle_env oe;
	char **env = oracle_fixture_env(&oe, "skylake");
	struct target t;
	struct run_result r;
	char pid[16], note[128];
	json_t *j, *threads, *streams;
	json_error_t je;
	const char *p;
	int live = 0;

	target_start(&t, 3);
	snprintf(pid, sizeof(pid), "%d", (int)t.pid);
	if (per_thread)
		cr_assert_eq(run_ptcollect(env, &r, "record", "--dry-run", "--json", "--per-thread",
					   "-m", "64K,64K", "-p", pid, "-o",
					   "/tmp/ptc-never-created", NULL), 0);
	else
		cr_assert_eq(run_ptcollect(env, &r, "record", "--dry-run", "--json", "-m",
					   "64K,64K", "-p", pid, "-o", "/tmp/ptc-never-created",
					   NULL), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	snprintf(note, sizeof(note), "-p %s: thread %s (the main thread) has exited", pid, pid);
	cr_expect(strstr(r.err, note), "%s", r.err);
	j = json_loads(r.out, 0, &je);
	cr_assert(j, "%s: %s", je.text, r.out);
	threads = json_object_get(json_object_get(j, "target"), "threads");
	cr_expect(!has_tid(threads, t.pid), "%s", r.out);
	for (p = t.out; (p = strstr(p, "tid ")); p += 4) {
		long tid = strtol(p + 4, NULL, 10);

		if (tid == t.pid)
			continue;
		live++;
		cr_expect(has_tid(threads, tid), "thread %ld is not planned: %s", tid, r.out);
	}
	cr_expect_eq(live, 4);	/* 3 spinners and the one that reads stdin */
	cr_expect_eq((int)json_array_size(threads), live);
	streams = json_object_get(j, "streams");
	if (per_thread) {
		size_t i;
		json_t *s;

		cr_expect_eq((int)json_array_size(streams), live);
		json_array_foreach(streams, i, s)
			cr_expect_neq(json_integer_value(json_object_get(s, "tid")), t.pid);
	}
	json_decref(j);
	run_free(&r);
	target_end(&t);
}

Test(trust, zombie_leader_is_left_out_with_a_note_per_cpu)
{
	dry_run(false);
}

Test(trust, zombie_leader_is_left_out_with_a_note_per_thread)
{
	dry_run(true);
}

static void remove_dir(const char *dir)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

static json_t *manifest(const char *dir)
{
	char path[256];
	json_error_t je;
	json_t *j;

	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	j = json_load_file(path, 0, &je);
	cr_assert(j, "%s: %s", path, je.text);
	return j;
}

/*
 * Wait for @pid (ptcollect): its exit status. A ptcollect that never ends is the suite's
 * watchdog's (60 s): a loaded machine slows the end, no bound here guesses by how much.
 */
static int wait_bounded(pid_t pid)
{
	int st;

	cr_assert_eq(waitpid(pid, &st, 0), pid);
	return st;
}

/* Until ptcollect (@rec) has written its ready file @ready; fails once it has exited without. */
static void wait_ready(pid_t rec, const char *ready)
{
	run_wait_file(rec, ready, "ptcollect record -p's ready file", 50);
}

/*
 * --no-trace -p on a zombie leader records (its sideband is real here) until
 * the target is gone: its threads end, or it is killed with SIGKILL.
 */
static void until_gone(bool sigkill)
{
	char dir[] = "/tmp/ptc-trust-XXXXXX", out[96], ready[96], pid[16];
	const char *why;
	struct target t;
	pid_t rec;
	json_t *m;
	int st;

	cr_assert(mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/b", dir);
	snprintf(ready, sizeof(ready), "%s/ready", dir);
	target_start(&t, 2);
	snprintf(pid, sizeof(pid), "%d", (int)t.pid);
	rec = fork();
	cr_assert_geq(rec, 0);
	if (!rec) {
		execl(run_bin(), "ptcollect", "record", "-q", "--no-trace", "-p", pid, "-o", out,
		      "--ready", ready, (char *)NULL);
		_exit(127);
	}
	wait_ready(rec, ready);
	if (sigkill)
		cr_assert_eq(kill(t.pid, SIGKILL), 0);
	else
		close(t.in), t.in = -1;
	st = wait_bounded(rec);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x", st);
	m = manifest(out);
	why = json_string_value(json_object_get(m, "stop_reason"));
	cr_expect_str_eq(why ? why : "(none)", "every traced thread exited");
	cr_expect(json_is_true(json_object_get(m, "complete")));
	json_decref(m);
	target_end(&t);
	remove_dir(dir);
}

Test(trust, zombie_leader_no_trace_ends_when_its_threads_end)
{
	until_gone(false);
}

Test(trust, zombie_leader_no_trace_ends_when_it_is_killed)
{
	until_gone(true);
}

/* ---- no quiet ends -------------------------------------------------------------- */

/*
 * The record loop's wait fails (poll() refused by LD_PRELOAD=pollfail.so): the
 * recording ends at once, says why on stderr and in the manifest (a stop reason,
 * not complete), and exits 1; before, it ended with 0 and no reason.
 */
Test(trust, a_failed_wait_ends_the_recording_with_a_reason_and_exit_1)
{
	char dir[] = "/tmp/ptc-trust-XXXXXX", out[96], pid[16], pre[512];
	char *so = run_testprog("pollfail.so");
	char *env[] = { pre, "ASAN_OPTIONS=verify_asan_link_order=0", NULL };
	struct run_result r;
	struct target t;
	const char *why;
	json_t *m;

	cr_assert(mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/b", dir);
	snprintf(pre, sizeof(pre), "LD_PRELOAD=%s", so);
	target_start(&t, 1);
	snprintf(pid, sizeof(pid), "%d", (int)t.pid);
	cr_assert_eq(run_ptcollect(env, &r, "record", "--no-trace", "-p", pid, "-o", out, NULL),
		     0);
	cr_expect_eq(r.status, 1, "%s", r.err);
	cr_expect(strstr(r.err, "poll: Cannot allocate memory"), "%s", r.err);
	m = manifest(out);
	why = json_string_value(json_object_get(m, "stop_reason"));
	cr_expect_str_eq(why ? why : "(none)", "waiting for the rings failed (poll)");
	cr_expect(json_is_false(json_object_get(m, "complete")));
	json_decref(m);
	run_free(&r);
	target_end(&t);
	remove_dir(dir);
	free(so);
}

/* Warnings past the WARN_MAX kept are counted, and said as "... and N more". */
Test(trust, warnings_past_the_kept_ones_are_counted_and_said, .init = cr_redirect_stderr)
{
	struct warnings w = { 0 };

	for (int i = 0; i < WARN_MAX + 12; i++)
		warn_add(&w, "warning %d", i);
	cr_expect_eq(w.nr, WARN_MAX);
	cr_expect_eq(w.dropped, 12);
	cmd_warnings("test", &w);
	fflush(stderr);
	cr_expect_stderr_eq_str("ptcollect: warning: test: warning 0\n"
				"ptcollect: warning: test: warning 1\n"
				"ptcollect: warning: test: warning 2\n"
				"ptcollect: warning: test: warning 3\n"
				"ptcollect: warning: test: warning 4\n"
				"ptcollect: warning: test: warning 5\n"
				"ptcollect: warning: test: warning 6\n"
				"ptcollect: warning: test: warning 7\n"
				"ptcollect: warning: test: ... and 12 more warning(s), not shown\n");
}

/* ---- the control channel -------------------------------------------------------- */

/* One FIFO for CTL and ACK would read back its own replies: refused, naming it. */
Test(trust, one_fifo_for_both_control_ends_is_refused)
{
	char dir[] = "/tmp/ptc-trust-XXXXXX", fifo[96], link[96], spec[256], out[96];
	struct run_result r;

	cr_assert(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/ctl", dir);
	snprintf(link, sizeof(link), "%s/also", dir);
	snprintf(out, sizeof(out), "%s/b", dir);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	cr_assert_eq(symlink(fifo, link), 0);
	/* The same path twice, and the same FIFO under another name. */
	for (int i = 0; i < 2; i++) {
		snprintf(spec, sizeof(spec), "fifo:%s,%s", fifo, i ? link : fifo);
		cr_assert_eq(run_ptcollect(NULL, &r, "record", "--no-trace", "--control", spec,
					   "-o", out, "--", "/bin/true", NULL), 0);
		cr_expect_eq(r.status, 2, "%s", r.err);
		cr_expect(strstr(r.err, spec) && strstr(r.err, "CTL and ACK are the same FIFO"),
			  "%s", r.err);
		cr_expect(strstr(r.err, "mkfifo ctl ack"), "%s", r.err);
		cr_expect_neq(access(out, F_OK), 0, "%s was made", out);
		run_free(&r);
	}
	remove_dir(dir);
}

/*
 * SIGTERM during a control session whose CTL is flooded (nobody reads ACK) ends
 * it: the loop hears its signals between batches of commands.
 */
Test(trust, sigterm_ends_a_session_with_a_flooded_control_channel)
{
	char dir[] = "/tmp/ptc-trust-XXXXXX", out[96], ctl[96], ack[96], ready[96], spec[256];
	char pid[16], flood[4096];
	struct target t;
	const char *why;
	pid_t rec;
	json_t *m;
	int st, w;

	cr_assert(mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/b", dir);
	snprintf(ctl, sizeof(ctl), "%s/ctl", dir);
	snprintf(ack, sizeof(ack), "%s/ack", dir);
	snprintf(ready, sizeof(ready), "%s/ready", dir);
	cr_assert_eq(mkfifo(ctl, 0600), 0);
	cr_assert_eq(mkfifo(ack, 0600), 0);
	snprintf(spec, sizeof(spec), "fifo:%s,%s", ctl, ack);
	target_start(&t, 1);
	snprintf(pid, sizeof(pid), "%d", (int)t.pid);
	rec = fork();
	cr_assert_geq(rec, 0);
	if (!rec) {
		execl(run_bin(), "ptcollect", "record", "-q", "--no-trace", "-p", pid, "-o", out,
		      "--control", spec, "--ready", ready, (char *)NULL);
		_exit(127);
	}
	wait_ready(rec, ready);
	w = open(ctl, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	cr_assert_geq(w, 0);
	for (size_t i = 0; i + 5 <= sizeof(flood); i += 5)
		memcpy(flood + i, "ping\n", 5);
	/* Fill CTL: a pipe's worth of commands, more than one batch. */
	while (write(w, flood, sizeof(flood) - sizeof(flood) % 5) > 0)
		;
	cr_assert_eq(kill(rec, SIGTERM), 0);
	st = wait_bounded(rec);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x", st);
	m = manifest(out);
	why = json_string_value(json_object_get(m, "stop_reason"));
	cr_expect_str_eq(why ? why : "(none)", "Terminated");
	json_decref(m);
	close(w);
	target_end(&t);
	remove_dir(dir);
}

/*
 * control_next() takes at most CONTROL_BATCH lines a call, refused ones
 * included, and says what it left: a reader that answers into its own CTL
 * (or a writer that never stops) cannot hold the session's loop.
 */
Test(trust, control_lines_are_taken_in_bounded_batches)
{
	struct control_cmd *cmd = malloc(sizeof(*cmd));
	struct control_stats st;
	struct control *c;
	struct error e = { 0 };
	char spec[32];
	int p[2], n = 0, ret;

	cr_assert(cmd);
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	for (int i = 0; i < 3 * CONTROL_BATCH; i++)
		cr_assert_eq(write(p[1], "bad\n", 4), 4);
	snprintf(spec, sizeof(spec), "fd:%d", p[0]);
	cr_assert_eq(control_open(&c, spec, &e), 0, "%s", e.why);
	cr_expect_eq(control_next(c, cmd), 0);
	control_get_stats(c, &st);
	cr_expect_eq(st.refused, CONTROL_BATCH);
	cr_expect(control_pending(c));
	while ((ret = control_next(c, cmd)) == 0 && control_pending(c) && n++ < 10)
		;
	control_get_stats(c, &st);
	cr_expect_eq(st.refused, 3 * CONTROL_BATCH);
	cr_expect(!control_pending(c));
	control_close(c);
	close(p[0]);
	close(p[1]);
	free(cmd);
}

// SPDX-License-Identifier: MIT
/*
 * A breakpoint trigger on a running process (-p) is guarded as a workload's
 * is (issue 21): every thread of the process becomes ptcollect's tracee
 * (PTRACE_SEIZE) before the breakpoints are armed, stray TRAP_HWBKPT traps
 * are kept from it and everything else reaches it, and each thread is let go
 * at the end, on SIGINT, SIGTERM and SIGHUP too. A process that cannot be
 * seized (here: one the test traces already) gets its breakpoints as uprobes,
 * and record says so on stderr and in the manifest.
 *
 * The target is trigtarget, started by the test and waiting for its go on
 * stdin ("ready PID" on stdout first); record -p is started with --ready FILE
 * and the go is sent once FILE exists, so every call falls after the arming.
 * Every wait is bounded.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "procfs.h"
#include "run.h"
#include "suitewatch.h"
#include "tempfile.h"

SUITEWATCH(watchdog, 60)

TestSuite(trigger_pid, .init = watchdog);

struct target {
	struct run_child c;
	char *prog;
};

/* trigtarget ARGS... (ending in N [THREADS]), waiting for its go. */
static void target_start(struct target *t, const char *const *args)
{
	char *argv[16], line[32];
	int a = 0;

	t->prog = run_testprog("trigtarget");
	argv[a++] = t->prog;
	for (int i = 0; args[i] && a < 15; i++)
		argv[a++] = (char *)args[i];
	argv[a] = NULL;
	cr_assert_eq(run_start(argv, &t->c), 0);
	snprintf(line, sizeof(line), "ready %d", t->c.pid);
	cr_assert_eq(run_wait_line(&t->c, line, 30), 0, "trigtarget did not say ready");
}

/* The go: its calls start; then its exit code (128+signal), reaped. */
static int target_go(struct target *t)
{
	cr_assert_eq(write(t->c.in, "g", 1), 1);
	return run_end(&t->c, 20);
}

struct rec {
	pid_t pid;
	char dir[64], out[96], err[96], ready[96];
};

/* record --no-trace -p @pid --trigger @kind:@prog:@fn=mark --ready FILE. */
static void rec_start_fn(struct rec *r, const char *kind, const char *prog, const char *fn,
			 pid_t pid)
{
	char *bin = (char *)run_bin(), *trig, pidtext[16];

	strcpy(r->dir, "/tmp/ptc-tpid-XXXXXX");
	cr_assert(mkdtemp(r->dir));
	snprintf(r->out, sizeof(r->out), "%s/rec", r->dir);
	snprintf(r->err, sizeof(r->err), "%s/rec.err", r->dir);
	snprintf(r->ready, sizeof(r->ready), "%s/ready", r->dir);
	snprintf(pidtext, sizeof(pidtext), "%d", (int)pid);
	cr_assert_gt(asprintf(&trig, "%s:%s:%s=mark", kind, prog, fn), 0);
	r->pid = fork();
	cr_assert_geq(r->pid, 0);
	if (!r->pid) {
		char *argv[] = { bin, "record", "--no-trace", "-o", r->out, "--ready", r->ready,
				 "-p", pidtext, "--trigger", trig, NULL };
		int fd = open(r->err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		if (fd < 0 || dup2(fd, 2) < 0 || dup2(fd, 1) < 0)
			_exit(126);
		execv(bin, argv);
		_exit(127);
	}
	free(trig);
}

static void rec_start(struct rec *r, const char *kind, const char *prog, pid_t pid)
{
	rec_start_fn(r, kind, prog, "trig_hit", pid);
}

static bool exists(int pid, const void *arg)
{
	struct stat st;

	(void)pid;
	return !stat(arg, &st);
}

/* Tracing has begun (the ready file), or the test fails with record's stderr. */
static void rec_wait_ready(struct rec *r)
{
	cr_assert(run_poll(r->pid, exists, r->ready, 50), "record ended, or was not ready after 50 s (%s)",
		  r->err);
}


/* record's exit status; a sanitizer report on its stderr fails the test. */
static int rec_wait(struct rec *r)
{
	int st;

	cr_assert_eq(waitpid(r->pid, &st, 0), r->pid);
	cr_expect(!file_has(r->err, "runtime error") && !file_has(r->err, "Sanitizer"),
		  "a sanitizer report from record (%s)", r->err);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The bundle and record's stderr go. */
static void rec_remove(struct rec *r)
{
	char *dir = strdup(r->dir);

	cr_assert(dir);
	temp_dir_remove(dir);
}

/* Every thread of @pid (/proc/PID/task) has TracerPid *@arg. */
static bool all_traced_by(int pid, const void *arg)
{
	char name[64];
	struct dirent *d;
	int n = 0;
	bool ok = true;
	DIR *dir;

	snprintf(name, sizeof(name), "/proc/%d/task", pid);
	dir = opendir(name);
	if (!dir)
		return false;
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.') {
			ok &= procfs_tracer(atoi(d->d_name)) == *(const int *)arg;
			n++;
		}
	closedir(dir);
	return ok && n;
}

/* Trigger 0 of @dir/manifest.json: its fires, and its guard and kind (copied). */
static long manifest_trigger(const char *dir, char *guard, char *kind, size_t len)
{
	char path[128];
	json_t *j, *t;
	long fires = -1;

	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	j = json_load_file(path, 0, NULL);
	cr_assert(j, "%s", path);
	t = json_array_get(json_object_get(j, "triggers"), 0);
	if (json_string_value(json_object_get(t, "fires")))
		fires = atol(json_string_value(json_object_get(t, "fires")));
	snprintf(guard, len, "%s", json_string_value(json_object_get(t, "guard")) ?
		 json_string_value(json_object_get(t, "guard")) : "(null)");
	snprintf(kind, len, "%s", json_string_value(json_object_get(t, "kind")) ?
		 json_string_value(json_object_get(t, "kind")) : "(null)");
	json_decref(j);
	return fires;
}

/* Guarded: the threads are record's tracees while it runs; every call (4 threads) a fire. */
Test(trigger_pid, breakpoint_on_a_running_process_is_guarded)
{
	struct target t;
	struct rec r;
	char guard[32], kind[32];
	int me;

	target_start(&t, (const char *[]){ "300", "4", NULL });
	rec_start(&r, "breakpoint", t.prog, t.c.pid);
	rec_wait_ready(&r);
	me = r.pid;
	cr_expect(all_traced_by(t.c.pid, &me), "the target's tracer is %d, not record (%d)",
		  procfs_tracer(t.c.pid), (int)r.pid);
	cr_expect_eq(target_go(&t), 0, "the target dies under the guard");
	cr_expect_eq(rec_wait(&r), 0, "record (%s)", r.err);
	cr_expect(file_has(r.err, "is ptcollect's tracee"), "record said nothing of the guard");
	cr_expect_eq(manifest_trigger(r.out, guard, kind, sizeof(guard)), 1200);
	cr_expect_str_eq(guard, "tracee");
	cr_expect_str_eq(kind, "breakpoint");
	rec_remove(&r);
	free(t.prog);
}

/* SIGINT, SIGTERM, SIGHUP end record; each thread is let go and runs on, untraced. */
Test(trigger_pid, a_stop_signal_lets_every_thread_go)
{
	const int sigs[] = { SIGINT, SIGTERM, SIGHUP };

	for (int i = 0; i < 3; i++) {
		struct target t;
		struct rec r;
		int zero = 0, rc;

		target_start(&t, (const char *[]){ "--say-tracer", "100", NULL });
		rec_start(&r, "breakpoint", t.prog, t.c.pid);
		rec_wait_ready(&r);
		cr_expect_eq(procfs_tracer(t.c.pid), r.pid, "%s: not seized", strsignal(sigs[i]));
		cr_assert_eq(kill(r.pid, sigs[i]), 0);
		rc = rec_wait(&r);
		cr_expect_eq(rc, 0, "%s: record exit %d (%s)", strsignal(sigs[i]), rc, r.err);
		cr_expect(all_traced_by(t.c.pid, &zero), "%s: the target is still traced by %d",
			  strsignal(sigs[i]), procfs_tracer(t.c.pid));
		cr_expect(run_proc_state(t.c.pid, "S"), "%s: the target is not waiting for its go",
			  strsignal(sigs[i]));
		cr_expect_eq(target_go(&t), 0, "%s: the target did not run on", strsignal(sigs[i]));
		rec_remove(&r);
		free(t.prog);
	}
}

/* Its own signals reach it: SIGUSR1 kills it, and so does a SIGTRAP it raises. */
Test(trigger_pid, the_processs_own_signals_reach_it)
{
	const char *sigs[] = { "10", "5" };

	for (int i = 0; i < 2; i++) {
		struct target t;
		struct rec r;

		target_start(&t, (const char *[]){ "--raise", sigs[i], "50", NULL });
		rec_start(&r, "breakpoint", t.prog, t.c.pid);
		rec_wait_ready(&r);
		cr_expect_eq(target_go(&t), 128 + atoi(sigs[i]), "signal %s", sigs[i]);
		cr_expect_eq(rec_wait(&r), 0, "record (%s)", r.err);
		rec_remove(&r);
		free(t.prog);
	}
}

/*
 * A process traced already (by this test) cannot be seized: its breakpoint
 * is armed as a uprobe, record says so, and the manifest names the kind it
 * was armed as and why. Every call still fires.
 */
Test(trigger_pid, a_traced_process_gets_a_uprobe_instead)
{
	struct target t;
	struct rec r;
	char guard[32], kind[32], path[128];
	json_t *j;
	const char *why;

	target_start(&t, (const char *[]){ "200", NULL });
	cr_assert_eq(ptrace(PTRACE_SEIZE, t.c.pid, NULL, NULL), 0, "seize: %s", strerror(errno));
	rec_start(&r, "breakpoint", t.prog, t.c.pid);
	rec_wait_ready(&r);
	cr_expect_gt(procfs_tracer(t.c.pid), 0, "the test traces it");
	cr_expect_eq(target_go(&t), 0);
	cr_expect_eq(rec_wait(&r), 0, "record (%s)", r.err);
	cr_expect(file_has(r.err, "already traced"), "record did not say why (%s)", r.err);
	cr_expect(file_has(r.err, "armed as uprobes"), "record did not say what (%s)", r.err);
	cr_expect_eq(manifest_trigger(r.out, guard, kind, sizeof(guard)), 200);
	cr_expect_str_eq(guard, "uprobe");
	cr_expect_str_eq(kind, "uprobe");
	snprintf(path, sizeof(path), "%s/manifest.json", r.out);
	j = json_load_file(path, 0, NULL);
	why = json_string_value(json_object_get(json_array_get(json_object_get(j, "triggers"), 0),
						"fallback"));
	cr_expect(why && strstr(why, "already traced"), "the manifest's fallback: %s", why);
	json_decref(j);
	rec_remove(&r);
	free(t.prog);
}

/* --dry-run says which, for both. */
Test(trigger_pid, dry_run_says_guard_or_uprobe)
{
	for (int traced = 0; traced < 2; traced++) {
		struct target t;
		struct run_result res;
		char pidtext[16], *trig;

		target_start(&t, (const char *[]){ "10", NULL });
		if (traced)
			cr_assert_eq(ptrace(PTRACE_SEIZE, t.c.pid, NULL, NULL), 0);
		snprintf(pidtext, sizeof(pidtext), "%d", t.c.pid);
		cr_assert_gt(asprintf(&trig, "breakpoint:%s:trig_hit", t.prog), 0);
		cr_assert_eq(run_ptcollect(NULL, &res, "record", "--dry-run", "--no-trace", "-o",
					   "/tmp/ptc-tpid-never", "-p", pidtext, "--trigger", trig,
					   NULL), 0);
		cr_expect_eq(res.status, 0, "%s", res.err);
		if (traced) {
			cr_expect(strstr(res.out, "armed as uprobes"), "%s", res.out);
			cr_expect(strstr(res.out, "already traced"), "%s", res.out);
		} else {
			cr_expect(strstr(res.out, "every thread of the process is ptcollect's "
					 "tracee"), "%s", res.out);
		}
		run_free(&res);
		free(trig);
		cr_expect_eq(target_go(&t), 0);
		free(t.prog);
	}
}

/* A thread of @pid other than its leader, or 0. */
static pid_t other_thread(pid_t pid)
{
	char name[64];
	struct dirent *d;
	pid_t tid = 0;
	DIR *dir;

	snprintf(name, sizeof(name), "/proc/%d/task", (int)pid);
	dir = opendir(name);
	if (!dir)
		return 0;
	while ((d = readdir(dir)) && !tid)
		if (d->d_name[0] != '.' && atoi(d->d_name) != pid)
			tid = atoi(d->d_name);
	closedir(dir);
	return tid;
}

/*
 * The plan looks at the leader only; here one other thread is traced (by
 * this test), so the seize itself is refused once record runs: the threads
 * seized already are let go, the breakpoint is armed as a uprobe, and stderr
 * and the manifest say why.
 */
Test(trigger_pid, a_refused_seize_falls_back_at_the_start)
{
	char *prog = run_testprog("threads"), guard[32], kind[32], path[128];
	char *argv[] = { prog, "sleep", "3", "stdin", NULL };
	struct run_child c;
	struct rec r;
	pid_t tid;
	int st;
	json_t *j;
	const char *why;

	cr_assert_eq(run_start(argv, &c), 0);
	cr_assert_eq(run_wait_line(&c, "ready", 30), 0, "threads did not say ready");
	tid = other_thread(c.pid);
	cr_assert_gt(tid, 0);
	cr_assert_eq(ptrace(PTRACE_SEIZE, tid, NULL, NULL), 0, "seize: %s", strerror(errno));
	rec_start_fn(&r, "breakpoint", prog, "sleep_until", c.pid);
	rec_wait_ready(&r);
	cr_assert_eq(kill(r.pid, SIGTERM), 0);
	cr_expect_eq(rec_wait(&r), 0, "record (%s)", r.err);
	cr_expect(file_has(r.err, "is already traced"), "record did not say why (%s)", r.err);
	cr_expect(file_has(r.err, "armed as uprobes"), "record did not say what (%s)", r.err);
	manifest_trigger(r.out, guard, kind, sizeof(guard));
	cr_expect_str_eq(guard, "uprobe");
	cr_expect_str_eq(kind, "uprobe");
	snprintf(path, sizeof(path), "%s/manifest.json", r.out);
	j = json_load_file(path, 0, NULL);
	why = json_string_value(json_object_get(json_array_get(json_object_get(j, "triggers"), 0),
						"fallback"));
	cr_expect(why && strstr(why, "thread"), "the manifest's fallback: %s", why);
	json_decref(j);
	/* The threads it had seized before the refusal are let go. */
	cr_expect(procfs_tracer(c.pid) == 0, "the leader is still traced by %d", procfs_tracer(c.pid));
	/* Our own tracee goes too, so that the process can end. */
	cr_assert_eq(ptrace(PTRACE_INTERRUPT, tid, NULL, NULL), 0);
	cr_assert_eq(waitpid(tid, &st, __WALL), tid);
	cr_assert_eq(ptrace(PTRACE_DETACH, tid, NULL, NULL), 0);
	cr_expect_eq(run_end(&c, 20), 0);
	rec_remove(&r);
	free(prog);
}

/*
 * A thread other than the leader execs (threadexec): it takes the leader's id and its
 * own is gone with no exit reported. record forgets that id at the exec stop, so at the
 * end every thread is let go at once: exit 0, no "did not stop to be let go within 2 s"
 * warning, and the process runs on untraced (was: the old id waited for, 2 s, warned).
 */
Test(trigger_pid, a_thread_that_execs_is_let_go_without_waiting_for_its_old_id)
{
	char *prog = run_testprog("threadexec"), line[32];
	char *argv[] = { prog, NULL };
	struct run_child c;
	struct rec r;
	int zero = 0, rc;

	cr_assert_eq(run_start(argv, &c), 0);
	snprintf(line, sizeof(line), "ready %d", c.pid);
	cr_assert_eq(run_wait_line(&c, line, 30), 0, "threadexec did not say ready");
	rec_start(&r, "breakpoint", prog, c.pid);
	rec_wait_ready(&r);
	cr_expect(procfs_tracer(c.pid) == r.pid, "threadexec is not record's tracee");
	cr_assert_eq(write(c.in, "g", 1), 1);
	/* Said by the new image: record has let its exec stop go. */
	snprintf(line, sizeof(line), "after %d", c.pid);
	cr_assert_eq(run_wait_line(&c, line, 30), 0, "threadexec's thread did not exec");
	cr_assert_eq(kill(r.pid, SIGINT), 0);
	rc = rec_wait(&r);
	cr_expect_eq(rc, 0, "record exit %d (%s)", rc, r.err);
	cr_expect(!file_has(r.err, "did not stop to be let go"), "record waited for the old "
		  "thread id (%s)", r.err);
	cr_expect(all_traced_by(c.pid, &zero), "threadexec is still traced by %d",
		  procfs_tracer(c.pid));
	cr_expect_eq(run_end(&c, 30), 0, "threadexec's exit status");
	rec_remove(&r);
	free(prog);
}

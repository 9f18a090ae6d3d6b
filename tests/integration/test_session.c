// SPDX-License-Identifier: MIT
/*
 * Scripted sessions on this machine's kernel, through the built binary: with
 * --no-trace (no Intel PT here) record arms triggers, hears the control
 * channel and says when it is ready. trigtarget calls trig_hit exactly N
 * times per thread: each trigger kind, on its own, records exactly that many
 * fires; --trigger-count K ends the recording after K. The control answers
 * every line and garbage never ends the recording. --json's result and the
 * manifest agree. docs/sessions.md's script example is examples/session.sh.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "oracle.h"
#include "run.h"
#include "suitewatch.h"
#include "treerm.h"

SUITEWATCH(watchdog, 60)

TestSuite(session, .init = watchdog);
TestSuite(session_input, .init = watchdog);

static json_t *load(const char *text)
{
	json_error_t je;
	json_t *j = json_loads(text, JSON_REJECT_DUPLICATES, &je);

	cr_assert(j, "not JSON (line %d: %s): %s", je.line, je.text, text);
	return j;
}

static json_t *load_manifest(const char *dir)
{
	char path[256];
	json_error_t je;
	json_t *j;

	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	j = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	cr_assert(j, "%s: %s", path, je.text);
	return j;
}

/* Fires of trigger @idx in a "fires" array; their pids must all be @pid's (0: one pid). */
static int count_fires(json_t *fires, int idx, int *nr_tids)
{
	pid_t tids[64], pid = 0;
	size_t i;
	json_t *f;
	int n = 0;

	*nr_tids = 0;
	json_array_foreach(fires, i, f) {
		pid_t tid = (pid_t)json_integer_value(json_object_get(f, "tid"));
		int k;

		if (json_integer_value(json_object_get(f, "trigger")) != idx)
			continue;
		n++;
		if (!pid)
			pid = (pid_t)json_integer_value(json_object_get(f, "pid"));
		cr_expect_eq(json_integer_value(json_object_get(f, "pid")), pid,
			     "every fire comes from the workload");
		cr_expect(json_is_string(json_object_get(f, "time_ns")), "times are strings");
		for (k = 0; k < *nr_tids && tids[k] != tid; k++)
			;
		if (k == *nr_tids && k < 64)
			tids[(*nr_tids)++] = tid;
	}
	return n;
}

static const char *str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

static void fires_exactly(const char *kind)
{
	char dir[] = "/tmp/ptc-session-XXXXXX", out[64], hit[512], other[512];
	char *prog = run_testprog("trigtarget");
	struct run_result r;
	json_t *res, *man;
	int tids;

	cr_assert(mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(hit, sizeof(hit), "%s:%s:trig_hit", kind, prog);
	snprintf(other, sizeof(other), "%s:%s:trig_other", kind, prog);
	cr_assert_eq(run_ptcollect(NULL, &r, "record", "--no-trace", "-q", "-j", "-o", out,
				   "--trigger", hit, "--trigger", other, "--", prog, "--no-wait",
				   "400", "3", NULL), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	res = load(r.out);
	cr_expect_eq(count_fires(json_object_get(res, "fires"), 0, &tids), 1200,
		     "%s: trig_hit fires, 400 calls in each of 3 threads; triggers %s; stderr %s",
		     kind, json_dumps(json_object_get(res, "triggers"), JSON_COMPACT), r.err);
	cr_expect_eq(tids, 3, "from the workload's three threads");
	cr_expect_eq(count_fires(json_object_get(res, "fires"), 1, &tids), 3);
	cr_expect_str_eq(str(json_array_get(json_object_get(res, "triggers"), 0), "fires"), "1200");
	cr_expect_str_eq(str(json_array_get(json_object_get(res, "triggers"), 0), "dropped"), "0");
	cr_expect_str_eq(str(json_array_get(json_object_get(res, "triggers"), 0), "action"), "mark");
	cr_expect_eq(json_integer_value(json_object_get(json_object_get(res, "workload"),
							"exit_status")), 0);
	cr_expect_str_eq(str(res, "stop_reason"), "the workload exited");
	/* The manifest says the same. */
	man = load_manifest(out);
	cr_expect_str_eq(str(man, "mode"), "none");
	cr_expect_eq(count_fires(json_object_get(man, "fires"), 0, &tids), 1200);
	cr_expect(*str(json_array_get(json_object_get(man, "triggers"), 0), "late"),
		  "the manifest counts the late fires");
	cr_expect(json_is_object(json_object_get(man, "clock")), "perf's clock against "
		  "CLOCK_MONOTONIC is in the manifest");
	json_decref(res);
	json_decref(man);
	run_free(&r);
	free(prog);
	cr_expect_eq(tree_remove(dir), 0, "%s left behind: %m", dir);
}

Test(session, uprobe_trigger_fires_exactly_n_times)
{
	fires_exactly("uprobe");
}

Test(session, breakpoint_trigger_fires_exactly_n_times)
{
	fires_exactly("breakpoint");
}

static void stops_after_k(const char *kind)
{
	char dir[] = "/tmp/ptc-session-XXXXXX", out[64], spec[512];
	char *prog = run_testprog("trigtarget");
	static char json[65536];
	struct run_child c;
	json_t *res;
	int tids, status;

	cr_assert(mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(spec, sizeof(spec), "%s:%s:trig_hit", kind, prog);
	/* 50 calls, then the workload lives until the test closes its stdin (--hold). */
	char *argv[] = { (char *)run_bin(), "record", "--no-trace", "-q", "-j", "-o", out,
			 "--trigger", spec, "--trigger-count", "7", "--", prog, "--no-wait",
			 "--hold", "--spaced", "1000", "50", "1", NULL };
	/* Its output ends when it stops after the 7th fire; 100 s only against a real hang. */
	suitewatch(120);
	cr_assert_eq(run_start(argv, &c), 0);
	cr_expect_geq(run_read_all(&c, json, sizeof(json), 100), 0, "record --trigger-count 7 "
		      "did not end its output in 100 s (not stopped after 7 fires?)");
	status = run_end(&c, 10);
	/* The recording ended before the workload: it was ended with SIGTERM. */
	cr_expect_eq(status, 128 + SIGTERM, "%s", json);
	res = load(json);
	cr_expect_eq(count_fires(json_object_get(res, "fires"), 0, &tids), 7, "%s", kind);
	cr_expect_str_eq(str(res, "stop_reason"), "--trigger-count reached");
	cr_expect_str_eq(str(json_array_get(json_object_get(res, "triggers"), 0), "limit"), "7");
	json_decref(res);
	free(prog);
	cr_expect_eq(tree_remove(dir), 0, "%s left behind: %m", dir);
}

Test(session, uprobe_with_trigger_count_stops_after_k)
{
	stops_after_k("uprobe");
}

Test(session, breakpoint_with_trigger_count_stops_after_k)
{
	stops_after_k("breakpoint");
}

/* ---- the control channel and the ready signal ---------------------------------- */

struct live {
	char dir[64], out[96], ctl[96], ack[96], ready[96];
	pid_t pid;
	int ack_fd, out_fd, in_fd;	/* in_fd: the workload's stdin; it lives until closed */
};

/* Start record --no-trace with FIFOs and a ready file; returns once the file exists. */
static void live_start(struct live *l, const char *ready_arg)
{
	char spec[256];
	int p[2], in[2];

	snprintf(l->dir, sizeof(l->dir), "/tmp/ptc-live-XXXXXX");
	cr_assert(mkdtemp(l->dir));
	snprintf(l->out, sizeof(l->out), "%s/out", l->dir);
	snprintf(l->ctl, sizeof(l->ctl), "%s/ctl", l->dir);
	snprintf(l->ack, sizeof(l->ack), "%s/ack", l->dir);
	snprintf(l->ready, sizeof(l->ready), "%s/ready", l->dir);
	cr_assert_eq(mkfifo(l->ctl, 0600), 0);
	cr_assert_eq(mkfifo(l->ack, 0600), 0);
	snprintf(spec, sizeof(spec), "fifo:%s,%s", l->ctl, l->ack);
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(in, O_CLOEXEC), 0);
	l->pid = fork();
	cr_assert_geq(l->pid, 0);
	if (!l->pid) {
		dup2(p[1], 1);
		dup2(in[0], 0);
		/* The workload reads its stdin: it lives until the test closes in[1]. */
		execl(run_bin(), "ptcollect", "record", "--no-trace", "-q", "-j", "-o", l->out,
		      "--control", spec, "--ready", ready_arg ? ready_arg : l->ready, "--",
		      "cat", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	close(in[0]);
	l->in_fd = in[1];
	l->out_fd = p[0];
	l->ack_fd = open(l->ack, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(l->ack_fd, 0);
}

static void wait_ready_file(struct live *l)
{
	run_wait_file(l->pid, l->ready, "ptcollect record --ready's file", 50);
}

/* One line from ACK, within 5 s. */
static char *reply(struct live *l)
{
	return run_read_line(l->ack_fd, 5);
}

static char *say(struct live *l, const char *line)
{
	int fd = open(l->ctl, O_WRONLY | O_CLOEXEC);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, line, strlen(line)), (ssize_t)strlen(line));
	close(fd);
	return reply(l);
}

/* Stop it and read its JSON result. */
static json_t *live_stop(struct live *l)
{
	char buf[65536];
	ssize_t n, len = 0;
	int st;

	cr_expect_str_eq(say(l, "stop\n"), "ack");
	while ((n = read(l->out_fd, buf + len, sizeof(buf) - 1 - (size_t)len)) > 0)
		len += n;
	buf[len] = '\0';
	cr_assert_eq(waitpid(l->pid, &st, 0), l->pid);
	cr_expect(WIFEXITED(st), "ptcollect was killed: %#x", st);
	close(l->in_fd);
	close(l->out_fd);
	close(l->ack_fd);
	cr_expect_eq(tree_remove(l->dir), 0, "%s left behind: %m", l->dir);
	return load(buf);
}

Test(session, control_answers_every_line_and_garbage_never_ends_the_recording)
{
	struct live l;
	json_t *st, *res;
	char *r;

	live_start(&l, NULL);
	wait_ready_file(&l);
	cr_expect_str_eq(say(&l, "ping\n"), "ack");
	st = load(say(&l, "status\n"));
	cr_expect_str_eq(str(st, "state"), "no-trace");
	cr_expect(json_is_integer(json_object_get(st, "workload")));
	json_decref(st);
	r = say(&l, "frobnicate\n");
	cr_expect(!strncmp(r, "error unknown command 'frobnicate'", 34), "%s", r);
	r = say(&l, "\x01\x02 \n");
	cr_expect(!strncmp(r, "error ", 6), "%s", r);
	r = say(&l, "snapshot\n");
	cr_expect_str_eq(r, "error this recording is not in snapshot mode (-S)");
	r = say(&l, "disable\n");
	cr_expect(!strncmp(r, "error there is no trace", 23), "%s", r);
	cr_expect_str_eq(say(&l, "mark   a slow request \n"), "ack");
	/* Still recording. */
	st = load(say(&l, "status\n"));
	cr_expect_eq(json_integer_value(json_object_get(st, "marks")), 1);
	json_decref(st);
	res = live_stop(&l);
	cr_expect_str_eq(str(res, "stop_reason"), "the control channel said stop");
	cr_expect_str_eq(str(json_array_get(json_object_get(res, "marks"), 0), "text"),
			 "a slow request");
	cr_expect(json_is_true(json_object_get(res, "complete")));
	json_decref(res);
}

Test(session, ready_file_holds_the_status_line_and_ready_ack_is_the_first_reply)
{
	struct live l;
	json_t *st;
	FILE *f;
	char line[1024];

	live_start(&l, NULL);
	wait_ready_file(&l);
	f = fopen(l.ready, "r");
	cr_assert(f);
	cr_assert(fgets(line, sizeof(line), f));
	fclose(f);
	st = load(line);
	cr_expect_eq(json_integer_value(json_object_get(st, "pid")), l.pid);
	json_decref(st);
	json_decref(live_stop(&l));
	/* The same on ACK. */
	live_start(&l, "ack");
	cr_expect_str_eq(reply(&l), "ready");
	cr_expect_str_eq(say(&l, "ping\n"), "ack");
	json_decref(live_stop(&l));
}

/* ---- bad input: exit 2, the input named ------------------------------------------- */

struct bad {
	char args[6][96];	/* after record --dry-run -o DIR; "@T" is trigtarget's path */
	char says[3][96];
	bool needs_pmu;		/* the skylake fixture (snapshot sizes) */
};

static struct bad bad_cases[] = {
	{ { "--no-trace", "--trigger", "bogus:@T:trig_hit" },
	  { "--trigger", "'bogus:", "unknown trigger kind 'bogus'" }, false },
	{ { "--no-trace", "--trigger", "uprobe:@T:no_such_function" },
	  { "--trigger", "no function 'no_such_function'", "ptcollect symbols" }, false },
	{ { "--no-trace", "--trigger", "uprobe:/nonexistent/prog:main" },
	  { "--trigger", "/nonexistent/prog" }, false },
	{ { "--no-trace", "--trigger", "uprobe:@T:trig_hit=explode" },
	  { "--trigger", "unknown action 'explode'" }, false },
	{ { "--no-trace", "--trigger", "uprobe:@T:trig_hit", "--trigger-count", "0" },
	  { "--trigger-count", "'0' is not a count" }, false },
	{ { "--no-trace", "--trigger", "uprobe:@T:trig_hit", "--trigger-count", "lots" },
	  { "--trigger-count", "'lots'" }, false },
	{ { "--no-trace", "--trigger-count", "3" }, { "--trigger-count 3", "no --trigger" }, false },
	{ { "--no-trace", "--trigger", "uprobe:@T:trig_hit=snapshot" },
	  { "--trigger", "needs snapshot mode (-S)" }, false },
	{ { "--no-trace", "--trigger", "uprobe:@T:trig_hit=start" },
	  { "--trigger", "no trace to start" }, false },
	{ { "--no-trace", "-a", "--trigger", "breakpoint:@T:trig_hit" },
	  { "--trigger", "breakpoint trigger watches one process", "uprobe" }, false },
	{ { "--no-trace", "--control", "pipe:x" }, { "--control", "'pipe:x'", "unknown kind" }, false },
	{ { "--no-trace", "--control", "fifo:/nonexistent/ctl" },
	  { "--control fifo:/nonexistent/ctl", "CTL FIFO /nonexistent/ctl", "mkfifo" }, false },
	{ { "--no-trace", "--control", "fifo:@F" }, { "--control", "not a FIFO" }, false },
	{ { "--no-trace", "--control", "fd:99" }, { "--control fd:99", "not open" }, false },
	{ { "--no-trace", "--ready", "ack" }, { "--ready ack", "--control fifo:CTL,ACK" }, false },
	{ { "--no-trace", "--ready", "@F" }, { "--ready", "exists already" }, false },
	{ { "--no-trace", "--ready", "/nonexistent/dir/ready" }, { "--ready", "/nonexistent/dir" }, false },
	{ { "--no-trace", "-S" }, { "--no-trace", "-S" }, false },
	{ { "--no-final-snapshot" }, { "--no-final-snapshot", "-S" }, false },
	/* Syntax before the PMU: exit 2 on a machine without Intel PT too. */
	{ { "--trigger", "kprobe:x:y" }, { "--trigger", "unknown trigger kind 'kprobe'" }, false },
	{ { "--control", "fifo:" }, { "--control", "no CTL path" }, false },
	{ { "-Sfoo" }, { "-S", "'foo' is not a snapshot size" }, false },
	{ { "-S1M", "-m", ",64K" }, { "-S1048576", "does not fit the AUX area", "-m ,1024K" }, true },
	{ { "-S", "-m", ",4K", "--no-trace" }, { "--no-trace" }, false },
};

ParameterizedTestParameters(session_input, bad_input_exits_2_with_the_input_named)
{
	return cr_make_param_array(struct bad, bad_cases, sizeof(bad_cases) / sizeof(bad_cases[0]));
}

ParameterizedTest(struct bad *c, session_input, bad_input_exits_2_with_the_input_named)
{
	char dir[] = "/tmp/ptc-bad-XXXXXX", out[64], file[64], args[6][600];
	char *prog = run_testprog("trigtarget"), *argv[20];
	struct oracle_env oe;
	struct run_result r;
	int n = 0;
	FILE *f;

	cr_assert(mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(file, sizeof(file), "%s/file", dir);
	f = fopen(file, "w");
	fclose(f);
	argv[n++] = (char *)run_bin();
	argv[n++] = "record";
	argv[n++] = "--dry-run";
	argv[n++] = "-o";
	argv[n++] = out;
	for (int i = 0; i < 6 && c->args[i][0]; i++) {
		char *at = strstr(c->args[i], "@T"), *atf = strstr(c->args[i], "@F");

		if (at)
			snprintf(args[i], sizeof(args[i]), "%.*s%s%s", (int)(at - c->args[i]),
				 c->args[i], prog, at + 2);
		else if (atf)
			snprintf(args[i], sizeof(args[i]), "%.*s%s%s", (int)(atf - c->args[i]),
				 c->args[i], file, atf + 2);
		else
			snprintf(args[i], sizeof(args[i]), "%s", c->args[i]);
		argv[n++] = args[i];
	}
	argv[n++] = "--";
	argv[n++] = "true";
	argv[n] = NULL;
	cr_assert_eq(run_argv(argv, c->needs_pmu ? oracle_fixture_env(&oe, "skylake") : NULL, &r),
		     0);
	cr_expect_eq(r.status, 2, "%s %s %s: exit %d; stderr:\n%s", args[0], args[1], args[2],
		     r.status, r.err);
	for (int i = 0; i < 3 && c->says[i][0]; i++)
		cr_expect(strstr(r.err, c->says[i]), "%s %s: stderr lacks \"%s\":\n%s", args[0],
			  args[1], c->says[i], r.err);
	cr_expect_str_empty(r.out, "stdout must stay empty on error: %s", r.out);
	run_free(&r);
	free(prog);
	cr_expect_eq(tree_remove(dir), 0, "%s left behind: %m", dir);
}

/* A FIFO this user may not write: refused before anything starts (as user nobody). */
Test(session_input, unwritable_fifo_exits_2_naming_it)
{
	char dir[] = "/tmp/ptc-bad-XXXXXX", ctl[64], spec[80], out[64];
	struct passwd *pw = getpwnam("nobody");
	struct run_result r;
	int p[2], st;
	pid_t pid;

	if (getuid() != 0 || !pw)
		cr_skip_test("needs root to drop to user nobody");
	cr_assert(mkdtemp(dir));
	chmod(dir, 0755);
	snprintf(ctl, sizeof(ctl), "%s/ctl", dir);
	snprintf(out, sizeof(out), "/tmp/ptc-never-%d", (int)getpid());
	snprintf(spec, sizeof(spec), "fifo:%s", ctl);
	cr_assert_eq(mkfifo(ctl, 0644), 0);
	cr_assert_eq(pipe(p), 0);
	pid = fork();
	if (!pid) {
		dup2(p[1], 2);
		if (setgid(pw->pw_gid) || setuid(pw->pw_uid))
			_exit(99);
		execl(run_bin(), "ptcollect", "record", "--no-trace", "--dry-run", "-o", out,
		      "--control", spec, "--", "true", (char *)NULL);
		_exit(98);
	}
	close(p[1]);
	memset(&r, 0, sizeof(r));
	r.err = calloc(1, 4096);
	cr_assert_geq(read(p[0], r.err, 4095), 0);
	close(p[0]);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 2, "status %#x: %s", st, r.err);
	cr_expect(strstr(r.err, spec) && strstr(r.err, "Permission denied") &&
		  strstr(r.err, "read and write"), "%s", r.err);
	free(r.err);
	cr_expect_eq(tree_remove(dir), 0, "%s left behind: %m", dir);
}

/* The plan shows what was resolved: sizes by perf's rules, triggers, scope. */
Test(session_input, dry_run_shows_snapshot_sizes_and_triggers)
{
	char *prog = run_testprog("trigtarget"), spec[512];
	struct oracle_env oe;
	struct run_result r;
	json_t *j;

	snprintf(spec, sizeof(spec), "breakpoint:%s:trig_hit", prog);
	/* -S SIZE alone: the AUX area is SIZE rounded up to a power of two of pages. */
	cr_assert_eq(run_ptcollect(oracle_fixture_env(&oe, "skylake"), &r, "record", "--dry-run",
				   "-j", "-S100000", "--trigger", spec, "-o", "/tmp/ptc-never",
				   "--", prog, NULL), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	j = load(r.out);
	cr_expect_str_eq(str(j, "aux_bytes"), "131072");
	cr_expect_str_eq(str(json_object_get(j, "snapshot"), "size"), "100000");
	cr_expect_str_eq(str(json_array_get(json_object_get(j, "triggers"), 0), "action"),
			 "snapshot", "snapshot is the default action with -S");
	cr_expect_str_eq(str(j, "trigger_scope"), "workload");
	json_decref(j);
	run_free(&r);
	/* perf's spelling: bytes in C syntax, 'e' in front. */
	cr_assert_eq(run_ptcollect(oracle_fixture_env(&oe, "skylake"), &r, "record", "--dry-run",
				   "-j", "-Se0x2000", "-o", "/tmp/ptc-never", "--", prog, NULL), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	j = load(r.out);
	cr_expect_str_eq(str(j, "aux_bytes"), "8192");
	cr_expect_str_eq(str(json_object_get(j, "snapshot"), "size"), "8192");
	json_decref(j);
	run_free(&r);
	free(prog);
}

/* docs/sessions.md's script example is examples/session.sh, word for word (the rig runs it). */
Test(session, docs_script_example_is_examples_session_sh)
{
	char *readme = run_srcpath("docs/sessions.md"), *script = run_srcpath("examples/session.sh");
	char *a = NULL, *b = NULL, *start, *end;
	size_t n = 0;
	FILE *f;

	f = fopen(readme, "r");
	cr_assert(f);
	cr_assert_gt(getdelim(&a, &n, '\0', f), 0);
	fclose(f);
	n = 0;
	f = fopen(script, "r");
	cr_assert(f);
	cr_assert_gt(getdelim(&b, &n, '\0', f), 0);
	fclose(f);
	start = strstr(a, "<!-- session.sh -->\n```sh\n");
	cr_assert(start, "docs/sessions.md has no <!-- session.sh --> block");
	start += strlen("<!-- session.sh -->\n```sh\n");
	end = strstr(start, "```\n<!-- /session.sh -->");
	cr_assert(end, "docs/sessions.md's session.sh block does not end");
	cr_expect_eq((size_t)(end - start), strlen(b), "docs/sessions.md's script differs from "
		     "examples/session.sh");
	cr_expect(!strncmp(start, b, strlen(b)), "docs/sessions.md's script differs from "
		  "examples/session.sh");
	free(a);
	free(b);
	free(readme);
	free(script);
}

/* @dir/manifest.json: the fuzz corpus's @name, its first @from (NULL: none) made @to. */
static void seed_manifest(const char *dir, const char *name, const char *from, const char *to)
{
	char path[256], *seed, *text = NULL, *at;
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "tests/fuzz/corpus/manifest/%s", name);
	seed = run_srcpath(path);
	f = fopen(seed, "r");
	cr_assert(f, "%s", seed);
	cr_assert_gt(getdelim(&text, &n, '\0', f), 0);
	fclose(f);
	at = from ? strstr(text, from) : NULL;
	cr_assert(!from || at, "no '%s' in %s", from, seed);
	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	f = fopen(path, "w");
	cr_assert(f, "%s", path);
	if (at)
		fprintf(f, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
	else
		fputs(text, f);
	cr_assert_eq(fclose(f), 0);
	free(text);
	free(seed);
}

/* info on a snapshot bundle: each window with its decoder lines, checked against its size. */
Test(session, info_gives_every_window_its_decoder_lines)
{
	char dir[] = "/tmp/ptc-snapinfo-XXXXXX", path[256];
	static char zeros[4096];
	struct run_result r;
	json_t *j, *w;
	FILE *f;

	cr_assert(mkdtemp(dir));
	seed_manifest(dir, "snapshots.json", NULL, NULL);
	for (int i = 1; i <= 2; i++) {
		snprintf(path, sizeof(path), "%s/snap-%d", dir, i);
		cr_assert_eq(mkdir(path, 0700), 0);
		snprintf(path, sizeof(path), "%s/snap-%d/cpu0.pt", dir, i);
		f = fopen(path, "w");
		/* snap-2 one byte short of what the manifest says */
		cr_assert_eq(fwrite(zeros, 1, i == 1 ? 4096 : 4095, f), i == 1 ? 4096u : 4095u);
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/cpu0.pevent", dir);
	fclose(fopen(path, "w"));
	cr_assert_eq(run_ptcollect(NULL, &r, "info", "-j", dir, NULL), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	j = load(r.out);
	w = json_array_get(json_object_get(json_array_get(json_object_get(j, "snapshots"), 0),
					   "windows"), 0);
	snprintf(path, sizeof(path), "--pevent:primary %s/cpu0.pevent", dir);
	cr_expect(strstr(str(w, "ptxed"), path), "%s", str(w, "ptxed"));
	snprintf(path, sizeof(path), "--pt %s/snap-1/cpu0.pt", dir);
	cr_expect(strstr(str(w, "ptxed"), path), "%s", str(w, "ptxed"));
	cr_expect(strstr(r.err, "snap-2/cpu0.pt has 4095 bytes, the manifest says 4096"), "%s",
		  r.err);
	cr_expect(!strstr(r.err, "snap-1/cpu0.pt"), "%s", r.err);
	cr_expect(!strstr(r.err, "cpu0.pt is missing"), "snapshot mode has no cpu0.pt: %s", r.err);
	json_decref(j);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "info", "--script", dir, NULL), 0);
	cr_expect(strstr(r.out, "snap-1/cpu0.pt") && strstr(r.out, "snap-2/cpu0.pt"), "%s", r.out);
	run_free(&r);
	cr_expect_eq(tree_remove(dir), 0, "%s left behind: %m", dir);
}

/*
 * A trigger's late fires (order, and what a limit kept, may be wrong) are a
 * problem info says; a bundle older than the count says it was not counted.
 */
Test(session, info_says_a_triggers_late_fires)
{
	char dir[] = "/tmp/ptc-lateinfo-XXXXXX";
	const char *want = "trigger uprobe:/bin/trigtarget:trig_hit: 2 fire(s) came late, after "
			   "younger ones: their order may be wrong";
	struct run_result r;
	json_t *j, *t;

	cr_assert(mkdtemp(dir));
	seed_manifest(dir, "no-trace.json", "\"throttled\": \"0\"",
		      "\"throttled\": \"0\", \"late\": \"2\"");
	cr_assert_eq(run_ptcollect(NULL, &r, "info", "-j", dir, NULL), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, want), "%s", r.err);
	j = load(r.out);
	t = json_object_get(j, "triggers");
	cr_expect_str_eq(str(json_array_get(t, 0), "late"), "2");
	cr_expect(json_is_null(json_object_get(json_array_get(t, 1), "late")),
		  "the other trigger's, absent: not counted");
	cr_expect(strstr(json_string_value(json_array_get(json_object_get(j, "problems"), 0)),
			 want), "%s", r.out);
	cr_expect_eq(json_array_size(json_object_get(j, "problems")), 1, "%s", r.out);
	json_decref(j);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "info", dir, NULL), 0);
	cr_expect(strstr(r.out, "late: 2") && strstr(r.out, "late: (none)"), "%s", r.out);
	run_free(&r);
	seed_manifest(dir, "no-trace.json", NULL, NULL);
	cr_assert_eq(run_ptcollect(NULL, &r, "info", dir, NULL), 0);
	cr_expect(!strstr(r.err, "came late"), "%s", r.err);
	run_free(&r);
	cr_expect_eq(tree_remove(dir), 0, "%s left behind: %m", dir);
}

/* A trigger's fires the kernel dropped (a full ring) or never delivered (throttled): each a
 * problem in info, with "at least" where the count is only what LOST records said. */
Test(session, info_says_a_triggers_dropped_and_throttled_fires)
{
	char dir[] = "/tmp/ptc-dropinfo-XXXXXX";
	const char *drop = "trigger uprobe:/bin/trigtarget:trig_hit: 7 fire(s) dropped by the "
			   "kernel (its ring was full): not acted on";
	const char *thr = "trigger uprobe:/bin/trigtarget:trig_hit: the kernel throttled it 3 "
			  "time(s)";
	struct run_result r;
	json_t *j, *pr;

	cr_assert(mkdtemp(dir));
	seed_manifest(dir, "no-trace.json", "\"dropped\": \"0\",\n   \"throttled\": \"0\"",
		      "\"dropped\": \"7\", \"dropped_counted\": true, \"throttled\": \"3\"");
	cr_assert_eq(run_ptcollect(NULL, &r, "info", "-j", dir, NULL), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, drop) && strstr(r.err, thr), "%s", r.err);
	j = load(r.out);
	pr = json_object_get(j, "problems");
	cr_expect_eq(json_array_size(pr), 2, "%s", r.out);
	cr_expect(strstr(json_string_value(json_array_get(pr, 0)) ?: "", drop), "%s", r.out);
	cr_expect(strstr(json_string_value(json_array_get(pr, 1)) ?: "", thr), "%s", r.out);
	json_decref(j);
	run_free(&r);
	/* Counted from LOST records only (a kernel before 6.0): more may have gone. */
	seed_manifest(dir, "no-trace.json", "\"dropped\": \"0\"", "\"dropped\": \"7\"");
	cr_assert_eq(run_ptcollect(NULL, &r, "info", dir, NULL), 0);
	cr_expect(strstr(r.err, "trig_hit: at least 7 fire(s) dropped"), "%s", r.err);
	cr_expect(!strstr(r.err, "throttled"), "%s", r.err);
	run_free(&r);
	seed_manifest(dir, "no-trace.json", NULL, NULL);
	cr_assert_eq(run_ptcollect(NULL, &r, "info", dir, NULL), 0);
	cr_expect(!strstr(r.err, "dropped by") && !strstr(r.err, "throttled"), "%s", r.err);
	run_free(&r);
	cr_expect_eq(tree_remove(dir), 0, "%s left behind: %m", dir);
}

/* SIGUSR2 asks for a snapshot; without -S it is said and ignored, and SIGINT still ends it. */
Test(session, sigusr2_without_snapshot_mode_is_ignored_with_a_warning)
{
	char dir[] = "/tmp/ptc-usr2-XXXXXX", out[64], ready[64], err[4096] = "";
	size_t len;
	int p[2], in[2], st;
	ssize_t n;
	pid_t pid;

	cr_assert(mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(ready, sizeof(ready), "%s/ready", dir);
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(in, O_CLOEXEC), 0);
	pid = fork();
	if (!pid) {
		dup2(p[1], 2);
		dup2(in[0], 0);
		/* The workload lives until the test closes its stdin (in[1]). */
		execl(run_bin(), "ptcollect", "record", "--no-trace", "-o", out, "--ready", ready,
		      "--", "cat", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	close(in[0]);
	run_wait_file(pid, ready, "ptcollect record --ready's file", 50);
	kill(pid, SIGUSR2);
	/* Its warning says it handled the signal; the recording goes on after it. */
	len = 0;
	while (!strstr(err, "ignored") && len + 1 < sizeof(err)) {
		struct pollfd pf = { .fd = p[0], .events = POLLIN };

		if (poll(&pf, 1, 60000) <= 0)
			break;
		n = read(p[0], err + len, sizeof(err) - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		err[len] = '\0';
	}
	cr_expect(strstr(err, "SIGUSR2 asks for a snapshot") && strstr(err, "ignored"), "%s", err);
	cr_expect_eq(waitpid(pid, &st, WNOHANG), 0, "SIGUSR2 ended the recording: %s", err);
	kill(pid, SIGINT);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	close(in[1]);
	close(p[0]);
	cr_expect(WIFEXITED(st), "%#x", st);
	cr_expect_eq(tree_remove(dir), 0, "%s left behind: %m", dir);
}

/* The --ready file is private to the user (0600), as every file of a recording, whatever the umask. */
Test(session, the_ready_file_is_private_whatever_the_umask)
{
	char dir[] = "/tmp/ptc-readymode-XXXXXX", out[64], ready[64];
	struct run_result r;
	struct stat st;
	mode_t old = umask(022);

	cr_assert(mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(ready, sizeof(ready), "%s/ready", dir);
	cr_assert_eq(run_ptcollect(NULL, &r, "record", "--no-trace", "-q", "-o", out, "--ready",
				   ready, "--", "true", NULL), 0);
	umask(old);
	cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	cr_assert_eq(lstat(ready, &st), 0, "%s: %s", ready, strerror(errno));
	cr_expect(S_ISREG(st.st_mode));
	cr_expect_eq(st.st_mode & 07777, 0600, "%s is %04o, not 0600", ready,
		     (unsigned int)(st.st_mode & 07777));
	run_free(&r);
	cr_expect_eq(tree_remove(dir), 0, "%s left behind: %m", dir);
}

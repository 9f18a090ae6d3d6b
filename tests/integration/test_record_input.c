// SPDX-License-Identifier: MIT
/* record's bad input: exit 2, a message naming the input, nothing on stdout, nothing created. */
#include <criterion/criterion.h>
#include <intel-pt.h>
#include <criterion/parameterized.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "oracle.h"
#include "run.h"

struct bad_case {
	char fixture[16];	/* "" = a sysfs root with no PMU at all */
	char args[6][64];	/* record arguments before "-- true" */
	int status;
	char says[3][96];	/* the message must contain each */
};

static struct bad_case bad_cases[] = {
	{ "skylake", { "-e", "intel_pt/psb_period=9/u" }, 2,
	  { "psb_period=9", "valid values: 0-5" } },
	{ "skylake", { "-e", "intel_pt/mtc_period=2/u" }, 2,
	  { "mtc_period=2", "valid values: 0,3,6,9" } },
	{ "skylake", { "-e", "intel_pt/cyc_thresh=14/u" }, 2, { "cyc_thresh=14", "0-13" } },
	{ "skylake", { "-e", "intel_pt/mtc_period=16/u" }, 2, { "mtc_period=16", "maximum 15" } },
	{ "skylake", { "-e", "intel_pt/foo/u" }, 2, { "unknown term 'foo'", "valid terms:", "cyc" } },
	{ "skylake", { "-e", "intel_pt/ptw/u" }, 2, { "ptw", "caps/ptwrite" } },
	{ "skylake", { "-e", "intel_pt/pwr_evt/u" }, 2, { "pwr_evt", "caps/power_event_trace" } },
	{ "ptwrite4", { "-e", "intel_pt/fup_on_ptw/u" }, 2, { "fup_on_ptw needs ptw" } },
	{ "nomtc", { "-e", "intel_pt/cyc/u" }, 2, { "cyc", "caps/psb_cyc" } },
	{ "nomtc", { "-e", "intel_pt/mtc/u" }, 2, { "mtc", "caps/mtc" } },
	{ "skylake", { "-e", "intel_pt/cyc/x" }, 2, { "modifier 'x'", "u (user)" } },
	/* Syntax is checked before sysfs is read: exit 2 even without a PMU. */
	{ "", { "-e", "intel_pt/cyc" }, 2, { "-e intel_pt/cyc", "PMU/TERMS/MODIFIERS" } },
	{ "", { "-e", "intel_pt/cyc=/u" }, 2, { "'cyc' needs a value" } },
	{ "", { "-e", "intel_pt/cyc=zz/u" }, 2, { "'zz' is not a number" } },
	{ "", { "-e", "intel_pt/cyc,/u" }, 2, { "empty term" } },
	{ "", { "-e", "cycles/cyc/u" }, 2, { "PMU 'cycles' is not supported" } },
	{ "", { "-m", "3,4M" }, 2, { "-m", "power of two" } },
	{ "", { "-m", ",100K" }, 2, { "AUX size '100K'", "power of two" } },
	{ "", { "-m", "1x" }, 2, { "-m", "'1x' is not a size" } },
	{ "", { "-C", "3-1" }, 2, { "-C", "not a CPU list" } },
	{ "", { "--duration", "-1" }, 2, { "--duration", "not a duration" } },
	{ "", { "--max-size", "0" }, 2, { "--max-size", "greater than 0" } },
	{ "", { "--bogus" }, 2, { "unknown option '--bogus'" } },
	{ "", { "-p", "12ab" }, 2, { "-p", "not a list of process ids" } },
	{ "", { "-p", "1", "-a" }, 2, { "more than one target" } },
	{ "", { "-a", "--per-thread" }, 2, { "--per-thread", "-a" } },
	{ "", { "-t", "1" }, 2, { "do not go with a COMMAND" } },
	{ "skylake", { "--kcore" }, 2, { "--kcore", "does not trace the kernel", "intel_pt//k" } },
	{ "skylake", { "-p", "1073741823" }, 2, { "-p 1073741823: no such process" } },
	{ "", { "-o", "" }, 2, { "-o", "empty" } },
	{ "skylake", { "-q" }, 2, { "cannot execute", "not found in PATH" } },
	/* Runtime: no PMU is exit 1, with the reason and a way to learn more. */
	{ "", { "-e", "intel_pt//u" }, 1, { "no intel_pt PMU", "caps" } },
};

ParameterizedTestParameters(record_input, bad_input_exits_with_a_named_message)
{
	return cr_make_param_array(struct bad_case, bad_cases,
				   sizeof(bad_cases) / sizeof(bad_cases[0]));
}

ParameterizedTest(struct bad_case *c, record_input, bad_input_exits_with_a_named_message)
{
	char dir[] = "/tmp/ptc-input-XXXXXX", out[4200];
	struct oracle_env oe;
	char *argv[16], **env;
	struct run_result r;
	struct stat st;
	int n = 0;

	cr_assert(mkdtemp(dir));
	/* No fixture: an empty sysfs root, where there is no PMU at all. */
	env = c->fixture[0] ? oracle_fixture_env(&oe, c->fixture) : oracle_sysfs_env(&oe, dir);
	snprintf(out, sizeof(out), "%s/out", dir);
	argv[n++] = (char *)run_bin();
	argv[n++] = "record";
	argv[n++] = "--dry-run";
	argv[n++] = "-o";
	argv[n++] = out;
	for (int i = 0; i < 6 && c->args[i][0]; i++)
		argv[n++] = c->args[i];
	if (!strcmp(c->args[0], "-o"))
		argv[n++] = "";	/* the empty value itself */
	if (!strcmp(c->args[0], "-q"))
		argv[n++] = "--", argv[n++] = "ptc-no-such-command";
	else if (strcmp(c->args[0], "-p") && (strcmp(c->args[0], "-a") || !c->args[1][0]))
		argv[n++] = "--", argv[n++] = "true";
	argv[n] = NULL;
	cr_assert_eq(run_argv(argv, env, &r), 0);
	cr_expect_eq(r.status, c->status, "%s %s: exit %d, expected %d; stderr:\n%s",
		     c->args[0], c->args[1], r.status, c->status, r.err);
	for (int i = 0; i < 3 && c->says[i][0]; i++)
		cr_expect(strstr(r.err, c->says[i]), "%s %s: stderr lacks \"%s\":\n%s",
			  c->args[0], c->args[1], c->says[i], r.err);
	cr_expect(!strncmp(r.err, "ptcollect: ", 11), "message is not 'ptcollect: ...': %s", r.err);
	cr_expect_str_empty(r.out, "stdout must stay empty on error: %s", r.out);
	cr_expect_neq(stat(out, &st), 0, "the output directory was created");
	run_free(&r);
	rmdir(dir);
}

/*
 * The event term (Event Trace) with a libipt that does not decode it (2.0.5): a warning,
 * and the recording goes on; none with 2.1 or later.
 */
Test(record_input, the_event_term_warns_when_the_linked_libipt_cannot_decode_it)
{
	struct oracle_env oe;
	char **env = oracle_fixture_env(&oe, "eventtrace");
	struct pt_version v = pt_library_version();
	unsigned have = (unsigned)v.major << 8 | v.minor;
	struct run_result r;
	char want[256];

	if (have > (LIBIPT_VERSION_MAJOR << 8 | LIBIPT_VERSION_MINOR))
		have = LIBIPT_VERSION_MAJOR << 8 | LIBIPT_VERSION_MINOR;
	cr_assert_eq(run_ptcollect(env, &r, "record", "--dry-run", "-e", "intel_pt/event/u", "-o",
				   "/tmp/ptc-dry-run-never-created", "--", "true", NULL), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "event: intel_pt/event/u"), "%s", r.out);
	snprintf(want, sizeof(want), "-e intel_pt/event/u: the event term makes Event Trace "
		 "packets (CFE, EVD) and this libipt %u.%u.%u does not decode Event Trace packets; "
		 "ptcollect built with libipt \u2265 2.1 does: the trace is recorded", v.major,
		 v.minor, v.patch);
	if (have < 0x201)
		cr_expect(strstr(r.err, want), "%s in %s", want, r.err);
	else
		cr_expect(!strstr(r.err, "Event Trace"), "%s", r.err);
	run_free(&r);
}

Test(record_input, system_wide_with_a_command_records_cpus_while_it_runs)
{
	struct oracle_env oe;
	char **env = oracle_fixture_env(&oe, "skylake");
	struct run_result r;

	cr_assert_eq(run_ptcollect(env, &r, "record", "--dry-run", "--json", "-C", "0", "-o",
				   "/tmp/ptc-dry-run-never-created", "--", "sleep", "1", NULL), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "\"kind\": \"cpu\""), "%s", r.out);
	cr_expect(strstr(r.out, "\"command\": [\n      \"sleep\""), "%s", r.out);
	cr_expect(strstr(r.out, "\"streams\": [\n    {\n      \"file\": \"cpu0.pt\",\n"
			  "      \"sideband\": \"cpu0.pevent\",\n      \"cpu\": 0,\n      \"tid\": -1,"),
		  "-C 0: one stream, CPU 0's: %s", r.out);
	run_free(&r);
}

Test(record_input, existing_output_is_refused_without_force)
{
	char dir[] = "/tmp/ptc-input-XXXXXX";
	struct oracle_env oe;
	char **env = oracle_fixture_env(&oe, "skylake");
	struct run_result r;

	cr_assert(mkdtemp(dir));
	cr_assert_eq(run_ptcollect(env, &r, "record", "--dry-run", "-o", dir, "--", "true", NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "exists already") && strstr(r.err, "--force"), "%s", r.err);
	run_free(&r);
	cr_assert_eq(run_ptcollect(env, &r, "record", "--dry-run", "--force", "-o", dir, "--",
				   "true", NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	rmdir(dir);
}

Test(record_input, fixture_sysfs_is_refused_for_a_real_recording)
{
	struct oracle_env oe;
	char **env = oracle_fixture_env(&oe, "skylake");
	struct run_result r;

	cr_assert_eq(run_ptcollect(env, &r, "record", "-o", "/tmp/ptc-dry-run-never-created", "--", "true",
				   NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "PTCOLLECT_SYSFS") && strstr(r.err, "--dry-run"), "%s", r.err);
	run_free(&r);
}

Test(record_input, dry_run_json_has_the_documented_fields)
{
	struct oracle_env oe;
	char **env = oracle_fixture_env(&oe, "skylake");
	struct run_result r;

	cr_assert_eq(run_ptcollect(env, &r, "record", "--dry-run", "--json", "-o",
				   "/tmp/ptc-dry-run-never-created", "--", "true", NULL), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "\"pmu\": {\n    \"name\": \"intel_pt\",\n    \"type\": 50"), "%s",
		  r.out);
	cr_expect(strstr(r.out, "\"config\": \"0x300e601\""), "%s", r.out);
	cr_expect(strstr(r.out, "\"exclude_user\": false"), "%s", r.out);
	cr_expect(strstr(r.out, "\"exclude_kernel\": true"), "%s", r.out);
	cr_expect(strstr(r.out, "\"filter\": null"), "%s", r.out);
	run_free(&r);
	/* --json after the command and before it print the same. */
	cr_assert_eq(run_ptcollect(env, &r, "--json", "record", "--dry-run", "-o",
				   "/tmp/ptc-dry-run-never-created", "--", "true", NULL), 0);
	cr_expect(strstr(r.out, "\"config\": \"0x300e601\""), "%s", r.out);
	run_free(&r);
}

/* What a recording would refuse, the dry run refuses with the same words. */
Test(plan, dry_run_refuses_force_over_a_file_and_a_link_and_the_working_directory)
{
	char dir[] = "/tmp/ptc-plan-XXXXXX", file[128], link[128], slash[130];
	struct oracle_env oe;
	char **env = oracle_fixture_env(&oe, "skylake");
	struct run_result r;
	FILE *f;

	cr_assert(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/notes.txt", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	snprintf(slash, sizeof(slash), "%s/", link);
	f = fopen(file, "w");
	fputs("mine\n", f);
	fclose(f);
	cr_assert_eq(symlink(dir, link), 0);
	cr_assert_eq(run_ptcollect(env, &r, "record", "--dry-run", "--force", "-o", file, "--",
				   "true", NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "not a directory") && strstr(r.err, "only replaces a ptcollect "
		  "bundle"), "%s", r.err);
	run_free(&r);
	/* "LINK/" must not reach through the link to the directory behind it. */
	cr_assert_eq(run_ptcollect(env, &r, "record", "--dry-run", "--force", "-o", slash, "--",
				   "true", NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "a symbolic link"), "%s", r.err);
	run_free(&r);
	/* A directory that holds a file named manifest.json is not a bundle for that. */
	snprintf(file, sizeof(file), "%s/manifest.json", dir);
	f = fopen(file, "w");
	fputs("{\"format\": \"something else\"}\n", f);
	fclose(f);
	cr_assert_eq(run_ptcollect(env, &r, "record", "--dry-run", "--force", "-o", dir, "--",
				   "true", NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "not a ptcollect bundle"), "%s", r.err);
	run_free(&r);
	cr_assert_eq(run_ptcollect(env, &r, "record", "--dry-run", "--force", "-o", ".", "--",
				   "true", NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "not an existing one such as the working directory"), "%s", r.err);
	run_free(&r);
	unlink(file);
	snprintf(file, sizeof(file), "%s/notes.txt", dir);
	cr_expect_eq(access(file, F_OK), 0, "nothing was removed");
	unlink(file);
	unlink(link);
	rmdir(dir);
}

Test(plan, a_zombie_is_no_process)
{
	struct oracle_env oe;
	char **env = oracle_fixture_env(&oe, "skylake");
	struct run_result r;
	char pid[16];
	pid_t child = fork();

	if (child == 0)
		_exit(0);
	cr_assert_gt(child, 0);
	cr_assert(run_poll(child, run_proc_state, "Z", 30), "%d is a zombie: exited, not reaped",
		  (int)child);
	snprintf(pid, sizeof(pid), "%d", (int)child);
	cr_assert_eq(run_ptcollect(env, &r, "record", "--dry-run", "-p", pid, "-o",
				   "/tmp/ptc-dry-run-never-created", NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "no such process"), "%s", r.err);
	run_free(&r);
	waitpid(child, NULL, 0);
}

Test(plan, the_command_is_found_as_execvp_finds_it)
{
	struct oracle_env oe;
	char *env[] = { NULL, "PATH=/nonexistent-bin", NULL };
	struct run_result r;

	env[0] = oracle_fixture_env(&oe, "skylake")[0];
	cr_assert_eq(run_ptcollect(env, &r, "record", "--dry-run", "-o",
				   "/tmp/ptc-dry-run-never-created", "--", "true", NULL), 0);
	cr_expect_eq(r.status, 2, "%s", r.err);
	cr_expect(strstr(r.err, "cannot execute 'true': command not found in PATH"), "%s", r.err);
	run_free(&r);
	/* Without PATH, execvp searches confstr(_CS_PATH): /bin first. */
	env[1] = "PATH=";
	cr_assert_eq(run_ptcollect(env, &r, "record", "--dry-run", "--json", "-o",
				   "/tmp/ptc-dry-run-never-created", "--", "true", NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "\"exec\": \"/bin/true\""), "%s", r.out);
	run_free(&r);
}

Test(plan, global_json_is_an_option_before_the_command_only)
{
	char dir[] = "/tmp/ptc-plan-XXXXXX", out[64];
	struct oracle_env oe;
	char **env = oracle_fixture_env(&oe, "skylake");
	struct run_result r;

	cr_assert(mkdtemp(dir));
	cr_assert_eq(chdir(dir), 0);
	/* -o takes "-j" as its value: JSON stays off and the directory is named -j. */
	cr_assert_eq(run_ptcollect(env, &r, "record", "--dry-run", "-o", "-j", "--", "true",
				   NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(r.out[0] != '{', "JSON was turned on: %s", r.out);
	cr_expect(strstr(r.out, "path: -j"), "%s", r.out);
	run_free(&r);
	cr_assert_eq(run_ptcollect(env, &r, "--bogus", "caps", NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "unknown option '--bogus'"), "%s", r.err);
	run_free(&r);
	cr_assert_eq(run_ptcollect(env, &r, "record", "--dry-run", "-o", NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "option '-o' needs a value"), "%s", r.err);
	run_free(&r);
	snprintf(out, sizeof(out), "%s", dir);
	cr_assert_eq(chdir("/"), 0);
	rmdir(out);
}

/*
 * The locked-memory budget counts every ring the recording opens: with
 * --per-thread, one per thread of -p, not one per process.
 */
Test(plan, the_mlock_budget_counts_one_ring_per_thread_with_per_thread)
{
	char script[1024], pid[16];
	char *argv[] = { "sh", "-c", script, NULL };
	struct oracle_env oe;
	char **env = oracle_fixture_env(&oe, "skylake");
	char *spawner = run_testprog("spawner");
	char *sargv[] = { spawner, "40", "1", "stdin", NULL };
	struct run_child sp;
	struct run_result r;
	pid_t child;

	/* A line starts its threads, "started" says all 40 run; it lives until stdin closes. */
	cr_assert_eq(run_start(sargv, &sp), 0);
	child = sp.pid;
	cr_assert_eq(write(sp.in, "go\n", 3), 3);
	cr_assert_eq(run_wait_line(&sp, "started", 60), 0, "spawner's 40 threads started");
	snprintf(pid, sizeof(pid), "%d", (int)child);
	/* Without CAP_IPC_LOCK and with a 1 MiB RLIMIT_MEMLOCK, root has a budget too. */
	snprintf(script, sizeof(script),
		 "ulimit -l 1024; exec setpriv --inh-caps=-ipc_lock --bounding-set=-ipc_lock "
		 "'%s' record --dry-run -m 64K,64K -p %s -o /tmp/ptc-dry-run-never-created",
		 run_bin(), pid);
	cr_assert_eq(run_argv(argv, env, &r), 0);
	if (strstr(r.err, "setpriv:"))
		cr_skip_test("setpriv cannot drop CAP_IPC_LOCK here: %s", r.err);
	cr_expect_eq(r.status, 0, "per CPU: 4 rings fit: %s", r.err);
	run_free(&r);
	snprintf(script, sizeof(script),
		 "ulimit -l 1024; exec setpriv --inh-caps=-ipc_lock --bounding-set=-ipc_lock "
		 "'%s' record --dry-run -m 64K,64K --per-thread -p %s "
		 "-o /tmp/ptc-dry-run-never-created", run_bin(), pid);
	cr_assert_eq(run_argv(argv, env, &r), 0);
	cr_expect_eq(r.status, 2, "%s", r.err);
	cr_expect(strstr(r.err, "41 ring(s) of 64 KiB data + 64 KiB AUX"), "%s", r.err);
	cr_expect(strstr(r.err, "hint: use smaller rings"), "%s", r.err);
	run_free(&r);
	cr_expect_eq(run_end(&sp, 30), 0, "spawner ends when its stdin closes");
	free(spawner);
}

/* perf sets pt=1 whatever the spelling; ptcollect computes the same config and says so. */
Test(record_input, pt_0_becomes_pt_1_as_perf_sets_it_with_a_warning)
{
	struct oracle_env oe;
	char **env = oracle_fixture_env(&oe, "skylake");
	struct run_result r;

	cr_assert_eq(run_ptcollect(env, &r, "record", "--dry-run", "--json", "-e",
				   "intel_pt/pt=0,branch=0/u", "-o", "/tmp/ptc-dry-run-never-created",
				   "--", "true", NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "\"config\": \"0x300c601\""), "pt (bit 0) set: %s", r.out);
	cr_expect(strstr(r.err, "warning: record: -e intel_pt/pt=0,branch=0/u: ") &&
		  strstr(r.err, "using pt=1"), "%s", r.err);
	run_free(&r);
}

Test(plan, a_long_option_missing_its_value_is_named)
{
	struct run_result r;

	cr_assert_eq(run_ptcollect(NULL, &r, "dump", "--format", NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "option '--format' needs a value"), "%s", r.err);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "record", "--duration", NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "option '--duration' needs a value"), "%s", r.err);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "record", "--no-such=3", NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "unknown option '--no-such'"), "%s", r.err);
	run_free(&r);
}

// SPDX-License-Identifier: MIT
/*
 * Issue 17 on the host: what an adversarial pass found wrong, each with the
 * words and exit status a user must see now. The recording side (a real
 * --force, permissions of a real bundle, a full disk, signals, threads) runs
 * in the kernel rig: tests/kernel/cases/8*.sh.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bundle.h"
#include "decoders.h"
#include "manifest.h"
#include "oracle.h"
#include "run.h"
#include "sideband.h"
#include "suitewatch.h"
#include "tempfile.h"
#include "testbundle.h"
#include "user.h"
#include "workload.h"

/* Against a real hang only: the suite's slowest test takes seconds on a loaded machine. */
SUITEWATCH(watchdog, 300)

TestSuite(safety, .init = watchdog);

/* Run ptcollect with @args as `sh -c` runs it with @redir (">/dev/full", ">&-"). */
static void run_redirected(char **env, const char *redir, char *const args[],
			   struct run_result *r)
{
	char script[64], *argv[24];
	int n = 0;

	snprintf(script, sizeof(script), "exec \"$0\" \"$@\" %s", redir);
	argv[n++] = "sh";
	argv[n++] = "-c";
	argv[n++] = script;
	argv[n++] = (char *)run_bin();
	for (int i = 0; args[i] && n < 23; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	cr_assert_eq(run_argv(argv, env, r), 0);
}

static char *make_dir(void)
{
	char *d = strdup("/tmp/ptc-safety-XXXXXX");

	cr_assert(mkdtemp(d));
	return d;
}

/* ---- 1: info quotes a directory of any name, whatever it costs ------------------ */

/* @dir/cpu0's ptxed line from info --json, malloc'd. */
static char *info_ptxed_line(const char *dir)
{
	struct run_result r;
	json_error_t je;
	json_t *j, *line;
	char *s;

	cr_assert_eq(run_ptcollect(NULL, &r, "info", "--json", dir, NULL), 0);
	cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	j = json_loads(r.out, 0, &je);
	cr_assert(j, "info --json printed no JSON (%s): %.300s", je.text, r.out);
	line = json_object_get(json_array_get(json_object_get(j, "streams"), 0), "ptxed");
	cr_assert(json_is_string(line), "no ptxed line: %.300s", r.out);
	s = strdup(json_string_value(line));
	json_decref(j);
	run_free(&r);
	return s;
}

Test(safety, info_quotes_a_directory_name_of_2000_quotes_exactly)
{
	char *top = make_dir(), path[4096], *line, **want;
	char *argv[] = { "sh", "-c", "eval \"set -- $1\"; printf '%s\\n' \"$@\"", "sh", NULL, NULL };
	struct perf_event_mmap_page pc = { .cap_user_time_zero = 1, .time_zero = 1 };
	struct error e = { 0 };
	struct run_result r;
	struct manifest m;
	size_t n = strlen(top);
	char *p;
	int fd;

	/* Eight directories of 250 quotes: each costs 4 bytes quoted, 8000 per path. */
	memcpy(path, top, n + 1);
	for (int d = 0; d < 8; d++) {
		path[n++] = '/';
		memset(path + n, '\'', 250);
		n += 250;
		path[n] = '\0';
		cr_assert_eq(mkdir(path, 0700), 0, "%s", strerror(errno));
	}
	snprintf(path + n, sizeof(path) - n, "/it's a \"bundle\" $HOME `id` \\ ;");
	testbundle_write(path, &pc, true);
	line = info_ptxed_line(path);
	cr_expect_gt(strlen(line), 3 * 8000, "the line is %zu bytes", strlen(line));
	/* The shell reads it back as exactly the arguments the decoder needs. */
	argv[4] = line;
	cr_assert_eq(run_argv(argv, NULL, &r), 0);
	fd = open(path, O_RDONLY | O_DIRECTORY);
	cr_assert_eq(manifest_read(fd, path, &m, &e), 0, "%s", e.why);
	close(fd);
	want = decoder_argv(&m, path, 0, DECODER_PTXED);
	cr_assert(want);
	p = r.out;
	for (char **w = want; *w; w++) {
		size_t len = strlen(*w);

		cr_assert(!strncmp(p, *w, len) && p[len] == '\n', "argument %td differs:\nwant %s\n"
			  "got  %.300s", w - want, *w, p);
		p += len + 1;
	}
	cr_expect_str_empty(p, "more arguments than the decoder's: %.300s", p);
	decoder_argv_free(want);
	manifest_free(&m);
	run_free(&r);
	free(line);
	testbundle_remove(top);
	free(top);
}

/* ---- 9: a result that does not reach stdout is a failure ----------------------- */

/*
 * Issue 22's 17: stdout a pipe whose read end is closed already, as descriptor
 * 9 (">&9" in run_redirected), and SIGPIPE's default action, as a shell gives
 * it: a broken pipe is the third way a result does not reach stdout.
 */
static int broken_pipe_on_9(int *saved)
{
	int p[2];

	signal(SIGPIPE, SIG_DFL);
	*saved = fcntl(9, F_DUPFD_CLOEXEC, 10);
	cr_assert_eq(pipe(p), 0);
	close(p[0]);
	if (p[1] != 9) {
		cr_assert_eq(dup2(p[1], 9), 9);
		close(p[1]);
	}
	return 9;
}

static void restore_9(int saved)
{
	close(9);
	if (saved >= 0) {
		dup2(saved, 9);
		close(saved);
	}
}

struct out_case {
	char name[16];
	char args[6][96];	/* @P: a program, @B: a bundle, @S: a .pevent, @T: a .pt, @F: fixture,
				   @H: hase's perf.data, @N: a new name (removed after each run) */
};

static struct out_case out_cases[] = {
	{ "symbols", { "symbols", "@P" } },
	{ "symbols-json", { "symbols", "--json", "@P" } },
	{ "caps-json", { "@F", "caps", "--json" } },
	{ "info", { "info", "@B" } },
	{ "info-json", { "info", "--json", "@B" } },
	{ "dump-pt", { "dump", "@T" } },
	{ "dump-pevent", { "dump", "@S" } },
	{ "dry-run", { "@F", "record", "--dry-run", "-o", "/tmp/ptc-dry-run-never-created", "--" } },
	{ "dry-run-json", { "@F", "record", "--dry-run", "--json", "-o",
			    "/tmp/ptc-dry-run-never-created" } },
	{ "decode-stats", { "decode", "--stats", "@B" } },
	{ "archive", { "archive", "@B" } },
	{ "help", { "help" } },
	{ "help-record", { "help", "record" } },
	{ "version", { "--version" } },
	{ "import", { "import", "@H", "@N" } },
};

ParameterizedTestParameters(safety, every_command_exits_1_once_when_stdout_is_full_closed_or_a_broken_pipe)
{
	return cr_make_param_array(struct out_case, out_cases,
				   sizeof(out_cases) / sizeof(out_cases[0]));
}

/* A .pevent of one COMM record named @comm (libipt's layout, sample_type 0x10086). */
static char *comm_pevent(const char *comm)
{
	uint8_t rec[128] = { 0 };
	size_t clen = (strlen(comm) + 1 + 7) & ~(size_t)7, size = 8 + 8 + clen + 32;
	struct perf_event_header h = { .type = PERF_RECORD_COMM, .size = (uint16_t)size };
	uint32_t ids[2] = { 42, 42 };

	cr_assert_leq(size, sizeof(rec));
	memcpy(rec, &h, sizeof(h));
	memcpy(rec + 8, ids, sizeof(ids));
	memcpy(rec + 16, comm, strlen(comm));
	memcpy(rec + 16 + clen, ids, sizeof(ids));	/* sample_id: pid/tid, time, cpu, id */
	return temp_file(".pevent", rec, size);
}

/* A .pt of PSB, PSBEND and 64 PADs: 67 packets. */
static char *psb_pt(void)
{
	uint8_t pt[16 + 2 + 64] = { 0 };

	for (int i = 0; i < 16; i += 2)
		pt[i] = 0x02, pt[i + 1] = 0x82;
	pt[16] = 0x02;
	pt[17] = 0x23;
	return temp_file(".pt", pt, sizeof(pt));
}

ParameterizedTest(struct out_case *c, safety,
		  every_command_exits_1_once_when_stdout_is_full_closed_or_a_broken_pipe)
{
	static const char *const redirs[] = { ">/dev/full", ">&-", ">&9" };
	struct perf_event_mmap_page pc = { .cap_user_time_zero = 1 };
	char *dir = testbundle_dir(), *prog = run_testprog("filtertarget"), *sb, *pt;
	char *hase = NULL;
	char *args[8], paths[6][4200], **env = NULL, fresh[4200] = "";
	struct oracle_env oe;
	int n = 0;

	testbundle_write(dir, &pc, true);
	sb = comm_pevent("worker");
	pt = psb_pt();
	for (int i = 0; i < 6 && c->args[i][0]; i++) {
		const char *a = c->args[i];

		if (!strcmp(a, "@F")) {
			env = oracle_fixture_env(&oe, "skylake");
			continue;
		}
		if (!strcmp(a, "@H") && !hase)
			hase = run_shared("traces/hase-loopy-skylake/perf.data");
		if (!strcmp(a, "@N"))
			snprintf(fresh, sizeof(fresh), "%s.new", dir);
		if (a[0] == '@')
			snprintf(paths[i], sizeof(paths[i]), "%s%s", a[1] == 'P' ? prog :
				 a[1] == 'H' ? hase : a[1] == 'N' ? fresh :
				 a[1] == 'S' ? sb : a[1] == 'T' ? pt : dir, a + 2);
		else
			snprintf(paths[i], sizeof(paths[i]), "%s", a);
		args[n++] = paths[i];
	}
	if (!strcmp(c->name, "dry-run") || !strcmp(c->name, "dry-run-json"))
		args[n++] = "true";
	args[n] = NULL;
	for (int i = 0; i < 3; i++) {
		struct run_result r;
		const char *said;
		int saved = -1;

		if (i == 2)
			broken_pipe_on_9(&saved);
		run_redirected(env, redirs[i], args, &r);
		if (i == 2)
			restore_9(saved);
		cr_expect_eq(r.status, 1, "%s %s: exit %d, expected 1; stderr:\n%s", c->name,
			     redirs[i], r.status, r.err);
		said = strstr(r.err, "cannot write the results to standard output");
		cr_expect(said, "%s %s: stderr does not say so:\n%s", c->name, redirs[i], r.err);
		cr_expect(!said || !strstr(said + 1, "cannot write the results"),
			  "%s %s: said more than once:\n%s", c->name, redirs[i], r.err);
		run_free(&r);
		if (fresh[0] && !access(fresh, F_OK))
			testbundle_remove(fresh);
	}
	free(hase);
	unlink(sb);
	unlink(pt);
	free(sb);
	free(pt);
	free(prog);
	testbundle_remove(dir);
	free(dir);
}

/* ---- 10: no raw control character reaches a terminal ----------------------------- */

static bool has_raw_control(const char *s)
{
	for (; *s; s++)
		if (((unsigned char)*s < 0x20 && *s != '\n' && *s != '\r') || *s == 0x7f)
			return true;
	return false;
}

Test(safety, dump_escapes_a_comm_on_a_terminal_and_stays_raw_through_a_pipe)
{
	char *sb = comm_pevent("\033]2;owned\007x"), cmd[4300];
	char *argv[] = { "script", "-qec", cmd, "/dev/null", NULL };
	struct run_result r;

	snprintf(cmd, sizeof(cmd), "%s dump %s", run_bin(), sb);
	cr_assert_eq(run_argv(argv, NULL, &r), 0);
	if (r.status == 127 || strstr(r.err, "script:"))
		cr_skip_test("script(1) cannot give the command a terminal here: %s", r.err);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "PERF_RECORD_COMM"), "%s", r.out);
	cr_expect(!has_raw_control(r.out), "a raw control character reached the terminal:\n%s",
		  r.out);
	cr_expect(strstr(r.out, "\\x1b]2;owned\\x07x"), "the COMM is not shown escaped:\n%s", r.out);
	run_free(&r);
	/* Through a pipe the line is ptdump's, byte for byte. */
	cr_assert_eq(run_ptcollect(NULL, &r, "dump", sb, NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "\033]2;owned\007x"), "%s", r.out);
	run_free(&r);
	unlink(sb);
	free(sb);
}

Test(safety, info_escapes_the_manifests_strings)
{
	static char *cmd[] = { "/bin/evil\033[2J\033]0;title\007", "arg\nline" };
	struct perf_event_mmap_page pc = { .cap_user_time_zero = 1 };
	char *dir = testbundle_dir();
	struct run_result r;
	struct manifest m;

	testbundle_describe(&m, &pc);
	cr_assert_eq(manifest_set_argv(&m.target.command, &m.target.command_argc, cmd, 2), 0);
	cr_assert_eq(manifest_set(&m.event, "intel_pt//u\033[31m"), 0);
	testbundle_write_manifest(dir, &m, false);
	cr_assert_eq(run_ptcollect(NULL, &r, "info", dir, NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(!has_raw_control(r.out), "raw control characters in:\n%s", r.out);
	cr_expect(strstr(r.out, "/bin/evil\\x1b[2J\\x1b]0;title\\x07"), "%s", r.out);
	cr_expect(strstr(r.out, "arg\\nline"), "a newline in a string is shown as \\n: %s", r.out);
	cr_expect(strstr(r.out, "intel_pt//u\\x1b[31m"), "%s", r.out);
	cr_expect(!has_raw_control(r.err), "raw control characters in:\n%s", r.err);
	run_free(&r);
	/* JSON escapes them its own way. */
	cr_assert_eq(run_ptcollect(NULL, &r, "info", "--json", dir, NULL), 0);
	cr_expect(strstr(r.out, "/bin/evil\\u001B[2J\\u001B]0;title\\u0007"), "%s", r.out);
	run_free(&r);
	testbundle_remove(dir);
	free(dir);
}

Test(safety, an_event_string_is_escaped_in_the_error)
{
	struct oracle_env oe;
	char **env = oracle_fixture_env(&oe, "skylake");
	struct run_result r;

	cr_assert_eq(run_ptcollect(env, &r, "record", "--dry-run", "-e",
				   "intel_pt/\033[2J\033]0;x\007/u", "-o",
				   "/tmp/ptc-dry-run-never-created", "--", "true", NULL), 0);
	cr_expect_eq(r.status, 2, "%s", r.err);
	cr_expect(!has_raw_control(r.err), "raw control characters in:\n%s", r.err);
	cr_expect(strstr(r.err, "intel_pt/\\x1b[2J\\x1b]0;x\\x07/u"), "%s", r.err);
	run_free(&r);
}

/* ---- 11: the right words ---------------------------------------------------------------- */

struct words_case {
	char name[24];
	char args[6][64];	/* @F: the skylake fixture; @O: CPU 1 offline; @E: a corrupt ELF */
	char says[2][96];
};

static struct words_case words_cases[] = {
	{ "missing-e", { "@F", "record", "--dry-run", "-e" }, { "option '-e' needs a value" } },
	{ "missing-o", { "@F", "record", "-o" }, { "option '-o' needs a value" } },
	{ "missing-long", { "@F", "record", "--duration" }, { "option '--duration' needs a value" } },
	{ "missing-dump", { "dump", "--format" }, { "option '--format' needs a value" } },
	{ "flag-value", { "@F", "record", "--force=1" }, { "option '--force' takes no value" } },
	{ "unknown-in-cluster", { "@F", "record", "--force", "-zq" }, { "unknown option '-z'" } },
	{ "max-size-1T", { "@F", "record", "--dry-run", "--max-size", "1T", "--" },
	  { "--max-size: '1T' is not a size", "K, M or G" } },
	{ "duration-hex", { "@F", "record", "--dry-run", "--duration", "0x10", "--" },
	  { "--duration: '0x10' is not a duration", "decimal" } },
	{ "duration-exp", { "@F", "record", "--dry-run", "--duration", "1e3", "--" },
	  { "--duration: '1e3' is not a duration" } },
	{ "cpu-offline", { "@O", "record", "--dry-run", "-C", "1", "--" },
	  { "-C: CPU 1 is not online (online: 0,2-3)" } },
	{ "elf-symbols", { "symbols", "@E" }, { "a corrupt ELF file", "past the end of the file" } },
	{ "elf-filter", { "@F", "record", "--dry-run", "--filter", "filter main @ @E", "--" },
	  { "a corrupt ELF file", "--filter" } },
};

ParameterizedTestParameters(safety, bad_input_gets_the_right_words)
{
	return cr_make_param_array(struct words_case, words_cases,
				   sizeof(words_cases) / sizeof(words_cases[0]));
}

/* A copy of the skylake fixture where CPU 1 is offline. */
static char *offline_fixture(void)
{
	char *dir = make_dir(), *src = oracle_fixture("skylake"), cmd[8400];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "cp -a '%s/.' '%s/'", src, dir);
	cr_assert_eq(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/devices/system/cpu/online", dir);
	f = fopen(cmd, "w");
	cr_assert(f);
	fputs("0,2-3\n", f);
	fclose(f);
	free(src);
	return dir;
}

/* filtertarget cut before its section headers. */
static char *corrupt_elf(void)
{
	char *prog = run_testprog("filtertarget"), *buf, *path;
	struct stat st;
	int fd = open(prog, O_RDONLY);

	cr_assert_geq(fd, 0);
	cr_assert_eq(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size);
	cr_assert_eq(read(fd, buf, (size_t)st.st_size), st.st_size);
	close(fd);
	path = temp_file(".elf", buf, (size_t)st.st_size * 3 / 4);
	free(buf);
	free(prog);
	return path;
}

ParameterizedTest(struct words_case *c, safety, bad_input_gets_the_right_words)
{
	char *argv[16], *fixture = NULL, *elf = NULL, filter[160];
	struct oracle_env oe;
	struct run_result r;
	char **env = NULL;
	int n = 0;

	argv[n++] = (char *)run_bin();
	for (int i = 0; i < 6 && c->args[i][0]; i++) {
		char *a = c->args[i], *at = strstr(a, "@E");

		if (!strcmp(a, "@F")) {
			env = oracle_fixture_env(&oe, "skylake");
		} else if (!strcmp(a, "@O")) {
			fixture = offline_fixture();
			env = oracle_sysfs_env(&oe, fixture);
		} else if (at) {
			elf = elf ? elf : corrupt_elf();
			snprintf(filter, sizeof(filter), "%.*s%s%s", (int)(at - a), a, elf, at + 2);
			argv[n++] = filter;
		} else {
			argv[n++] = a;
		}
	}
	if (!strcmp(argv[n - 1], "--"))
		argv[n++] = "true";
	argv[n] = NULL;
	cr_assert_eq(run_argv(argv, env, &r), 0);
	cr_expect_eq(r.status, 2, "%s: exit %d; stderr:\n%s", c->name, r.status, r.err);
	for (int i = 0; i < 2 && c->says[i][0]; i++)
		cr_expect(strstr(r.err, c->says[i]), "%s: stderr lacks \"%s\":\n%s", c->name,
			  c->says[i], r.err);
	cr_expect_str_empty(r.out, "%s: stdout: %s", c->name, r.out);
	run_free(&r);
	if (elf)
		unlink(elf);
	if (fixture)
		testbundle_remove(fixture);
	free(elf);
	free(fixture);
}

/* A version past 64 bits, at the edge, negative, or real: each named as it was written. */
Test(safety, a_huge_manifest_version_is_named_as_it_is)
{
	static const char *const cases[][2] = {
		{ "18446744073709551616", "not valid JSON: line 1, column 62: too big integer near "
		  "'18446744073709551616'" },
		{ "9223372036854775807", "manifest version 9223372036854775807; this ptcollect reads "
		  "version" },
		{ "-1", "manifest version -1; this ptcollect reads version" },
		{ "1e3", "\"version\" is a real number, not an integer" },
	};
	char *dir = make_dir(), path[128];
	struct run_result r;
	FILE *f;

	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		f = fopen(path, "w");
		cr_assert(f);
		fprintf(f, "{\"format\": \"ptcollect-bundle\", \"version\": %s}\n", cases[i][0]);
		fclose(f);
		cr_assert_eq(run_ptcollect(NULL, &r, "info", dir, NULL), 0);
		cr_expect_eq(r.status, 2, "%s", r.err);
		cr_expect(strstr(r.err, cases[i][1]), "version %s: stderr lacks \"%s\":\n%s",
			  cases[i][0], cases[i][1], r.err);
		run_free(&r);
	}
	testbundle_remove(dir);
	free(dir);
}

/* The budget in the error, and the AUX size the hint suggests, in KiB. */
static void parse_fit(const char *err, uint64_t *budget_kb, uint64_t *hint_kb, int *rings)
{
	const char *b = strstr(err, "this user may lock "), *h = strstr(err, "-m ,");
	unsigned long long v;

	cr_assert(b && h, "%s", err);
	cr_assert_eq(sscanf(b, "this user may lock %llu KiB", &v), 1);
	*budget_kb = v;
	cr_assert_eq(sscanf(h, "-m ,%lluK fits", &v), 1, "%s", err);
	*hint_kb = v;
	cr_assert_eq(sscanf(strstr(err, "-m: ") + 4, "%d ring(s)", rings), 1, "%s", err);
}

Test(safety, the_suggested_aux_size_fits_the_budget)
{
	char script[1024];
	char *argv[] = { "sh", "-c", script, NULL };
	struct oracle_env oe;
	char **env = oracle_fixture_env(&oe, "skylake");
	uint64_t budget, hint, page = (uint64_t)sysconf(_SC_PAGESIZE);
	struct run_result r;
	int rings;

	snprintf(script, sizeof(script),
		 "ulimit -l 1024; exec setpriv --inh-caps=-ipc_lock --bounding-set=-ipc_lock "
		 "'%s' record --dry-run -m ,4294967296 -o /tmp/ptc-dry-run-never-created -- true",
		 run_bin());
	cr_assert_eq(run_argv(argv, env, &r), 0);
	if (strstr(r.err, "setpriv:"))
		cr_skip_test("setpriv cannot drop CAP_IPC_LOCK here: %s", r.err);
	cr_expect_eq(r.status, 2, "%s", r.err);
	parse_fit(r.err, &budget, &hint, &rings);
	/* The rings with the suggested AUX size (256 KiB data, a control page) fit. */
	cr_expect_gt(hint, 0);
	cr_expect_leq((uint64_t)rings * (256 + hint + page / 1024), budget,
		      "%d ring(s) of 256 KiB + %" PRIu64 " KiB do not fit in %" PRIu64 " KiB: %s",
		      rings, hint, budget, r.err);
	run_free(&r);
}

/* ---- 12: rings larger than the machine ------------------------------------------- */

Test(safety, root_is_refused_rings_larger_than_the_machines_memory)
{
	struct oracle_env oe;
	char **env = oracle_fixture_env(&oe, "skylake"), aux[32];
	unsigned long long kb = 0;
	struct run_result r;
	uint64_t size = 4096;
	char line[256];
	FILE *f = fopen("/proc/meminfo", "r");

	if (geteuid())
		cr_skip_test("only root has no locked-memory budget; the budget refuses it first");
	cr_assert(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	fclose(f);
	cr_assert_gt(kb, 0);
	/* One ring (-C 0) whose AUX area alone is larger than what is available. */
	while (size <= (uint64_t)kb * 1024)
		size *= 2;
	snprintf(aux, sizeof(aux), ",%" PRIu64 "K", size >> 10);
	cr_assert_eq(run_ptcollect(env, &r, "record", "--dry-run", "-C", "0", "-m", aux, "-o",
				   "/tmp/ptc-dry-run-never-created", NULL), 0);
	cr_expect_eq(r.status, 2, "-m %s with %llu kB available: exit %d\n%s", aux, kb, r.status,
		     r.err);
	cr_expect(strstr(r.err, "KiB of memory, but this machine has"), "%s", r.err);
	cr_expect(strstr(r.err, "hint: use smaller rings (-m ,"), "%s", r.err);
	run_free(&r);
}

/* ---- 2, 3, 6: the bundle's own rules, through its code ---------------------------- */

static void expect_mode(const char *dir, const char *name, mode_t want)
{
	char path[4200];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	cr_assert_eq(lstat(path, &st), 0, "%s: %s", path, strerror(errno));
	cr_expect_eq(st.st_mode & 07777, want, "%s is %04o, not %04o", name,
		     (unsigned int)(st.st_mode & 07777), (unsigned int)want);
}

Test(safety, a_bundle_is_private_whatever_the_umask)
{
	struct perf_event_mmap_page pc = { .cap_user_time_zero = 1 };
	char *dir = testbundle_dir(), link[4200], target[4200];
	struct error e = { 0 };
	struct bundle *b;
	int fd;

	umask(022);
	testbundle_write(dir, &pc, true);
	expect_mode(dir, ".", 0700);
	expect_mode(dir, "manifest.json", 0600);
	expect_mode(dir, "cpu0.pt", 0600);
	expect_mode(dir, "cpu1.pevent", 0600);
	testbundle_remove(dir);
	cr_assert_eq(bundle_create(&b, dir, false, &e), 0, "%s", e.why);
	cr_assert_eq(bundle_mkdir(b, BUNDLE_SYSROOT, &e), 0, "%s", e.why);
	fd = bundle_create_file(b, BUNDLE_VDSO, &e);
	cr_assert_geq(fd, 0, "%s", e.why);
	close(fd);
	expect_mode(dir, BUNDLE_SYSROOT, 0700);
	expect_mode(dir, BUNDLE_VDSO, 0600);
	/* A file is created new: a name already there (a planted link) is never followed. */
	snprintf(link, sizeof(link), "%s/" BUNDLE_PROC, dir);
	snprintf(target, sizeof(target), "%s.target", dir);
	cr_assert_eq(symlink(target, link), 0);
	cr_expect_eq(bundle_create_file(b, BUNDLE_PROC, &e), -EEXIST);
	cr_expect_neq(access(target, F_OK), 0, "the link was followed");
	bundle_free(b);
	testbundle_remove(dir);
	free(dir);
}

Test(safety, force_puts_the_old_bundle_back_when_nothing_was_recorded)
{
	struct perf_event_mmap_page pc = { .cap_user_time_zero = 1 };
	char *dir = testbundle_dir(), path[4200];
	struct error e = { 0 };
	struct bundle *b;
	int fd;

	testbundle_write(dir, &pc, true);
	cr_assert_eq(bundle_create(&b, dir, true, &e), 0, "%s", e.why);
	fd = bundle_create_file(b, "cpu0.pt", &e);
	cr_assert_geq(fd, 0, "%s", e.why);
	close(fd);
	bundle_discard(b);	/* the events did not open */
	bundle_free(b);
	snprintf(path, sizeof(path), "%s/cpu0.pt", dir);
	fd = open(path, O_RDONLY);
	cr_assert_geq(fd, 0);
	cr_expect_eq(lseek(fd, 0, SEEK_END), 4096, "the old recording is back, not the new file");
	close(fd);
	/* Once the recording began, the old one goes. */
	cr_assert_eq(bundle_create(&b, dir, true, &e), 0, "%s", e.why);
	cr_assert_eq(bundle_begun(b, &e), 0, "%s", e.why);
	bundle_free(b);
	cr_expect_neq(access(path, F_OK), 0, "the old cpu0.pt is gone");
	testbundle_remove(dir);
	free(dir);
}

/* ---- --user: root runs the workload as another user ---------------------------------- */

Test(safety, user_is_resolved_by_the_plan_and_refused_where_it_means_nothing)
{
	struct oracle_env oe;
	char **env = oracle_fixture_env(&oe, "skylake");
	char script[1024];
	char *argv[] = { "sh", "-c", script, NULL };
	struct run_result r;

	if (geteuid())
		cr_skip_test("--user is root's");
	cr_assert_eq(run_ptcollect(env, &r, "record", "--dry-run", "--json", "--user", "nobody",
				   "-o", "/tmp/ptc-dry-run-never-created", "--", "true", NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "\"user\": {\n      \"name\": \"nobody\",\n      \"uid\": 65534,"),
		  "%s", r.out);
	run_free(&r);
	cr_assert_eq(run_ptcollect(env, &r, "record", "--dry-run", "--user", "ptc-no-such-user",
				   "-o", "/tmp/ptc-dry-run-never-created", "--", "true", NULL), 0);
	cr_expect_eq(r.status, 2, "%s", r.err);
	cr_expect(strstr(r.err, "--user: no user 'ptc-no-such-user'"), "%s", r.err);
	run_free(&r);
	cr_assert_eq(run_ptcollect(env, &r, "record", "--dry-run", "--user", "nobody", "-p", "1",
				   "-o", "/tmp/ptc-dry-run-never-created", NULL), 0);
	cr_expect_eq(r.status, 2, "%s", r.err);
	cr_expect(strstr(r.err, "only a workload (-- COMMAND) runs as another user"), "%s", r.err);
	run_free(&r);
	snprintf(script, sizeof(script), "exec setpriv --reuid 65534 --regid 65534 --clear-groups "
		 "'%s' record --dry-run --user root -o /tmp/ptc-dry-run-never-created -- true",
		 run_bin());
	cr_assert_eq(run_argv(argv, env, &r), 0);
	if (strstr(r.err, "setpriv:"))
		cr_skip_test("setpriv cannot change the user here: %s", r.err);
	cr_expect_eq(r.status, 2, "%s", r.err);
	cr_expect(strstr(r.err, "only root can run the workload as another user"), "%s", r.err);
	run_free(&r);
}

/*
 * The workload module itself: held, released, and running as nobody with nobody's groups;
 * also when it is held at its exec for triggers (traced by root, then nobody's).
 */
static void become_nobody(bool hold)
{
	char dir[] = "/tmp/ptc-user-XXXXXX", out[64], cmd[128], line[128] = "";
	char *argv[] = { "sh", "-c", cmd, NULL };
	struct error e = { 0 };
	struct workload w;
	struct user u;
	sigset_t mask;
	FILE *f;

	if (geteuid())
		cr_skip_test("only root can become another user");
	cr_assert(mkdtemp(dir));
	cr_assert_eq(chmod(dir, 0777), 0);
	snprintf(out, sizeof(out), "%s/ids", dir);
	snprintf(cmd, sizeof(cmd), "echo $(id -u) $(id -g) $(id -G) >%s", out);
	cr_assert_eq(user_resolve("nobody", &u, &e), 0, "%s", e.why);
	sigemptyset(&mask);
	cr_assert_eq(workload_start(&w, "/bin/sh", argv, &mask, hold, &u, &e), 0, "%s", e.why);
	cr_assert_eq(workload_release(&w, "sh", &e), 0, "%s", e.why);
	cr_assert_eq(workload_run(&w, hold, &e), 0, "%s", e.why);
	/* Until it ends by itself (its one echo); a hang is the watchdog's, which says so. */
	suitewatch_awaiting("the workload's end (sh -c 'echo $(id -u) ... >ids')");
	while (!workload_reap(&w))
		usleep(1000);
	suitewatch_awaiting(NULL);
	cr_expect_eq(w.status, 0);
	f = fopen(out, "r");
	cr_assert(f, "the workload wrote nothing");
	cr_assert(fgets(line, sizeof(line), f));
	fclose(f);
	cr_expect_str_eq(line, "65534 65534 65534\n");
	workload_close(&w);
	unlink(out);
	rmdir(dir);
}

Test(safety, the_workload_becomes_the_user_before_its_exec)
{
	become_nobody(false);
}

Test(safety, a_workload_held_for_triggers_becomes_the_user_too)
{
	become_nobody(true);
}

/* ---- JSON of bytes that are not UTF-8 (found by fuzzing dump --json) ------------------ */

static json_t *parse_or_fail(const struct run_result *r, const char *what)
{
	json_error_t je;
	json_t *j = json_loads(r->out, 0, &je);

	cr_assert(j, "%s: exit %d, no JSON (%s): %.300s\n%s", what, r->status, je.text, r->out,
		  r->err);
	return j;
}

Test(safety, json_output_takes_names_that_are_not_utf8)
{
	struct perf_event_mmap_page pc = { .cap_user_time_zero = 1 };
	char *sb = comm_pevent("ab\xa8\xff"), dir[] = "/tmp/ptc-safety-XXXXXX", bundle[64];
	struct oracle_env oe;
	char **env = oracle_fixture_env(&oe, "skylake");
	struct run_result r;
	json_t *j;

	cr_assert_eq(run_ptcollect(NULL, &r, "dump", "--json", sb, NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	j = parse_or_fail(&r, "dump --json");
	cr_expect_str_eq(json_string_value(json_object_get(json_array_get(
		json_object_get(j, "records"), 0), "comm")), "ab\xef\xbf\xbd\xef\xbf\xbd");
	json_decref(j);
	run_free(&r);
	cr_assert_eq(run_ptcollect(env, &r, "record", "--dry-run", "--json", "-o",
				   "/tmp/ptc-dry-run-never-created", "--", "echo", "\xff", NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	json_decref(parse_or_fail(&r, "record --dry-run --json"));
	run_free(&r);
	cr_assert(mkdtemp(dir));
	snprintf(bundle, sizeof(bundle), "%s/b\xff", dir);
	testbundle_write(bundle, &pc, true);
	cr_assert_eq(run_ptcollect(NULL, &r, "info", "--json", bundle, NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	j = parse_or_fail(&r, "info --json");
	cr_expect(strstr(json_string_value(json_object_get(j, "bundle")), "/b\xef\xbf\xbd"));
	json_decref(j);
	run_free(&r);
	testbundle_remove(dir);
	unlink(sb);
	free(sb);
}

/* ---- descriptors: a thousand threads on every CPU need more than 1024 ------------------ */

Test(safety, the_plan_refuses_more_events_than_the_hard_descriptor_limit)
{
	char script[1024], pid[16];
	char *argv[] = { "sh", "-c", script, NULL };
	char *threads = run_testprog("threads");
	struct oracle_env oe;
	char **env = oracle_fixture_env(&oe, "skylake");
	struct run_result r;
	int out[2], in[2], st;
	char buf[4096];
	ssize_t n, got = 0;
	pid_t child;

	cr_assert_eq(pipe(out), 0);
	cr_assert_eq(pipe(in), 0);
	child = fork();
	if (child == 0) {
		dup2(out[1], 1);
		/* 40 threads that live until the test closes their stdin (in[1]). */
		dup2(in[0], 0);
		close(in[1]);
		execl(threads, threads, "sleep", "40", "stdin", (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	close(in[0]);
	while (!memmem(buf, (size_t)got, "ready\n", 6) && (n = read(out[0], buf + got,
		sizeof(buf) - 1 - (size_t)got)) > 0)
		got += n;
	cr_assert(memmem(buf, (size_t)got, "ready\n", 6), "threads sleep 40 stdin ended before "
		  "its ready line");
	snprintf(pid, sizeof(pid), "%d", (int)child);
	/* 41 threads on the fixture's 4 CPUs: 164 events, 8 files, 64 spare: 236 > 200. */
	snprintf(script, sizeof(script), "ulimit -n 200 && ulimit -Hn 200 && exec '%s' record "
		 "--dry-run -p %s -o /tmp/ptc-dry-run-never-created", run_bin(), pid);
	cr_assert_eq(run_argv(argv, env, &r), 0);
	cr_expect_eq(r.status, 2, "%s", r.err);
	cr_expect(strstr(r.err, "164 events and 4 ring(s) need 236 file descriptors, but "
			 "RLIMIT_NOFILE allows 200"), "%s", r.err);
	cr_expect(strstr(r.err, "--per-thread"), "%s", r.err);
	run_free(&r);
	/* One ring per thread needs fewer: 41 events and 82 files. */
	snprintf(script, sizeof(script), "ulimit -n 200 && ulimit -Hn 200 && exec '%s' record "
		 "--dry-run --per-thread -p %s -o /tmp/ptc-dry-run-never-created", run_bin(), pid);
	cr_assert_eq(run_argv(argv, env, &r), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	close(in[1]);
	cr_expect_eq(waitpid(child, &st, 0), child);
	cr_expect(WIFEXITED(st) && !WEXITSTATUS(st), "threads: status %#x", st);
	close(out[0]);
	free(threads);
}

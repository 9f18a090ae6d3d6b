// SPDX-License-Identifier: MIT
/*
 * Issue 22: hostile input and a hostile process state (a umask, a reader
 * that has gone, a mount inside an old bundle, a name that is the working
 * directory), each with the words and exit status a user must see now.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run.h"

#define HASE_DATA "../shared/traces/hase-loopy-skylake/perf.data"

static char *base;

static void make_base(void)
{
	base = strdup("/tmp/ptc-hostile-XXXXXX");
	cr_assert(mkdtemp(base));
}

static void remove_base(void)
{
	char *cmd;

	cr_assert(asprintf(&cmd, "rm -rf '%s'", base) > 0);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
	free(base);
}

TestSuite(hostile, .init = make_base, .fini = remove_base, .timeout = 60);

static char *in_base(const char *name)
{
	char *p;

	cr_assert(asprintf(&p, "%s/%s", base, name) > 0);
	return p;
}

/* `sh -c SCRIPT` with $0 = ptcollect and $1... = @args (NULL-terminated). */
static void sh_run(const char *script, const char *const *args, struct run_result *r)
{
	const char *argv[24] = { "sh", "-c", script, run_bin() };
	int n = 4;

	for (; args && *args && n < 23; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	cr_assert_eq(run_argv((char *const *)argv, NULL, r), 0);
}

/* The hase perf.data imported as @dir (no vdso: its decode has errors). */
static void import_hase(const char *dir)
{
	char *data = run_srcpath(HASE_DATA);
	struct run_result r;

	if (access(data, R_OK))
		cr_skip_test("%s is not here: the hase trace comes with ../shared", data);
	cr_assert_eq(run_ptcollect(NULL, &r, "import", data, dir, NULL), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	free(data);
}

static int count(const char *s, const char *what)
{
	int n = 0;

	for (; (s = strstr(s, what)); s++)
		n++;
	return n;
}

/* ---- 12: the bundle's modes are bundle(5)'s, whatever the umask -------------------------- */

static void expect_modes(const char *dir)
{
	struct run_result r;
	const char *args[] = { dir, NULL };

	/* Every directory 0700, every file 0600: find prints what is not. */
	sh_run("find \"$1\" \\( -type d ! -perm 0700 \\) -o \\( -type f ! -perm 0600 \\) "
	       "-printf '%m %p\\n'", args, &r);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect_str_empty(r.out, "modes that are not 0700/0600:\n%s", r.out);
	run_free(&r);
}

Test(hostile, the_bundle_is_0700_and_0600_whatever_the_umask)
{
	static const char *const masks[] = { "0200", "0777", "0000", "0022" };
	char *data = run_srcpath(HASE_DATA);

	if (access(data, R_OK))
		cr_skip_test("%s is not here: the hase trace comes with ../shared", data);
	for (size_t i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
		char name[32], *dir, script[64];
		struct run_result r;
		const char *args[4];

		snprintf(name, sizeof(name), "umask-%s", masks[i]);
		dir = in_base(name);
		args[0] = data;
		args[1] = dir;
		args[2] = NULL;
		snprintf(script, sizeof(script), "umask %s; exec \"$0\" import \"$1\" \"$2\"",
			 masks[i]);
		sh_run(script, args, &r);
		cr_assert_eq(r.status, 0, "umask %s: %s", masks[i], r.err);
		run_free(&r);
		expect_modes(dir);
		free(dir);
	}
	free(data);
}

/* ---- 16: decode errors and a full stdout: exit 1, said --------------------------------- */

Test(hostile, decode_stats_to_a_full_stdout_with_decode_errors_exits_1_and_says_so)
{
	char *dir = in_base("hase");
	const char *args[] = { dir, NULL };
	struct run_result r;

	import_hase(dir);
	sh_run("exec \"$0\" decode -q \"$1\" --stats >/dev/full", args, &r);
	cr_expect_eq(r.status, 1, "exit %d: %s", r.status, r.err);
	cr_expect_eq(count(r.err, "cannot write the results to standard output"), 1, "%s",
		     r.err);
	run_free(&r);
	free(dir);
}

/* ---- 18: help -h is help on help --------------------------------------------------------- */

Test(hostile, help_h_and_help_help_show_helps_usage)
{
	static const char *const opts[] = { "-h", "--help", "help" };

	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		struct run_result r;

		cr_assert_eq(run_ptcollect(NULL, &r, "help", opts[i], NULL), 0);
		cr_expect_eq(r.status, 0, "help %s: exit %d: %s", opts[i], r.status, r.err);
		cr_expect(strstr(r.out, "usage: ptcollect help [COMMAND]"), "help %s: %s", opts[i],
			  r.out);
		cr_expect_str_empty(r.err, "help %s: %s", opts[i], r.err);
		run_free(&r);
	}
}

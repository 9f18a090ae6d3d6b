// SPDX-License-Identifier: MIT
/*
 * A FIFO named where a file is read (an ELF for symbols or a filter) is
 * refused at once as bad input: opening it must not wait for a writer, and
 * libelf must never read it. Each run is under timeout(1), so a hang fails
 * the test instead of hanging the suite.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "oracle.h"
#include "run.h"

#define LIMIT_S 5	/* timeout(1) kills the run after this */
#define QUICK_S 2.0	/* and a refusal takes far less */

struct fifo {
	char dir[32];
	char path[64];
};

static void make_fifo(struct fifo *f)
{
	snprintf(f->dir, sizeof(f->dir), "/tmp/ptc-fifo-XXXXXX");
	cr_assert(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/prog", f->dir);
	cr_assert_eq(mkfifo(f->path, 0600), 0);
}

static void remove_fifo(struct fifo *f)
{
	unlink(f->path);
	rmdir(f->dir);
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* Run ptcollect with @args under timeout(1); expect a quick exit 2 naming the FIFO. */
static void expect_refused(char **env, const char *fifo, char *const args[])
{
	char limit[16], *argv[16];
	struct run_result r;
	double t0, took;
	int n = 0;

	snprintf(limit, sizeof(limit), "%d", LIMIT_S);
	argv[n++] = "timeout";
	argv[n++] = "-s";
	argv[n++] = "KILL";
	argv[n++] = limit;
	argv[n++] = (char *)run_bin();
	for (int i = 0; args[i]; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	t0 = now();
	cr_assert_eq(run_argv(argv, env, &r), 0);
	took = now() - t0;
	cr_expect_neq(r.status, 128 + 9, "%s %s: hung on the FIFO (killed after %d s)", args[0],
		      args[1], LIMIT_S);
	cr_expect_eq(r.status, 2, "%s: exit %d; stderr:\n%s", args[0], r.status, r.err);
	cr_expect(strstr(r.err, "not a regular file") && strstr(r.err, fifo),
		  "%s: stderr lacks \"%s: not a regular file\":\n%s", args[0], fifo, r.err);
	cr_expect_lt(took, QUICK_S, "%s: took %.2f s", args[0], took);
	cr_expect_str_empty(r.out, "stdout must stay empty on error: %s", r.out);
	run_free(&r);
}

Test(input_fifo, symbols_refuses_a_fifo_without_waiting_for_a_writer)
{
	struct fifo f;
	char *args[] = { "symbols", NULL, NULL };

	make_fifo(&f);
	args[1] = f.path;
	expect_refused(NULL, f.path, args);
	remove_fifo(&f);
}

Test(input_fifo, a_filter_on_a_fifo_is_refused_without_waiting_for_a_writer)
{
	struct oracle_env oe;
	char **env = oracle_fixture_env(&oe, "skylake");
	char spec[128];
	struct fifo f;
	char *args[] = { "record", "--dry-run", "-o", "/tmp/ptc-dry-run-never-created", "--filter", spec,
			 "--", "true", NULL };

	make_fifo(&f);
	snprintf(spec, sizeof(spec), "filter main @ %s", f.path);
	expect_refused(env, f.path, args);
	remove_fifo(&f);
}

Test(input_fifo, dump_refuses_a_fifo_without_waiting_for_a_writer)
{
	struct fifo f;
	char pevent[80];
	char *args[] = { "dump", "--format", "pt", NULL, NULL };

	make_fifo(&f);
	args[3] = f.path;
	expect_refused(NULL, f.path, args);
	/* Named as a sideband file, the format comes from the name. */
	snprintf(pevent, sizeof(pevent), "%s/cpu0.pevent", f.dir);
	cr_assert_eq(mkfifo(pevent, 0600), 0);
	args[1] = pevent;
	args[2] = NULL;
	expect_refused(NULL, pevent, args);
	unlink(pevent);
	remove_fifo(&f);
}

/* A bundle's manifest that is a FIFO, and a FIFO given as the bundle. */
Test(input_fifo, info_refuses_a_fifo_manifest_without_waiting_for_a_writer)
{
	char limit[16], manifest[80];
	char *argv[] = { "timeout", "-s", "KILL", limit, NULL, "info", NULL, NULL };
	struct run_result r;
	struct fifo f;

	make_fifo(&f);
	snprintf(limit, sizeof(limit), "%d", LIMIT_S);
	snprintf(manifest, sizeof(manifest), "%s/manifest.json", f.dir);
	cr_assert_eq(mkfifo(manifest, 0600), 0);
	argv[4] = (char *)run_bin();
	argv[6] = f.dir;
	cr_assert_eq(run_argv(argv, NULL, &r), 0);
	cr_expect_neq(r.status, 128 + 9, "info hung on %s (killed after %d s)", manifest,
		      LIMIT_S);
	cr_expect_eq(r.status, 2, "%s", r.err);
	cr_expect(strstr(r.err, "manifest.json: not a regular file (a FIFO)"), "%s", r.err);
	run_free(&r);
	argv[6] = f.path;
	cr_assert_eq(run_argv(argv, NULL, &r), 0);
	cr_expect_eq(r.status, 2, "%s", r.err);
	cr_expect(strstr(r.err, "not a directory"), "%s", r.err);
	run_free(&r);
	unlink(manifest);
	remove_fifo(&f);
}

/*
 * A FIFO in the sysfs tree PTCOLLECT_SYSFS names (a fixture, as the tests use): each
 * sysfs file is opened O_NONBLOCK and refused unless regular, so `caps` and
 * `record --dry-run` end at once, naming it (issue 22, item 14). They hung before.
 */
static void expect_sysfs_fifo_refused(const char *rel)
{
	char root[64], cmd[600], fifo[512], env_var[128], limit[16];
	char *env[] = { env_var, NULL };
	char *caps[] = { "timeout", "-s", "KILL", limit, NULL, "caps", NULL };
	char *dry[] = { "timeout", "-s", "KILL", limit, NULL, "record", "--dry-run", "-o",
			"/tmp/ptc-dry-run-never-created", "--", "true", NULL };
	char **runs[] = { caps, dry };
	char *fx = oracle_fixture("skylake");
	struct run_result r;

	snprintf(limit, sizeof(limit), "%d", LIMIT_S);
	strcpy(root, "/tmp/ptc-sysfs-fifo-XXXXXX");
	cr_assert(mkdtemp(root));
	snprintf(cmd, sizeof(cmd), "cp -r %s/. %s", fx, root);
	free(fx);
	cr_assert_eq(system(cmd), 0);
	snprintf(fifo, sizeof(fifo), "%s/%s", root, rel);
	cr_assert_eq(unlink(fifo), 0, "%s", fifo);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	snprintf(env_var, sizeof(env_var), "PTCOLLECT_SYSFS=%s", root);
	for (int i = 0; i < 2; i++) {
		runs[i][4] = (char *)run_bin();
		cr_assert_eq(run_argv(runs[i], env, &r), 0);
		cr_expect_neq(r.status, 128 + 9, "%s: hung on %s (killed after %d s)", runs[i][5],
			      fifo, LIMIT_S);
		cr_expect_eq(r.status, 1, "%s: exit %d; stderr:\n%s", runs[i][5], r.status, r.err);
		cr_expect(strstr(r.err, "not a regular file (a FIFO)") && strstr(r.err, fifo),
			  "%s: stderr lacks \"%s: not a regular file (a FIFO)\":\n%s", runs[i][5],
			  fifo, r.err);
		run_free(&r);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	cr_assert_eq(system(cmd), 0);
}

Test(input_fifo, a_sysfs_fifo_is_refused_by_caps_and_dry_run_without_waiting)
{
	expect_sysfs_fifo_refused("bus/event_source/devices/intel_pt/caps/mtc_periods");
	expect_sysfs_fifo_refused("bus/event_source/devices/intel_pt/type");
	expect_sysfs_fifo_refused("bus/event_source/devices/intel_pt/nr_addr_filters");
	expect_sysfs_fifo_refused("bus/event_source/devices/intel_pt/format/pt");
}

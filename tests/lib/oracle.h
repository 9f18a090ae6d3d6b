/* SPDX-License-Identifier: MIT */
/*
 * Linux perf as the oracle: run `perf record -vv` against a fixture PMU in a
 * private mount namespace and read back the attr and address filter it
 * computed; run `ptcollect record --dry-run --json` on the same fixture and
 * read back the same fields.
 */
#ifndef PTC_TEST_ORACLE_H
#define PTC_TEST_ORACLE_H

#include <stdbool.h>
#include <stdint.h>

struct oracle_attr {
	bool found;		/* an attr (or plan) for the fixture PMU was printed */
	uint64_t config;
	bool exclude_user, exclude_kernel;
	bool has_filter;
	char filter[4096];
	int status;		/* the command's exit status */
	char log[8192];		/* what it printed on stderr, for failure messages */
};

/* The sysfs root of fixture NAME (tests/fixtures/pmu/NAME), malloc'd. */
char *oracle_fixture(const char *name);

/* An environment that points ptcollect at a sysfs root: PTCOLLECT_SYSFS=ROOT. */
struct oracle_env {
	char var[4200];
	char *env[2];
};

/* Fill @e for fixture @name; returns the environment for run_argv/run_ptcollect. */
char **oracle_fixture_env(struct oracle_env *e, const char *name);
/* The same for any sysfs root (a directory with no PMU, say). */
char **oracle_sysfs_env(struct oracle_env *e, const char *root);

/* perf's view. @filter may be NULL. Returns 0, or -1 when perf could not be run. */
int oracle_perf(const char *sysfs_root, const char *event, const char *filter,
		struct oracle_attr *a);
/* ptcollect's view (record --dry-run --json -- true). */
int oracle_ptcollect(const char *sysfs_root, const char *event, const char *filter,
		     struct oracle_attr *a);

#endif

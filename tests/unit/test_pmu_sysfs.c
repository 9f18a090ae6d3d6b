// SPDX-License-Identifier: MIT
/* pmu_load on sysfs trees built by the test: good ones, and each way one can be malformed. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cpuset.h"
#include "pmu.h"

static char root[64];
static char dev[256];

static void put(const char *rel, const char *content)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dev, rel);
	f = fopen(path, "w");
	cr_assert(f, "%s", path);
	fputs(content, f);
	fclose(f);
}

static void put_defaults(void)
{
	char path[512];

	put("type", "9\n");
	put("nr_addr_filters", "2\n");
	put("format/pt", "config:0\n");
	put("format/mtc_period", "config:14-17\n");
	put("format/split", "config1:0-1,5\n");
	put("caps/mtc_periods", "249\n");
	put("caps/psb_cyc", "1\n");
	snprintf(path, sizeof(path), "%s/tsc_art_ratio", dev);
	unlink(path);
}

static void setup(void)
{
	char cmd[600];

	strcpy(root, "/tmp/ptc-sysfs-XXXXXX");
	cr_assert(mkdtemp(root));
	snprintf(dev, sizeof(dev), "%s/bus/event_source/devices/intel_pt", root);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/format %s/caps", dev, dev);
	cr_assert_eq(system(cmd), 0);
	put_defaults();
	setenv("PTCOLLECT_SYSFS", root, 1);
}

static void teardown(void)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	cr_assert_eq(system(cmd), 0);
	unsetenv("PTCOLLECT_SYSFS");
}

TestSuite(pmu_sysfs, .init = setup, .fini = teardown);

Test(pmu_sysfs, reads_type_terms_caps_and_ranges)
{
	struct pmu p;
	struct error e = { 0 };
	const struct pmu_term *t;

	cr_assert_eq(pmu_load(&p, "intel_pt", &e), 0, "%s", e.why);
	cr_expect(p.present);
	cr_expect_eq(p.type, 9);
	cr_expect_eq(p.nr_addr_filters, 2);
	cr_expect_eq(p.max_nonturbo_ratio, -1, "an absent optional file keeps its default");
	cr_expect_eq(pmu_cap(&p, "mtc_periods", 0), 0x249, "caps are hex");
	cr_expect_eq(pmu_cap(&p, "absent", 77), 77);
	t = pmu_term_find(&p, "mtc_period");
	cr_assert(t);
	cr_expect_eq(t->mask, 0xfULL << 14);
	t = pmu_term_find(&p, "split");
	cr_assert(t);
	cr_expect_eq(t->field, PMU_FIELD_CONFIG1);
	cr_expect_eq(t->mask, 0x23);
	cr_expect(pmu_sysfs_is_fixture());
}

Test(pmu_sysfs, missing_pmu_is_enoent_and_says_where)
{
	struct pmu p;
	struct error e = { 0 };

	cr_expect_eq(pmu_load(&p, "nope", &e), -ENOENT);
	cr_expect(!p.present);
	cr_expect(strstr(e.why, "no nope PMU in ") && strstr(e.why, root), "%s", e.why);
	cr_expect(!e.usage, "a missing PMU is a runtime error (exit 1)");
}

struct bad_file {
	const char *file;
	const char *content;
	const char *says;
};

Test(pmu_sysfs, malformed_files_are_refused_by_name)
{
	static const struct bad_file bad[] = {
		{ "type", "nine\n", "type: 'nine' is not a number" },
		{ "nr_addr_filters", "-3\n", "nr_addr_filters: '-3' is not a number" },
		{ "format/pt", "config:x\n", "format/pt: cannot parse 'config:x'" },
		{ "format/pt", "config:5-2\n", "format/pt: cannot parse" },
		{ "format/pt", "config:64\n", "format/pt: cannot parse" },
		{ "format/pt", "confog:1\n", "format/pt: cannot parse" },
		{ "caps/psb_cyc", "zz\n", "caps/psb_cyc: 'zz' is not a hex number" },
		{ "caps/psb_cyc", "\n", "caps/psb_cyc: '' is not a hex number" },
		{ "tsc_art_ratio", "2-84\n", "tsc_art_ratio: '2-84' is not N:D" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct pmu p;
		struct error e = { 0 };

		put(bad[i].file, bad[i].content);
		cr_expect_eq(pmu_load(&p, "intel_pt", &e), -EINVAL, "%s", bad[i].file);
		cr_expect(strstr(e.why, bad[i].says), "%s: got '%s'", bad[i].file, e.why);
		cr_expect(!e.usage, "%s: a malformed sysfs is a runtime error", bad[i].file);
		cr_expect(!p.present);
		put_defaults();
	}
}

Test(pmu_sysfs, pmu_names_with_slashes_are_refused)
{
	struct pmu p;
	struct error e = { 0 };

	cr_expect_eq(pmu_load(&p, "../x", &e), -EINVAL);
	cr_expect(strstr(e.why, "is not a PMU name"), "%s", e.why);
	cr_expect(e.usage);
}

/* The online CPU list is the system's file: missing or garbled, a runtime error (exit 1)
 * that names it, never a usage error (exit 2) blaming the command line. */
Test(pmu_sysfs, online_cpus_missing_or_garbled_are_the_systems_fault)
{
	int cpus[CLI_MAX_CPUS], nr;
	char path[512], cmd[600];
	struct error e = { 0 };
	FILE *f;

	cr_expect_eq(cpuset_online(cpus, &nr, &e), -ENOENT);
	cr_expect(strstr(e.why, "devices/system/cpu/online"), "%s", e.why);
	cr_expect(!e.usage, "%s", e.why);
	err_clear(&e);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/devices/system/cpu", root);
	cr_assert_eq(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/devices/system/cpu/online", root);
	f = fopen(path, "w");
	cr_assert(f, "%s", path);
	fputs("0-x\n", f);
	fclose(f);
	cr_expect_eq(cpuset_online(cpus, &nr, &e), -EINVAL);
	cr_expect(strstr(e.what, "devices/system/cpu/online"), "%s", e.what);
	cr_expect(!e.usage, "%s", e.why);
	err_clear(&e);
	f = fopen(path, "w");
	cr_assert(f, "%s", path);
	fputs("0,2-3\n", f);
	fclose(f);
	cr_assert_eq(cpuset_online(cpus, &nr, &e), 0, "%s", e.why);
	cr_expect(nr == 3 && cpus[0] == 0 && cpus[1] == 2 && cpus[2] == 3);
}

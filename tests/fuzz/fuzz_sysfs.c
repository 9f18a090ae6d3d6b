// SPDX-License-Identifier: MIT
/*
 * A PMU's sysfs files and the online CPU list as the kernel (or a fixture under
 * PTCOLLECT_SYSFS) gives them: never crash; a refusal names the file; a PMU taken has terms
 * with bits, and caps and counts as written. The input's lines, in turn, are the files
 * type, format/pt, format/cyc_thresh, caps/psb_periods, nr_addr_filters, max_nonturbo_ratio,
 * tsc_art_ratio and devices/system/cpu/online; a file whose line is "-" is left out.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cpuset.h"
#include "pmu.h"
#include "../lib/treerm.h"

static const char *const files[] = {
	"bus/event_source/devices/intel_pt/type",
	"bus/event_source/devices/intel_pt/format/pt",
	"bus/event_source/devices/intel_pt/format/cyc_thresh",
	"bus/event_source/devices/intel_pt/caps/psb_periods",
	"bus/event_source/devices/intel_pt/nr_addr_filters",
	"bus/event_source/devices/intel_pt/max_nonturbo_ratio",
	"bus/event_source/devices/intel_pt/tsc_art_ratio",
	"devices/system/cpu/online",
};
#define NFILES (sizeof(files) / sizeof(files[0]))

static char root[64];

static void cleanup(void)
{
	tree_remove(root);
}

static void mkdirs(const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0700);
		*p = '/';
	}
}

static void put(const char *rel, const char *text, size_t len)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	unlink(path);
	if (len == 1 && text[0] == '-')
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len || write(fd, "\n", 1) != 1)
		abort();
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int cpus[CLI_MAX_CPUS];
	const char *p = (const char *)data, *end = p + size;
	struct error e = { 0 };
	struct pmu pmu;
	int ret, nr;

	if (!root[0]) {
		snprintf(root, sizeof(root), "/tmp/ptc-fuzz-sysfs-%d", (int)getpid());
		if (mkdir(root, 0700))
			abort();
		for (size_t i = 0; i < NFILES; i++)
			mkdirs(files[i]);
		setenv("PTCOLLECT_SYSFS", root, 1);
		atexit(cleanup);
	}
	for (size_t i = 0; i < NFILES; i++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		put(files[i], p, len < 300 ? len : 300);
		p = nl ? nl + 1 : end;
	}
	ret = pmu_load(&pmu, "intel_pt", &e);
	if (ret && !e.why[0])
		abort();
	if (!ret) {
		if (!pmu.present || pmu.nr_terms > PMU_MAX_TERMS || pmu.nr_caps > PMU_MAX_CAPS)
			abort();
		for (int i = 0; i < pmu.nr_terms; i++)
			if (!pmu.terms[i].mask || pmu_term_max(&pmu.terms[i]) == 0)
				abort();
	}
	err_clear(&e);
	ret = cpuset_online(cpus, &nr, &e);
	if (ret && (!e.why[0] || e.usage))
		abort();
	if (!ret && (nr < 1 || nr > CLI_MAX_CPUS))
		abort();
	err_clear(&e);
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * The command line's values (sizes, -m, CPU and PID lists, durations) and a /proc maps line:
 * never crash; a refusal says why; what is taken is within what each parser promises, and a
 * CPU list printed again reads back the same. The first byte picks the parser.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cpuset.h"
#include "procfs.h"

/* A refusal: a usage error with its reason. */
static void refused(int ret, const struct error *e)
{
	if (ret && (!e->why[0] || !e->usage))
		abort();
}

static void cpulist(const char *s)
{
	static int cpus[CLI_MAX_CPUS], again[CLI_MAX_CPUS];
	struct error e = { 0 };
	char text[8 * CLI_MAX_CPUS];
	int nr, nr2, ret = cli_parse_cpulist(s, cpus, &nr, &e);

	refused(ret, &e);
	if (ret)
		return;
	if (nr < 1 || nr > CLI_MAX_CPUS)
		abort();
	for (int i = 0; i < nr; i++)
		if (cpus[i] < 0 || cpus[i] >= CLI_MAX_CPUS || (i && cpus[i] <= cpus[i - 1]))
			abort();
	cpuset_format(cpus, nr, text, sizeof(text));
	if (cli_parse_cpulist(text, again, &nr2, &e) || nr2 != nr ||
	    memcmp(cpus, again, (size_t)nr * sizeof(*cpus)))
		abort();
}

static void mmap_sizes(const char *s)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), d, a;
	struct error e = { 0 };
	int ret = cli_parse_mmap(s, &d, &a, &e);

	refused(ret, &e);
	/* each part: 0 (not given) or a power of two of pages */
	for (uint64_t v = d, k = 0; !ret && k < 2; v = a, k++)
		if (v && (v % page || ((v / page) & (v / page - 1))))
			abort();
}

static void pidlist(const char *s)
{
	static pid_t pids[CLI_MAX_PIDS];
	struct error e = { 0 };
	int nr, ret = cli_parse_pidlist(s, pids, &nr, &e);

	refused(ret, &e);
	if (ret)
		return;
	if (nr < 1 || nr > CLI_MAX_PIDS)
		abort();
	for (int i = 0; i < nr; i++)
		if (pids[i] <= 0)
			abort();
}

static void maps_line(const char *s, size_t len)
{
	char *line = strndup(s, len);
	struct procfs_map m;

	if (!line)
		abort();
	if (procfs_maps_line(line, &m) &&
	    (m.start > m.end || m.name < line || m.name > line + len || strchr(m.name, '\n') ||
	     strnlen(m.perms, sizeof(m.perms)) == sizeof(m.perms)))
		abort();
	free(line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct error e = { 0 };
	char s[512];
	uint64_t bytes;
	double secs;
	int ret;

	if (!size)
		return 0;
	size--;
	if (size >= sizeof(s))
		size = sizeof(s) - 1;
	memcpy(s, data + 1, size);
	s[size] = '\0';
	switch (data[0] % 6) {
	case 0:
		ret = cli_parse_size(s, &bytes, &e);
		refused(ret, &e);
		break;
	case 1:
		mmap_sizes(s);
		break;
	case 2:
		cpulist(s);
		break;
	case 3:
		pidlist(s);
		break;
	case 4:
		ret = cli_parse_duration(s, &secs, &e);
		refused(ret, &e);
		if (!ret && (!isfinite(secs) || secs <= 0 || secs > 1e7))
			abort();
		break;
	default:
		maps_line(s, strlen(s));
		break;
	}
	return 0;
}

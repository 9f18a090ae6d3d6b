// SPDX-License-Identifier: MIT
/* Values typed on the command line: sizes, -m, CPU/PID lists, durations. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static int unit_shift(const char *u, int *shift)
{
	static const struct { const char *s; int shift; } units[] = {
		{ "", 0 }, { "B", 0 },
		{ "K", 10 }, { "KB", 10 }, { "KiB", 10 }, { "k", 10 },
		{ "M", 20 }, { "MB", 20 }, { "MiB", 20 },
		{ "G", 30 }, { "GB", 30 }, { "GiB", 30 },
	};

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(u, units[i].s)) {
			*shift = units[i].shift;
			return 0;
		}
	}
	return -EINVAL;
}

int cli_parse_size(const char *s, uint64_t *bytes, struct error *e)
{
	unsigned long long v;
	char *end;
	int shift;

	if (!isdigit((unsigned char)s[0]))
		goto bad;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || unit_shift(end, &shift))
		goto bad;
	if (shift && v > (UINT64_MAX >> shift))
		goto bad;
	*bytes = (uint64_t)v << shift;
	return 0;
bad:
	return err_usage(e, "'%s' is not a size (a number with an optional unit K, M or G, "
			 "e.g. 4M)", s);
}

static int mmap_part(const char *s, const char *what, uint64_t *bytes, struct error *e)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), v, pages;
	bool plain = true;

	*bytes = 0;
	if (!*s)
		return 0;
	for (const char *p = s; *p; p++)
		if (!isdigit((unsigned char)*p))
			plain = false;
	if (cli_parse_size(s, &v, e))
		return -EINVAL;
	if (plain) {
		if (v > UINT64_MAX / page)
			goto bad;
		v *= page;	/* perf: a bare number counts pages */
	}
	pages = v / page;
	if (!v || v % page || (pages & (pages - 1)))
		return err_usage(e, "%s size '%s' is %" PRIu64 " bytes: it must be a power of two "
				 "number of %" PRIu64 "-byte pages (e.g. %s)", what, s, v, page,
				 !strcmp(what, "AUX") ? "4M" : "256K");
	*bytes = v;
	return 0;
bad:
	return err_usage(e, "%s size '%s' is too large", what, s);
}

int cli_parse_mmap(const char *s, uint64_t *data_bytes, uint64_t *aux_bytes, struct error *e)
{
	const char *comma = strchr(s, ',');
	char data[64];
	size_t n = comma ? (size_t)(comma - s) : strlen(s);

	if (n >= sizeof(data) || (comma && strchr(comma + 1, ',')))
		return err_usage(e, "'%s' is not DATA[,AUX] (e.g. -m 64,4M or -m ,4M)", s);
	memcpy(data, s, n);
	data[n] = '\0';
	if (mmap_part(data, "data", data_bytes, e))
		return -EINVAL;
	if (mmap_part(comma ? comma + 1 : "", "AUX", aux_bytes, e))
		return -EINVAL;
	return 0;
}

static int parse_uint(const char **p, long max, long *v)
{
	char *end;

	if (!isdigit((unsigned char)**p))
		return -EINVAL;
	errno = 0;
	*v = strtol(*p, &end, 10);
	if (errno || *v > max)
		return -EINVAL;
	*p = end;
	return 0;
}

int cli_parse_cpulist(const char *s, int *cpus, int *nr, struct error *e)
{
	static unsigned char seen[CLI_MAX_CPUS];
	const char *p = s;

	memset(seen, 0, sizeof(seen));
	*nr = 0;
	for (;;) {
		long lo, hi;

		if (parse_uint(&p, CLI_MAX_CPUS - 1, &lo))
			goto bad;
		hi = lo;
		if (*p == '-') {
			p++;
			if (parse_uint(&p, CLI_MAX_CPUS - 1, &hi) || hi < lo)
				goto bad;
		}
		for (long c = lo; c <= hi; c++)
			seen[c] = 1;
		if (!*p)
			break;
		if (*p != ',')
			goto bad;
		p++;
	}
	for (int c = 0; c < CLI_MAX_CPUS; c++)
		if (seen[c])
			cpus[(*nr)++] = c;
	return 0;
bad:
	return err_usage(e, "'%s' is not a CPU list (e.g. 0-3,6; CPUs 0 to %d); the problem is "
			 "at '%s'", s, CLI_MAX_CPUS - 1, *p ? p : "the end");
}

int cli_parse_pidlist(const char *s, pid_t *pids, int *nr, struct error *e)
{
	const char *p = s;

	*nr = 0;
	for (;;) {
		long v;

		if (parse_uint(&p, 0x3fffffff, &v) || v == 0)
			goto bad;
		if (*nr == CLI_MAX_PIDS)
			return err_usage(e, "'%s' lists more than %d ids", s, CLI_MAX_PIDS);
		pids[(*nr)++] = (pid_t)v;
		if (!*p)
			return 0;
		if (*p != ',')
			goto bad;
		p++;
	}
bad:
	return err_usage(e, "'%s' is not a list of process ids (e.g. 1234 or 1234,5678)", s);
}

int cli_parse_duration(const char *s, double *seconds, struct error *e)
{
	double v, mult = 1;
	char *end;
	size_t n;

	/* Decimal only: strtod would also take 0x10 (16 s) and 1e3. */
	n = strspn(s, "0123456789");
	if (s[n] == '.')
		n += 1 + strspn(s + n + 1, "0123456789");
	if (!n || (n == 1 && s[0] == '.'))
		goto bad;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end != s + n)
		goto bad;
	if (!strcmp(end, "ms"))
		mult = 0.001;
	else if (!strcmp(end, "m"))
		mult = 60;
	else if (!strcmp(end, "h"))
		mult = 3600;
	else if (*end && strcmp(end, "s"))
		goto bad;
	v *= mult;
	if (!isfinite(v) || v <= 0 || v > 1e7)
		goto bad;
	*seconds = v;
	return 0;
bad:
	return err_usage(e, "'%s' is not a duration (decimal seconds > 0, e.g. 5, 2.5, 500ms, "
			 "2m)", s);
}

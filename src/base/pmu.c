// SPDX-License-Identifier: MIT
/* sysfs discovery of the intel_pt PMU: type, format/ bit layouts, caps/. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pmu.h"

const char *pmu_sysfs_root(void)
{
	const char *r = getenv("PTCOLLECT_SYSFS");

	return r && *r ? r : "/sys";
}

bool pmu_sysfs_is_fixture(void)
{
	const char *r = pmu_sysfs_root();
	size_t n = strlen(r);

	while (n > 1 && r[n - 1] == '/')
		n--;
	return !(n == 4 && !strncmp(r, "/sys", 4));
}

/*
 * Read a small sysfs file, trailing newline removed. -errno when it cannot be
 * opened (the callers treat most of these as absent). A file that is there
 * but not a regular file (a FIFO planted in a fixture, a device) is refused
 * through @e, with -EFBIG kept apart: opening is O_NONBLOCK, so a FIFO without
 * a writer never hangs the read.
 */
#define READ_SMALL_REFUSED (-ENOTSUP)

static int read_small(const char *dir, const char *name, char *buf, size_t len,
		      struct error *e)
{
	char path[4200];
	struct stat st;
	ssize_t n;
	int fd, ret;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		err_runtime(e, READ_SMALL_REFUSED, "%s: not a regular file (%s)", path,
			    S_ISDIR(st.st_mode) ? "a directory" :
			    S_ISFIFO(st.st_mode) ? "a FIFO" :
			    S_ISCHR(st.st_mode) ? "a character device" :
			    S_ISSOCK(st.st_mode) ? "a socket" : "a special file");
		err_hint(e, "a sysfs attribute is a regular file: check PTCOLLECT_SYSFS (%s)",
			 pmu_sysfs_root());
		return READ_SMALL_REFUSED;
	}
	do
		n = read(fd, buf, len - 1);
	while (n < 0 && errno == EINTR);
	ret = n < 0 ? -errno : 0;
	close(fd);
	if (ret)
		return ret;
	buf[n] = '\0';
	while (n && isspace((unsigned char)buf[n - 1]))
		buf[--n] = '\0';
	return 0;
}

/*
 * Parse a format/ line: "config:0", "config:14-17", "config:0-3,5". The bits
 * listed form the term's value, lowest listed bit first (perf's rule: bits of
 * the value go to the format bits in ascending order).
 */
static int parse_format(const char *s, struct pmu_term *t)
{
	const char *p = s;
	char *end;

	if (!strncmp(p, "config2:", 8)) {
		t->field = PMU_FIELD_CONFIG2;
		p += 8;
	} else if (!strncmp(p, "config1:", 8)) {
		t->field = PMU_FIELD_CONFIG1;
		p += 8;
	} else if (!strncmp(p, "config:", 7)) {
		t->field = PMU_FIELD_CONFIG;
		p += 7;
	} else {
		return -EINVAL;
	}
	t->mask = 0;
	for (;;) {
		unsigned long lo, hi;

		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		lo = strtoul(p, &end, 10);
		hi = lo;
		p = end;
		if (*p == '-') {
			p++;
			if (!isdigit((unsigned char)*p))
				return -EINVAL;
			hi = strtoul(p, &end, 10);
			p = end;
		}
		if (lo > hi || hi > 63)
			return -EINVAL;
		for (unsigned long b = lo; b <= hi; b++)
			t->mask |= 1ULL << b;
		if (*p == '\0')
			break;
		if (*p != ',')
			return -EINVAL;
		p++;
	}
	return 0;
}

static int load_terms(struct pmu *pmu, struct error *e)
{
	char dir[4200], val[256];
	struct dirent *de;
	DIR *d;
	int ret = 0;

	snprintf(dir, sizeof(dir), "%s/format", pmu->sysfs);
	d = opendir(dir);
	if (!d)
		return 0;	/* perf treats a PMU without format/ as having no terms */
	while ((de = readdir(d))) {
		struct pmu_term *t;

		if (de->d_name[0] == '.')
			continue;
		if (pmu->nr_terms == PMU_MAX_TERMS || strlen(de->d_name) >= PMU_NAME_MAX) {
			ret = err_runtime(e, -E2BIG, "%s: too many or too long format terms", dir);
			break;
		}
		t = &pmu->terms[pmu->nr_terms];
		ret = read_small(dir, de->d_name, val, sizeof(val), e);
		if (ret == READ_SMALL_REFUSED)
			break;
		if (ret < 0) {
			ret = 0;	/* unreadable: perf skips it too */
			continue;
		}
		if (parse_format(val, t)) {
			ret = err_runtime(e, -EINVAL, "%s/%s: cannot parse '%s' "
					  "(expected config[12]:BIT[-BIT][,...])", dir, de->d_name, val);
			break;
		}
		strcpy(t->name, de->d_name);
		pmu->nr_terms++;
	}
	closedir(d);
	return ret;
}

static int load_caps(struct pmu *pmu, struct error *e)
{
	char dir[4200], val[256];
	struct dirent *de;
	DIR *d;
	int ret = 0;

	snprintf(dir, sizeof(dir), "%s/caps", pmu->sysfs);
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		struct pmu_cap *c;
		char *end;

		if (de->d_name[0] == '.')
			continue;
		if (pmu->nr_caps == PMU_MAX_CAPS || strlen(de->d_name) >= PMU_NAME_MAX) {
			ret = err_runtime(e, -E2BIG, "%s: too many or too long capability names", dir);
			break;
		}
		ret = read_small(dir, de->d_name, val, sizeof(val), e);
		if (ret == READ_SMALL_REFUSED)
			break;
		if (ret < 0) {
			ret = 0;
			continue;
		}
		c = &pmu->caps[pmu->nr_caps];
		errno = 0;
		c->value = strtoull(val, &end, 16);
		if (!val[0] || *end || errno) {
			ret = err_runtime(e, -EINVAL, "%s/%s: '%s' is not a hex number", dir,
					  de->d_name, val);
			break;
		}
		strcpy(c->name, de->d_name);
		pmu->nr_caps++;
	}
	closedir(d);
	return ret;
}

static int load_int(const char *dir, const char *name, int *out, struct error *e)
{
	char val[64], *end;
	long v;
	int ret = read_small(dir, name, val, sizeof(val), e);

	if (ret == READ_SMALL_REFUSED)
		return ret;
	if (ret < 0)
		return 0;	/* optional: keep the default */
	errno = 0;
	v = strtol(val, &end, 10);
	if (!val[0] || *end || errno || v < 0 || v > 0x7fffffff)
		return err_runtime(e, -EINVAL, "%s/%s: '%s' is not a number", dir, name, val);
	*out = (int)v;
	return 0;
}

/* Keep the term and capability order stable for output and tests. */
static int cmp_term(const void *a, const void *b)
{
	return strcmp(((const struct pmu_term *)a)->name, ((const struct pmu_term *)b)->name);
}

static int cmp_cap(const void *a, const void *b)
{
	return strcmp(((const struct pmu_cap *)a)->name, ((const struct pmu_cap *)b)->name);
}

int pmu_load(struct pmu *pmu, const char *name, struct error *e)
{
	char val[64];
	int ret, type = -1;

	memset(pmu, 0, sizeof(*pmu));
	pmu->nr_addr_filters = -1;
	pmu->max_nonturbo_ratio = -1;
	if (strlen(name) >= PMU_NAME_MAX || strchr(name, '/') || !name[0])
		return err_usage(e, "'%s' is not a PMU name", name);
	strcpy(pmu->name, name);
	snprintf(pmu->sysfs, sizeof(pmu->sysfs), "%s/bus/event_source/devices/%s",
		 pmu_sysfs_root(), name);
	ret = read_small(pmu->sysfs, "type", val, sizeof(val), e);
	if (ret == READ_SMALL_REFUSED)
		return ret;
	if (ret == -ENOENT || ret == -ENOTDIR)
		return err_runtime(e, -ENOENT, "no %s PMU in %s/bus/event_source/devices", name,
				   pmu_sysfs_root());
	if (ret < 0)
		return err_runtime(e, ret, "%s/type: %s", pmu->sysfs, strerror(-ret));
	ret = load_int(pmu->sysfs, "type", &type, e);
	if (ret)
		return ret;
	pmu->type = type;
	ret = load_terms(pmu, e);
	if (!ret)
		ret = load_caps(pmu, e);
	if (!ret)
		ret = load_int(pmu->sysfs, "nr_addr_filters", &pmu->nr_addr_filters, e);
	if (!ret)
		ret = load_int(pmu->sysfs, "max_nonturbo_ratio", &pmu->max_nonturbo_ratio, e);
	if (ret)
		return ret;
	ret = read_small(pmu->sysfs, "tsc_art_ratio", val, sizeof(val), e);
	if (ret == READ_SMALL_REFUSED)
		return ret;
	if (!ret &&
	    sscanf(val, "%" SCNu64 ":%" SCNu64, &pmu->tsc_art_ratio_num,
		   &pmu->tsc_art_ratio_den) != 2)
		return err_runtime(e, -EINVAL, "%s/tsc_art_ratio: '%s' is not N:D", pmu->sysfs, val);
	qsort(pmu->terms, pmu->nr_terms, sizeof(pmu->terms[0]), cmp_term);
	qsort(pmu->caps, pmu->nr_caps, sizeof(pmu->caps[0]), cmp_cap);
	pmu->present = true;
	return 0;
}

const struct pmu_term *pmu_term_find(const struct pmu *pmu, const char *name)
{
	for (int i = 0; i < pmu->nr_terms; i++)
		if (!strcmp(pmu->terms[i].name, name))
			return &pmu->terms[i];
	return NULL;
}

uint64_t pmu_cap(const struct pmu *pmu, const char *name, uint64_t def)
{
	for (int i = 0; i < pmu->nr_caps; i++)
		if (!strcmp(pmu->caps[i].name, name))
			return pmu->caps[i].value;
	return def;
}

bool pmu_has_cap(const struct pmu *pmu, const char *name)
{
	for (int i = 0; i < pmu->nr_caps; i++)
		if (!strcmp(pmu->caps[i].name, name))
			return true;
	return false;
}

uint64_t pmu_term_max(const struct pmu_term *t)
{
	int n = __builtin_popcountll(t->mask);

	return n >= 64 ? UINT64_MAX : (1ULL << n) - 1;
}

void pmu_term_apply(const struct pmu_term *t, uint64_t val, uint64_t *field_val)
{
	int vbit = 0;

	for (int b = 0; b < 64; b++) {
		if (!(t->mask & (1ULL << b)))
			continue;
		if (val & (1ULL << vbit++))
			*field_val |= 1ULL << b;
		else
			*field_val &= ~(1ULL << b);
	}
}

uint64_t pmu_term_extract(const struct pmu_term *t, uint64_t field_val)
{
	uint64_t v = 0;
	int vbit = 0;

	for (int b = 0; b < 64; b++) {
		if (!(t->mask & (1ULL << b)))
			continue;
		if (field_val & (1ULL << b))
			v |= 1ULL << vbit;
		vbit++;
	}
	return v;
}

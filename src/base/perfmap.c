// SPDX-License-Identifier: MIT
/* perf maps (/tmp/perf-PID.map): JIT code's names, read without trusting a line. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfmap.h"

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A hex number (0x optional, at most 16 digits) ending in a space. Advances *@p. */
static bool hex_field(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	int digits = 0;

	*v = 0;
	if (end - s >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; s < end && hexval(*s) >= 0; s++) {
		if (++digits > 16)
			return false;
		*v = *v << 4 | (uint64_t)hexval(*s);
	}
	if (!digits || s >= end || *s != ' ')
		return false;
	*p = s + 1;
	return true;
}

static void bad_line(struct perfmap *m, size_t lineno, const char *why)
{
	if (!m->bad_lines++) {
		m->first_bad = lineno;
		snprintf(m->first_why, sizeof(m->first_why), "%s", why);
	}
}

/* One line without its newline: an entry added, or the line counted as bad. */
static int parse_line(struct perfmap *m, size_t *cap, const char *s, const char *end,
		      size_t lineno)
{
	struct perfmap_sym *n;
	uint64_t start, size;

	if (s == end)
		return 0;	/* an empty line (the last newline's) says nothing */
	if (!hex_field(&s, end, &start) || !hex_field(&s, end, &size)) {
		bad_line(m, lineno, "START and SIZE are not hex numbers followed by a space");
		return 0;
	}
	if (s == end || memchr(s, '\0', (size_t)(end - s))) {
		bad_line(m, lineno, "no NAME, or a NUL byte in it");
		return 0;
	}
	if (!size || size > PERFMAP_MAX_SIZE) {
		bad_line(m, lineno, size ? "SIZE is over 1 GiB" : "SIZE is 0");
		return 0;
	}
	if (start + size < start) {
		bad_line(m, lineno, "START+SIZE runs past 2^64");
		return 0;
	}
	if (m->nr == *cap) {
		size_t c = *cap ? *cap * 2 : 64;

		n = realloc(m->syms, c * sizeof(*n));
		if (!n)
			return -ENOMEM;
		m->syms = n;
		*cap = c;
	}
	n = &m->syms[m->nr];
	n->start = start;
	n->size = size;
	n->overlaps = false;
	n->name = strndup(s, (size_t)(end - s));
	if (!n->name)
		return -ENOMEM;
	m->nr++;
	return 0;
}

static int by_start(const void *a, const void *b)
{
	const struct perfmap_sym *x = a, *y = b;
	int c;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	c = strcmp(x->name, y->name);
	return c;
}

/* Sort, drop identical entries, mark every entry that shares an address with another. */
static void settle(struct perfmap *m)
{
	size_t i, k = 0;
	uint64_t max_end = 0;

	if (!m->nr)
		return;
	qsort(m->syms, m->nr, sizeof(*m->syms), by_start);
	for (i = 0; i < m->nr; i++) {
		if (k && !by_start(&m->syms[k - 1], &m->syms[i])) {
			free(m->syms[i].name);
			continue;
		}
		m->syms[k++] = m->syms[i];
	}
	m->nr = k;
	for (i = 0; i < m->nr; i++) {
		struct perfmap_sym *s = &m->syms[i];
		uint64_t end = s->start + s->size;

		/* Starts ascend: an earlier entry reaches here, or the next starts inside. */
		if ((i && max_end > s->start) || (i + 1 < m->nr && m->syms[i + 1].start < end))
			s->overlaps = true;
		if (end > max_end)
			max_end = end;
		m->overlapping += s->overlaps;
	}
}

int perfmap_parse(struct perfmap *m, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;
	size_t cap = 0, lineno = 0;
	int ret = 0;

	memset(m, 0, sizeof(*m));
	while (p < end && !ret) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;

		lineno++;
		if (eol - p >= PERFMAP_MAX_LINE)
			bad_line(m, lineno, "the line is longer than 4096 bytes");
		else
			ret = parse_line(m, &cap, p, eol, lineno);
		p = nl ? nl + 1 : end;
	}
	if (ret) {
		perfmap_free(m);
		return ret;
	}
	settle(m);
	return 0;
}

int perfmap_load_at(struct perfmap *m, int dirfd, const char *path, struct error *e)
{
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK), ret;
	size_t len = 0, cap = 0;
	bool truncated = false;
	char *buf = NULL;
	struct stat st;

	memset(m, 0, sizeof(*m));
	if (fd < 0) {
		ret = -errno;
		if (ret == -ELOOP)
			return err_usage_code(e, ret, "%s: a symbolic link: a perf map is read only "
					      "from a regular file", path);
		return err_usage_code(e, ret, "%s: %s", path, strerror(-ret));
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return err_usage_code(e, -EINVAL, "%s: not a regular file", path);
	}
	for (;;) {
		ssize_t n;

		if (len == cap) {
			size_t c = cap ? cap * 2 : 65536;
			char *nb;

			if (cap >= PERFMAP_MAX_FILE) {
				/* The rest is not read (bounded memory), nor the line it cuts. */
				char *nl = memrchr(buf, '\n', len);

				truncated = true;
				len = nl ? (size_t)(nl - buf) + 1 : 0;
				break;
			}
			nb = realloc(buf, c);
			if (!nb) {
				ret = err_runtime(e, -ENOMEM, "%s: out of memory", path);
				goto out;
			}
			buf = nb;
			cap = c;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = err_runtime(e, -errno, "%s: %s", path, strerror(errno));
			goto out;
		}
		if (!n)
			break;
		len += (size_t)n;
	}
	ret = perfmap_parse(m, buf ? buf : "", len);
	m->truncated = truncated;
	if (ret)
		err_runtime(e, ret, "%s: out of memory", path);
out:
	free(buf);
	close(fd);
	return ret;
}

const struct perfmap_sym *perfmap_find(const struct perfmap *m, uint64_t addr)
{
	size_t lo = 0, hi = m->nr;
	const struct perfmap_sym *s;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	/* An earlier entry covering @addr would overlap this one: both are marked. */
	s = &m->syms[lo - 1];
	return !s->overlaps && addr - s->start < s->size ? s : NULL;
}

void perfmap_free(struct perfmap *m)
{
	for (size_t i = 0; i < m->nr; i++)
		free(m->syms[i].name);
	free(m->syms);
	m->syms = NULL;
	m->nr = 0;
}

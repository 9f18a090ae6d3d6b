// SPDX-License-Identifier: MIT
/* /proc/kallsyms read once, and looked up by perf's rules. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "kallsyms.h"

/* Far above any kernel's (a large one with modules lists about 20 MiB). */
#define KALLSYMS_MAX (256u << 20)

/* "ADDR TYPE NAME[\t[MODULE]]", NUL-terminated without its newline; parsed in place. */
static bool parse_line(char *p, struct ksym *s)
{
	char *end, *close;
	size_t n;

	if (!isxdigit((unsigned char)*p))
		return false;
	errno = 0;
	s->addr = strtoull(p, &end, 16);
	if (errno || end[0] != ' ' || !end[1] || isspace((unsigned char)end[1]) || end[2] != ' ')
		return false;
	s->type = end[1];
	p = end + 3;
	n = strcspn(p, " \t");
	if (!n)
		return false;
	s->name = p;
	s->module = NULL;
	p += n;
	if (!*p)
		return true;
	*p++ = '\0';
	p += strspn(p, " \t");
	close = *p == '[' ? strchr(p, ']') : NULL;
	if (close && close > p + 1) {
		*close = '\0';
		s->module = p + 1;
	}
	return true;
}

int kallsyms_load(struct kallsyms *k, const char *path, struct error *e)
{
	return kallsyms_load_at(k, AT_FDCWD, path, e);
}

int kallsyms_load_at(struct kallsyms *k, int dirfd, const char *path, struct error *e)
{
	size_t len, lines = 1;
	char *text, *p, *end;
	int ret;

	k->syms = NULL;
	k->nr = 0;
	ret = file_read_all(dirfd, path, KALLSYMS_MAX, &text, &len, e);
	if (ret)
		return ret;
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	/* One block: room for a symbol per line, then the text their names point into. */
	k->syms = malloc(lines * sizeof(*k->syms) + len + 1);
	if (!k->syms) {
		free(text);
		return err_runtime(e, -ENOMEM, "%s: out of memory for %zu lines", path, lines);
	}
	p = (char *)(k->syms + lines);
	memcpy(p, text, len + 1);
	free(text);
	/* memchr, not strchr: a NUL inside the file only shortens its line. */
	for (end = p + len; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *stop = nl ? nl : end;

		*stop = '\0';
		if (parse_line(p, &k->syms[k->nr]))
			k->nr++;
		p = stop + 1;
	}
	return 0;
}

void kallsyms_free(struct kallsyms *k)
{
	free(k->syms);
	k->syms = NULL;
	k->nr = 0;
}

const struct ksym *kallsyms_find(const struct kallsyms *k, const char *name)
{
	for (size_t i = 0; i < k->nr; i++)
		if (!k->syms[i].module && !strcmp(k->syms[i].name, name))
			return &k->syms[i];
	return NULL;
}

bool ksym_is_function(const struct ksym *s)
{
	char t = (char)toupper((unsigned char)s->type);

	return t == 'T' || t == 'W';
}

/* perf's kern_sym_match: a function of that name, and global, or the idx'th, or any. */
static bool func_match(const struct ksym *s, const char *name, int idx, int *cnt)
{
	return ksym_is_function(s) && !s->module && !strcmp(s->name, name) &&
	       ((idx == 0 && isupper((unsigned char)s->type)) || (idx > 0 && ++*cnt == idx) ||
		idx < 0);
}

int kallsyms_func(const struct kallsyms *k, const char *name, int idx, uint64_t *start,
		  uint64_t *size)
{
	bool found = false;
	int cnt = 0;

	*start = *size = 0;
	for (size_t i = 0; i < k->nr; i++) {
		const struct ksym *s = &k->syms[i];

		if (!found) {
			found = func_match(s, name, idx, &cnt);
			if (found)
				*start = s->addr;
			continue;
		}
		/* An alias at the same address does not end it: the next address does. */
		if (!*size)
			*size = s->addr - *start;
		if (idx > 0) {
			if (*size)
				break;
		} else if (func_match(s, name, idx, &cnt)) {
			return -EEXIST;
		}
	}
	return found ? 0 : -ENOENT;
}

int kallsyms_text(const struct kallsyms *k, uint64_t page, uint64_t *start, uint64_t *size)
{
	uint64_t last = 0;	/* the last byte: the end itself may be 2^64 */
	bool started = false;

	*start = *size = 0;
	for (size_t i = 0; i < k->nr; i++) {
		const struct ksym *s = &k->syms[i];
		uint64_t down = s->addr & ~(page - 1), span;

		if (!ksym_is_function(s))
			continue;
		if (!started) {
			*start = s->addr;
			started = true;
		}
		/* Where the kernel ends is not known: perf rounds up and adds a page. */
		span = (down == s->addr ? 1 : 2) * page;
		if (down > UINT64_MAX - (span - 1))
			return -ERANGE;
		if (down + span - 1 > last)
			last = down + span - 1;
	}
	if (!started)
		return -ENOENT;
	*size = last - *start + 1;
	return 0;
}

// SPDX-License-Identifier: MIT
/* perf's address-filter grammar, resolved to the kernel's filter string as perf does. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "symbols.h"

#define PAGE	4096ULL

static int fail(char *errmsg, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(char *errmsg, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errmsg, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* "WHY at character N:\n  SPEC\n  ^" so the user sees where the spec broke. */
static int syntax(char *errmsg, size_t errlen, const char *spec, const char *at,
		  const char *why)
{
	int col = (int)(at - spec);

	return fail(errmsg, errlen, "%s at character %d:\n    %s\n    %*s^\n    filter syntax: "
		    "filter|stop|tracestop START[/SIZE|/END] [@FILE], separated by ',' or ' '",
		    why, col + 1, spec, col, "");
}

static const char *skip(const char *p, const char *set)
{
	return p + strspn(p, set);
}

/*
 * A number (when it starts with a digit, strtoull base 0) or a word up to one of
 * @delim, as perf reads each field: words end only at a space, so "main/4" is
 * one word.
 */
static int field(const char **p, const char *delim, bool num_ok, unsigned long long *num,
		 char **word, const char *spec, const char *what, char *errmsg, size_t errlen)
{
	*p = skip(*p, " ");
	*word = NULL;
	if (isdigit((unsigned char)**p)) {
		char *end;
		char why[128];

		if (!num_ok) {
			snprintf(why, sizeof(why), "%s cannot start with a digit%s", what,
				 !strcmp(what, "a file name") ? " (write ./NAME)" : "");
			return syntax(errmsg, errlen, spec, *p, why);
		}
		errno = 0;
		*num = strtoull(*p, &end, 0);
		if (errno || end == *p) {
			snprintf(why, sizeof(why), "%s is not a number that fits 64 bits", what);
			return syntax(errmsg, errlen, spec, *p, why);
		}
		*p = end;
		return 0;
	}
	size_t n = strcspn(*p, delim);
	char why[128];

	if (!n) {
		snprintf(why, sizeof(why), "%s is missing", what);
		return syntax(errmsg, errlen, spec, *p, why);
	}
	*word = strndup(*p, n);
	if (!*word)
		return fail(errmsg, errlen, "out of memory");
	*p += n;
	return 0;
}

/* "#N" picks the N'th symbol of that name, "#g"/"#G"/"#0" the global one. */
static int selector(const char **p, int *idx, const char *spec, char *errmsg, size_t errlen)
{
	const char *q = skip(*p, " ");
	unsigned long n;
	char *end;

	*idx = -1;
	if (*q != '#')
		return 0;
	q++;
	if (*q == 'g' || *q == 'G') {
		*idx = 0;
		*p = q + 1;
		return 0;
	}
	errno = 0;
	n = strtoul(q, &end, 0);
	if (errno || end == q || n > INT_MAX)
		return syntax(errmsg, errlen, spec, q, "expected a number or 'g' after '#'");
	*idx = (int)n;
	*p = end;
	return 0;
}

static int parse_one(const char **pp, const char *spec, struct filter_item *f, char *errmsg,
		     size_t errlen)
{
	const char *p = *pp, *act;
	unsigned long long dummy;
	char *word = NULL;
	int ret;

	f->pos = (int)(skip(p, " ") - spec);
	act = skip(p, " ");
	ret = field(&p, " ", false, &dummy, &word, spec, "an action", errmsg, errlen);
	if (ret)
		return ret;
	if (strcmp(word, "filter") && strcmp(word, "start") && strcmp(word, "stop") &&
	    strcmp(word, "tracestop")) {
		char why[160];

		snprintf(why, sizeof(why), "unknown action '%.40s' (use filter, stop or "
			 "tracestop)", word);
		free(word);
		return syntax(errmsg, errlen, spec, act, why);
	}
	snprintf(f->action, sizeof(f->action), "%s", word);
	f->range = !strcmp(word, "filter") || !strcmp(word, "tracestop");
	free(word);

	ret = field(&p, " ", true, &f->start, &f->start_sym, spec, "a start symbol or address",
		    errmsg, errlen);
	if (ret)
		return ret;
	f->start_is_sym = f->start_sym != NULL;
	f->start_idx = f->end_idx = -1;
	if (f->start_is_sym && (ret = selector(&p, &f->start_idx, spec, errmsg, errlen)))
		return ret;
	p = skip(p, " ");
	if (*p == '/') {
		p++;
		ret = field(&p, " ", true, &f->size, &f->end_sym, spec,
			    "an end symbol or size", errmsg, errlen);
		if (ret)
			return ret;
		f->end_is_sym = f->end_sym != NULL;
		if (f->end_is_sym && (ret = selector(&p, &f->end_idx, spec, errmsg, errlen)))
			return ret;
		f->range = true;
	}
	p = skip(p, " ");
	if (*p == '@') {
		p++;
		ret = field(&p, " ,", false, &dummy, &f->file, spec, "a file name", errmsg,
			    errlen);
		if (ret)
			return ret;
	}
	f->len = (int)(p - spec) - f->pos;
	while (f->len > 0 && spec[f->pos + f->len - 1] == ' ')
		f->len--;
	p = skip(p, " ,");
	*pp = p;
	return 0;
}

int filter_parse(const char *spec, struct filter_list *l, char *errmsg, size_t errlen)
{
	const char *p = spec;

	memset(l, 0, sizeof(*l));
	if (!*skip(spec, " ,"))
		return fail(errmsg, errlen, "the filter is empty; give at least one, e.g. "
			    "'filter main @ ./prog'");
	while (*p) {
		int ret;

		if (l->nr == FILTER_MAX) {
			filter_list_free(l);
			return syntax(errmsg, errlen, spec, p, "too many filters");
		}
		ret = parse_one(&p, spec, &l->items[l->nr], errmsg, errlen);
		l->nr++;
		if (ret) {
			filter_list_free(l);
			return ret;
		}
	}
	return 0;
}

void filter_list_free(struct filter_list *l)
{
	for (int i = 0; i < l->nr; i++) {
		free(l->items[i].start_sym);
		free(l->items[i].end_sym);
		free(l->items[i].file);
	}
	l->nr = 0;
}

/* What a word names, for messages: "'f #2'". */
static void sym_label(char *buf, size_t len, const char *name, int idx)
{
	if (idx < 0)
		snprintf(buf, len, "'%s'", name);
	else if (!idx)
		snprintf(buf, len, "'%s #g'", name);
	else
		snprintf(buf, len, "'%s #%d'", name, idx);
}

/* ---- kernel symbols, read as perf reads kallsyms ---- */

struct ksym {
	uint64_t addr;
	char type;
	char *name;		/* the rest of the line: "name" or "name\t[module]" */
};

struct kallsyms {
	int nr;
	struct ksym *syms;	/* file order */
};

static void kallsyms_free(struct kallsyms *k)
{
	for (int i = 0; i < k->nr; i++)
		free(k->syms[i].name);
	free(k->syms);
	k->nr = 0;
	k->syms = NULL;
}

static int kallsyms_load(const char *path, struct kallsyms *k, char *errmsg, size_t errlen)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0, n = 0;
	int ret = 0;

	memset(k, 0, sizeof(*k));
	if (!f)
		return fail(errmsg, errlen, "%s: %s; kernel filters need it", path,
			    strerror(errno));
	while (getline(&line, &cap, f) > 0) {
		unsigned long long a;
		char t;
		int off;
		struct ksym *ns;

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%llx %c %n", &a, &t, &off) != 2 || !line[off])
			continue;
		if ((size_t)k->nr == n) {
			n = n ? n * 2 : 4096;
			ns = realloc(k->syms, n * sizeof(*ns));
			if (!ns) {
				ret = fail(errmsg, errlen, "out of memory");
				break;
			}
			k->syms = ns;
		}
		k->syms[k->nr].addr = a;
		k->syms[k->nr].type = t;
		k->syms[k->nr].name = strdup(line + off);
		if (!k->syms[k->nr].name) {
			ret = fail(errmsg, errlen, "out of memory");
			break;
		}
		k->nr++;
	}
	free(line);
	fclose(f);
	if (ret)
		kallsyms_free(k);
	return ret;
}

static bool kfunc(char t)
{
	t = (char)toupper((unsigned char)t);
	return t == 'T' || t == 'W';
}

static bool kmatch(const struct ksym *s, const char *name, int idx, int *cnt)
{
	return kfunc(s->type) && !strcmp(s->name, name) &&
	       ((!idx && isupper((unsigned char)s->type)) || (idx > 0 && ++*cnt == idx) ||
		idx < 0);
}

/* Levenshtein distance, capped, for "did you mean". */
static int distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	int row[65], prev, tmp;

	if (la > 64 || lb > 64)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			tmp = row[j];
			row[j] = prev + (a[i - 1] != b[j - 1]);
			if (row[j - 1] + 1 < row[j])
				row[j] = row[j - 1] + 1;
			if (tmp + 1 < row[j])
				row[j] = tmp + 1;
			prev = tmp;
		}
	}
	return row[lb];
}

/* Up to three names closest to @name, as ", did you mean 'a', 'b'?" (or ""). */
static void suggest(char *buf, size_t len, const char *name, const char *const *names, int nr)
{
	const char *best[3] = { 0 };
	int bd[3] = { 99, 99, 99 };
	int lim = (int)strlen(name) / 3 + 2;
	size_t o;

	for (int i = 0; i < nr; i++) {
		int d = distance(name, names[i]);
		bool seen = false;

		for (int j = 0; j < 3; j++)
			seen |= best[j] && !strcmp(best[j], names[i]);
		if (seen || d > lim)
			continue;
		for (int j = 0; j < 3; j++) {
			if (d < bd[j]) {
				for (int m = 2; m > j; m--) {
					bd[m] = bd[m - 1];
					best[m] = best[m - 1];
				}
				bd[j] = d;
				best[j] = names[i];
				break;
			}
		}
	}
	buf[0] = '\0';
	if (!best[0])
		return;
	o = snprintf(buf, len, "; did you mean ");
	for (int j = 0; j < 3 && best[j] && o < len; j++)
		o += snprintf(buf + o, len - o, "%s'%s'", j ? ", " : "", best[j]);
	if (o < len)
		snprintf(buf + o, len - o, "?");
}

static int not_found(char *errmsg, size_t errlen, const char *where, const char *name, int idx,
		     const char *const *names, int nr)
{
	char lbl[300], sug[400];

	sym_label(lbl, sizeof(lbl), name, idx);
	suggest(sug, sizeof(sug), name, names, nr);
	if (idx > 0)
		return fail(errmsg, errlen, "%s: there are fewer than %d functions named '%s'%s",
			    where, idx, name, sug);
	if (!idx)
		return fail(errmsg, errlen, "%s: no global function %s%s", where, lbl, sug);
	if (strpbrk(name, "/@,"))
		return fail(errmsg, errlen, "%s: no function %s: a symbol name ends only at a "
			    "space, as in perf; write '%.*s %s'", where, lbl,
			    (int)strcspn(name, "/@,"), name, name + strcspn(name, "/@,"));
	return fail(errmsg, errlen, "%s: no function %s (symbols must be functions)%s", where,
		    lbl, sug);
}

/* Every kernel function of that name with its selector, as perf lists them. */
static int kern_ambiguous(const struct kallsyms *k, const char *name, char *errmsg,
			  size_t errlen)
{
	int c = 0, cnt = 0, globals = 0;
	size_t o;

	for (int i = 0; i < k->nr; i++)
		if (kmatch(&k->syms[i], name, -1, &cnt)) {
			c++;
			globals += isupper((unsigned char)k->syms[i].type) != 0;
		}
	o = snprintf(errmsg, errlen, "kernel: %d functions are named '%s':", c, name);
	c = 0;
	for (int i = 0; i < k->nr && o < errlen; i++)
		if (kmatch(&k->syms[i], name, -1, &cnt))
			o += snprintf(errmsg + o, errlen - o, "\n    '%s #%d'  0x%" PRIx64 "  %c",
				      name, ++c, k->syms[i].addr, k->syms[i].type);
	if (o < errlen)
		snprintf(errmsg + o, errlen - o, "\n    choose one with '%s #N'%s%s%s", name,
			 globals == 1 ? ", or the global one with '" : "",
			 globals == 1 ? name : "", globals == 1 ? " #g'" : "");
	return -EINVAL;
}

static int kern_find(const struct kallsyms *k, const char *name, int idx, uint64_t *start,
		     uint64_t *size, char *errmsg, size_t errlen)
{
	bool started = false, dup = false;
	int cnt = 0;

	*start = *size = 0;
	for (int i = 0; i < k->nr; i++) {
		const struct ksym *s = &k->syms[i];

		if (started) {
			/* perf: the size runs to the next line of kallsyms, whatever it is. */
			if (!*size)
				*size = s->addr - *start;
			if (idx > 0) {
				if (*size)
					break;
			} else if (kmatch(s, name, idx, &cnt)) {
				dup = true;
				break;
			}
		} else if (kmatch(s, name, idx, &cnt)) {
			started = true;
			*start = s->addr;
		}
	}
	if (dup)
		return kern_ambiguous(k, name, errmsg, errlen);
	if (!started) {
		const char **names = malloc(sizeof(*names) * (k->nr + 1));
		int n = 0, ret;

		for (int i = 0; names && i < k->nr; i++)
			if (kfunc(k->syms[i].type))
				names[n++] = k->syms[i].name;
		ret = not_found(errmsg, errlen, "kernel", name, idx, names, n);
		free(names);
		return ret;
	}
	if (!*start)
		return fail(errmsg, errlen, "kernel: the address of '%s' reads as 0: kernel "
			    "addresses are hidden (kernel.kptr_restrict); run as root or lower it",
			    name);
	return 0;
}

static int resolve_kernel(struct filter_item *f, const struct filter_opts *o,
			  struct kallsyms *k, char *errmsg, size_t errlen)
{
	const char *path = o->kallsyms ? o->kallsyms : "/proc/kallsyms";
	bool no_size = false;
	uint64_t start, size;
	int ret;

	if (!f->start_is_sym && !f->end_is_sym)
		return 0;
	if (!k->nr && (ret = kallsyms_load(path, k, errmsg, errlen)))
		return ret;
	if (f->start_is_sym && !strcmp(f->start_sym, "*")) {
		bool started = false;

		/* perf: first function to a page past the page of the last one. */
		for (int i = 0; i < k->nr; i++) {
			if (!kfunc(k->syms[i].type))
				continue;
			if (!started) {
				started = true;
				f->start = k->syms[i].addr;
			}
			f->size = ((k->syms[i].addr + PAGE - 1) & ~(PAGE - 1)) + PAGE - f->start;
		}
		if (!started)
			return fail(errmsg, errlen, "%s: no kernel functions in it", path);
		return 0;
	}
	if (f->start_is_sym) {
		ret = kern_find(k, f->start_sym, f->start_idx, &start, &size, errmsg, errlen);
		if (ret)
			return ret;
		f->start = start;
		if (f->range && !f->size && !f->end_is_sym) {
			f->size = size;
			no_size = !size;
		}
	}
	if (f->end_is_sym) {
		ret = kern_find(k, f->end_sym, f->end_idx, &start, &size, errmsg, errlen);
		if (ret)
			return ret;
		if (start + size < f->start)
			return fail(errmsg, errlen, "kernel: '%s' (0x%" PRIx64 ") comes before the "
				    "start (0x%llx); swap them", f->end_sym, start, f->start);
		f->size = start + size - f->start;
		no_size = !size;
	}
	if (no_size)
		return fail(errmsg, errlen, "kernel: the size of '%s' is unknown (it is the last "
			    "symbol in kallsyms); give one: '%s/SIZE'",
			    f->end_is_sym ? f->end_sym : f->start_sym,
			    f->end_is_sym ? f->end_sym : f->start_sym);
	return 0;
}

/* ---- symbols of a file, as perf's dso lookup finds them ---- */

static bool dmatch(const struct symbols_sym *s, const char *name, int idx, int *cnt)
{
	/* perf matches the demangled name; the mangled one is accepted as well. */
	return (!strcmp(s->name, name) || !strcmp(s->elf_name, name)) &&
	       ((!idx && s->bind == SYMBOLS_GLOBAL) || (idx > 0 && ++*cnt == idx) || idx < 0);
}

static int ambiguous(const struct symbols *s, const char *name, char *errmsg, size_t errlen)
{
	int c = 0, cnt = 0, globals = 0;
	size_t o;

	for (int i = 0; i < s->nr; i++) {
		c += dmatch(&s->syms[i], name, -1, &cnt);
		globals += !strcmp(s->syms[i].name, name) && s->syms[i].bind == SYMBOLS_GLOBAL;
	}
	o = snprintf(errmsg, errlen, "%s: %d functions are named '%s':", s->path, c, name);
	c = 0;
	for (int i = 0; i < s->nr && o < errlen; i++) {
		const struct symbols_sym *y = &s->syms[i];

		if (!dmatch(y, name, -1, &cnt))
			continue;
		c++;
		o += snprintf(errmsg + o, errlen - o, "\n    '%s #%d'%s  offset 0x%" PRIx64
			      "  size 0x%" PRIx64 "  %c", name, c,
			      y->bind == SYMBOLS_GLOBAL && globals == 1 ? " or '#g'" : "",
			      y->offset, symbols_size(s, i), symbols_bind_char(y->bind));
	}
	if (o < errlen)
		snprintf(errmsg + o, errlen - o, "\n    choose one with '%s #N'%s", name,
			 globals == 1 ? ", or the global one with '#g'" : "");
	return -EINVAL;
}

static int dso_find(const struct symbols *s, const char *name, int idx, int *which,
		    char *errmsg, size_t errlen)
{
	int cnt = 0, found = -1;

	for (int i = 0; i < s->nr; i++) {
		if (!dmatch(&s->syms[i], name, idx, &cnt))
			continue;
		if (found < 0) {
			found = i;
			if (idx > 0)
				break;
		} else if (idx <= 0) {
			return ambiguous(s, name, errmsg, errlen);
		}
	}
	if (found < 0) {
		const char **names = malloc(sizeof(*names) * (s->nr + 1));
		int ret;

		for (int i = 0; names && i < s->nr; i++)
			names[i] = s->syms[i].name;
		ret = not_found(errmsg, errlen, s->path, name, idx, names, names ? s->nr : 0);
		free(names);
		return ret;
	}
	*which = found;
	return 0;
}

static int resolve_file(struct filter_item *f, char *errmsg, size_t errlen, char **realp)
{
	struct symbols s;
	int ret, a = -1, b = -1;
	uint64_t seg_end = 0;
	bool size_given = f->size != 0;

	ret = symbols_load(f->file, &s, errmsg, errlen);
	if (ret) {
		if (ret == -ENODATA && !f->start_is_sym && !f->end_is_sym) {
			/* Addresses alone need no symbols: only the file's real path. */
			*realp = realpath(f->file, NULL);
			return *realp ? 0 : fail(errmsg, errlen, "%s: %s", f->file,
						 strerror(errno));
		}
		return ret == -ENOMEM ? ret : -EINVAL;
	}
	*realp = strdup(s.path);
	if (!*realp) {
		ret = fail(errmsg, errlen, "out of memory");
		goto out;
	}
	if (f->start_is_sym && !strcmp(f->start_sym, "*")) {
		f->start = 0;
		f->size = s.file_size;
		goto out;
	}
	if (f->start_is_sym) {
		ret = dso_find(&s, f->start_sym, f->start_idx, &a, errmsg, errlen);
		if (ret)
			goto out;
		f->start = s.syms[a].offset;
		seg_end = s.syms[a].seg_end;
		if (f->range && !f->size && !f->end_is_sym)
			f->size = symbols_size(&s, a);
	}
	if (f->end_is_sym) {
		uint64_t st, sz;

		ret = dso_find(&s, f->end_sym, f->end_idx, &b, errmsg, errlen);
		if (ret)
			goto out;
		st = s.syms[b].offset;
		sz = symbols_size(&s, b);
		if (st + sz < f->start) {
			ret = fail(errmsg, errlen, "%s: '%s' (offset 0x%" PRIx64 ") comes before "
				   "the start (offset 0x%llx); swap them", s.path, f->end_sym, st,
				   f->start);
			goto out;
		}
		f->size = st + sz - f->start;
	}
	/* Only a size the user wrote can overrun: perf's own sizes are taken as they are. */
	if (a >= 0 && !f->end_is_sym && size_given && f->start + f->size > seg_end) {
		ret = fail(errmsg, errlen, "%s: the range 0x%llx/0x%llx from '%s' runs past the "
			   "end of its segment (file offset 0x%" PRIx64 "); use a smaller size",
			   s.path, f->start, f->size, f->start_sym, seg_end);
		goto out;
	}
out:
	if (ret) {
		free(*realp);
		*realp = NULL;
	}
	symbols_free(&s);
	return ret;
}

/* The intel_pt driver's and the kernel's refusals, found before anything is opened. */
static int check_list(const char *spec, const struct filter_list *l, const struct filter_opts *o,
		      char *errmsg, size_t errlen)
{
	int max = o->nr_addr_filters;

	if (o->num_address_ranges >= 0 && (max < 0 || o->num_address_ranges < max))
		max = o->num_address_ranges;
	if (max <= 0)
		return fail(errmsg, errlen, "'%s': this PMU has no address filters "
			    "(nr_addr_filters %d, caps/num_address_ranges %d)", spec,
			    o->nr_addr_filters, o->num_address_ranges);
	if (l->nr > max)
		return fail(errmsg, errlen, "'%s': %d ranges, but this PMU has %d "
			    "(nr_addr_filters %d, caps/num_address_ranges %d); use at most %d",
			    spec, l->nr, max, o->nr_addr_filters, o->num_address_ranges, max);
	for (int i = 0; i < l->nr; i++) {
		const struct filter_item *f = &l->items[i];

		if (!strcmp(f->action, "start"))
			return fail(errmsg, errlen, "'%.*s': the intel_pt driver refuses 'start' "
				    "filters (it traces address ranges, not from a point on); use "
				    "'filter START[/SIZE]' instead", f->len, spec + f->pos);
		if (f->file && !o->task_target)
			return fail(errmsg, errlen, "'%.*s': a filter on a file (@%s) needs a "
				    "process to map it: a command, -p or -t, not -a alone",
				    f->len, spec + f->pos, f->file);
		if (!f->file && !o->kernel)
			return fail(errmsg, errlen, "'%.*s': without @FILE this is a kernel "
				    "filter, but the event does not trace the kernel; add '@ FILE' "
				    "or trace the kernel (e.g. -e intel_pt//k)", f->len,
				    spec + f->pos);
	}
	return 0;
}

static int check_size(const char *spec, const struct filter_item *f, char *errmsg,
		      size_t errlen)
{
	if (f->size)
		return 0;
	if (!f->range)
		return fail(errmsg, errlen, "'%.*s': '%s' without a size is a single address, "
			    "which the intel_pt driver refuses; use 'tracestop START' to stop on "
			    "a whole function, or give a size: START/SIZE", f->len,
			    spec + f->pos, f->action);
	return fail(errmsg, errlen, "'%.*s': the range has size 0, which the intel_pt "
		    "driver refuses; give a size: START/SIZE", f->len, spec + f->pos);
}

static int append(char **s, size_t *len, const struct filter_item *f, const char *path)
{
	const char *act = !strcmp(f->action, "tracestop") ? "stop" : f->action;
	char *n;
	int w;

	if (f->range)
		w = asprintf(&n, "%s%s%s 0x%llx/0x%llx%s%s", *s ? *s : "", *s ? "," : "", act,
			     f->start, f->size, path ? "@" : "", path ? path : "");
	else
		w = asprintf(&n, "%s%s%s 0x%llx%s%s", *s ? *s : "", *s ? "," : "", act, f->start,
			     path ? "@" : "", path ? path : "");
	if (w < 0)
		return -ENOMEM;
	free(*s);
	*s = n;
	*len = (size_t)w;
	return 0;
}

int filter_build(const char *spec, const struct filter_opts *o, char **kernel_str,
		 char *errmsg, size_t errlen)
{
	struct filter_list l;
	struct kallsyms k = { 0 };
	char *out = NULL;
	size_t len = 0;
	int ret;

	*kernel_str = NULL;
	ret = filter_parse(spec, &l, errmsg, errlen);
	if (ret)
		return ret;
	ret = check_list(spec, &l, o, errmsg, errlen);
	for (int i = 0; !ret && i < l.nr; i++) {
		struct filter_item *f = &l.items[i];
		char *path = NULL;

		if (f->file)
			ret = resolve_file(f, errmsg, errlen, &path);
		else
			ret = resolve_kernel(f, o, &k, errmsg, errlen);
		if (!ret)
			ret = check_size(spec, f, errmsg, errlen);
		if (!ret && append(&out, &len, f, path))
			ret = fail(errmsg, errlen, "out of memory");
		free(path);
	}
	kallsyms_free(&k);
	filter_list_free(&l);
	if (ret) {
		free(out);
		return ret;
	}
	*kernel_str = out;
	return 0;
}

// SPDX-License-Identifier: MIT
/* Address filters: perf's grammar and resolution, then intel_pt's rules. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "filter.h"
#include "kallsyms.h"
#include "symbols.h"

#define MAX_FILTERS 64

struct afilter {
	char action[16];	/* as sent: tracestop becomes stop */
	const char *keyword;	/* as written */
	bool range;
	bool start;		/* start or filter */
	char *sym_from, *sym_to, *file;
	int idx_from, idx_to;	/* -1 none, 0 global (#g), N the N'th */
	uint64_t addr, size;
	size_t pos;		/* where it begins in the spec */
	uint64_t seg_end;	/* file offset where START's segment ends (symbols only) */
};

struct ctx {
	const char *spec;
	const struct filter_opts *o;
	struct error *e;
	struct warnings *w;
	struct kallsyms ks;	/* read at the first kernel filter */
	bool ks_loaded;
};

static const char *kallsyms_path(const struct ctx *c)
{
	return c->o->kallsyms ? c->o->kallsyms : "/proc/kallsyms";
}

/* A usage error; with @pos (not SIZE_MAX), the spec and a caret under that place. */
__attribute__((format(printf, 3, 4)))
static int bad(struct ctx *c, size_t pos, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (pos == SIZE_MAX)
		return err_usage(c->e, "%s", msg);
	return err_usage(c->e, "%s\n  %s\n  %*s^", msg, c->spec, (int)pos, "");
}

/* ---- parsing (perf's tokens: words end at a space; file names at space or comma) ---- */

struct cursor {
	char *buf;	/* a private copy of the spec */
	char *p;
};

static size_t at(const struct cursor *cur)
{
	return (size_t)(cur->p - cur->buf);
}

static void skip(struct cursor *cur, const char *set)
{
	cur->p += strspn(cur->p, set);
}

/* A number (base 0, as strtoull) or a word up to one of @delims. */
static int num_or_word(struct ctx *c, struct cursor *cur, uint64_t *num, char **word,
		       const char *delims, const char *what)
{
	size_t n;

	skip(cur, " ");
	*word = NULL;
	if (isdigit((unsigned char)*cur->p)) {
		char *end;

		if (!num)
			return bad(c, at(cur), "%s cannot start with a digit", what);
		errno = 0;
		*num = strtoull(cur->p, &end, 0);
		if (errno || end == cur->p)
			return bad(c, at(cur), "%s is not a number", what);
		cur->p = end;
		return 0;
	}
	n = strcspn(cur->p, delims);
	/* "work / @ FILE": the '@' starts the file, not a symbol. */
	if (!n || (*cur->p == '@' && num))
		return bad(c, at(cur), "%s is missing", what);
	*word = cur->p;
	cur->p += n;
	if (*cur->p) {
		*cur->p = '\0';
		cur->p++;
	}
	return 0;
}

static int sym_index(struct ctx *c, struct cursor *cur, int *idx)
{
	char *end;
	unsigned long v;

	*idx = -1;
	skip(cur, " ");
	if (*cur->p != '#')
		return 0;
	cur->p++;
	if (*cur->p == 'g' || *cur->p == 'G') {
		cur->p++;
		*idx = 0;
		return 0;
	}
	errno = 0;
	v = strtoul(cur->p, &end, 0);
	if (errno || end == cur->p || v > INT_MAX)
		return bad(c, at(cur), "'#' must be followed by a number or g (e.g. main #2, main #g)");
	cur->p = end;
	*idx = (int)v;
	return 0;
}

static int parse_one(struct ctx *c, struct cursor *cur, struct afilter *f)
{
	char *word;
	int ret;

	memset(f, 0, sizeof(*f));
	f->idx_from = f->idx_to = -1;
	skip(cur, " ");
	f->pos = at(cur);
	ret = num_or_word(c, cur, NULL, &word, " ", "the action");
	if (ret)
		return ret;
	f->keyword = word;
	if (!strcmp(word, "filter")) {
		f->start = f->range = true;
	} else if (!strcmp(word, "start")) {
		f->start = true;
	} else if (!strcmp(word, "stop")) {
		f->start = false;
	} else if (!strcmp(word, "tracestop")) {
		f->range = true;
		word += 5;	/* perf sends tracestop as a ranged stop */
	} else {
		return bad(c, f->pos, "'%s' is not an action: use filter, start, stop or tracestop",
			   word);
	}
	snprintf(f->action, sizeof(f->action), "%s", word);
	ret = num_or_word(c, cur, &f->addr, &f->sym_from, " ", "the start (a symbol or address)");
	if (!ret && f->sym_from)
		ret = sym_index(c, cur, &f->idx_from);
	if (ret)
		return ret;
	skip(cur, " ");
	if (*cur->p == '/') {
		cur->p++;
		ret = num_or_word(c, cur, &f->size, &f->sym_to, " ", "the size or end symbol");
		if (!ret && f->sym_to)
			ret = sym_index(c, cur, &f->idx_to);
		if (ret)
			return ret;
		f->range = true;
	}
	skip(cur, " ");
	if (*cur->p == '@') {
		cur->p++;
		ret = num_or_word(c, cur, NULL, &f->file, " ,", "the file name");
		if (ret)
			return ret;
	}
	skip(cur, " ,");
	return 0;
}

/* The keyword as written, kept past the parse buffer. */
static const char *static_keyword(const char *k)
{
	static const char *const kw[] = { "filter", "start", "stop", "tracestop" };

	for (size_t i = 0; i < sizeof(kw) / sizeof(kw[0]); i++)
		if (!strcmp(k, kw[i]))
			return kw[i];
	return "filter";
}

/* ---- resolution ------------------------------------------------------- */

/* ADDR + SIZE, where the range ends, is past 2^64: the range would wrap around to 0. */
static bool wraps(uint64_t addr, uint64_t size)
{
	return size > UINT64_MAX - addr;
}

/* An END symbol's own range wraps: said with the symbol's name. */
static int end_wraps(struct ctx *c, const struct afilter *f, uint64_t start, uint64_t size)
{
	return bad(c, f->pos, "'%s' (0x%" PRIx64 ", size 0x%" PRIx64 ") ends past the top of the "
		   "address space (2^64), so the range would wrap around to 0", f->sym_to, start,
		   size);
}

static int unknown_symbol(struct ctx *c, const struct afilter *f, const struct symtab *t,
			  const char *name, int idx)
{
	const char *near[4];
	char list[512] = "";
	size_t n = symbols_nearest(t, name, near, 4), len = 0;

	for (size_t i = 0; i < n; i++)
		len += snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "", near[i]);
	if (strpbrk(name, "/@"))
		return bad(c, f->pos, "no function '%s' in %s: after a symbol, put spaces around "
			   "'/' and '@' (e.g. 'filter main / 0x40 @ ./prog')", name, t->path);
	return bad(c, f->pos, "no function '%s'%s in %s (%s)%s%s%s", name,
		   idx > 0 ? " with that #N" : idx == 0 ? " that is global" : "", t->path, t->table,
		   n ? "; did you mean " : "", list, n ? "?" : "; 'ptcollect symbols FILE' lists them");
}

/* perf's find_dso_sym: the match in address order; any second match is ambiguous. */
static int find_sym(struct ctx *c, const struct afilter *f, const struct symtab *t,
		    const char *name, int idx, const struct symbol **out)
{
	const struct symbol *found = NULL;
	int cnt = 0, dup = 0;

	for (size_t i = 0; i < t->nr; i++) {
		const struct symbol *s = &t->syms[i];
		bool match = !strcmp(s->name, name) &&
			     ((idx == 0 && s->bind == 'g') || (idx > 0 && ++cnt == idx) || idx < 0);

		if (!match)
			continue;
		if (!found) {
			found = s;
			if (idx > 0)
				break;
		} else {
			dup++;
		}
	}
	if (!found)
		return unknown_symbol(c, f, t, name, idx);
	if (dup) {
		char list[1536];
		size_t len = 0;
		int k = 0;

		for (size_t i = 0; i < t->nr; i++) {
			const struct symbol *s = &t->syms[i];

			if (strcmp(s->name, name))
				continue;
			k++;
			len += snprintf(list + len, sizeof(list) - len,
					"\n    %s #%d   at 0x%" PRIx64 " (file offset 0x%" PRIx64 ", %s)",
					name, k, s->addr, s->offset, s->bind == 'g' ? "global" :
					s->bind == 'w' ? "weak" : "local");
			if (len >= sizeof(list))
				break;
		}
		return bad(c, SIZE_MAX, "'%s' is ambiguous in %s: select one with #N, or a global one "
			   "with #g:%s", name, t->path, list);
	}
	*out = found;
	return 0;
}

static int resolve_file(struct ctx *c, struct afilter *f)
{
	const struct symbol *s;
	bool at_edge = false;
	struct symtab t;
	int ret;

	ret = symbols_load(&t, f->file, c->e, c->w);
	if (ret)
		return ret;
	/* perf sends the real path of the file. */
	free(f->file);
	f->file = strdup(t.path);
	if (!f->file) {
		symbols_free(&t);
		return err_runtime(c->e, -ENOMEM, "out of memory");
	}
	if (f->sym_from && !strcmp(f->sym_from, "*")) {
		f->addr = 0;
		f->size = t.file_size;
		goto out;
	}
	if (f->sym_from) {
		ret = find_sym(c, f, &t, f->sym_from, f->idx_from, &s);
		if (ret)
			goto out;
		f->addr = s->offset;
		f->seg_end = s->seg_end;
		at_edge = s->offset == s->seg_start;
		if (f->range && !f->size && !f->sym_to) {
			/*
			 * perf would stretch a size-0 symbol to the next one, which
			 * may be unrelated code: ask for the size instead.
			 */
			if (s->size_unknown) {
				ret = bad(c, f->pos, "'%s' has size 0 in %s (its source gave no .size); "
					  "give the size: '%s %s / 0x40 @ %s'", s->name, t.path,
					  f->keyword, s->name, f->file);
				goto out;
			}
			f->size = s->size;
		}
	}
	if (f->sym_to) {
		ret = find_sym(c, f, &t, f->sym_to, f->idx_to, &s);
		if (ret)
			goto out;
		if (s->size_unknown) {
			ret = bad(c, f->pos, "'%s' has size 0 in %s (its source gave no .size), so "
				  "where it ends is unknown; give a size instead", s->name, t.path);
			goto out;
		}
		if (wraps(s->offset, s->size)) {
			ret = end_wraps(c, f, s->offset, s->size);
			goto out;
		}
		if (s->offset + s->size < f->addr) {
			ret = bad(c, f->pos, "'%s' (0x%" PRIx64 ") comes before the start (0x%" PRIx64
				  ")", f->sym_to, s->offset, f->addr);
			goto out;
		}
		f->size = s->offset + s->size - f->addr;
	}
out:
	/*
	 * The perf core (6.1 to at least 6.8) matches a filter that starts
	 * exactly at a VMA's start to the VMA before it, on a process that is
	 * already running: the range comes out with size 0, which intel_pt
	 * turns into "everything above the start".
	 */
	if (!ret && at_edge)
		warn_add(c->w, "'%s' starts exactly where a segment of %s is mapped (offset 0x%"
			 PRIx64 "): on a process that is already running, Linux resolves such a "
			 "filter to a size-0 range, which Intel PT treats as everything above it; "
			 "with -p/-t, start one byte later (0x%" PRIx64 "/0x%" PRIx64 ")",
			 f->sym_from, t.path, f->addr, f->addr + 1, f->size ? f->size - 1 : 0);
	symbols_free(&t);
	return ret;
}

/* kallsyms, read at the first kernel filter and kept for the others. */
static int kernel_syms(struct ctx *c)
{
	int ret;

	if (c->ks_loaded)
		return 0;
	ret = kallsyms_load(&c->ks, kallsyms_path(c), c->e);
	if (ret && c->e->usage)
		return bad(c, SIZE_MAX, "kernel filters need %s", c->e->why);
	c->ks_loaded = !ret;
	return ret;
}

/* Every kernel function named @name, as "\n    name #N   at 0xADDR (global)" lines. */
static void kernel_candidates(const struct kallsyms *k, const char *name, char *list, size_t len)
{
	size_t n = 0;
	int nth = 0;

	list[0] = '\0';
	for (size_t i = 0; i < k->nr && n < len; i++) {
		const struct ksym *s = &k->syms[i];

		if (!ksym_is_function(s) || s->module || strcmp(s->name, name))
			continue;
		n += snprintf(list + n, len - n, "\n    %s #%d   at 0x%" PRIx64 " (%s)", name,
			      ++nth, s->addr, isupper((unsigned char)s->type) ? "global" : "local");
	}
}

/* A module's function of that name, which perf's kernel filters never match. */
static const char *module_of(const struct kallsyms *k, const char *name)
{
	for (size_t i = 0; i < k->nr; i++)
		if (k->syms[i].module && ksym_is_function(&k->syms[i]) &&
		    !strcmp(k->syms[i].name, name))
			return k->syms[i].module;
	return NULL;
}

/* perf's find_kern_sym, with its refusals said in full. */
static int kernel_func(struct ctx *c, const struct afilter *f, const char *name, int idx,
		       uint64_t *start, uint64_t *size)
{
	int ret = kallsyms_func(&c->ks, name, idx, start, size);
	const char *mod = ret == -ENOENT ? module_of(&c->ks, name) : NULL;
	char list[1536];

	if (ret == -ENOENT)
		return bad(c, f->pos, "no kernel function '%s'%s in %s%s%s%s", name,
			   idx > 0 ? " with that #N" : idx == 0 ? " that is global" : "",
			   kallsyms_path(c), mod ? " (it is in module [" : "", mod ? mod : "",
			   mod ? "]: kernel filters name functions of the kernel itself, as "
			   "perf's do)" : "");
	if (ret == -EEXIST) {
		kernel_candidates(&c->ks, name, list, sizeof(list));
		return bad(c, f->pos, "kernel function '%s' is ambiguous: select one with #N "
			   "(in kallsyms order) or a global one with #g:%s", name, list);
	}
	if (!*start)
		return bad(c, SIZE_MAX, "kernel addresses are restricted (kptr_restrict); run as "
			   "root to use kernel filters");
	return 0;
}

/* perf's kernel resolution over kallsyms, in file order. */
static int resolve_kernel(struct ctx *c, struct afilter *f)
{
	uint64_t start, size;
	int ret = kernel_syms(c);

	if (ret)
		return ret;
	if (f->sym_from && !strcmp(f->sym_from, "*")) {
		ret = kallsyms_text(&c->ks, (uint64_t)sysconf(_SC_PAGESIZE), &f->addr, &f->size);
		if (ret == -ERANGE)
			return bad(c, f->pos, "the kernel's functions in %s run to the end of the "
				   "address space, so a page past them wraps past 2^64; give the "
				   "range as START/SIZE", kallsyms_path(c));
		if (ret || !f->addr)
			return bad(c, SIZE_MAX, "no kernel functions with addresses in %s "
				   "(kernel addresses are restricted: kptr_restrict)",
				   kallsyms_path(c));
		return 0;
	}
	if (f->sym_from) {
		ret = kernel_func(c, f, f->sym_from, f->idx_from, &start, &size);
		if (ret)
			return ret;
		f->addr = start;
		if (f->range && !f->size && !f->sym_to) {
			if (!size)
				return bad(c, f->pos, "cannot tell the size of kernel function "
					   "'%s'", f->sym_from);
			f->size = size;
		}
	}
	if (f->sym_to) {
		ret = kernel_func(c, f, f->sym_to, f->idx_to, &start, &size);
		if (ret)
			return ret;
		if (!size)
			return bad(c, f->pos, "cannot tell the size of kernel function '%s'",
				   f->sym_to);
		if (wraps(start, size))
			return end_wraps(c, f, start, size);
		if (start + size < f->addr)
			return bad(c, f->pos, "'%s' comes before the start", f->sym_to);
		f->size = start + size - f->addr;
	}
	return 0;
}

/* What intel_pt (and the perf core) would refuse, refused here with what to do instead. */
static int check_intel_pt(struct ctx *c, const struct afilter *f)
{
	if (!strcmp(f->keyword, "start"))
		return bad(c, f->pos, "the intel_pt driver does not support 'start' filters; use "
			   "'filter' to trace inside a range, or 'tracestop' to stop in one");
	if (!f->range)
		return bad(c, f->pos, "the intel_pt driver needs a range: a single-address '%s' is "
			   "refused; use 'tracestop SYMBOL' or give a size (ADDR/SIZE)", f->keyword);
	if (!f->size)
		return bad(c, f->pos, "the range has size 0, which the intel_pt driver refuses; "
			   "give a size (START/SIZE) or an end symbol (START/END)");
	if (wraps(f->addr, f->size))
		return bad(c, f->pos, "the range 0x%" PRIx64 "/0x%" PRIx64 " ends past the top of "
			   "the address space (2^64), so it would wrap around to 0; give a smaller "
			   "size", f->addr, f->size);
	if (f->file && !c->o->task_target)
		return bad(c, f->pos, "a filter on a file needs a task to map it: give a COMMAND, "
			   "-p or -t (not -a or -C alone)");
	if (!f->file && !c->o->traces_kernel)
		return bad(c, f->pos, "a filter without @FILE is a kernel filter, but the event does "
			   "not trace the kernel; add @FILE, or trace the kernel (-e intel_pt//k)");
	/* Compared without adding: a corrupt ELF can give sizes that wrap around. */
	if (f->file && f->seg_end && (f->addr > f->seg_end || f->size > f->seg_end - f->addr))
		return bad(c, f->pos, "the range 0x%" PRIx64 "/0x%" PRIx64 " runs past the end of "
			   "its segment in %s (file offset 0x%" PRIx64 "); give a smaller size",
			   f->addr, f->size, f->file, f->seg_end);
	return 0;
}

/* Every filter of the spec, its strings owned (the cursor's buffer is freed before return). */
static int parse_all(struct ctx *c, struct afilter *f, int *nr)
{
	struct cursor cur;
	int ret = 0;

	*nr = 0;
	cur.buf = strdup(c->spec);
	if (!cur.buf)
		return err_runtime(c->e, -ENOMEM, "out of memory");
	cur.p = cur.buf;
	skip(&cur, " ,");
	if (!*cur.p)
		ret = bad(c, SIZE_MAX, "the filter is empty");
	while (!ret && *cur.p) {
		struct afilter *n = &f[*nr];
		const char *from, *to, *file;

		if (*nr == MAX_FILTERS) {
			ret = bad(c, SIZE_MAX, "more than %d filters", MAX_FILTERS);
			break;
		}
		ret = parse_one(c, &cur, n);
		if (ret)
			break;
		from = n->sym_from, to = n->sym_to, file = n->file;
		n->sym_from = from ? strdup(from) : NULL;
		n->sym_to = to ? strdup(to) : NULL;
		n->file = file ? strdup(file) : NULL;
		n->keyword = static_keyword(n->keyword);
		(*nr)++;
		if ((from && !n->sym_from) || (to && !n->sym_to) || (file && !n->file))
			ret = err_runtime(c->e, -ENOMEM, "out of memory");
	}
	free(cur.buf);
	return ret;
}

/* Symbols to addresses; a file named without a symbol to its real path, as perf sends it. */
static int resolve(struct ctx *c, struct afilter *f)
{
	char real[PATH_MAX], *n;

	if (f->sym_from || f->sym_to)
		return f->file ? resolve_file(c, f) : resolve_kernel(c, f);
	if (!f->file)
		return 0;
	if (!realpath(f->file, real))
		return bad(c, SIZE_MAX, "%s: %s", f->file, strerror(errno));
	n = strdup(real);
	if (!n)
		return err_runtime(c->e, -ENOMEM, "out of memory");
	free(f->file);
	f->file = n;
	return 0;
}

/* perf's form: "ACTION 0xADDR/0xSIZE@FILE", joined with ','. */
static int append(struct ctx *c, char **out, size_t *len, const struct afilter *f)
{
	char one[PATH_MAX + 128], *n;
	int k = snprintf(one, sizeof(one), "%s%s 0x%" PRIx64 "/0x%" PRIx64 "%s%s",
			 *len ? "," : "", f->action, f->addr, f->size, f->file ? "@" : "",
			 f->file ? f->file : "");

	n = realloc(*out, *len + k + 1);
	if (!n)
		return err_runtime(c->e, -ENOMEM, "out of memory");
	*out = n;
	memcpy(*out + *len, one, k + 1);
	*len += k;
	return 0;
}

int filter_build(const char *spec, const struct filter_opts *o, char **kernel_str,
		 struct error *e, struct warnings *w)
{
	struct ctx c = { .spec = spec, .o = o, .e = e, .w = w };
	struct afilter f[MAX_FILTERS];
	char *out = NULL;
	size_t len = 0;
	int nr, ret, max;

	*kernel_str = NULL;
	ret = parse_all(&c, f, &nr);
	max = o->nr_addr_filters;
	if (o->num_address_ranges >= 0 && o->num_address_ranges < max)
		max = o->num_address_ranges;
	if (!ret && nr > max)
		ret = bad(&c, SIZE_MAX, "%d filters, but this PMU has %d address ranges "
			  "(nr_addr_filters %d, caps/num_address_ranges %d); use at most %d",
			  nr, max, o->nr_addr_filters, o->num_address_ranges, max);
	for (int i = 0; !ret && i < nr; i++) {
		ret = resolve(&c, &f[i]);
		if (!ret)
			ret = check_intel_pt(&c, &f[i]);
		if (!ret)
			ret = append(&c, &out, &len, &f[i]);
	}
	for (int i = 0; i < nr; i++) {
		free(f[i].sym_from);
		free(f[i].sym_to);
		free(f[i].file);
	}
	kallsyms_free(&c.ks);
	if (ret) {
		free(out);
		return ret;
	}
	*kernel_str = out;
	return 0;
}

int filter_ranges(const char *s, struct filter_ranges *r)
{
	struct filter_ranges out = { .nr = 0 };

	if (!s || !*s)
		return 0;
	for (;;) {
		char action[8];
		uint64_t a, size;
		int used = 0;

		if (out.nr == 4 || sscanf(s, " %7[a-z] 0x%" SCNx64 "/0x%" SCNx64 "%n", action, &a,
					  &size, &used) != 3 || !used || !size || a + (size - 1) < a)
			return 0;
		if (!strcmp(action, "filter"))
			out.cfg[out.nr] = 1;	/* FilterEn */
		else if (!strcmp(action, "stop"))
			out.cfg[out.nr] = 2;	/* TraceStop */
		else
			return 0;
		out.a[out.nr] = a;
		out.b[out.nr] = a + (size - 1);
		out.nr++;
		s += used;
		if (!*s)
			break;
		if (*s != ',')
			return 0;	/* "@FILE", or what this does not know */
		s++;
	}
	*r = out;
	return 1;
}

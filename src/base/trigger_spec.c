// SPDX-License-Identifier: MIT
/* --trigger specs: syntax, then the probe's file offset from FILE's symbols. */
#include <capstone/capstone.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "csopen.h"
#include "symbols.h"
#include "trigger_spec.h"

#define SPEC_HINT "write uprobe:FILE:SYMBOL[+OFF][=ACTION] or breakpoint:FILE:SYMBOL[+OFF][=ACTION]"
#define ACTION_LIST "snapshot, start, stop or mark"

static const char *const kind_names[] = {
	[TRIGGER_UPROBE] = "uprobe",
	[TRIGGER_BREAKPOINT] = "breakpoint",
};

static const char *const action_names[] = {
	[TRIGGER_ACT_DEFAULT] = "default",
	[TRIGGER_ACT_SNAPSHOT] = "snapshot",
	[TRIGGER_ACT_START] = "start",
	[TRIGGER_ACT_STOP] = "stop",
	[TRIGGER_ACT_MARK] = "mark",
};

const char *trigger_kind_name(enum trigger_kind k)
{
	return (unsigned)k < 2 ? kind_names[k] : "?";
}

const char *trigger_action_name(enum trigger_action a)
{
	return (unsigned)a < 5 ? action_names[a] : "?";
}

void trigger_spec_free(struct trigger_spec *s)
{
	free(s->text);
	free(s->file);
	free(s->symbol);
	free(s->path);
	memset(s, 0, sizeof(*s));
}

static int bad(struct error *e, const struct trigger_spec *s, const char *hint, const char *fmt,
	       ...) __attribute__((format(printf, 4, 5)));

/* A usage error: "'SPEC': why", with what to write instead. */
static int bad(struct error *e, const struct trigger_spec *s, const char *hint, const char *fmt,
	       ...)
{
	char why[1536];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	err_usage(e, "'%s': %s", s->text, why);
	err_hint(e, "%s", hint);
	return -EINVAL;
}

static int parse_kind(const char *k, size_t len, enum trigger_kind *out)
{
	for (unsigned i = 0; i < 2; i++) {
		if (strlen(kind_names[i]) == len && !strncmp(k, kind_names[i], len)) {
			*out = i;
			return 0;
		}
	}
	return -EINVAL;
}

/* Takes "=ACTION" off the end of @sym when a lowercase word follows its last '='. */
static int take_action(struct trigger_spec *s, char *sym, struct error *e)
{
	char *eq = strrchr(sym, '='), *p;

	if (!eq)
		return 0;
	for (p = eq + 1; *p && islower((unsigned char)*p); p++)
		;
	if (*p)
		return 0;	/* "operator=(A const&)": part of the name */
	if (eq[1] == '\0')
		return bad(e, s, "add one of " ACTION_LIST " after '=', or leave out '='",
			   "no action after '='");
	for (unsigned i = TRIGGER_ACT_SNAPSHOT; i <= TRIGGER_ACT_MARK; i++) {
		if (!strcmp(eq + 1, action_names[i])) {
			s->action = i;
			*eq = '\0';
			return 0;
		}
	}
	return bad(e, s, "the action is one of " ACTION_LIST, "unknown action '%s'", eq + 1);
}

/* Takes "+OFF" off the end of @sym when a digit follows its last '+'. */
static int take_offset(struct trigger_spec *s, char *sym, struct error *e)
{
	char *plus = strrchr(sym, '+'), *end;
	unsigned long long v;

	if (!plus || !isdigit((unsigned char)plus[1]))
		return 0;
	errno = 0;
	v = strtoull(plus + 1, &end, 0);
	if (errno || *end || end == plus + 1)
		return bad(e, s, "write the offset in bytes from the function's start, as '+16' or "
			   "'+0x10'", "bad offset '%s'", plus + 1);
	s->sym_off = v;
	*plus = '\0';
	return 0;
}

static int parse_fields(const char *text, struct trigger_spec *s, struct error *e)
{
	const char *c1 = strchr(text, ':'), *c2;
	char *sym;
	int ret;

	if (!c1)
		return bad(e, s, SPEC_HINT, "no kind: a trigger starts with 'uprobe:' or "
			   "'breakpoint:'");
	if (parse_kind(text, c1 - text, &s->kind))
		return bad(e, s, SPEC_HINT, "unknown trigger kind '%.*s'", (int)(c1 - text), text);
	c2 = strchr(c1 + 1, ':');
	if (!c2 || c2 == c1 + 1)
		return bad(e, s, SPEC_HINT, "no file: after '%s:' name the executable or library, "
			   "then ':SYMBOL'", kind_names[s->kind]);
	s->file = strndup(c1 + 1, c2 - c1 - 1);
	sym = strdup(c2 + 1);
	if (!s->file || !sym) {
		free(sym);
		return err_runtime(e, -ENOMEM, "out of memory");
	}
	ret = take_action(s, sym, e);
	if (!ret)
		ret = take_offset(s, sym, e);
	if (!ret && !*sym)
		ret = bad(e, s, SPEC_HINT, "no symbol after '%s:%s:'", kind_names[s->kind],
			  s->file);
	if (ret) {
		free(sym);
		return ret;
	}
	s->symbol = sym;
	return 0;
}

int trigger_spec_parse(const char *text, struct trigger_spec *s, struct error *e)
{
	int ret;

	memset(s, 0, sizeof(*s));
	s->text = strdup(text);
	if (!s->text)
		return err_runtime(e, -ENOMEM, "out of memory");
	ret = parse_fields(text, s, e);
	if (ret)
		trigger_spec_free(s);
	return ret;
}

/* ---- resolution ---------------------------------------------------------- */

static int no_symbol(struct error *e, const struct trigger_spec *s, const struct symtab *t)
{
	const char *near[4];
	char list[512] = "";
	size_t n = symbols_nearest(t, s->symbol, near, 4), len = 0;

	for (size_t i = 0; i < n && len < sizeof(list); i++)
		len += snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "", near[i]);
	err_usage_code(e, -ENOENT, "'%s': no function '%s' in %s (%s)", s->text, s->symbol,
		       t->path, t->table);
	if (n)
		err_hint(e, "did you mean %s?", list);
	else
		err_hint(e, "'ptcollect symbols %s' lists the functions a trigger can name",
			 s->file);
	return -ENOENT;
}

/* The function named SYMBOL; several at different offsets are ambiguous. */
static int find_symbol(const struct symtab *t, const struct trigger_spec *s,
		       const struct symbol **out, struct error *e)
{
	const struct symbol *found = NULL;
	char list[1024] = "";
	size_t len = 0;
	int other = 0;

	for (size_t i = 0; i < t->nr; i++) {
		const struct symbol *y = &t->syms[i];

		if (strcmp(y->name, s->symbol))
			continue;
		if (len < sizeof(list))
			len += snprintf(list + len, sizeof(list) - len, "%s0x%" PRIx64,
					len ? ", " : "", y->offset);
		if (!found)
			found = y;
		else if (y->offset != found->offset)
			other++;
	}
	if (!found)
		return no_symbol(e, s, t);
	if (other) {
		bad(e, s, "rename one of them, or trigger on a function that calls it",
		    "'%s' names %d functions in %s (file offsets %s): a trigger needs one",
		    s->symbol, other + 1, t->path, list);
		return -EINVAL;
	}
	*out = found;
	return 0;
}

/*
 * A probe inside an instruction would corrupt the program (a uprobe writes
 * int3 there) or never fire (a breakpoint): +OFF must land on an instruction
 * that capstone finds decoding from the function's start.
 */
static int check_boundary(const struct trigger_spec *s, const struct symbol *y,
			  struct error *e)
{
	uint64_t want = s->sym_off + 16;
	size_t len = y->size_unknown || y->size > want ? want : y->size, n, i;
	uint8_t *buf = malloc(len);
	int fd = open(s->path, O_RDONLY | O_CLOEXEC), ret = 0;
	char starts[256] = "";
	bool found = false;
	size_t slen = 0;
	cs_insn *insn;
	csh cs;

	if (!buf || fd < 0 || pread(fd, buf, len, y->offset) != (ssize_t)len) {
		ret = err_runtime(e, fd < 0 || !buf ? -errno : -EIO, "%s: cannot read '%s' at "
				  "0x%" PRIx64, s->path, s->symbol, y->offset);
		goto out;
	}
	if (csopen(CS_MODE_64, &cs) != CS_ERR_OK) {
		ret = err_runtime(e, -ENOMEM, "capstone: cannot open an x86-64 disassembler");
		goto out;
	}
	n = cs_disasm(cs, buf, len, 0, 0, &insn);
	for (i = 0; i < n; i++) {
		if (insn[i].address == s->sym_off)
			found = true;
		if (slen < sizeof(starts))
			slen += snprintf(starts + slen, sizeof(starts) - slen, "%s+%" PRIu64,
					 slen ? ", " : "", insn[i].address);
	}
	if (!found)
		ret = bad(e, s, "give an offset where an instruction starts",
			  "+%" PRIu64 " is not where an instruction of '%s' starts (they start at "
			  "%s%s)", s->sym_off, s->symbol, starts,
			  len == want ? ", ..." : "");
	if (n)
		cs_free(insn, n);
	cs_close(&cs);
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return ret;
}

static int resolve_in(struct trigger_spec *s, const struct symtab *t, struct error *e)
{
	const struct symbol *y;
	int ret = find_symbol(t, s, &y, e);

	if (ret)
		return ret;
	if (!y->size_unknown && s->sym_off >= y->size)
		return bad(e, s, "give an offset inside the function", "+%" PRIu64 " is past the "
			   "end of '%s' (%" PRIu64 " bytes)", s->sym_off, s->symbol, y->size);
	if (y->offset + s->sym_off >= y->seg_end)
		return bad(e, s, "give an offset inside the function", "+%" PRIu64 " is past the "
			   "end of the segment that holds '%s'", s->sym_off, s->symbol);
	s->path = strdup(t->path);
	if (!s->path)
		return err_runtime(e, -ENOMEM, "out of memory");
	if (s->sym_off) {
		ret = check_boundary(s, y, e);
		if (ret)
			return ret;
	}
	s->offset = y->offset + s->sym_off;
	s->addr = y->addr + s->sym_off;
	s->resolved = true;
	return 0;
}

int trigger_spec_resolve(struct trigger_spec *s, struct error *e, struct warnings *w)
{
	struct symtab t;
	int ret = symbols_load(&t, s->file, e, w);

	if (ret) {
		char why[sizeof(e->why)];

		memcpy(why, e->why, sizeof(why));
		err_usage_code(e, ret, "'%s': %s", s->text, why);
		if (ret == -ENOENT)
			err_hint(e, "name an existing executable or shared library after '%s:'",
				 kind_names[s->kind]);
		return ret;
	}
	free(s->path);
	s->path = NULL;
	ret = resolve_in(s, &t, e);
	symbols_free(&t);
	return ret;
}

int trigger_count_parse(const char *text, uint64_t *n, struct error *e)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(text, &end, 10);
	if (!*text || !isdigit((unsigned char)*text) || *end || errno || v == 0) {
		err_usage(e, "'%s' is not a count of fires", text);
		err_hint(e, "give a whole number of at least 1 (the trigger disarms after that "
			 "many fires)");
		return -EINVAL;
	}
	*n = v;
	return 0;
}

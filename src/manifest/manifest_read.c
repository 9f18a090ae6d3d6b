// SPDX-License-Identifier: MIT
/*
 * manifest.json's reader: bounds first, then it walks the schema's tables
 * (manifest_schema.c), checking every value (type, range, paths that stay
 * in the bundle) and naming the key of the first that is wrong.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "manifest_schema.h"

#define AT(type, base, off) ((type *)((char *)(base) + (off)))

/* A top-level array read from the text, one element at a time (no tree of it all). */
struct span {
	const struct mfield *f;
	size_t begin, end;	/* its '[' and after its ']' in the text */
};

#define MAX_SPANS 8

struct rd {
	struct error *e;
	struct manifest *top;	/* MF_TRIGGER_IDX counts its triggers */
	int failed;
	const char *text;
	struct span spans[MAX_SPANS];
	size_t nr_spans;
	bool reparse;		/* a span did not read alone: read the text whole */
};

__attribute__((format(printf, 3, 4)))
static int bad(struct rd *r, const char *key, const char *fmt, ...)
{
	va_list ap;

	if (r->failed)
		return -EINVAL;
	va_start(ap, fmt);
	err_vset(r->e, -EINVAL, true, fmt, ap);
	va_end(ap);
	err_what(r->e, "\"%s\"", key);
	r->failed = 1;
	return -EINVAL;
}

static void nomem(struct rd *r)
{
	r->failed = err_runtime(r->e, -ENOMEM, "out of memory");
}

static const char *type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a real number";
	case JSON_TRUE: case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

/* What a field of @type is in JSON, for messages and the type check. */
static json_type json_type_of(enum mtype t, const char **want)
{
	switch (t) {
	case MT_INT: case MT_UINT: case MT_U16: case MT_U32:
		*want = "an integer";
		return JSON_INTEGER;
	case MT_U64: case MT_S64:
		*want = "a decimal string";
		return JSON_STRING;
	case MT_HEX:
		*want = "a \"0x\" hex string";
		return JSON_STRING;
	case MT_BOOL:
		*want = "true or false";
		return JSON_TRUE;
	case MT_ARGV:
		*want = "an array of strings";
		return JSON_ARRAY;
	case MT_PIDS: case MT_ARRAY:
		*want = "an array";
		return JSON_ARRAY;
	case MT_TIME:
		*want = "a time string";
		return JSON_STRING;
	case MT_OBJECT:
		*want = "an object";
		return JSON_OBJECT;
	default:
		*want = "a string";
		return JSON_STRING;
	}
}

/* A path inside the bundle: relative, no "..", no empty component, no control byte. */
static bool inside(const char *s)
{
	if (!*s || *s == '/')
		return false;
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20)
			return false;
	for (const char *p = s; p;) {
		size_t n = strcspn(p, "/");

		if (!n || (n == 2 && !strncmp(p, "..", 2)) || (n == 1 && *p == '.'))
			return false;
		p = p[n] ? p + n + 1 : NULL;
	}
	return true;
}

/* "MAJOR:MINOR" in hex, each of 32 bits at most, as /proc/PID/maps shows a device. */
static bool parse_dev(const char *s, unsigned int *maj, unsigned int *min)
{
	static const char hexd[] = "0123456789abcdef";
	size_t a = strspn(s, hexd), b = s[a] == ':' ? strspn(s + a + 1, hexd) : 0;

	if (!a || a > 8 || !b || b > 8 || s[a + 1 + b])
		return false;
	*maj = (unsigned int)strtoul(s, NULL, 16);
	*min = (unsigned int)strtoul(s + a + 1, NULL, 16);
	return true;
}

static void read_string(struct rd *r, const struct mfield *f, const char *s, void *b,
			const char *path)
{
	char **dst = AT(char *, b, f->off);

	if (f->type == MT_RELPATH && !inside(s)) {
		bad(r, path, "'%s' is not a path inside the bundle", s);
		return;
	}
	if (f->type == MT_ABSPATH && s[0] != '/') {
		bad(r, path, "'%s' is not an absolute path", s);
		return;
	}
	if (f->type == MT_BUILD_ID && (!*s || strlen(s) > 40 || strlen(s) % 2 ||
				       strspn(s, "0123456789abcdef") != strlen(s))) {
		bad(r, path, "'%s' is not a build-id (1 to 20 bytes in lowercase hex)", s);
		return;
	}
	if (manifest_set(dst, s))
		nomem(r);
}

static void read_int(struct rd *r, const struct mfield *f, const json_t *v, void *b,
		     const char *path)
{
	long long x = json_integer_value(v), hi = f->hi;

	if (f->flags & MF_TRIGGER_IDX)
		hi = r->top->nr_triggers - 1;
	if (x < f->lo || x > hi) {
		bad(r, path, "%lld is out of range (%lld to %lld)", x, f->lo, hi);
		return;
	}
	switch (f->type) {
	case MT_INT: *AT(int, b, f->off) = (int)x; break;
	case MT_UINT: *AT(unsigned int, b, f->off) = (unsigned int)x; break;
	case MT_U16: *AT(uint16_t, b, f->off) = (uint16_t)x; break;
	case MT_U32: *AT(uint32_t, b, f->off) = (uint32_t)x; break;
	default: break;
	}
}

/* A decimal string (MT_U64, MT_S64) or a "0x" hex string (MT_HEX) of 64 bits. */
static void read_number(struct rd *r, const struct mfield *f, const char *s0, void *b,
			const char *path)
{
	const char *s = s0;
	char *end;

	errno = 0;
	if (f->type == MT_S64) {
		int64_t x = strtoll(s, &end, 10);

		if (!*s || *end || errno || (!isdigit((unsigned char)*s) && *s != '-')) {
			bad(r, path, "'%s' is not a decimal number of 64 bits", s0);
			return;
		}
		*AT(int64_t, b, f->off) = x;
		return;
	}
	if (f->type == MT_HEX && strncmp(s, "0x", 2))
		goto bad;
	if (f->type == MT_HEX)
		s += 2;
	if (!*s || strspn(s, f->type == MT_HEX ? "0123456789abcdefABCDEF" : "0123456789") !=
	    strlen(s) || strlen(s) > 20)
		goto bad;
	*AT(uint64_t, b, f->off) = strtoull(s, &end, f->type == MT_HEX ? 16 : 10);
	if (!errno)
		return;
bad:
	bad(r, path, "'%s' is not %s of 64 bits", s0,
	    f->type == MT_HEX ? "a \"0x\" hex number" : "a decimal number");
}

static void read_argv(struct rd *r, const struct mfield *f, const json_t *v, void *b,
		      const char *path)
{
	char **argv = calloc(json_array_size(v) + 1, sizeof(*argv));
	char ***dst = AT(char **, b, f->off);
	int *argc = AT(int, b, f->count_off);
	size_t i;
	json_t *a;

	if (!argv) {
		nomem(r);
		return;
	}
	json_array_foreach(v, i, a) {
		if (!json_is_string(a)) {
			bad(r, path, "element %zu is %s, not a string", i, type_name(a));
			break;
		}
		argv[i] = strdup(json_string_value(a));
		if (!argv[i]) {
			nomem(r);
			break;
		}
	}
	for (int k = 0; k < *argc; k++)
		free((*dst)[k]);
	free(*dst);
	*dst = argv;
	*argc = (int)json_array_size(v);
}

static void read_pids(struct rd *r, const struct mfield *f, const json_t *v, void *b,
		      const char *path)
{
	pid_t **pids = AT(pid_t *, b, f->off);
	int *n = AT(int, b, f->count_off);
	size_t i;
	json_t *p;

	free(*pids);
	*n = 0;
	*pids = calloc(json_array_size(v) + 1, sizeof(pid_t));
	if (!*pids) {
		nomem(r);
		return;
	}
	json_array_foreach(v, i, p) {
		if (!json_is_integer(p) || json_integer_value(p) <= 0 ||
		    json_integer_value(p) > INT_MAX) {
			bad(r, path, "element %zu is not a process id", i);
			return;
		}
		(*pids)[(*n)++] = (pid_t)json_integer_value(p);
	}
}

static void read_time(struct rd *r, const char *s, struct timespec *t, const char *path)
{
	struct tm tm;
	long usec = 0;
	char *end;

	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (end && *end == '.' && strlen(end) == 8 && end[7] == 'Z' &&
	    strspn(end + 1, "0123456789") == 6)
		usec = strtol(end + 1, NULL, 10);
	else
		end = NULL;
	if (!end) {
		bad(r, path, "'%s' is not a time as YYYY-MM-DDTHH:MM:SS.uuuuuuZ", s);
		return;
	}
	t->tv_sec = timegm(&tm);
	t->tv_nsec = usec * 1000;
}

static void read_object(struct rd *r, const struct mschema *s, const json_t *obj, void *b,
			const char *at);

static void read_object(struct rd *r, const struct mschema *s, const json_t *obj, void *b,
			const char *at);
static size_t skip_ws(const char *t, size_t len, size_t i);

/*
 * The elements of @sp's array, each parsed alone (its text checked already by
 * span_elements()): an element's tree lives while it is read, never all of them.
 */
static void read_span(struct rd *r, const struct span *sp, void *b, const char *path)
{
	size_t i = sp->begin + 1, n = 0;

	for (;;) {
		json_error_t je;
		char at[224];
		void *elem;
		json_t *x;

		i = skip_ws(r->text, sp->end, i);
		if (r->failed || i >= sp->end || r->text[i] == ']')
			return;
		x = r->text[i] == '{' ? json_loadb(r->text + i, sp->end - i,
						    JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES,
						    &je) : NULL;
		if (!x || je.position <= 0 || r->text[i + (size_t)je.position - 1] != '}') {
			/* Not an object that parses alone: the text is read whole instead. */
			json_decref(x);
			r->reparse = true;
			r->failed = 1;
			return;
		}
		i += (size_t)je.position;
		snprintf(at, sizeof(at), "%s[%zu]", path, n++);
		elem = sp->f->sub->add(b);
		if (!elem) {
			json_decref(x);
			nomem(r);
			return;
		}
		read_object(r, sp->f->sub, x, elem, at);
		json_decref(x);
		i = skip_ws(r->text, sp->end, i);
		if (i < sp->end && r->text[i] == ',') {
			i++;
		} else if (i >= sp->end || r->text[i] != ']') {
			r->reparse = true;
			r->failed = 1;
			return;
		}
	}
}

static void read_array(struct rd *r, const struct mfield *f, const json_t *v, void *b,
		       const char *path)
{
	for (size_t k = 0; k < r->nr_spans; k++)
		if (r->spans[k].f == f && f->sub && b == (void *)r->top) {
			read_span(r, &r->spans[k], b, path);
			return;
		}
	{
	size_t i;
	json_t *x;

	json_array_foreach(v, i, x) {
		char at[224];
		void *elem;

		if (r->failed)
			return;
		snprintf(at, sizeof(at), "%s[%zu]", path, i);
		if (!json_is_object(x)) {
			bad(r, at, "expected an object, found %s", type_name(x));
			return;
		}
		elem = f->sub->add(b);
		if (!elem) {
			nomem(r);
			return;
		}
		read_object(r, f->sub, x, elem, at);
	}
	}
}

/* Is a field of @s before @f present under @f's MF_IF_BOOL flag? -1: @f is the first. */
static int earlier_of_cond(const struct mschema *s, const struct mfield *f, const void *b)
{
	for (const struct mfield *g = s->fields; g < f; g++)
		if ((g->flags & MF_IF_BOOL) && g->cond_off == f->cond_off)
			return *AT(const bool, b, f->cond_off);
	return -1;
}

static void read_field(struct rd *r, const struct mschema *s, const struct mfield *f,
		       const json_t *obj, void *b, const char *path)
{
	json_t *v = obj ? json_object_get(obj, f->key) : NULL;
	bool nullable = f->flags & (MF_NULLABLE | MF_OPTIONAL | MF_NULL_ZERO | MF_NULL_NEG);
	const char *want;
	json_type t = json_type_of(f->type, &want);
	bool present;
	int before;

	if (f->type == MT_CONST || f->type == MT_CONST_INT)
		return;
	if (!v && !nullable) {
		bad(r, path, "missing");
		return;
	}
	present = v && !(nullable && json_is_null(v));
	if (f->flags & MF_IF_BOOL) {
		before = earlier_of_cond(s, f, b);
		if (before < 0)
			*AT(bool, b, f->cond_off) = present;
		else if (before != present)
			bad(r, path, "a device and an inode go together");
	}
	if (!present) {
		if (f->flags & MF_NULL_NEG)
			*AT(int, b, f->off) = -1;
		return;
	}
	if (json_typeof(v) != t && !(t == JSON_TRUE && json_is_boolean(v))) {
		bad(r, path, "expected %s, found %s", want, type_name(v));
		return;
	}
	switch (f->type) {
	case MT_STR: case MT_RELPATH: case MT_ABSPATH: case MT_BUILD_ID:
		read_string(r, f, json_string_value(v), b, path);
		break;
	case MT_INT: case MT_UINT: case MT_U16: case MT_U32:
		read_int(r, f, v, b, path);
		break;
	case MT_U64: case MT_HEX: case MT_S64:
		read_number(r, f, json_string_value(v), b, path);
		break;
	case MT_BOOL:
		*AT(bool, b, f->off) = json_is_true(v);
		break;
	case MT_ARGV:
		read_argv(r, f, v, b, path);
		break;
	case MT_PIDS:
		read_pids(r, f, v, b, path);
		break;
	case MT_TIME:
		read_time(r, json_string_value(v), AT(struct timespec, b, f->off), path);
		break;
	case MT_ENUM: {
		const char *k = json_string_value(v);
		int i;

		for (i = TARGET_NONE; i <= TARGET_CPU && strcmp(k, manifest_target_names[i]); i++)
			;
		if (i > TARGET_CPU)
			bad(r, path, "'%s' is not command, pid, tid or cpu", k);
		else
			*AT(enum target_kind, b, f->off) = (enum target_kind)i;
		break;
	}
	case MT_MODE: {
		const char *k = json_string_value(v);

		if (strcmp(k, "per-cpu") && strcmp(k, "per-thread") && strcmp(k, "none"))
			bad(r, path, "'%s' is not per-cpu, per-thread or none", k);
		*AT(bool, b, f->off) = !strcmp(k, "per-thread");
		*AT(bool, b, f->count_off) = !strcmp(k, "none");
		break;
	}
	case MT_DEVICE:
		if (!parse_dev(json_string_value(v), AT(unsigned int, b, f->off),
			       AT(unsigned int, b, f->count_off)))
			bad(r, path, "'%s' is not a device as MAJOR:MINOR in hex",
			    json_string_value(v));
		break;
	case MT_OBJECT:
		read_object(r, f->sub, v, b, path);
		break;
	case MT_ARRAY:
		read_array(r, f, v, b, path);
		break;
	default:
		break;
	}
}

static void read_object(struct rd *r, const struct mschema *s, const json_t *obj, void *b,
			const char *at)
{
	for (size_t i = 0; i < s->nr && !r->failed; i++) {
		char path[160];

		snprintf(path, sizeof(path), "%s%s%s", at, *at ? "." : "", s->fields[i].key);
		read_field(r, s, &s->fields[i], obj, b, path);
	}
}

/*
 * Count the values of @text without building them: outside strings, each '{'
 * and '[' opens a container, and a value starts at the text's start, after
 * ':' or ',', and after '['. A malformed text is counted loosely; jansson
 * refuses it later. Linear, no allocation.
 */
int manifest_check_bounds(const char *text, size_t len, struct error *e)
{
	size_t objects = 0, values = 0;
	bool in_str = false, expect = true;

	if (len > MANIFEST_MAX_BYTES)
		return err_usage(e, "larger than %u bytes, the most a manifest has: not a "
				 "ptcollect manifest", MANIFEST_MAX_BYTES);
	for (size_t i = 0; i < len; i++) {
		char c = text[i];

		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = false;
			continue;
		}
		if (c == ' ' || c == '\n' || c == '\t' || c == '\r')
			continue;
		if (expect && c != ']' && c != '}')
			values++;
		expect = c == ':' || c == ',' || c == '[';
		if (c == '{' || c == '[')
			objects++;
		else if (c == '"')
			in_str = true;
		if (objects > MANIFEST_MAX_OBJECTS)
			return err_usage(e, "more than %u objects and arrays, the most a manifest "
					 "has: not a ptcollect manifest", MANIFEST_MAX_OBJECTS);
		if (values > MANIFEST_MAX_VALUES)
			return err_usage(e, "more than %u values, the most a manifest has: not a "
					 "ptcollect manifest", MANIFEST_MAX_VALUES);
	}
	return 0;
}

/* ---- the large arrays, read from the text ---- */

static size_t skip_ws(const char *t, size_t len, size_t i)
{
	while (i < len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
		i++;
	return i;
}

/* After the string that starts at @i (its '"'), or @len. */
static size_t str_end(const char *t, size_t len, size_t i)
{
	for (i++; i < len; i++) {
		if (t[i] == '\\')
			i++;
		else if (t[i] == '"')
			return i + 1;
	}
	return len;
}

/* After the array or object that starts at @i, or @len. */
static size_t value_end(const char *t, size_t len, size_t i)
{
	int depth = 0;

	for (; i < len; i++) {
		if (t[i] == '"') {
			i = str_end(t, len, i) - 1;
		} else if (t[i] == '[' || t[i] == '{') {
			depth++;
		} else if (t[i] == ']' || t[i] == '}') {
			if (!--depth)
				return i + 1;
		}
	}
	return len;
}

/* The top object's member @key, if its value is an array: its span. */
static bool find_span(const char *t, size_t len, const char *key, struct span *sp)
{
	size_t klen = strlen(key), i = skip_ws(t, len, 0);
	int depth = 0;
	char prev = 0;

	if (i >= len || t[i] != '{')
		return false;
	for (; i < len; i++) {
		char c = t[i];

		if (c == '"') {
			size_t end = str_end(t, len, i), j;

			if (depth == 1 && (prev == '{' || prev == ',') && end - i == klen + 2 &&
			    !memcmp(t + i + 1, key, klen)) {
				j = skip_ws(t, len, end);
				if (j >= len || t[j] != ':')
					return false;
				j = skip_ws(t, len, j + 1);
				if (j >= len || t[j] != '[')
					return false;
				sp->begin = j;
				sp->end = value_end(t, len, j);
				return sp->end < len;
			}
			i = end - 1;
			prev = '"';
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
			continue;
		if (c == '{' || c == '[')
			depth++;
		else if (c == '}' || c == ']')
			depth--;
		prev = c;
	}
	return false;
}

/* Is @sp an array of objects that each parse alone, with nothing else between them? */
static bool span_elements(const char *t, const struct span *sp)
{
	size_t i = skip_ws(t, sp->end, sp->begin + 1);

	if (i < sp->end && t[i] == ']')
		return i + 1 == sp->end;
	for (;;) {
		json_error_t je;
		json_t *x;

		if (i >= sp->end || t[i] != '{')
			return false;
		x = json_loadb(t + i, sp->end - i, JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES,
			       &je);
		if (!x)
			return false;
		json_decref(x);
		if (je.position <= 0 || t[i + (size_t)je.position - 1] != '}')
			return false;
		i = skip_ws(t, sp->end, i + (size_t)je.position);
		if (i < sp->end && t[i] == ']')
			return i + 1 == sp->end;
		if (i >= sp->end || t[i] != ',')
			return false;
		i = skip_ws(t, sp->end, i + 1);
	}
}

/*
 * jansson's tree of a manifest of 80,000 images takes 50 MB: the top level's arrays of
 * objects (images, fires, ...) are cut out of the text, the rest parsed with each of
 * them as [], and their elements parsed one at a time as the schema reaches them. A text
 * that does not cut cleanly (a syntax error, a duplicate key) is parsed whole, as before,
 * for jansson's own message. Returns the tree of the rest, or NULL (then parse whole).
 */
static json_t *parse_cut(struct rd *r, const char *text, size_t len)
{
	const struct mschema *s = &mschema_manifest;
	size_t at = 0, n = 0;
	json_error_t je;
	char *rest;
	json_t *m;

	for (size_t i = 0; i < s->nr && r->nr_spans < MAX_SPANS; i++) {
		struct span sp = { .f = &s->fields[i] };

		if (sp.f->type != MT_ARRAY || !find_span(text, len, sp.f->key, &sp))
			continue;
		/* In the order of the text. */
		size_t k = r->nr_spans++;

		while (k && r->spans[k - 1].begin > sp.begin) {
			r->spans[k] = r->spans[k - 1];
			k--;
		}
		r->spans[k] = sp;
	}
	if (!r->nr_spans)
		return NULL;
	rest = malloc(len + 2 * r->nr_spans);
	if (!rest)
		return NULL;
	for (size_t k = 0; k < r->nr_spans; k++) {
		memcpy(rest + n, text + at, r->spans[k].begin - at);
		n += r->spans[k].begin - at;
		memcpy(rest + n, "[]", 2);
		n += 2;
		at = r->spans[k].end;
	}
	memcpy(rest + n, text + at, len - at);
	n += len - at;
	m = json_loadb(rest, n, JSON_REJECT_DUPLICATES, &je);
	free(rest);
	r->text = text;
	return m;
}

/* A parsed manifest @m (taken) into @out: its format, version and schema checked. */
static int read_tree(struct rd *r, json_t *m, struct manifest *out, struct error *e)
{
	json_t *fmt, *ver;

	fmt = json_object_get(m, "format");
	if (!json_is_object(m) || !json_is_string(fmt) ||
	    strcmp(json_string_value(fmt), MANIFEST_FORMAT)) {
		json_decref(m);
		return err_usage(e, "\"format\" is not \"%s\": not a ptcollect manifest",
				 MANIFEST_FORMAT);
	}
	ver = json_object_get(m, "version");
	if (!json_is_integer(ver) || json_integer_value(ver) != MANIFEST_VERSION) {
		if (json_is_integer(ver))
			err_usage(e, "manifest version %" JSON_INTEGER_FORMAT "; this ptcollect "
				  "reads version %d", json_integer_value(ver), MANIFEST_VERSION);
		else
			err_usage(e, "\"version\" is %s, not an integer", ver ? type_name(ver) :
				  "missing");
		err_hint(e, "read it with the ptcollect that recorded it (tool.version says which)");
		json_decref(m);
		return -EINVAL;
	}
	r->top = out;
	read_object(r, &mschema_manifest, m, out, "");
	json_decref(m);
	if (r->failed) {
		manifest_free(out);
		manifest_init(out);
		return e && e->code ? e->code : -EINVAL;
	}
	return 0;
}

/* Did the cut text fail where the whole would have failed first (its syntax)? */
static bool spans_bad(const struct rd *r)
{
	if (r->reparse)
		return true;
	for (size_t k = 0; k < r->nr_spans; k++)
		if (!span_elements(r->text, &r->spans[k]))
			return true;
	return false;
}

int manifest_parse(const char *text, size_t len, struct manifest *out, struct error *e)
{
	struct rd r = { .e = e };
	json_error_t je;
	json_t *m;
	int ret;

	manifest_init(out);
	ret = manifest_check_bounds(text, len, e);
	if (ret)
		return ret;
	m = parse_cut(&r, text, len);
	if (m) {
		ret = read_tree(&r, m, out, e);
		if (!ret || !spans_bad(&r))
			return ret;
		/* The whole text says what is wrong, as it did before the cut. */
		if (e)
			err_clear(e);
	}
	memset(&r, 0, sizeof(r));
	r.e = e;
	m = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!m)
		return err_usage(e, "not valid JSON: line %d, column %d: %s", je.line, je.column,
				 je.text);
	return read_tree(&r, m, out, e);
}

int manifest_read(int dirfd, const char *dir, struct manifest *m, struct error *e)
{
	size_t len;
	char *text;
	int ret;

	manifest_init(m);
	ret = file_read_all(dirfd, MANIFEST_FILE, MANIFEST_MAX_BYTES, &text, &len, e);
	if (!ret) {
		ret = manifest_parse(text, len, m, e);
		free(text);
		if (ret)
			err_what(e, "%s/%s", dir, MANIFEST_FILE);
		return ret;
	}
	/* file_read_all named the file relative to @dirfd; name it as the user knows it. */
	if (e) {
		char why[sizeof(e->why)];

		snprintf(why, sizeof(why), "%s", strchr(e->why, ':') ? strchr(e->why, ':') + 2 :
			 e->why);
		snprintf(e->why, sizeof(e->why), "%s", why);
		err_what(e, "%s/%s", dir, MANIFEST_FILE);
	}
	return ret;
}

// SPDX-License-Identifier: MIT
/* ptxed and ptdump argument lists for a bundle's streams, in libipt's order. */
#include <inttypes.h>
#include <intel-pt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders.h"
#include "filter.h"

/* The arguments, those that name a file of the bundle relative to it. */
struct argv {
	char **v;
	bool *in_bundle;
	int n;
	bool failed;
};

static void vadd(struct argv *a, bool in_bundle, const char *fmt, va_list ap)
{
	char **n;
	bool *b;

	if (a->failed)
		return;
	n = realloc(a->v, ((size_t)a->n + 2) * sizeof(*n));
	if (n) {
		a->v = n;
		n[a->n] = NULL;	/* the list stays terminated whatever fails next */
	}
	b = n ? realloc(a->in_bundle, ((size_t)a->n + 1) * sizeof(*b)) : NULL;
	if (b)
		a->in_bundle = b;
	if (!n || !b || vasprintf(&a->v[a->n], fmt, ap) < 0) {
		a->failed = true;
		return;
	}
	a->in_bundle[a->n++] = in_bundle;
	a->v[a->n] = NULL;
}

__attribute__((format(printf, 2, 3)))
static void add(struct argv *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vadd(a, false, fmt, ap);
	va_end(ap);
}

/* A file of the bundle, relative to it: the bundle's place is put in front when used. */
__attribute__((format(printf, 2, 3)))
static void add_file(struct argv *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vadd(a, true, fmt, ap);
	va_end(ap);
}

static void argv_free(struct argv *a)
{
	decoder_argv_free(a->v);
	free(a->in_bundle);
	memset(a, 0, sizeof(*a));
}

bool decoder_cpu_known(const struct manifest *m)
{
	struct pt_cpu cpu = {
		.vendor = m->cpu.vendor && !strcmp(m->cpu.vendor, "GenuineIntel") ? pcv_intel :
			  pcv_unknown,
		.family = (uint16_t)m->cpu.family,
		.model = (uint8_t)m->cpu.model,
		.stepping = (uint8_t)m->cpu.stepping,
	};
	struct pt_errata errata;

	return cpu.vendor == pcv_intel && m->cpu.family <= UINT16_MAX && m->cpu.model <= 255 &&
	       !pt_cpu_errata(&errata, &cpu);
}

/*
 * ptxed's address filters: the recording's (libipt uses them for erratum
 * SKL014), as decode DIR passes them, when every filter is a range of
 * addresses (filter_ranges()).
 */
static void addr_filters(struct argv *a, const struct manifest *m)
{
	struct filter_ranges r;

	if (!filter_ranges(m->filter, &r))
		return;
	for (int n = 0; n < r.nr; n++) {
		add(a, "--filter:addr%d_cfg", n);
		add(a, "%u", r.cfg[n]);
		add(a, "--filter:addr%d_a", n);
		add(a, "0x%" PRIx64, r.a[n]);
		add(a, "--filter:addr%d_b", n);
		add(a, "0x%" PRIx64, r.b[n]);
	}
}

/* What every libipt decoder needs for this CPU and config. */
static void config(struct argv *a, const struct manifest *m)
{
	add(a, "--cpu");
	if (decoder_cpu_known(m))
		add(a, "%u/%u/%u", m->cpu.family, m->cpu.model, m->cpu.stepping);
	else
		add(a, "none");
	add(a, "--mtc-freq");
	add(a, "%u", m->mtc_freq);
	if (m->nom_freq >= 0) {
		add(a, "--nom-freq");
		add(a, "%d", m->nom_freq);
	}
	if (m->has_cpuid_0x15) {
		add(a, "--cpuid-0x15.eax");
		add(a, "%u", m->cpuid_0x15_eax);
		add(a, "--cpuid-0x15.ebx");
		add(a, "%u", m->cpuid_0x15_ebx);
	}
}

/*
 * libipt's ptxed reads the [vdso] from --pevent:vdso-x64 (the sysroot does not
 * apply to it) and every other mapped file at sysroot + its path; kernel
 * code only from --raw (it ignores the kernel's own MMAP records).
 */
static void sideband(struct argv *a, const struct manifest *m, int i, bool others)
{
	add(a, "--pevent:sample-type");
	add(a, "0x%" PRIx64, m->attr.sample_type);
	if (m->kernel.kcore) {
		add(a, "--raw");
		add_file(a, "%s:0x%" PRIx64, m->kernel.kcore, m->kernel.kcore_base);
	}
	if (m->kernel.start) {
		add(a, "--pevent:kernel-start");
		add(a, "0x%" PRIx64, m->kernel.start);
	}
	if (m->vdso) {
		add(a, "--pevent:vdso-x64");
		add_file(a, "%s", m->vdso);
	}
	if (m->sysroot) {
		add(a, "--pevent:sysroot");
		add_file(a, "%s", m->sysroot);
	}
	if (m->time_conv.cap_user_time_zero) {
		add(a, "--pevent:time-zero");
		add(a, "%" PRIu64, m->time_conv.time_zero);
		add(a, "--pevent:time-shift");
		add(a, "%u", m->time_conv.time_shift);
		add(a, "--pevent:time-mult");
		add(a, "%u", m->time_conv.time_mult);
	}
	add(a, "--pevent:primary");
	add_file(a, "%s", m->streams[i].sideband);
	if (m->proc_sideband) {
		add(a, "--pevent:secondary");
		add_file(a, "%s", m->proc_sideband);
	}
	for (int j = 0; others && j < m->nr_streams; j++) {
		if (j == i)
			continue;
		add(a, "--pevent:secondary");
		add_file(a, "%s", m->streams[j].sideband);
	}
}

/* The arguments for trace file @trace (the stream's own, or a snapshot's window) of stream @i. */
static struct argv build(const struct manifest *m, int i, const char *trace, enum decoder tool,
			 bool others)
{
	struct argv a = { 0 };

	add(&a, tool == DECODER_PTXED ? "ptxed" : "ptdump");
	config(&a, m);
	if (tool == DECODER_PTXED) {
		addr_filters(&a, m);
		sideband(&a, m, i, others);
		add(&a, "--pt");
	}
	add_file(&a, "%s", trace);
	if (a.failed)
		argv_free(&a);
	return a;
}

char **decoder_argv(const struct manifest *m, const char *dir, int i, enum decoder tool)
{
	return decoder_argv_trace(m, dir, i, m->streams[i].file, tool);
}

bool decoder_secondary_apart(const struct manifest *m)
{
	return m->nr_streams > DECODER_INLINE_SECONDARY;
}

int decoder_window_stream(const struct manifest *m, const struct mwindow *w)
{
	for (int i = 0; i < m->nr_streams; i++)
		if (m->streams[i].cpu == w->cpu && m->streams[i].tid == w->tid)
			return i;
	return -1;
}

/* @a's files of the bundle put below @dir: the argv, or NULL (@a freed either way). */
static char **in_dir(struct argv a, const char *dir)
{
	char **v = a.v;

	for (int k = 0; v && k < a.n; k++) {
		char *p;

		if (!a.in_bundle[k])
			continue;
		if (asprintf(&p, "%s/%s", dir, v[k]) < 0) {
			argv_free(&a);
			return NULL;
		}
		free(v[k]);
		v[k] = p;
	}
	free(a.in_bundle);
	return v;
}

char **decoder_argv_trace(const struct manifest *m, const char *dir, int i, const char *trace,
			  enum decoder tool)
{
	return in_dir(build(m, i, trace, tool, true), dir);
}

char **decoder_argv_own(const struct manifest *m, const char *dir, int i, const char *trace,
			enum decoder tool)
{
	return in_dir(build(m, i, trace, tool, false), dir);
}

char **decoder_secondary_argv(const struct manifest *m, const char *dir)
{
	struct argv a = { 0 };

	for (int j = 0; j < m->nr_streams; j++) {
		add(&a, "--pevent:secondary");
		add_file(&a, "%s", m->streams[j].sideband);
	}
	if (a.failed)
		argv_free(&a);
	else if (!a.v)
		a.v = calloc(1, sizeof(*a.v));	/* no stream: an empty list, not ENOMEM */
	return in_dir(a, dir);
}

void decoder_argv_free(char **argv)
{
	for (char **p = argv; p && *p; p++)
		free(*p);
	free(argv);
}

/* ---- shell ------------------------------------------------------------- */

/* Growing text; any failure leaves it NULL for good. */
struct text {
	char *s;
	size_t len, size;
	bool failed;
};

static void text_failed(struct text *t)
{
	free(t->s);
	*t = (struct text){ .failed = true };
}

__attribute__((format(printf, 2, 3)))
static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	char *more, *n;
	int len;

	if (t->failed)
		return;
	va_start(ap, fmt);
	len = vasprintf(&more, fmt, ap);
	va_end(ap);
	if (len < 0) {
		text_failed(t);
		return;
	}
	if (t->len + (size_t)len + 1 > t->size) {
		/* doubling: a script of many streams is made in time linear in its size */
		size_t size = 2 * (t->len + (size_t)len + 1);

		n = realloc(t->s, size);
		if (!n) {
			free(more);
			text_failed(t);
			return;
		}
		t->s = n;
		t->size = size;
	}
	memcpy(t->s + t->len, more, (size_t)len + 1);
	free(more);
	t->len += (size_t)len;
}

/* @s as one word of a POSIX shell: as it is when every byte is plain, else in single quotes. */
static void put_word(struct text *t, const char *s)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "0123456789-_./:=,+@%";

	if (*s && strspn(s, plain) == strlen(s)) {
		put(t, "%s", s);
		return;
	}
	put(t, "'");
	for (const char *q; *s; s = q) {
		q = s + strcspn(s, "'");
		put(t, "%.*s", (int)(q - s), s);
		if (*q == '\'') {
			put(t, "'\\''");
			q++;
		}
	}
	put(t, "'");
}

char *decoder_shell_join(char *const *argv)
{
	struct text t = { 0 };

	for (char *const *a = argv; *a; a++) {
		if (a != argv)
			put(&t, " ");
		put_word(&t, *a);
	}
	return t.s ? t.s : t.failed ? NULL : strdup("");
}

static const char script_head[] =
	"#!/bin/sh\n"
	"# Decodes every stream of a ptcollect bundle with libipt's ptxed and ptdump.\n"
	"# Written by 'ptcollect info --script'; see ptcollect-info(1).\n"
	"#\n"
	"# usage: sh SCRIPT [BUNDLE [OUTDIR]]\n"
	"#   BUNDLE  the bundle; by default the directory this script is in when it\n"
	"#           holds manifest.json, else the bundle the script was written for\n"
	"#   OUTDIR  where STREAM.ptxed and STREAM.ptdump are written (default: .)\n"
	"# PTXED and PTDUMP name the decoders (default: ptxed and ptdump on PATH).\n"
	"# Exit status: 0 when every decoder exited 0 and printed no error line, else 1.\n"
	"set -u\n"
	"if [ $# -ge 1 ]; then\n"
	"\tb=$1\n"
	"else\n"
	"\tcase $0 in */*) b=${0%/*} ;; *) b=. ;; esac\n"
	"\t[ -f \"$b/manifest.json\" ] || b=";
static const char script_body[] =
	"\n"
	"fi\n"
	"out=${2:-.}\n"
	"ptxed=${PTXED:-ptxed}\n"
	"ptdump=${PTDUMP:-ptdump}\n"
	"status=0\n"
	"\n"
	"# decode STREAM OUTPUT DECODER ARGS...: one decoder, its output in OUTPUT\n"
	"decode() {\n"
	"\t_s=$1 _o=$2\n"
	"\tshift 2\n"
	"\t\"$@\" >\"$_o\" 2>&1\n"
	"\t_rc=$?\n"
	"\t_e=$(grep -ci error \"$_o\")\n"
	"\tprintf '%s: %s exited %d, %d error lines: %s\\n' \"$_s\" \"$1\" \"$_rc\" \"$_e\" \"$_o\"\n"
	"\t[ \"$_rc\" -eq 0 ] && [ \"$_e\" -eq 0 ] || status=1\n"
	"}\n"
	"\n";

/*
 * Above DECODER_INLINE_SECONDARY streams: ptxed_all, which a stream's ptxed line
 * calls with its own sideband, its trace and its arguments; it adds every other
 * stream's sideband and --pt TRACE, the argv the line would have said in full.
 */
static void put_ptxed_all(struct text *t, const struct manifest *m)
{
	put(t, "# ptxed_all OWN TRACE ARGS...: ptxed with ARGS, every stream's sideband but\n"
	       "# OWN as secondary, then --pt TRACE (the list is said once, here)\n"
	       "ptxed_all() {\n"
	       "\t_own=$1 _tr=$2\n"
	       "\tshift 2\n"
	       "\tfor _f in");
	for (int j = 0; j < m->nr_streams; j++) {
		put(t, " \\\n\t\t");
		put_word(t, m->streams[j].sideband);
	}
	put(t, "\n\tdo\n"
	       "\t\t[ \"$_f\" = \"$_own\" ] || set -- \"$@\" --pevent:secondary \"$b/$_f\"\n"
	       "\tdone\n"
	       "\t\"$ptxed\" \"$@\" --pt \"$b/$_tr\"\n"
	       "}\n"
	       "\n");
}

/* One decoder's line in the script for trace @file of stream @i: the bundle's files below "$b". */
static void put_decode(struct text *t, const struct manifest *m, int i, const char *file,
		       enum decoder tool)
{
	const char *ext = tool == DECODER_PTXED ? "ptxed" : "ptdump";
	bool apart = tool == DECODER_PTXED && decoder_secondary_apart(m);
	size_t n = strlen(file);
	struct argv a = build(m, i, file, tool, !apart);
	int end = apart ? a.n - 2 : a.n;	/* ptxed_all says --pt TRACE (build()'s last two) */
	char *out;

	if (n > 3 && !strcmp(file + n - 3, ".pt"))
		n -= 3;
	if (a.failed || asprintf(&out, "%.*s.%s", (int)n, file, ext) < 0) {
		argv_free(&a);
		text_failed(t);
		return;
	}
	for (char *p = out; *p; p++)
		*p = *p == '/' ? '_' : *p;
	put(t, "decode ");
	put_word(t, file);
	put(t, " \"$out\"/");
	put_word(t, out);
	if (apart) {
		put(t, " ptxed_all ");
		put_word(t, m->streams[i].sideband);
		put(t, " ");
		put_word(t, file);
	} else {
		put(t, " \"$%s\"", a.v[0]);
	}
	for (int k = 1; k < end; k++) {
		put(t, a.in_bundle[k] ? " \"$b\"/" : " ");
		put_word(t, a.v[k]);
	}
	put(t, "\n");
	free(out);
	argv_free(&a);
}

char *decoder_script(const struct manifest *m, const char *dir)
{
	struct text t = { 0 };

	put(&t, "%s", script_head);
	put_word(&t, dir);
	put(&t, "%s", script_body);
	if (decoder_secondary_apart(m))
		put_ptxed_all(&t, m);
	for (int i = 0; i < m->nr_streams; i++) {
		if (!m->streams[i].file)
			continue;	/* snapshot mode: the windows, below */
		if (!m->streams[i].bytes) {
			put(&t, ": nothing to decode in the empty ");	/* a no-op, whatever the name */
			put_word(&t, m->streams[i].file);
			put(&t, "\n");
			continue;
		}
		put_decode(&t, m, i, m->streams[i].file, DECODER_PTXED);
		put_decode(&t, m, i, m->streams[i].file, DECODER_PTDUMP);
	}
	for (int s = 0; s < m->nr_snapshots; s++) {
		for (int j = 0; j < m->snapshots[s].nr_windows; j++) {
			const struct mwindow *w = &m->snapshots[s].windows[j];
			int i = decoder_window_stream(m, w);

			if (!w->bytes || i < 0)
				continue;
			put_decode(&t, m, i, w->file, DECODER_PTXED);
			put_decode(&t, m, i, w->file, DECODER_PTDUMP);
		}
	}
	put(&t, "exit $status\n");
	return t.failed ? NULL : t.s;
}

// SPDX-License-Identifier: MIT
/* ptxed and ptdump argument lists for a bundle's streams, in libipt's order. */
#include <inttypes.h>
#include <intel-pt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders.h"

struct argv {
	char **v;
	int n;
	bool failed;
};

__attribute__((format(printf, 2, 3)))
static void add(struct argv *a, const char *fmt, ...)
{
	char **n;
	va_list ap;

	if (a->failed)
		return;
	n = realloc(a->v, ((size_t)a->n + 2) * sizeof(*n));
	if (!n) {
		a->failed = true;
		return;
	}
	a->v = n;
	va_start(ap, fmt);
	if (vasprintf(&a->v[a->n], fmt, ap) < 0)
		a->failed = true;
	else
		a->n++;
	va_end(ap);
	a->v[a->n] = NULL;
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

static void sideband(struct argv *a, const struct manifest *m, const char *dir, int i)
{
	add(a, "--pevent:sample-type");
	add(a, "0x%" PRIx64, m->attr.sample_type);
	if (m->kernel.kcore) {
		add(a, "--raw");
		add(a, "%s/%s:0x%" PRIx64, dir, m->kernel.kcore, m->kernel.kcore_base);
	}
	if (m->kernel.start) {
		add(a, "--pevent:kernel-start");
		add(a, "0x%" PRIx64, m->kernel.start);
	}
	if (m->vdso) {
		add(a, "--pevent:vdso-x64");
		add(a, "%s/%s", dir, m->vdso);
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
	add(a, "%s/%s", dir, m->streams[i].sideband);
	if (m->proc_sideband) {
		add(a, "--pevent:secondary");
		add(a, "%s/%s", dir, m->proc_sideband);
	}
	for (int j = 0; j < m->nr_streams; j++) {
		if (j == i)
			continue;
		add(a, "--pevent:secondary");
		add(a, "%s/%s", dir, m->streams[j].sideband);
	}
}

char **decoder_argv(const struct manifest *m, const char *dir, int i, enum decoder tool)
{
	struct argv a = { 0 };

	add(&a, tool == DECODER_PTXED ? "ptxed" : "ptdump");
	config(&a, m);
	if (tool == DECODER_PTXED) {
		sideband(&a, m, dir, i);
		add(&a, "--pt");
	}
	add(&a, "%s/%s", dir, m->streams[i].file);
	if (a.failed) {
		decoder_argv_free(a.v);
		return NULL;
	}
	return a.v;
}

void decoder_argv_free(char **argv)
{
	for (char **p = argv; p && *p; p++)
		free(*p);
	free(argv);
}

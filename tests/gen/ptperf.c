// SPDX-License-Identifier: MIT
/*
 * ptperf: wrap a raw Intel PT trace and the raw code it runs into a perf.data that perf
 * script decodes (the bench's perf figures): the tests' perf.data writer (tests/lib/perfgen.c)
 * lays out one per-thread intel_pt recording of process 100 (COMM, ITRACE_START, an MMAP2 of
 * CODE at ADDR) whose one AUXTRACE buffer holds TRACE. One buffer: perf 6.1 decodes each
 * buffer from its first PSB, so a trace cut into pieces (4 MiB ones were tried) loses the
 * branches between a cut and the next PSB.
 *
 *	ptperf CODE ADDR TRACE OUT.data
 *
 * CODE's path goes into the MMAP2 as given: perf reads the code from it, so give it whole.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfgen.h"

static void die(const char *what, const char *why)
{
	fprintf(stderr, "ptperf: %s: %s\n", what, why);
	exit(1);
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p = NULL;
	size_t cap = 0, n;

	if (!f)
		die(path, strerror(errno));
	*len = 0;
	do {
		if (*len == cap) {
			cap = cap ? cap * 2 : 1 << 20;
			p = realloc(p, cap);
			if (!p)
				die(path, "out of memory");
		}
		n = fread(p + *len, 1, cap - *len, f);
		*len += n;
	} while (n);
	if (ferror(f))
		die(path, strerror(errno));
	fclose(f);
	return p;
}

int main(int argc, char **argv)
{
	static const uint64_t pt_ids[] = { 11 }, dummy_ids[] = { 21 };
	/* intel_pt's AUXTRACE_INFO: per-thread (no per-CPU mmaps), no sched_switch tracking */
	const uint64_t priv[17] = {
		PGEN_PT_TYPE, 31, 600000000, 12345, 1, 0x400, 0x800, 0, 0, 0, 0x200,
		0x3c000, 300, 2, 0x2, 37, 0,
	};
	static const char *const cmd[] = { "perf", "record", "-e", "intel_pt//u", "--per-thread",
					   "--", "./prog" };
	const uint64_t st = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			    PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;
	struct pgen_sid s = { .pid = 100, .tid = 100, .time = 0, .cpu = 0 };
	uint32_t nrcpus[2] = { 2, 2 };
	uint8_t body[4200], *code, *trace, *file;
	size_t clen, tlen, flen, plen;
	unsigned long long addr;
	struct pgen g;
	char *end;
	int a, d;
	FILE *f;

	if (argc != 5) {
		fprintf(stderr, "usage: ptperf CODE ADDR TRACE OUT.data\n");
		return 2;
	}
	errno = 0;
	addr = strtoull(argv[2], &end, 0);
	if (errno || *end || !*argv[2])
		die(argv[2], "not an address");
	if (strlen(argv[1]) >= 4096)
		die(argv[1], "path too long");
	code = slurp(argv[1], &clen);
	trace = slurp(argv[3], &tlen);

	pgen_init(&g);
	/* ADDR, as perf script's -F addr asks of every event (it is in no sample_id trailer) */
	a = pgen_attr(&g, PGEN_PT_TYPE, 0x300e601, st | PERF_SAMPLE_ADDR, pt_ids, 1, "intel_pt//u");
	g.attrs[a].attr.exclude_kernel = 1;
	g.attrs[a].attr.enable_on_exec = 1;
	d = pgen_attr(&g, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, st, dummy_ids, 1, "dummy:u");
	g.attrs[d].attr.mmap2 = g.attrs[d].attr.comm = g.attrs[d].attr.task = 1;
	pgen_feat_string(&g, 3, "benchhost");
	pgen_feat_string(&g, 5, "6.1.0");
	pgen_feat_string(&g, 6, "x86_64");
	pgen_feat_raw(&g, 7, nrcpus, sizeof(nrcpus));
	pgen_feat_string(&g, 8, "Bench CPU @ 3.70GHz");
	pgen_feat_string(&g, 9, "GenuineIntel,6,85,4");
	pgen_feat_cmdline(&g, cmd, 7);
	pgen_feat_event_desc(&g);
	pgen_time_conv(&g, 31, 600000000, 12345);
	pgen_auxtrace_info(&g, priv, 17);

	memset(body, 0, sizeof(body));
	memcpy(body, (uint32_t[2]){ 100, 100 }, 8);
	memcpy(body + 8, "prog\0\0\0", 8);
	s.id = dummy_ids[0];
	pgen_kernel(&g, d, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, body, 16, &s);
	s.id = pt_ids[0];
	s.time = 0;
	pgen_kernel(&g, a, PERF_RECORD_ITRACE_START, 0, body, 8, &s);
	/* MMAP2: pid tid addr len pgoff maj min ino ino_generation prot flags filename */
	memset(body, 0, sizeof(body));
	memcpy(body, (uint32_t[2]){ 100, 100 }, 8);
	memcpy(body + 8, (uint64_t[3]){ addr, (clen + 4095) & ~4095ull, 0 }, 24);
	memcpy(body + 56, (uint32_t[2]){ 5, 2 }, 8);	/* PROT_READ|PROT_EXEC, MAP_PRIVATE */
	plen = strlen(argv[1]) + 1;
	memcpy(body + 64, argv[1], plen);
	s.id = dummy_ids[0];
	s.time = 0;
	pgen_kernel(&g, d, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, body,
		    64 + ((plen + 7) & ~(size_t)7), &s);
	/* A round ends: perf has the thread and its map before it queues the trace. */
	pgen_raw(&g, &(struct perf_event_header){ 68, 0, 8 }, 8);
	/* per-thread: the buffer's cpu is -1, its tid the thread's */
	pgen_auxtrace(&g, 0, (uint32_t)-1, 100, 0, trace, tlen);
	memcpy(body, (uint64_t[3]){ 0, tlen, 0 }, 24);
	s.id = pt_ids[0];
	s.time = 1300;
	pgen_kernel(&g, a, PERF_RECORD_AUX, 0, body, 24, &s);
	/*
	 * The sideband has time 0, as perf's records synthesized from /proc: perf has the thread
	 * and its map before it decodes. No EXIT: the trace's TSCs come later, and perf would
	 * drop the thread before them.
	 */
	pgen_raw(&g, &(struct perf_event_header){ 68, 0, 8 }, 8);	/* FINISHED_ROUND */

	file = pgen_file(&g, &flen);
	f = fopen(argv[4], "wb");
	if (!f || fwrite(file, 1, flen, f) != flen || fclose(f))
		die(argv[4], strerror(errno));
	free(file);
	pgen_free(&g);
	free(code);
	free(trace);
	return 0;
}

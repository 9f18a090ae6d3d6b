/* SPDX-License-Identifier: MIT */
/*
 * Small perf.data files made in memory, in file mode or pipe mode, laid out
 * as perf record writes them (tools/perf/util/header.c, session.c): what the
 * tests and the fuzz seeds feed to import where no Intel PT hardware can
 * record one. Written from perf's format, not by perf: the real trace in
 * ../shared and Debian's perf (perf inject, perf record) check the reader
 * against perf's own files.
 */
#ifndef PTC_TEST_PERFGEN_H
#define PTC_TEST_PERFGEN_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PGEN_MAX_ATTRS	8
#define PGEN_MAX_FEATS	16
#define PGEN_PT_TYPE	8	/* the intel_pt PMU type the standard file uses */

struct pgen_attr {
	struct perf_event_attr attr;
	uint64_t ids[8];
	int nr_ids;
	const char *name;
};

struct pgen {
	struct pgen_attr attrs[PGEN_MAX_ATTRS];
	int nr_attrs;
	struct {
		int id;
		uint8_t *p;
		size_t len;
	} feats[PGEN_MAX_FEATS];
	int nr_feats;
	uint8_t *data;		/* the records */
	size_t len, cap;
};

/* What a record's sample_id holds (the fields its attr's sample_type selects). */
struct pgen_sid {
	uint32_t pid, tid;
	uint64_t time, id, stream_id;
	uint32_t cpu;
};

void pgen_init(struct pgen *g);
void pgen_free(struct pgen *g);

/* An attr with @nr ids; sample_id_all set. Returns its index. */
int pgen_attr(struct pgen *g, uint32_t type, uint64_t config, uint64_t sample_type,
	      const uint64_t *ids, int nr, const char *name);
/* A header feature: a perf string (HOSTNAME, VERSION, CPUID, ...), or raw bytes. */
void pgen_feat_string(struct pgen *g, int feat, const char *s);
void pgen_feat_raw(struct pgen *g, int feat, const void *p, size_t len);
void pgen_feat_cmdline(struct pgen *g, const char *const *argv, int argc);
/* EVENT_DESC: each attr, its ids and its name (file mode only, as perf writes it). */
void pgen_feat_event_desc(struct pgen *g);

/* Records, appended in order. */
void pgen_raw(struct pgen *g, const void *p, size_t len);
/* intel_pt's AUXTRACE_INFO with @nr values (17: every one through the filter length). */
void pgen_auxtrace_info(struct pgen *g, const uint64_t *priv, int nr);
void pgen_time_conv(struct pgen *g, uint64_t shift, uint64_t mult, uint64_t zero);
void pgen_auxtrace(struct pgen *g, uint32_t idx, uint32_t cpu, uint32_t tid, uint64_t offset,
		   const void *p, size_t len);
/* A kernel record: header, @body, and the trailer attr @a's sample_type implies. */
void pgen_kernel(struct pgen *g, int a, uint32_t type, uint16_t misc, const void *body,
		 size_t blen, const struct pgen_sid *sid);

/* The whole file, malloc'd. */
uint8_t *pgen_file(const struct pgen *g, size_t *len);
uint8_t *pgen_pipe(const struct pgen *g, size_t *len);

/*
 * The standard recording the tests start from: intel_pt (per-CPU, or
 * per-thread) and a dummy sideband event, both IP|TID|TIME|CPU|IDENTIFIER
 * as perf records them, or with differing trailers when @mixed (see
 * pgen_standard()); two streams (CPUs 0 and 1, or threads 100 and 101), the
 * second's AUXTRACE buffers out of order; a synthesized COMM (id 0), an
 * ITRACE_START, COMM.EXEC, MMAP2, a TRUNCATED AUX, a LOST, a SAMPLE, and
 * context switches. Payload byte i of the buffer at AUX offset o is o + i.
 */
void pgen_standard(struct pgen *g, bool per_thread, bool mixed);

#endif

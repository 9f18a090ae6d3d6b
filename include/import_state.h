/* SPDX-License-Identifier: MIT */
/*
 * An import's state, shared by its modules: what the caller gives it
 * (struct import_opts) and gets back (struct import_stats), and what it holds
 * while it reads the perf.data (struct import): the streams, the manifest,
 * the record being converted.
 */
#ifndef PTC_IMPORT_STATE_H
#define PTC_IMPORT_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bundle.h"
#include "error.h"
#include "manifest.h"
#include "perfdata.h"
#include "sideband.h"
#include "stream.h"

#define IMPORT_MAX_STREAMS	4096
#define IMPORT_MAX_CPU		8191	/* the kernel's largest NR_CPUS */
#define IMPORT_MAX_CHUNKS	(1 << 20)	/* AUXTRACE buffers not following the one before */

struct import_opts {
	const char *input;	/* the perf.data as given, "-" for standard input */
	int fd;			/* open on it */
	const char *dir;	/* the bundle to make; it must not exist */
	const char *vdso;	/* the traced machine's vdso image, or NULL: perf's build-id cache */
	char *const *argv;	/* ptcollect's command line, for the manifest */
	int argc;
};

struct import_stats {
	bool pipe;		/* the input was in pipe mode */
	int streams;
	uint64_t trace_bytes;
	uint64_t auxtrace;	/* AUXTRACE records */
	uint64_t sideband;	/* kernel records written to the streams' .pevent files */
	uint64_t synthesized;	/* perf's own records, to proc.pevent */
	uint64_t samples;	/* PERF_RECORD_SAMPLE records, not sideband: left out */
	uint64_t reordered;	/* streams whose buffers came out of offset order */
	char vdso[4096];	/* where the vdso came from, or "" */
};

#define SB_BUF		(64u << 10)	/* sideband bytes gathered per open stream */

/* A sideband file written through a buffer. */
struct sbfile {
	int fd;
	uint8_t *buf;
	size_t len;
};

/*
 * Where AUXTRACE payloads went in the trace file: a run of buffers that follow
 * each other in the AUX buffer and in the file is one chunk, so a recording's
 * usual stream is one chunk, and only gaps and disorder cost memory.
 */
struct chunk {
	uint64_t aux_off;	/* its offset in the AUX buffer */
	uint64_t pos;		/* in the file */
	uint64_t len;
	size_t seq;		/* arrival, to keep equal offsets in order */
};

struct istream {
	struct stream s;	/* names and counts (s.ring.stats), trace_fd */
	struct sbfile sb;
	bool created;
	uint64_t used;		/* when last written, to close the longest idle */
	struct chunk *chunks;
	size_t nr_chunks, cap_chunks;
	bool unordered;
	uint64_t trace_len;
};

struct import {
	const struct import_opts *o;
	struct import_stats *st;
	struct warnings *w;
	struct perfdata *pd;
	struct bundle *b;
	struct manifest m;
	struct istream **streams;
	int nr_streams;
	int nr_open;
	uint64_t clock;
	struct istream *aux;	/* the stream the AUXTRACE payload being read goes to */
	size_t nr_chunks;	/* of every stream */
	struct sbfile proc;
	bool have_proc;
	bool have_info;		/* AUXTRACE_INFO was read */
	bool per_cpu;
	int pt_attr;		/* the index of the intel_pt attr */
	bool maps_vdso;
	uint64_t kernel_start;
	pid_t exec_pid;		/* the first process that exec'd while traced */
	char exec_comm[17];
	bool have_time_conv;
	uint64_t tc[3];		/* TIME_CONV's shift, mult, zero */
	uint8_t rec[8 + 65536 + sizeof(struct sb_trailer)];
};

/* Everything @im holds closed and freed, and @im (calloc'd) itself. */
void import_state_free(struct import *im);

#endif

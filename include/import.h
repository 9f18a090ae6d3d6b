/* SPDX-License-Identifier: MIT */
/*
 * A perf.data recorded with intel_pt, turned into a bundle: the AUXTRACE
 * payloads of each CPU (or thread, per-thread mode) in buffer order into
 * cpuN.pt (tidN.pt); the kernel's sideband records, their sample_id
 * converted to the bundle's TID|TIME|CPU|IDENTIFIER, into cpuN.pevent by the
 * CPU that wrote them (tidN.pevent by thread), perf's synthesized records
 * (id 0: written by perf from /proc, stamped at time 0) into proc.pevent;
 * AUXTRACE_INFO, TIME_CONV and the header's features into the manifest.
 * The bundle is complete, or removed.
 */
#ifndef PTC_IMPORT_H
#define PTC_IMPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

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

/*
 * Make the bundle @o->dir from the perf.data on @o->fd. Returns 0, or a
 * usage error (the input is not an Intel PT perf.data, or is damaged: the
 * file, the offset and what is wrong there) or a runtime error; then nothing
 * of the bundle is left.
 */
int import_perfdata(const struct import_opts *o, struct import_stats *st, struct warnings *w,
		    struct error *e);

#endif

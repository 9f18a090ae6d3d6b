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

#include "error.h"
#include "import_state.h"

/*
 * Make the bundle @o->dir from the perf.data on @o->fd. Returns 0, or a
 * usage error (the input is not an Intel PT perf.data, or is damaged: the
 * file, the offset and what is wrong there) or a runtime error; then nothing
 * of the bundle is left.
 */
int import_perfdata(const struct import_opts *o, struct import_stats *st, struct warnings *w,
		    struct error *e);

#endif

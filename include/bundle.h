/* SPDX-License-Identifier: MIT */
/*
 * The output directory of a recording: one trace file and one sideband file
 * per stream, and manifest.json, written atomically (temporary file, fsync,
 * rename) when the recording starts, as streams change and when it ends;
 * "complete" stays false until the recording closed cleanly, so a bundle cut
 * short says so. man/ptcollect-bundle.5 documents the format.
 */
#ifndef PTC_BUNDLE_H
#define PTC_BUNDLE_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "auxring.h"
#include "record.h"

#define BUNDLE_FORMAT	"ptcollect-bundle"
#define BUNDLE_VERSION	1
#define BUNDLE_MANIFEST	"manifest.json"
#define BUNDLE_PROC	"proc.pevent"	/* COMM/MMAP2 of targets that were already running */
#define BUNDLE_VDSO	"sysroot/vdso-x64.so"
#define BUNDLE_KCORE	"kcore.text"	/* --kcore: the running kernel's text, raw */

struct bundle;

/*
 * Create the directory @plan->opts.output. An existing one is replaced only
 * with --force and only when it is a ptcollect bundle or empty. Returns 0 or
 * -errno with @err saying what and why.
 */
int bundle_create(struct bundle **b, const struct record_plan *plan, char *err, size_t len);
/* Open cpuN.pt/.pevent (per-CPU, @tid -1) or tidN.pt/.pevent (@cpu -1). */
int bundle_stream_add(struct bundle *b, int cpu, int tid, int *idx);
int bundle_trace_fd(const struct bundle *b, int idx);
int bundle_sideband_fd(const struct bundle *b, int idx);
const char *bundle_trace_name(const struct bundle *b, int idx);
/* The last error of bundle_stream_add, as "what: why". */
const char *bundle_error(const struct bundle *b);
/* The ring's counts, for the manifest. */
void bundle_stream_update(struct bundle *b, int idx, const struct auxring_stats *st);
/* Tracing began: the control page's time conversion, the start time. */
void bundle_started(struct bundle *b, const struct perf_event_mmap_page *pc);
/* Synthesize @pid's threads and executable mappings into proc.pevent. */
int bundle_add_process(struct bundle *b, pid_t pid, char *err, size_t len);
/* Save the [vdso] under sysroot/, for --pevent:vdso-x64. */
int bundle_save_sysroot(struct bundle *b, char *err, size_t len);
/* The kernel is traced: copy kallsyms, note where the kernel starts. */
int bundle_save_kernel(struct bundle *b, char *err, size_t len);
/* --kcore: copy the kernel text from /proc/kcore (after bundle_save_kernel). */
int bundle_save_kcore(struct bundle *b, char *err, size_t len);
/* Write the manifest as it stands (complete=false), e.g. once the streams are open. */
int bundle_checkpoint(struct bundle *b, char *err, size_t len);
/*
 * Close the streams and write the final manifest: @complete when the
 * recording closed cleanly, @stop_reason, the workload's @exit_status (-1
 * when there was none). Returns 0 or -errno with @err.
 */
int bundle_finish(struct bundle *b, bool complete, const char *stop_reason, int exit_status,
		  char *err, size_t len);
/* Remove what bundle_create made (a recording that failed before it began). */
void bundle_discard(struct bundle *b);
void bundle_free(struct bundle *b);

#endif

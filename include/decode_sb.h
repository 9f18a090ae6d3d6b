/* SPDX-License-Identifier: MIT */
/*
 * Sideband for the decoder: perf records from .pevent files applied to the
 * decoder's memory image as the trace's time passes them, by the rules of
 * libipt's sideband library (libipt-sb, pt_sb_pevent), which Debian's libipt
 * does not ship:
 *
 * - Records are read by libipt's pevent rules (sideband.h); their perf time
 *   becomes TSC by perf's conversion (time_zero, time_mult, time_shift;
 *   time 0, and a record without a time, is "at the beginning").
 * - At each decoder event, every record of every file whose TSC is not after
 *   the event's is applied, in TSC order: MMAP/MMAP2 map a file into the
 *   process (user mappings only: the kernel comes from kcore), COMM with exec
 *   gives the process a new image, FORK copies the parent's.
 * - Only a primary file (the stream's own CPU or thread) switches the
 *   decoder's process: ITRACE_START at once, SWITCH and SWITCH_CPU_WIDE (and
 *   an exec) at the next event that is in the kernel, or leaves it, by
 *   kernel_start; before that the old image is still the one executing.
 * - LOST and a TRUNCATED AUX record are losses, reported.
 *
 * Problems are reported through a callback with the file and offset, in the
 * words libipt uses, and never stop the decoding.
 */
#ifndef PTC_DECODE_SB_H
#define PTC_DECODE_SB_H

#include <intel-pt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "fileio.h"
#include "memimage.h"

/* The --pevent:* settings a sideband file is read with (ptxed applies them in order). */
struct dsb_pevent {
	uint64_t sample_type;
	uint64_t time_zero;
	uint32_t time_mult;
	uint16_t time_shift;
	uint64_t tsc_offset;	/* apply records this many ticks early */
	uint64_t kernel_start;	/* addresses from here up are the kernel's */
	char *symfs;		/* --sysroot: tried before sysroot and the recorded path */
	char *sysroot;
	bool sysroot_fallback;	/* a file not under the sysroot is read where it is named */
	char *vdso[4];		/* by enum image_abi */
};

/* One sideband file: where it is, how it is read, and its bytes once loaded. */
struct dsb_file {
	char *path;
	uint64_t from, to;	/* byte range; to 0: the end */
	bool primary;
	struct dsb_pevent pev;
	uint8_t *buf;		/* dsb_file_load(): shared read-only by every decoder */
	size_t len;
	struct file_map map;	/* the file's mapping that buf lies in */
};

enum dsb_diag_kind {
	DSB_WARNING,
	DSB_ERROR,
	DSB_LOSS,		/* trace or sideband lost: also a warning */
};

struct dsb_diag {
	enum dsb_diag_kind kind;
	const struct dsb_file *file;
	uint64_t offset;	/* of the record in the file */
	uint64_t tsc;		/* the record's */
	char msg[600];
};

typedef void dsb_diag_fn(void *ctx, const struct dsb_diag *d);

struct dsb;

/*
 * Map @f's bytes (its range) at f->buf. 0 or a negative errno with @e. The file is
 * mapped, not read: its pages are dropped behind each reader (dsb_next() and on), so
 * that resident memory does not grow with the sideband.
 */
int dsb_file_load(struct dsb_file *f, struct error *e);
void dsb_file_release(struct dsb_file *f);

/* Sideband over @files (loaded), mapping into @img; @diag gets every problem. */
int dsb_new(struct dsb **sb, struct image_store *img, const struct dsb_file *files, size_t nr,
	    dsb_diag_fn *diag, void *ctx, struct error *e);
void dsb_free(struct dsb *sb);

/*
 * A decoder event happened: apply what is due and any postponed switch. When
 * the decoder must read another process's memory, *@image is set (else left).
 */
void dsb_event(struct dsb *sb, const struct pt_event *ev, struct pt_image **image);

/* Apply what is due by @tsc without an event: a chunk's end, the next chunk's start. */
void dsb_advance(struct dsb *sb, uint64_t tsc, struct pt_image **image);

/* The thread the primary sideband says runs now: false before it says. */
bool dsb_thread(const struct dsb *sb, uint32_t *pid, uint32_t *tid);

/* perf's conversions between its time (ns) and TSC, libipt's arithmetic. */
uint64_t dsb_time_to_tsc(const struct dsb_pevent *p, uint64_t time);
uint64_t dsb_tsc_to_time(const struct dsb_pevent *p, uint64_t tsc);

#endif

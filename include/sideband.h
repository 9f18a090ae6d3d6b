/* SPDX-License-Identifier: MIT */
/*
 * Perf sideband records as they sit in a .pevent file: header, body, and the
 * sample_id trailer that sample_type implies (sample_id_all). Read by
 * libipt's rules (its pevent reader, pev_read()): for the records libipt
 * reads (MMAP, LOST, COMM, EXIT, (UN)THROTTLE, FORK, MMAP2, AUX,
 * ITRACE_START, LOST_SAMPLES, SWITCH, SWITCH_CPU_WIDE), the size must equal
 * the header, the body (names NUL-terminated and padded to 8) and the
 * trailer, exactly; every other type, perf's user types (64 and up:
 * TIME_CONV, THREAD_MAP, ...) among them, is stepped over by its size and
 * has no sample_id. A record of type 0 or of fewer than 8 bytes ends the
 * reading. Also the records ptcollect writes itself: COMM and MMAP2
 * synthesized from /proc for targets that were already running.
 */
#ifndef PTC_SIDEBAND_H
#define PTC_SIDEBAND_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

/* What every stream records and every reader assumes: the one definition. */
#define SIDEBAND_SAMPLE_TYPE \
	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)
_Static_assert(SIDEBAND_SAMPLE_TYPE == 0x10086, "the sample_type of the bundle format");

/* Bytes of the sample_id trailer that sample_type @st implies (with sample_id_all). */
#define SIDEBAND_TRAILER_LEN(st) \
	((((st) & PERF_SAMPLE_TID) ? 8 : 0) + (((st) & PERF_SAMPLE_TIME) ? 8 : 0) + \
	 (((st) & PERF_SAMPLE_ID) ? 8 : 0) + (((st) & PERF_SAMPLE_STREAM_ID) ? 8 : 0) + \
	 (((st) & PERF_SAMPLE_CPU) ? 8 : 0) + (((st) & PERF_SAMPLE_IDENTIFIER) ? 8 : 0))

/* The trailer of the records ptcollect synthesizes, in the kernel's order for that type. */
struct sb_trailer {
	uint32_t pid, tid;	/* PERF_SAMPLE_TID */
	uint64_t time;		/* PERF_SAMPLE_TIME */
	uint32_t cpu, res;	/* PERF_SAMPLE_CPU */
	uint64_t id;		/* PERF_SAMPLE_IDENTIFIER */
};
_Static_assert(sizeof(struct sb_trailer) == SIDEBAND_TRAILER_LEN(SIDEBAND_SAMPLE_TYPE),
	       "the synthesized trailer is the one SIDEBAND_SAMPLE_TYPE implies");
_Static_assert(offsetof(struct sb_trailer, time) ==
	       SIDEBAND_TRAILER_LEN(SIDEBAND_SAMPLE_TYPE & PERF_SAMPLE_TID) &&
	       offsetof(struct sb_trailer, cpu) ==
	       SIDEBAND_TRAILER_LEN(SIDEBAND_SAMPLE_TYPE & ~(PERF_SAMPLE_CPU |
							     PERF_SAMPLE_IDENTIFIER)) &&
	       offsetof(struct sb_trailer, id) ==
	       SIDEBAND_TRAILER_LEN(SIDEBAND_SAMPLE_TYPE & ~PERF_SAMPLE_IDENTIFIER),
	       "each field of the synthesized trailer sits where the kernel puts it");

struct sb_sample_id {
	uint64_t sample_type;	/* which of the fields below the record has */
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id;
	uint64_t stream_id;
	uint32_t cpu;
	uint64_t identifier;
};

struct sb_record {
	uint32_t type;
	uint16_t misc;
	uint16_t size;
	const uint8_t *body;	/* after the header */
	size_t body_len;	/* without the trailer */
	bool has_sample_id;	/* a record libipt reads: sid holds its trailer */
	struct sb_sample_id sid;
};

/*
 * Read the record at @off of @buf (@len bytes). Returns its size, or -EINVAL
 * with a usage error in @e saying at which offset and why.
 */
int sideband_parse(const uint8_t *buf, size_t len, size_t off, uint64_t sample_type,
		   struct sb_record *r, struct error *e);
/*
 * Each record of the sideband file @file (relative to @dirfd, SIDEBAND_SAMPLE_TYPE's
 * trailers) to @fn, in file order, until @fn returns non-zero (returned) or a record
 * does not parse (a file cut short: what came before was seen). Its pages are dropped
 * behind the reading (map_drop_behind()). 0, or a negative errno with @e.
 */
typedef int sideband_each_fn(const struct sb_record *r, void *ctx);
int sideband_each(int dirfd, const char *file, sideband_each_fn *fn, void *ctx,
		  struct error *e);
/* The record's name ("MMAP2", "COMM", "TIME_CONV", ...) or NULL for an unknown type. */
const char *sideband_type_name(uint32_t type);
/* Whether libipt's pevent reader reads records of @type (else it steps over them). */
bool sideband_libipt_reads(uint32_t type);
/*
 * The sample_id trailer at @p that sample_type @st implies, in the kernel's
 * order (tid, time, id, stream_id, cpu, identifier); the caller checked that
 * SIDEBAND_TRAILER_LEN(@st) bytes are there.
 */
void sideband_read_trailer(const uint8_t *p, uint64_t st, struct sb_sample_id *s);
/* The file name of an MMAP/MMAP2 record, or NULL. */
const char *sideband_mmap_file(const struct sb_record *r);

#define SIDEBAND_BUILD_ID_MAX	20	/* bytes an MMAP2 record has room for */

/*
 * The build-id an MMAP2 record carries: with PERF_RECORD_MISC_MMAP_BUILD_ID
 * in its misc (attr.build_id, Linux 5.12+), the body holds build_id_size, 3
 * reserved bytes and build_id[20] where maj, min, ino and ino_generation
 * were; the layout's size is the same, so libipt reads it (and ignores those
 * fields). Written to @hex as lowercase hex (@len 41 holds any). Returns its
 * size in bytes, 0 when the record carries none.
 */
int sideband_mmap_build_id(const struct sb_record *r, char *hex, size_t len);

/*
 * Write COMM for every thread and MMAP2 for every executable mapping of
 * @pid to @fd, stamped at time 0 so that decoders apply them first. An
 * MMAP2 carries the mapped file's build-id as the kernel's do with
 * attr.build_id, read now from the file the process maps
 * (/proc/PID/map_files, else the path when its device and inode are the
 * mapping's); without one it has maj, min and ino as /proc shows them.
 * Returns the number of records, or -errno with a runtime error in @e
 * (-ESRCH: the process is gone).
 */
int sideband_synthesize_proc(pid_t pid, int fd, struct error *e);


#endif

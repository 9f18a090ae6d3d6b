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

#define SIDEBAND_SAMPLE_TYPE 0x10086ULL	/* TID|TIME|CPU|IDENTIFIER */

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
 * Read the record at @off of @buf (@len bytes). Returns its size, or
 * -EINVAL with @err saying at which offset and why.
 */
int sideband_parse(const uint8_t *buf, size_t len, size_t off, uint64_t sample_type,
		   struct sb_record *r, char *err, size_t errlen);
/* The record's name ("MMAP2", "COMM", "TIME_CONV", ...) or NULL for an unknown type. */
const char *sideband_type_name(uint32_t type);
/* Whether libipt's pevent reader reads records of @type (else it steps over them). */
bool sideband_libipt_reads(uint32_t type);
/* The file name of an MMAP/MMAP2 record, or NULL. */
const char *sideband_mmap_file(const struct sb_record *r);

/*
 * Write COMM for every thread and MMAP2 for every executable mapping of
 * @pid to @fd, stamped at time 0 so that decoders apply them first.
 * Returns the number of records, or -errno (ESRCH: the process is gone).
 */
int sideband_synthesize_proc(pid_t pid, int fd, char *err, size_t errlen);

/* Copy this process's [vdso] (the same for every process of this kernel) to @path. */
int sideband_save_vdso(const char *path, char *err, size_t errlen);

#endif

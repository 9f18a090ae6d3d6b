/* SPDX-License-Identifier: MIT */
/*
 * A perf event's two rings: the data ring (sideband records) and the AUX
 * area (trace bytes), with the kernel's head/tail protocol.
 *
 * Full trace: auxring_drain_aux() writes the bytes between aux_tail and
 * aux_head straight from the mapping to a file (one writev() of at most two
 * pieces at the wrap, no intermediate buffer), then publishes aux_tail with
 * a release store, only over bytes that reached the file. auxring_read_data()
 * does the same for the data ring, passing every record on byte-exact and
 * counting the ones a PT collector must report (AUX flags, LOST,
 * ITRACE_START). auxring_pass() is what the record loop does with a ring
 * after each wakeup, restarting the hardware after a stop.
 *
 * Overwrite (snapshot) mode: the AUX area is read-only and the kernel never
 * waits for us; auxring_snapshot() copies what the hardware wrote since the
 * previous snapshot, a window that ends at aux_head. On intel_pt that head is
 * an offset inside the buffer that wraps, so the reader tells a lap by a
 * reference copy of the bytes before the previous head (see auxring.c).
 *
 * Syscalls stay here (mmap, munmap, write); a ring can also be attached to
 * memory laid out like a perf mapping, so tests can play the kernel.
 */
#ifndef PTC_AUXRING_H
#define PTC_AUXRING_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct auxring_stats {
	uint64_t aux_bytes;	/* trace bytes written to the trace file */
	uint64_t aux_records;	/* PERF_RECORD_AUX records */
	uint64_t truncated;	/* ... with PERF_AUX_FLAG_TRUNCATED: the buffer was full */
	uint64_t overwrite;	/* ... with PERF_AUX_FLAG_OVERWRITE */
	uint64_t partial;	/* ... with PERF_AUX_FLAG_PARTIAL: a record was cut */
	uint64_t collision;	/* ... with PERF_AUX_FLAG_COLLISION: sampling collided */
	uint64_t aux_record_bytes;	/* sum of the AUX records' sizes */
	uint64_t lost;		/* PERF_RECORD_LOST records */
	uint64_t lost_events;	/* the sideband records they say were dropped */
	uint64_t itrace_start;	/* PERF_RECORD_ITRACE_START records */
	uint64_t records;	/* every data-ring record seen */
	uint64_t record_bytes;	/* their bytes */
	uint64_t sideband_bytes;	/* bytes of whole records written to the sideband file */
	uint64_t snapshots;	/* snapshot windows taken */
	uint64_t data_full;	/* data ring found too full to take a PERF_RECORD_AUX */
	uint64_t restarts;	/* restarts of the hardware after a (possible) stop */
};

/*
 * The largest PERF_RECORD_AUX: header, offset, size, flags, and a sample_id
 * trailer of every field sample_id_all can add (TID, TIME, ID, STREAM_ID,
 * CPU, IDENTIFIER). A data ring with less room than this may have dropped
 * one, TRUNCATED included.
 */
#define AUXRING_AUX_RECORD_MAX (8 + 3 * 8 + 6 * 8)

/* How long a restart waits for aux_head to reach the stop's record, by default. */
#define AUXRING_HEAD_WAIT_NS 100000000ull

struct auxring {
	struct perf_event_mmap_page *pc;	/* control page */
	uint8_t *data;		/* data ring, data_size bytes (a power of two) */
	uint64_t data_size;
	uint8_t *aux;		/* AUX area, aux_size bytes (a power of two) */
	uint64_t aux_size;
	bool overwrite;		/* AUX mapped read-only: the kernel overwrites */
	bool mapped;		/* ours to munmap */
	size_t data_map_len;
	/* Snapshot state: where the previous window ended, and the bytes before it. */
	uint64_t snap_prev;
	uint8_t *snap_ref;
	uint64_t snap_ref_len;
	uint64_t data_counted;	/* records before here are counted, maybe not yet written */
	uint64_t stops_seen;	/* possible stops already answered by a restart */
	uint64_t aux_rec_end;	/* the furthest end of a PERF_RECORD_AUX seen */
	uint64_t head_wait_ns;	/* how long a restart waits for aux_head (AUXRING_HEAD_WAIT_NS) */
	struct auxring_stats stats;
};

/*
 * Map @fd's data ring (@data_bytes, a power of two number of pages, plus the
 * control page) and its AUX area (@aux_bytes, likewise). Returns 0 or -errno
 * (EPERM/ENOMEM when the locked-memory limit is reached).
 */
int auxring_mmap(struct auxring *r, int fd, uint64_t data_bytes, uint64_t aux_bytes,
		 bool overwrite);
/* Use memory laid out as a perf mapping (control page, then data ring) and an AUX area. */
void auxring_attach(struct auxring *r, void *base, uint64_t data_size, void *aux,
		    uint64_t aux_size, bool overwrite);
void auxring_unmap(struct auxring *r);

/* The wakeup watermark for an AUX area: rare wakeups, with room to spare. */
uint32_t auxring_watermark(uint64_t aux_bytes);

/*
 * Write every new AUX byte to @fd (the final drain). Returns 0, or -errno
 * when a write failed (ENOSPC: the disk is full); aux_tail then covers
 * exactly the bytes that reached the file, and the file holds every one of
 * them.
 */
int auxring_drain_aux(struct auxring *r, int fd);
/*
 * The same while tracing: at most @max bytes (UINT64_MAX: no limit), and the
 * file ends on a page boundary; the rest waits for the next call (or for
 * auxring_drain_aux()), unless the ring is one page and needs the room.
 * After a TRUNCATED stop a bounded drain gives the hardware room first, so it
 * can resume while the rest is written.
 */
int auxring_drain_aux_max(struct auxring *r, int fd, uint64_t max);

/*
 * Count record @h in @st: every record, and AUX (flags), LOST and
 * ITRACE_START by their kind. @body holds the record's first three u64s
 * after its header (zeroes past its end).
 */
void auxring_count(struct auxring_stats *st, const struct perf_event_header *h,
		   const uint64_t body[3]);

/*
 * Write the new data-ring records to @fd, byte-exact, and count them.
 * A record is written whole or not at all: on a failed write the file is cut
 * back to the last whole record. Returns 0 or -errno.
 */
int auxring_read_data(struct auxring *r, int fd);
/*
 * The same, but records are only counted (at once: a TRUNCATED must be seen
 * without delay) until @min_batch bytes wait to be written: fewer, larger
 * writes while the trace is flowing. auxring_read_data() is min_batch 0.
 */
int auxring_read_data_batched(struct auxring *r, int fd, uint64_t min_batch);

/* Restart the hardware after a stop (the session: IOC_DISABLE, then IOC_ENABLE). */
typedef void auxring_restart_fn(void *arg);

/*
 * One pass of the record loop over a ring, after a wakeup:
 * - the new sideband records to @sb_fd, counted at once, written in batches
 *   of an eighth of the data ring (every one of them when @final);
 * - when the hardware may have stopped since the last restart (a TRUNCATED
 *   or LOST record, or a data ring too full to have taken the record that
 *   says so) and @restart is given: free only the room the hardware needs to
 *   restart, a watermark of free space (the driver restarts only into a
 *   whole ToPA region, and the core allocates regions of the watermark),
 *   counted from the stop's record when aux_head has not caught up with it
 *   yet; call @restart(@arg), then write the rest while the hardware refills;
 * - the trace bytes to @trace_fd: whole file pages while tracing, every
 *   byte when @final (the events are stopped; nothing is restarted); in
 *   overwrite mode none (they leave through auxring_snapshot()).
 * Returns 0, or -errno of a failed write (ENOSPC: the disk is full); the
 * files then hold exactly the bytes the stats count.
 */
int auxring_pass(struct auxring *r, int trace_fd, int sb_fd, bool final,
		 auxring_restart_fn *restart, void *arg);

#define AUXRING_SNAP_REF_MAX (64u << 10)	/* bytes kept to tell a lap */

struct auxring_window {
	uint64_t bytes;		/* written to the file */
	uint64_t head;		/* aux_head as the kernel published it at the stop */
	bool wrapped;		/* the window does not continue the previous one: the
				 * hardware wrote over bytes no snapshot holds, or @max
				 * left older new bytes out */
	bool lapped;		/* ... because a whole buffer or more was written */
};

/*
 * Overwrite mode: write to @fd the bytes the hardware wrote since the
 * previous snapshot (since the start for the first), the newest @max of them
 * at most, so no byte is in two windows. The event must be stopped
 * (disabled) while this runs: intel_pt publishes aux_head only at a stop.
 * Handles a head that is an offset inside the buffer (intel_pt) and a head
 * that only grows. A lap of intel_pt's buffer is told from a reference copy
 * of the bytes before the previous head (up to AUXRING_SNAP_REF_MAX): a
 * trace that repeats itself exactly over a whole buffer cannot be told from
 * one that stood still (perf's reader has the same limit). Returns 0, or
 * -errno of a failed write (then @w->bytes reached the file) or -ENOMEM.
 * auxring_unmap() frees the reference.
 */
int auxring_snapshot(struct auxring *r, int fd, uint64_t max, struct auxring_window *w);

static inline const struct perf_event_mmap_page *auxring_ctrl(const struct auxring *r)
{
	return r->pc;
}

#endif

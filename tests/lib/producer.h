/* SPDX-License-Identifier: MIT */
/*
 * A producer that plays the kernel and the PT hardware on memory laid out
 * as a perf mapping: control page, data ring, AUX area. It follows the
 * kernel's rules: AUX bytes published with a release store of aux_head after
 * their PERF_RECORD_AUX (sample_id trailer for sample_type 0x10086), at most
 * aux_size bytes in flight, aux_tail respected in full mode; a data-ring
 * record is written only when CIRC_SPACE has room for it, else it is dropped
 * and a PERF_RECORD_LOST says so later; the consumer is woken when aux_head
 * crosses a multiple of the AUX watermark, the data ring fills past half,
 * or the output stops.
 *
 * Full trace comes in two models:
 *
 * - Generic (region 0): every chunk is published at once, as a PMU that
 *   calls perf_aux_output_end() per chunk (the kernel rig's ptsim does).
 *   When a chunk fills the room (at most size-1 bytes, CIRC_SPACE) it writes
 *   what fits, flags the record TRUNCATED and stops until enabled again.
 *
 * - intel_pt (region > 0), as arch/x86/events/intel/pt.c drives its ToPA:
 *   the output is cut into regions of that size (the core allocates AUX
 *   pages in chunks of the watermark, one ToPA entry each). The hardware
 *   writes on; aux_head and the PERF_RECORD_AUX move only at a PMI, which
 *   comes at the INT region boundary (the next watermark mark, or the STOP)
 *   and at the end. STOP sits on the region boundary at or before the tail
 *   (pt_buffer_reset_markers()); reaching it is a TRUNCATED stop. A start
 *   with less room than the rest of the current region fails with a
 *   zero-size TRUNCATED record and the output stays stopped.
 *
 * In overwrite mode it models intel_pt's snapshot buffer: aux_head is an
 * offset inside the buffer that wraps, and one PERF_RECORD_AUX (OVERWRITE)
 * is emitted per stop.
 *
 * AUX bytes are written with streaming stores, as PT's write-combining
 * output goes around the caches; the consumer reads them from memory.
 *
 * Every AUX byte is producer_byte(its absolute offset), so a consumer can
 * check each one; every data-ring record is also kept in a log in memory.
 */
#ifndef PTC_TEST_PRODUCER_H
#define PTC_TEST_PRODUCER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "auxring.h"

struct producer_cfg {
	uint64_t data_size, aux_size;	/* powers of two */
	bool overwrite;			/* snapshot mode */
	uint64_t total;			/* stop after this many AUX bytes were offered */
	uint32_t chunk_min, chunk_max;	/* random chunk sizes */
	unsigned int wrap_every;	/* 1 in N chunks ends exactly at the wrap (0: never) */
	unsigned int sideband_every;	/* 1 in N chunks adds a random-size COMM record */
	uint64_t rate;			/* bytes per second, 0 = as fast as possible */
	uint32_t seed;
	bool keep_log;			/* keep every data-ring record in log */
	bool fast_fill;			/* bench: copy from a table, bytes not checkable */
	uint64_t region;		/* intel_pt model: ToPA region size; 0: generic */
	uint64_t watermark;		/* aux_watermark; 0: auxring_watermark(aux_size) */
	unsigned int head_lag_us;	/* a stop's aux_head lags its record by this */
};

struct producer {
	struct producer_cfg cfg;
	void *base;			/* control page + data ring */
	uint8_t *aux;
	struct perf_event_mmap_page *pc;
	pthread_t thread;
	/* Control, from the consumer. */
	int stop;			/* finish now */
	int pause_req, paused;		/* snapshot: stop writing, emit the stop's record */
	int enabled;			/* cleared by a stop, set by producer_enable() */
	int restarts;			/* producer_enable() calls */
	int restarted;			/* ... the producer has acted on */
	int done;			/* the producer has finished */
	/* For the consumer to wait on, as poll() on the event would. */
	uint64_t wakeups;
	/* Results, read after producer_join() (or while paused). */
	uint64_t offered;		/* AUX bytes the "hardware" tried to write */
	uint64_t produced;		/* AUX bytes written and published */
	uint64_t chunks, aux_records, truncated, begin_fail;
	uint64_t records, dropped, lost_records, lost_sum;
	uint64_t dropped_truncated;	/* TRUNCATED records the full data ring dropped */
	uint64_t start_truncated;	/* intel_pt starts refused: less than a region free */
	uint64_t data_head, data_wakeup, aux_wakeup;
	uint8_t *log;			/* every record emitted, in order */
	uint64_t log_len, log_cap;
	uint64_t next_time;
};

static inline uint8_t producer_byte(uint64_t off)
{
	return (uint8_t)(((uint32_t)off * 2654435761u) >> 24);
}

/* Stores as Intel PT's output makes them (write-combining), and their fence. */
void producer_store_wc(void *dst, const void *src, size_t n);
void producer_fence(void);

int producer_init(struct producer *p, const struct producer_cfg *cfg);
void producer_start(struct producer *p);
void producer_join(struct producer *p);
void producer_free(struct producer *p);
/* Attach a consumer ring to the producer's memory. */
void producer_ring(struct producer *p, struct auxring *r);
/*
 * Restart after a stop, as PERF_EVENT_IOC_DISABLE + ENABLE would: like the
 * ioctl, it returns once the hardware has started or refused to start.
 */
void producer_enable(struct producer *p);
/*
 * Wait, as poll() on the event would, until the producer has woken the
 * consumer more than @seen times (p->wakeups read before the last pass), or
 * has finished.
 */
void producer_wait(struct producer *p, uint64_t seen);
/* auxring_pass()'s restart: producer_enable(), for an auxring_restart_fn. */
void producer_restart_fn(void *producer);
/*
 * The record loop against the producer: auxring_pass() after each wakeup
 * (@slow: every 200 us instead, a consumer that falls behind) until the
 * producer has finished or a write failed; then the producer is stopped (it
 * may be waiting for a restart) and joined, and the final pass runs. With
 * @max_gap_ns, the longest time between two passes is measured too.
 * Returns 0 or the failed pass's -errno.
 */
int producer_consume(struct producer *p, struct auxring *r, int trace_fd, int sb_fd, bool slow,
		     uint64_t *max_gap_ns);
/* Snapshot mode: stop writing (waits until the producer is idle), then resume. */
void producer_pause(struct producer *p);
void producer_resume(struct producer *p);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * A producer that plays the kernel and the PT hardware on memory laid out
 * as a perf mapping: control page, data ring, AUX area. It follows the
 * kernel's rules: AUX bytes published with a release store of aux_head, at
 * most size-1 bytes in flight (CIRC_SPACE), aux_tail respected in full mode;
 * when a chunk fills the room (or does not fit) it writes what fits, emits
 * PERF_RECORD_AUX with TRUNCATED and stops until enabled again, as intel_pt
 * does at its STOP marker; every chunk gets a PERF_RECORD_AUX
 * with a sample_id trailer (sample_type 0x10086); a full data ring drops
 * records and later says so with PERF_RECORD_LOST. In overwrite mode it
 * models intel_pt: aux_head is an offset inside the buffer that wraps, and
 * one PERF_RECORD_AUX (OVERWRITE) is emitted per stop.
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
	int enabled;			/* cleared by a truncation, set by producer_enable() */
	/* Results, read after producer_join() (or while paused). */
	uint64_t offered;		/* AUX bytes the "hardware" tried to write */
	uint64_t produced;		/* AUX bytes written and published */
	uint64_t chunks, aux_records, truncated, begin_fail;
	uint64_t records, dropped, lost_records, lost_sum;
	uint64_t data_head;
	uint8_t *log;			/* every record emitted, in order */
	uint64_t log_len, log_cap;
	uint64_t next_time;
};

static inline uint8_t producer_byte(uint64_t off)
{
	return (uint8_t)(((uint32_t)off * 2654435761u) >> 24);
}

int producer_init(struct producer *p, const struct producer_cfg *cfg);
void producer_start(struct producer *p);
void producer_join(struct producer *p);
void producer_free(struct producer *p);
/* Attach a consumer ring to the producer's memory. */
void producer_ring(struct producer *p, struct auxring *r);
/* Resume after a TRUNCATED stop, as PERF_EVENT_IOC_ENABLE would. */
void producer_enable(struct producer *p);
/* Snapshot mode: stop writing (waits until the producer is idle), then resume. */
void producer_pause(struct producer *p);
void producer_resume(struct producer *p);

#endif

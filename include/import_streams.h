/* SPDX-License-Identifier: MIT */
/* An import's streams: their trace and sideband files, opened on demand, finished in order. */
#ifndef PTC_IMPORT_STREAMS_H
#define PTC_IMPORT_STREAMS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "import_state.h"

/* @n bytes at @p to the sideband file @f (@name, in the bundle), through its buffer. */
int import_sb_write(struct import *im, struct sbfile *f, const char *name, const void *p,
		    size_t n, struct error *e);

/* @s's files open (created the first time), another stream's closed if too many are. */
int import_stream_open(struct import *im, struct istream *s, struct error *e);

/* The stream of @cpu (per-CPU) or @tid (per-thread), made the first time; NULL with @e. */
struct istream *import_stream_get(struct import *im, int cpu, pid_t tid, uint64_t off,
				  struct error *e);

/* After the last record: every stream's files written out, its trace in AUX order. */
int import_finish_streams(struct import *im, struct error *e);

#endif

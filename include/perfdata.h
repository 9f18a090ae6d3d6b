/* SPDX-License-Identifier: MIT */
/*
 * perf.data as perf record writes it, read without trusting it: the file
 * header, the attrs and their ids, the header features, and the record
 * stream, in file mode (a seekable file: header, attr section, data
 * section, feature sections after the data) and in pipe mode (`perf record
 * -o -`: a 16-byte header, then records only; attrs and features come as
 * HEADER_ATTR and HEADER_FEATURE records). Little-endian files only.
 *
 * Every size and offset is checked before it is used, every count is
 * bounded, and a refusal is a usage error naming the offset and what is
 * wrong there. Records are read sequentially with a fixed buffer, and an
 * AUXTRACE record's payload (which follows the record, outside its size) is
 * handed over in bounded pieces, so memory does not grow with the file.
 */
#ifndef PTC_PERFDATA_H
#define PTC_PERFDATA_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "perfdata_features.h"
#include "sideband.h"

/* perf's own record types (tools/perf/util/event.h), never sent by the kernel. */
enum {
	PD_HEADER_ATTR = 64,
	PD_HEADER_EVENT_TYPE = 65,
	PD_HEADER_TRACING_DATA = 66,
	PD_HEADER_BUILD_ID = 67,
	PD_FINISHED_ROUND = 68,
	PD_ID_INDEX = 69,
	PD_AUXTRACE_INFO = 70,
	PD_AUXTRACE = 71,
	PD_AUXTRACE_ERROR = 72,
	PD_EVENT_UPDATE = 78,
	PD_TIME_CONV = 79,
	PD_HEADER_FEATURE = 80,
	PD_COMPRESSED = 81,
	PD_COMPRESSED2 = 83,
};

#define PD_USER_TYPE_START	64
#define PD_AUXTRACE_LEN		48	/* header, size, offset, reference, idx, tid, cpu, pad */
#define PD_MAX_ATTRS		4096
#define PD_MAX_IDS		(1u << 20)
#define PD_MAX_FEATURE		(16u << 20)	/* bytes of one header feature we read */
#define PD_PAYLOAD_CHUNK	(1u << 20)	/* AUXTRACE payload is handed over in these */

struct pd_attr {
	struct perf_event_attr attr;	/* zero past what the file holds */
	uint64_t *ids;
	uint32_t nr_ids;
	char *name;		/* the event's name (EVENT_DESC, EVENT_UPDATE), or NULL */
};

/* An AUXTRACE record's fields. */
struct pd_auxtrace {
	uint64_t size;		/* payload bytes after the record */
	uint64_t offset;	/* where the payload was in the AUX buffer, counted from the start */
	uint64_t reference;
	uint32_t idx, tid, cpu;	/* cpu (uint32_t)-1 in per-thread mode */
};

/* One record as it sits in the input. */
struct pd_record {
	uint64_t off;		/* where it starts in the input */
	struct perf_event_header hdr;
	const uint8_t *data;	/* the whole record, hdr.size bytes; NULL in the payload callback */
	struct pd_auxtrace aux;	/* for AUXTRACE only */
};

struct perfdata;

struct perfdata_ops {
	/* Every record, HEADER_ATTR and HEADER_FEATURE included (the reader took them in first). */
	int (*record)(void *ctx, const struct pd_record *r, struct error *e);
	/* An AUXTRACE record's payload, in order, in pieces of at most PD_PAYLOAD_CHUNK. */
	int (*payload)(void *ctx, const struct pd_record *r, const void *buf, size_t len,
		       struct error *e);
};

/*
 * Read the header of the perf.data open on @fd (@name in messages), and in
 * file mode its attrs and features. A pipe-mode stream may be a pipe; a
 * file-mode one must be seekable. *@pd is NULL on failure.
 */
int perfdata_open(struct perfdata **pd, int fd, const char *name, struct error *e);
void perfdata_close(struct perfdata *pd);

/* Read every record in order through @ops. A refusal stops it: 0 or the error. */
int perfdata_read(struct perfdata *pd, const struct perfdata_ops *ops, void *ctx,
		  struct error *e);

bool perfdata_pipe_mode(const struct perfdata *pd);
const struct pd_features *perfdata_features(const struct perfdata *pd);
int perfdata_nr_attrs(const struct perfdata *pd);
const struct pd_attr *perfdata_attr(const struct perfdata *pd, int i);

/*
 * The sample_id trailer of kernel record @r (types below 64 but SAMPLE):
 * which attr wrote it (by its id, as perf finds it; a synthesized record,
 * id 0, belongs to the first attr) and the fields in @sid. *@trailer_len is
 * its size (0 without sample_id_all). A usage error when the record is too
 * short for it or names an id no attr has.
 */
int perfdata_sample_id(struct perfdata *pd, const struct pd_record *r,
		       const struct pd_attr **attr, struct sb_sample_id *sid, size_t *trailer_len,
		       struct error *e);

#endif

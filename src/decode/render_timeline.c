// SPDX-License-Identifier: MIT
/* --timeline in the chunk: records for timeline.h's filter at the merge. */
#include <string.h>

#include "decode_rec.h"
#include "render.h"
#include "timeline.h"

/* render_drec()'s record, through timeline_put(). */
static void put_rec(struct render *r, const struct rrec *rec, int kind, const char *name)
{
	struct drec d;

	render_drec_init(&d, rec, kind);
	timeline_put(r->sink, &d, name);
}

static void put(struct render *r, const struct rrec *rec)
{
	char name[1100];
	size_t n;

	switch (rec->kind) {
	case RREC_STREAM: {
		struct rrec h = { .kind = RREC_STREAM, .pid = rec->stream };

		render_drec(r->sink, &h, DREC_STREAM, rec->stream_name, NULL);
		break;
	}
	case RREC_RETURN:
		/* The filter closes the innermost open call: a return's names are not read. */
		put_rec(r, rec, DREC_RET, NULL);
		break;
	case RREC_CALL: {
		struct drec d;

		/*
		 * The callee: its symbol, without "+0x0". Its length as the names' cache has
		 * it (measured again, it was a strnlen() a call, and one more in the record).
		 */
		n = rec->names_plain ? rec->to_len : strnlen(rec->to_name, sizeof(name) - 1);
		if (n > sizeof(name) - 1)
			n = sizeof(name) - 1;
		memcpy(name, rec->to_name, n);
		name[n] = '\0';
		if (n > 4 && !memcmp(name + n - 4, "+0x0", 4))
			name[n -= 4] = '\0';
		render_drec_init(&d, rec, DREC_CALL);
		timeline_put_len(r->sink, &d, name, n < TIMELINE_NAME_MAX ? n : TIMELINE_NAME_MAX);
		break;
	}
	case RREC_GAP:
		put_rec(r, rec, DREC_GAP, rec->name);
		break;
	case RREC_THREAD:
		put_rec(r, rec, DREC_THREAD, NULL);
		break;
	case RREC_END:
		put_rec(r, rec, DREC_END, NULL);
		break;
	default:
		break;
	}
}

static void begin(struct dout *o, const struct decode_config *cfg)
{
	struct timeline_state *st = o->state;

	st->plain = cfg->nr_streams == 1 && !cfg->streams[0].nr_sb;
	timeline_begin(o);
}

const struct renderer render_timeline = {
	.name = "timeline",
	.output = RENDER_TIMELINE,
	.wants = RREC_BIT(RREC_STREAM) | RREC_BIT(RREC_CALL) | RREC_BIT(RREC_RETURN) |
		 RREC_BIT(RREC_GAP) | RREC_BIT(RREC_THREAD) | RREC_BIT(RREC_END),
	.flags = RENDER_NAMES | RENDER_TIME,
	.put = put,
	.filter = timeline_filter,
	.state_size = sizeof(struct timeline_state),
	.begin = begin,
	.finish = timeline_finish,
	.convert = timeline_convert,
	.unframe = timeline_unframe,
};

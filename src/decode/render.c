// SPDX-License-Identifier: MIT
/* The table of decode output formats, and what their files share. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode_rec.h"
#include "printable.h"
#include "render.h"

/* Every format: one line each. */
static const struct renderer *const table[] = {
	&render_insn,
	&render_insn_json,
	&render_branches,
	&render_branches_json,
	&render_calls,
	&render_calls_json,
	&render_stats,
	&render_timeline,
	&render_report,
};

const struct renderer *render_find(const struct decode_config *cfg, enum render_output output)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		const struct renderer *rd = table[i];

		if (rd->output != output)
			continue;
		if (output == RENDER_TIMELINE)
			return rd;
		if (rd->mode == cfg->mode && (rd->json == cfg->json || cfg->mode == DECODE_NONE ||
						 cfg->mode == DECODE_REPORT))
			return rd;
	}
	return NULL;
}

int render_open(struct dout *o, int fd, const struct renderer *rd,
		const struct decode_config *cfg)
{
	void *state = NULL;

	if (rd->state_size && !(state = calloc(1, rd->state_size)))
		return -ENOMEM;
	if (dout_init(o, fd, rd->filter, state)) {
		free(state);
		return -ENOMEM;
	}
	if (rd->begin)
		rd->begin(o, cfg);
	return 0;
}

int render_close(struct dout *o, const struct renderer *rd, bool ok)
{
	int ret;

	if (ok && rd->finish)
		rd->finish(o);
	ret = dout_flush(o);
	dout_destroy(o);
	free(o->state);
	o->state = NULL;
	return ret;
}

void render_stream_header(struct render *r, const struct rrec *rec)
{
	char *name;

	if (r->cfg->nr_streams < 2)
		return;
	name = printable(rec->stream_name);
	if (!name) {
		r->sink->err = r->sink->err ? r->sink->err : -ENOMEM;
		return;
	}
	render_text(r->sink, "[stream: ");
	render_text(r->sink, name);
	render_text(r->sink, "]\n");
	free(name);
}

void render_text(struct dsink *s, const char *text)
{
	dsink_put(s, text, strlen(text));
}

void render_json_line(struct dsink *s, void *json_obj)
{
	json_t *o = json_obj;
	char buf[1024];
	size_t n;

	if (!o)
		return;
	n = json_dumpb(o, buf, sizeof(buf) - 1, JSON_COMPACT);
	if (n && n < sizeof(buf) - 1) {
		buf[n++] = '\n';
		dsink_put(s, buf, n);
	} else if (n) {
		char *big = json_dumps(o, JSON_COMPACT);

		if (big) {
			dsink_put(s, big, strlen(big));
			dsink_put(s, "\n", 1);
			free(big);
		}
	}
	json_decref(o);
}

static const char *exec_mode_name(enum pt_exec_mode m)
{
	switch (m) {
	case ptem_16bit: return "16-bit";
	case ptem_32bit: return "32-bit";
	case ptem_64bit: return "64-bit";
	default: return "<unknown>";
	}
}

void render_event_text(const struct pt_event *ev, char *b, size_t n)
{
	switch (ev->type) {
	case ptev_enabled:
		snprintf(b, n, "%s", ev->variant.enabled.resumed ? "resumed" : "enabled");
		break;
	case ptev_disabled:
	case ptev_async_disabled:
		snprintf(b, n, "disabled");
		break;
	case ptev_async_branch:
		snprintf(b, n, "interrupt");
		break;
	case ptev_paging:
		snprintf(b, n, "paging, cr3: %016" PRIx64 "%s", ev->variant.paging.cr3,
			 ev->variant.paging.non_root ? ", nr" : "");
		break;
	case ptev_async_paging:
		snprintf(b, n, "paging, cr3: %016" PRIx64 "%s", ev->variant.async_paging.cr3,
			 ev->variant.async_paging.non_root ? ", nr" : "");
		break;
	case ptev_overflow:
		snprintf(b, n, "overflow");
		break;
	case ptev_exec_mode:
		snprintf(b, n, "exec mode: %s", exec_mode_name(ev->variant.exec_mode.mode));
		break;
	case ptev_tsx:
		snprintf(b, n, "%s", ev->variant.tsx.aborted ? "aborted" :
			 ev->variant.tsx.speculative ? "begin transaction" : "committed");
		break;
	case ptev_stop:
		snprintf(b, n, "stopped");
		break;
	case ptev_vmcs:
		snprintf(b, n, "vmcs, base: %016" PRIx64, ev->variant.vmcs.base);
		break;
	case ptev_async_vmcs:
		snprintf(b, n, "vmcs, base: %016" PRIx64, ev->variant.async_vmcs.base);
		break;
	case ptev_exstop:
		snprintf(b, n, "exstop");
		break;
	case ptev_mwait:
		snprintf(b, n, "mwait %" PRIx32 " %" PRIx32, ev->variant.mwait.hints,
			 ev->variant.mwait.ext);
		break;
	case ptev_pwre:
		snprintf(b, n, "pwre c%u.%u%s", (ev->variant.pwre.state + 1) & 0xf,
			 (ev->variant.pwre.sub_state + 1) & 0xf, ev->variant.pwre.hw ? " hw" : "");
		break;
	case ptev_pwrx:
		snprintf(b, n, "pwrx %s%s%sc%u (c%u)", ev->variant.pwrx.interrupt ? "int: " : "",
			 ev->variant.pwrx.store ? "st: " : "",
			 ev->variant.pwrx.autonomous ? "hw: " : "",
			 (ev->variant.pwrx.last + 1) & 0xf, (ev->variant.pwrx.deepest + 1) & 0xf);
		break;
	case ptev_ptwrite:
		snprintf(b, n, "ptwrite: %" PRIx64, ev->variant.ptwrite.payload);
		break;
	case ptev_tick:
		snprintf(b, n, "tick");
		break;
	case ptev_cbr:
		snprintf(b, n, "cbr: %x", ev->variant.cbr.ratio);
		break;
	case ptev_mnt:
		snprintf(b, n, "mnt: %" PRIx64, ev->variant.mnt.payload);
		break;
	default:
		b[0] = '\0';
		break;
	}
}

void render_drec(struct dsink *s, const struct rrec *rec, int drec_kind, const char *s1,
		 const char *s2)
{
	struct drec r;

	memset(&r, 0, sizeof(r));
	r.kind = (uint8_t)drec_kind;
	r.from = rec->from;
	r.to = rec->to;
	r.pid = rec->pid;
	r.tid = rec->tid;
	r.has_time = rec->has_time;
	r.time = rec->has_time ? rec->time : 0;
	drec_put(s, &r, s1, s2);
}

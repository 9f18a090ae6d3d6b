// SPDX-License-Identifier: MIT
/* The table of decode output formats, and what their files share. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
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
};

const struct renderer *render_find(const struct decode_config *cfg, enum render_output output)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		const struct renderer *rd = table[i];

		if (rd->output != output)
			continue;
		if (output == RENDER_TIMELINE)
			return rd;
		if (rd->mode == cfg->mode && (rd->json == cfg->json || cfg->mode == DECODE_NONE))
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
	case ptem_unknown: return "<unknown>";
	default: return "<invalid>";
	}
}

/* Appends to a bounded buffer. */
struct tbuf {
	char *b;
	size_t n, len;
};

__attribute__((format(printf, 2, 3)))
static void tput(struct tbuf *t, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (t->len >= t->n)
		return;
	va_start(ap, fmt);
	k = vsnprintf(t->b + t->len, t->n - t->len, fmt, ap);
	va_end(ap);
	if (k > 0)
		t->len = t->len + (size_t)k < t->n ? t->len + (size_t)k : t->n - 1;
}

/* ptxed's ", ip: ..." of --event:ip, for events whose IP is not suppressed. */
static void tip(struct tbuf *t, const struct pt_event *ev, unsigned flags, uint64_t ip)
{
	if ((flags & RENDER_EV_IP) && !ev->ip_suppressed)
		tput(t, ", ip: %016" PRIx64, ip);
}

/* The event as ptxed's print_event() of libipt 2.2 prints it, between the brackets. */
void render_event_text(const struct pt_event *ev, unsigned flags, char *b, size_t n)
{
	struct tbuf t = { b, n, 0 };

	b[0] = '\0';
	switch (ev->type) {
	case ptev_enabled:
		tput(&t, "%s", ev->variant.enabled.resumed ? "resumed" : "enabled");
		if (flags & RENDER_EV_IP)
			tput(&t, ", ip: %016" PRIx64, ev->variant.enabled.ip);
		break;
	case ptev_disabled:
		tput(&t, "disabled");
		tip(&t, ev, flags, ev->variant.disabled.ip);
		break;
	case ptev_async_disabled:
		tput(&t, "disabled");
		if (flags & RENDER_EV_IP) {
			tput(&t, ", at: %016" PRIx64, ev->variant.async_disabled.at);
			tip(&t, ev, flags, ev->variant.async_disabled.ip);
		}
		break;
	case ptev_async_branch:
		tput(&t, "interrupt");
		if (flags & RENDER_EV_IP) {
			tput(&t, ", from: %016" PRIx64, ev->variant.async_branch.from);
			if (!ev->ip_suppressed)
				tput(&t, ", to: %016" PRIx64, ev->variant.async_branch.to);
		}
		break;
	case ptev_paging:
		tput(&t, "paging, cr3: %016" PRIx64 "%s", ev->variant.paging.cr3,
		     ev->variant.paging.non_root ? ", nr" : "");
		break;
	case ptev_async_paging:
		tput(&t, "paging, cr3: %016" PRIx64 "%s", ev->variant.async_paging.cr3,
		     ev->variant.async_paging.non_root ? ", nr" : "");
		if (flags & RENDER_EV_IP)
			tput(&t, ", ip: %016" PRIx64, ev->variant.async_paging.ip);
		break;
	case ptev_overflow:
		tput(&t, "overflow");
		tip(&t, ev, flags, ev->variant.overflow.ip);
		break;
	case ptev_exec_mode:
		tput(&t, "exec mode: %s", exec_mode_name(ev->variant.exec_mode.mode));
		tip(&t, ev, flags, ev->variant.exec_mode.ip);
		break;
	case ptev_tsx:
		tput(&t, "%s", ev->variant.tsx.aborted ? "aborted" :
		     ev->variant.tsx.speculative ? "begin transaction" : "committed");
		tip(&t, ev, flags, ev->variant.tsx.ip);
		break;
	case ptev_stop:
		tput(&t, "stopped");
		break;
	case ptev_vmcs:
		tput(&t, "vmcs, base: %016" PRIx64, ev->variant.vmcs.base);
		break;
	case ptev_async_vmcs:
		tput(&t, "vmcs, base: %016" PRIx64, ev->variant.async_vmcs.base);
		if (flags & RENDER_EV_IP)
			tput(&t, ", ip: %016" PRIx64, ev->variant.async_vmcs.ip);
		break;
	case ptev_exstop:
		tput(&t, "exstop");
		tip(&t, ev, flags, ev->variant.exstop.ip);
		break;
	case ptev_mwait:
		tput(&t, "mwait %" PRIx32 " %" PRIx32, ev->variant.mwait.hints,
		     ev->variant.mwait.ext);
		tip(&t, ev, flags, ev->variant.mwait.ip);
		break;
	case ptev_pwre:
		tput(&t, "pwre c%u.%u%s", (ev->variant.pwre.state + 1) & 0xf,
		     (ev->variant.pwre.sub_state + 1) & 0xf, ev->variant.pwre.hw ? " hw" : "");
		break;
	case ptev_pwrx:
		tput(&t, "pwrx %s%s%sc%u (c%u)", ev->variant.pwrx.interrupt ? "int: " : "",
		     ev->variant.pwrx.store ? "st: " : "",
		     ev->variant.pwrx.autonomous ? "hw: " : "",
		     (ev->variant.pwrx.last + 1) & 0xf, (ev->variant.pwrx.deepest + 1) & 0xf);
		break;
	case ptev_ptwrite:
		tput(&t, "ptwrite: %" PRIx64, ev->variant.ptwrite.payload);
		tip(&t, ev, flags, ev->variant.ptwrite.ip);
		break;
	case ptev_tick:
		tput(&t, "tick");
		tip(&t, ev, flags, ev->variant.tick.ip);
		break;
	case ptev_cbr:
		tput(&t, "cbr: %x", ev->variant.cbr.ratio);
		break;
	case ptev_mnt:
		tput(&t, "mnt: %" PRIx64, ev->variant.mnt.payload);
		break;
#if LIBIPT_VERSION >= 0x201
	case ptev_tip:
		tput(&t, "tip: %" PRIx64, ev->variant.tip.ip);
		break;
	case ptev_tnt:
		tput(&t, "tnt: ");
		for (uint64_t i = ev->variant.tnt.size; i; i >>= 1)
			tput(&t, "%s", (ev->variant.tnt.bits & i) ? "!" : ".");
		break;
	case ptev_iflags:
		tput(&t, "interrupts %s", ev->variant.iflags.iflag ? "enabled" : "disabled");
		tip(&t, ev, flags, ev->variant.iflags.ip);
		break;
	case ptev_interrupt:
		tput(&t, "interrupt %u", ev->variant.interrupt.vector);
		if (ev->variant.interrupt.has_cr2)
			tput(&t, ", cr2: %016" PRIx64, ev->variant.interrupt.cr2);
		tip(&t, ev, flags, ev->variant.interrupt.ip);
		break;
	case ptev_iret:
		tput(&t, "iret");
		tip(&t, ev, flags, ev->variant.iret.ip);
		break;
	case ptev_smi:
		tput(&t, "smi");
		tip(&t, ev, flags, ev->variant.smi.ip);
		break;
	case ptev_rsm:
		tput(&t, "rsm");
		tip(&t, ev, flags, ev->variant.rsm.ip);
		break;
	case ptev_sipi:
		tput(&t, "sipi: %x", ev->variant.sipi.vector);
		break;
	case ptev_init:
		tput(&t, "init");
		tip(&t, ev, flags, ev->variant.init.ip);
		break;
	case ptev_vmentry:
		tput(&t, "vmentry");
		tip(&t, ev, flags, ev->variant.vmentry.ip);
		break;
	case ptev_vmexit:
		tput(&t, "vmexit");
		if (ev->variant.vmexit.has_vector)
			tput(&t, ", intr: %u", ev->variant.vmexit.vector);
		if (ev->variant.vmexit.has_vmxr)
			tput(&t, ", vmxr: %016" PRIx64, ev->variant.vmexit.vmxr);
		if (ev->variant.vmexit.has_vmxq)
			tput(&t, ", vmxq: %016" PRIx64, ev->variant.vmexit.vmxq);
		tip(&t, ev, flags, ev->variant.vmexit.ip);
		break;
	case ptev_shutdown:
		tput(&t, "shutdown");
		tip(&t, ev, flags, ev->variant.shutdown.ip);
		break;
	case ptev_uintr:
		tput(&t, "uintr %u", ev->variant.uintr.vector);
		tip(&t, ev, flags, ev->variant.uintr.ip);
		break;
	case ptev_uiret:
		tput(&t, "uiret");
		tip(&t, ev, flags, ev->variant.uiret.ip);
		break;
#endif
#if LIBIPT_VERSION >= 0x202
	case ptev_trig:
		tput(&t, "trig %02x", ev->variant.trig.trbv);
		if (ev->variant.trig.mult)
			tput(&t, ", mult");
		tip(&t, ev, flags, ev->variant.trig.ip);
		if (ev->variant.trig.icnt)
			tput(&t, ", icnt: %u", ev->variant.trig.icnt);
		break;
	case ptev_swintr:
		tput(&t, "swintr %u", ev->variant.swintr.vector);
		tip(&t, ev, flags, ev->variant.swintr.ip);
		break;
	case ptev_syscall:
		tput(&t, "syscall");
		tip(&t, ev, flags, ev->variant.syscall.ip);
		break;
#endif
	default:
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

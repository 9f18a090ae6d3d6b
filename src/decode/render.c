// SPDX-License-Identifier: MIT
/* The table of decode output formats, and what their files share. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iptcaps.h"
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
	o->convert = rd->convert;
	o->unframe = rd->unframe;
	o->seed = rd->seed;
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
#if PTC_LIBIPT >= 0x201
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
#if PTC_LIBIPT >= 0x202
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

static void jhex(json_t *o, const char *key, uint64_t v)
{
	char b[24];

	snprintf(b, sizeof(b), "0x%" PRIx64, v);
	json_object_set_new(o, key, json_string(b));
}

static void jint(json_t *o, const char *key, uint64_t v)
{
	json_object_set_new(o, key, json_integer((json_int_t)v));
}

static void jbool(json_t *o, const char *key, bool v)
{
	if (v)
		json_object_set_new(o, key, json_true());
}

/* The event's IP, where libipt did not suppress it. */
static void jip(json_t *o, const struct pt_event *ev, uint64_t ip)
{
	if (!ev->ip_suppressed)
		jhex(o, "ip", ip);
}

/* libipt's name of the event type: its enum without "ptev_". */
static const char *event_type_name(enum pt_event_type t)
{
	switch (t) {
	case ptev_enabled: return "enabled";
	case ptev_disabled: return "disabled";
	case ptev_async_disabled: return "async_disabled";
	case ptev_async_branch: return "async_branch";
	case ptev_paging: return "paging";
	case ptev_async_paging: return "async_paging";
	case ptev_overflow: return "overflow";
	case ptev_exec_mode: return "exec_mode";
	case ptev_tsx: return "tsx";
	case ptev_stop: return "stop";
	case ptev_vmcs: return "vmcs";
	case ptev_async_vmcs: return "async_vmcs";
	case ptev_exstop: return "exstop";
	case ptev_mwait: return "mwait";
	case ptev_pwre: return "pwre";
	case ptev_pwrx: return "pwrx";
	case ptev_ptwrite: return "ptwrite";
	case ptev_tick: return "tick";
	case ptev_cbr: return "cbr";
	case ptev_mnt: return "mnt";
#if PTC_LIBIPT >= 0x201
	case ptev_tip: return "tip";
	case ptev_tnt: return "tnt";
	case ptev_iflags: return "iflags";
	case ptev_interrupt: return "interrupt";
	case ptev_iret: return "iret";
	case ptev_smi: return "smi";
	case ptev_rsm: return "rsm";
	case ptev_sipi: return "sipi";
	case ptev_init: return "init";
	case ptev_vmentry: return "vmentry";
	case ptev_vmexit: return "vmexit";
	case ptev_shutdown: return "shutdown";
	case ptev_uintr: return "uintr";
	case ptev_uiret: return "uiret";
#endif
#if PTC_LIBIPT >= 0x202
	case ptev_trig: return "trig";
	case ptev_swintr: return "swintr";
	case ptev_syscall: return "syscall";
#endif
	default: return NULL;
	}
}

void *render_event_json(const struct pt_event *ev)
{
	const char *name = event_type_name(ev->type);
	char text[320];
	json_t *o;

	render_event_text(ev, 0, text, sizeof(text));
	if (!name || !text[0])
		return NULL;
	o = json_object();
	json_object_set_new(o, "event", json_string(name));
	json_object_set_new(o, "text", json_string(text));
	switch (ev->type) {
	case ptev_enabled:
		jhex(o, "ip", ev->variant.enabled.ip);
		jbool(o, "resumed", ev->variant.enabled.resumed);
		break;
	case ptev_disabled: jip(o, ev, ev->variant.disabled.ip); break;
	case ptev_async_disabled:
		jhex(o, "at", ev->variant.async_disabled.at);
		jip(o, ev, ev->variant.async_disabled.ip);
		break;
	case ptev_async_branch:
		jhex(o, "from", ev->variant.async_branch.from);
		if (!ev->ip_suppressed)
			jhex(o, "to", ev->variant.async_branch.to);
		break;
	case ptev_paging:
		jhex(o, "cr3", ev->variant.paging.cr3);
		jbool(o, "non_root", ev->variant.paging.non_root);
		break;
	case ptev_async_paging:
		jhex(o, "cr3", ev->variant.async_paging.cr3);
		jbool(o, "non_root", ev->variant.async_paging.non_root);
		jhex(o, "ip", ev->variant.async_paging.ip);
		break;
	case ptev_overflow: jip(o, ev, ev->variant.overflow.ip); break;
	case ptev_exec_mode:
		jint(o, "mode", ev->variant.exec_mode.mode == ptem_16bit ? 16 :
		     ev->variant.exec_mode.mode == ptem_32bit ? 32 :
		     ev->variant.exec_mode.mode == ptem_64bit ? 64 : 0);
		jip(o, ev, ev->variant.exec_mode.ip);
		break;
	case ptev_tsx:
		jbool(o, "speculative", ev->variant.tsx.speculative);
		jbool(o, "aborted", ev->variant.tsx.aborted);
		jip(o, ev, ev->variant.tsx.ip);
		break;
	case ptev_vmcs: jhex(o, "base", ev->variant.vmcs.base); break;
	case ptev_async_vmcs:
		jhex(o, "base", ev->variant.async_vmcs.base);
		jhex(o, "ip", ev->variant.async_vmcs.ip);
		break;
	case ptev_exstop: jip(o, ev, ev->variant.exstop.ip); break;
	case ptev_mwait:
		jint(o, "hints", ev->variant.mwait.hints);
		jint(o, "ext", ev->variant.mwait.ext);
		jip(o, ev, ev->variant.mwait.ip);
		break;
	case ptev_pwre:
		jint(o, "state", ev->variant.pwre.state);
		jint(o, "sub_state", ev->variant.pwre.sub_state);
		jbool(o, "hw", ev->variant.pwre.hw);
		break;
	case ptev_pwrx:
		jint(o, "last", ev->variant.pwrx.last);
		jint(o, "deepest", ev->variant.pwrx.deepest);
		jbool(o, "interrupt", ev->variant.pwrx.interrupt);
		jbool(o, "store", ev->variant.pwrx.store);
		jbool(o, "autonomous", ev->variant.pwrx.autonomous);
		break;
	case ptev_ptwrite:
		jhex(o, "payload", ev->variant.ptwrite.payload);
		jip(o, ev, ev->variant.ptwrite.ip);
		break;
	case ptev_tick: jip(o, ev, ev->variant.tick.ip); break;
	case ptev_cbr: jint(o, "ratio", ev->variant.cbr.ratio); break;
	case ptev_mnt: jhex(o, "payload", ev->variant.mnt.payload); break;
#if PTC_LIBIPT >= 0x201
	case ptev_tip: jhex(o, "ip", ev->variant.tip.ip); break;
	case ptev_tnt:
		jint(o, "bits", ev->variant.tnt.bits);
		jint(o, "size", ev->variant.tnt.size);
		break;
	case ptev_iflags:
		json_object_set_new(o, "iflag", json_boolean(ev->variant.iflags.iflag));
		jip(o, ev, ev->variant.iflags.ip);
		break;
	case ptev_interrupt:
		jint(o, "vector", ev->variant.interrupt.vector);
		if (ev->variant.interrupt.has_cr2)
			jhex(o, "cr2", ev->variant.interrupt.cr2);
		jip(o, ev, ev->variant.interrupt.ip);
		break;
	case ptev_iret: jip(o, ev, ev->variant.iret.ip); break;
	case ptev_smi: jip(o, ev, ev->variant.smi.ip); break;
	case ptev_rsm: jip(o, ev, ev->variant.rsm.ip); break;
	case ptev_sipi: jint(o, "vector", ev->variant.sipi.vector); break;
	case ptev_init: jip(o, ev, ev->variant.init.ip); break;
	case ptev_vmentry: jip(o, ev, ev->variant.vmentry.ip); break;
	case ptev_vmexit:
		if (ev->variant.vmexit.has_vector)
			jint(o, "vector", ev->variant.vmexit.vector);
		if (ev->variant.vmexit.has_vmxr)
			jhex(o, "vmxr", ev->variant.vmexit.vmxr);
		if (ev->variant.vmexit.has_vmxq)
			jhex(o, "vmxq", ev->variant.vmexit.vmxq);
		jip(o, ev, ev->variant.vmexit.ip);
		break;
	case ptev_shutdown: jip(o, ev, ev->variant.shutdown.ip); break;
	case ptev_uintr:
		jint(o, "vector", ev->variant.uintr.vector);
		jip(o, ev, ev->variant.uintr.ip);
		break;
	case ptev_uiret: jip(o, ev, ev->variant.uiret.ip); break;
#endif
#if PTC_LIBIPT >= 0x202
	case ptev_trig:
		jint(o, "trbv", ev->variant.trig.trbv);
		jbool(o, "mult", ev->variant.trig.mult);
		if (ev->variant.trig.icnt)
			jint(o, "icnt", ev->variant.trig.icnt);
		jip(o, ev, ev->variant.trig.ip);
		break;
	case ptev_swintr:
		jint(o, "vector", ev->variant.swintr.vector);
		jip(o, ev, ev->variant.swintr.ip);
		break;
	case ptev_syscall: jip(o, ev, ev->variant.syscall.ip); break;
#endif
	default:
		break;
	}
	if (ev->has_tsc)
		jint(o, "tsc", ev->tsc);
	return o;
}

const char render_hex_pairs[513] =
	"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	"202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
	"404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
	"606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
	"808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
	"a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
	"c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
	"e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

void render_drec(struct dsink *s, const struct rrec *rec, int drec_kind, const char *s1,
		 const char *s2)
{
	struct drec r;

	render_drec_init(&r, rec, drec_kind);
	drec_put(s, &r, s1, s2);
}

// SPDX-License-Identifier: MIT
/* ptdump's walk over a trace: PSB search, packets, errors, resyncs, --lastip, --time, --tcal. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "ptdump_walk.h"
#include "ptpacket_print.h"
#include "ptclock.h"

#define MODE_EXEC_IF	0x04

/* ---- the walk: ptdump's dump_sync() and dump_packets() ------------------------ */

struct lastip {
	uint64_t ip;
	bool have, suppressed;
};

struct walk {
	const struct ptdump_opts *o;
	ptdump_line_fn *fn;
	void *ctx;
	struct ptdump_stats *st;
	int stop;		/* the callback's non-zero return */
	struct lastip lastip;
	/* --time, --tcal: ptdump's time tracking */
	const struct pt_config *cfg;
	struct ptclock clock;
	uint64_t last_tsc, last_fcr;
	bool in_header;
	bool sb_due;		/* a timing update: sideband up to sb_tsc is due */
	uint64_t sb_tsc;
	struct ptpkt cur;	/* the packet being read (the unknown-packet callback fills it) */
	const uint8_t *buf;	/* the trace, len bytes */
	size_t len;
	bool mapped;		/* a file's private mapping: pages behind are dropped */
	int fd;			/* that file, for its holes, or -1 */
	size_t dropped;		/* up to here */
};

/* A search for the next PSB in steps of this many bytes, each dropped after it. */
#define PSB_STEP (1u << 20)

static const uint8_t psb_bytes[16] = {
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
};

/*
 * Before libipt's PSB search from @from: a stretch without a PSB (1 GiB of garbage) is
 * searched here in bounded steps, its pages dropped behind; libipt would keep every
 * page it read. When the PSB is far, the decoder is set just before it, and libipt's
 * search that follows reads a few bytes only (it finds the same PSB: the first after
 * the position it starts from).
 */
static void skip_to_psb(struct walk *w, struct pt_packet_decoder *d, uint64_t from)
{
	size_t at = (size_t)from, found = w->len;

	if (!w->mapped || from >= w->len)
		return;
	while (at < w->len) {
		size_t n = w->len - at < PSB_STEP + 15 ? w->len - at : PSB_STEP + 15;
		uint64_t data = file_next_data(w->fd, at);
		const uint8_t *p;

		/* A hole of a sparse file is zeroes, no PSB: passed without a read. */
		if (data > (uint64_t)at + PSB_STEP) {
			at = data < w->len ? (size_t)data : w->len;
			continue;
		}
		p = memmem(w->buf + at, n, psb_bytes, sizeof(psb_bytes));

		if (p) {
			found = (size_t)(p - w->buf);
			break;
		}
		if (n < PSB_STEP + 15)
			break;
		at += PSB_STEP;
		map_drop_behind(w->buf, at, &w->dropped);
	}
	if (found - (size_t)from > 2 * PSB_STEP && found > 0)
		pt_pkt_sync_set(d, found - 1);
}

static void emit(struct walk *w, const struct ptdump_line *l)
{
	if (!w->stop)
		w->stop = w->fn(l, w->ctx);
}

/* "[offset: what: why]" (ptdump's diag()); returns @code. */
static int diag(struct walk *w, const char *what, uint64_t off, int code)
{
	char text[PTDUMP_LINE_MAX];
	struct ptdump_line l = {
		.kind = PTDUMP_ERROR, .offset = off, .text = text, .context = what, .code = code,
	};

	if (code)
		snprintf(text, sizeof(text), "[%" PRIx64 ": %s: %s]", off, what,
			 pt_errstr(pt_errcode(code)));
	else
		snprintf(text, sizeof(text), "[%" PRIx64 ": %s]", off, what);
	w->st->errors++;
	emit(w, &l);
	return code;
}

/* ptdump's line for a configuration error: printed as an error, not counted as one. */
static void config_line(struct walk *w, const char *what, int code)
{
	char text[PTDUMP_LINE_MAX];
	struct ptdump_line l = {
		.kind = PTDUMP_ERROR, .offset = 0, .text = text, .context = what, .code = code,
	};

	snprintf(text, sizeof(text), "[0: %s: %s]", what, pt_errstr(pt_errcode(code)));
	emit(w, &l);
}

/* libipt's last-IP rules (pt_last_ip_update_ip()). */
static void lastip_update(struct lastip *l, const struct pt_packet_ip *ip)
{
	static const uint64_t keep[] = {
		[pt_ipc_update_16] = ~0xffffull, [pt_ipc_update_32] = ~0xffffffffull,
		[pt_ipc_update_48] = ~0xffffffffffffull,
	};

	switch (ip->ipc) {
	case pt_ipc_suppressed:
		l->suppressed = true;
		return;
	case pt_ipc_sext_48:
		l->ip = ptpacket_sext48(ip->ip);
		break;
	case pt_ipc_update_16:
	case pt_ipc_update_32:
	case pt_ipc_update_48:
		l->ip = (l->ip & keep[ip->ipc]) | (ip->ip & ~keep[ip->ipc]);
		break;
	case pt_ipc_full:
		l->ip = ip->ip;
		break;
	}
	l->have = true;
	l->suppressed = false;
}

/* The --lastip column after @p; a diagnostic first when there is no IP yet. */
static const char *lastip_column(struct walk *w, const struct ptpkt *p, char *buf, size_t len)
{
	lastip_update(&w->lastip, &p->pkt.payload.ip);
	if (!w->lastip.have) {
		diag(w, "error tracking last-ip", p->offset, -pte_noip);
		return "<unavailable>";
	}
	if (w->lastip.suppressed)
		return "<suppressed>";
	snprintf(buf, len, "%016" PRIx64, w->lastip.ip);
	return buf;
}

static bool hidden(const struct ptpkt *p, const struct ptdump_opts *o)
{
	if (o->quiet)
		return true;
	if (p->kind != PTPKT_LIBIPT)
		return false;
	switch (p->pkt.type) {
	case ppt_pad:
		return o->no_pad;
	case ppt_cyc:
		return o->no_timing || o->no_cyc;
	case ppt_tsc:
	case ppt_cbr:
	case ppt_tma:
	case ppt_mtc:
		return o->no_timing;
	default:
		return false;
	}
}

/* ---- --time and --tcal: ptdump's track_*() ---- */

static void tracking_reset(struct walk *w)
{
	ptclock_init(&w->clock, w->cfg);
	w->last_tsc = 0;
	w->last_fcr = 0;
	w->in_header = false;
}

/* ptdump's print_time(): the TSC estimate, or its change. */
static const char *time_column(struct walk *w, char *buf, size_t len)
{
	uint64_t tsc = 0;
	int ret = ptclock_now(&w->clock, &tsc);

	if (ret < 0 && !(ret == -pte_no_time && w->o->no_wall_clock)) {
		diag(w, "error printing time", w->cur.offset, ret);
		snprintf(buf, len, "<unavailable>");
		return "tsc";
	}
	if (w->o->time_delta) {
		if (w->last_tsc <= tsc)
			snprintf(buf, len, "+%" PRIx64, tsc - w->last_tsc);
		else
			snprintf(buf, len, "-%" PRIx64, w->last_tsc - tsc);
		w->last_tsc = tsc;
	} else {
		snprintf(buf, len, "%016" PRIx64, tsc);
	}
	return "tsc";
}

/* ptdump's print_tcal(): the fast-counter:cycles ratio, or its change. */
static const char *tcal_column(struct walk *w, char *buf, size_t len)
{
	uint64_t fcr = 0;
	int ret = ptclock_fcr(&w->clock, &fcr);
	double one = (double)(1ull << PTCLOCK_FCR_SHIFT), d = (double)fcr / one;

	if (ret < 0) {
		diag(w, "error printing time", w->cur.offset, ret);
		snprintf(buf, len, "<unavailable>");
		return "fcr";
	}
	if (w->o->time_delta) {
		snprintf(buf, len, "%+.3f", d - (double)w->last_fcr / one);
		w->last_fcr = fcr;
	} else {
		snprintf(buf, len, "%.3f", d);
	}
	return "fcr";
}

static void tcal_diag(struct walk *w, const char *what, int ret)
{
	if (ret < 0)
		diag(w, what, w->cur.offset, ret);
}

/*
 * The time tracking of a timing packet (ptdump's track_tsc() ... track_cyc(), and its
 * PSB, PSBEND and OVF cases): the column's name and text in @buf, or NULL for none.
 */
static const char *track_time(struct walk *w, struct ptpkt *p, char *buf, size_t len)
{
	struct ptclock *c = &w->clock;
	const struct pt_packet *pkt = &p->pkt;
	bool cal = !w->o->no_tcal, skip_time = false, skip_tcal = false;
	uint64_t fcr = 0;
	int ret;

	switch (pkt->type) {
	case ppt_psb:
		ptclock_cal_psb(c);
		w->in_header = true;
		return NULL;
	case ppt_psbend:
		w->in_header = false;
		return NULL;
	case ppt_ovf:
		if (w->o->keep_tcal_on_ovf)
			ptclock_cal_ovf(c);
		else
			ptclock_cal_reset(c);
		return NULL;
	case ppt_tsc:
		if (cal)
			tcal_diag(w, "error calibrating time",
				  ptclock_cal_tsc(c, pkt->payload.tsc.tsc, w->in_header));
		ptclock_tsc(c, pkt->payload.tsc.tsc);
		break;
	case ppt_cbr:
		if (cal)
			tcal_diag(w, "error calibrating time",
				  ptclock_cal_cbr(c, pkt->payload.cbr.ratio, w->in_header));
		tcal_diag(w, "error updating time", ptclock_cbr(c, pkt->payload.cbr.ratio));
		skip_time = true;	/* no timing update at this packet */
		break;
	case ppt_tma:
		tcal_diag(w, "error updating time",
			  ptclock_tma(c, pkt->payload.tma.ctc, pkt->payload.tma.fc));
		skip_tcal = true;	/* no calibration update at this packet */
		break;
	case ppt_mtc:
		if (cal)
			tcal_diag(w, "error calibrating time",
				  ptclock_cal_mtc(c, pkt->payload.mtc.ctc));
		tcal_diag(w, "error updating time", ptclock_mtc(c, pkt->payload.mtc.ctc));
		break;
	case ppt_cyc:
		if (w->o->no_cyc)
			return NULL;
		if (cal) {
			tcal_diag(w, "calibration error", ptclock_fcr(c, &fcr));
			ptclock_cal_cyc(c, pkt->payload.cyc.value);
		}
		ret = ptclock_cyc(c, pkt->payload.cyc.value, fcr);
		if (ret < 0)
			diag(w, "error updating time", p->offset, ret);
		else if (!fcr)
			diag(w, "error updating time: no calibration", p->offset, 0);
		skip_tcal = true;
		break;
	default:
		return NULL;
	}
	/* ptdump's sb_track_time(): the estimate, also while there is no TSC yet (0) */
	w->sb_tsc = 0;
	ptclock_now(&w->clock, &w->sb_tsc);
	w->sb_due = w->o->track_sb;
	if (w->o->tcal && !skip_tcal)
		return tcal_column(w, buf, len);
	if (w->o->time && !skip_time)
		return time_column(w, buf, len);
	return NULL;
}

static void one_packet(struct walk *w, struct ptpkt *p)
{
	char text[PTDUMP_LINE_MAX], ipbuf[20];
	const char *lastip = NULL;
	struct ptdump_line l = { .kind = PTDUMP_PACKET, .offset = p->offset, .pkt = p };

	if (p->kind == PTPKT_LIBIPT && p->pkt.type == ppt_mode &&
	    p->pkt.payload.mode.leaf == pt_mol_exec)
		p->exec_if = p->raw[1] & MODE_EXEC_IF;
	char timebuf[24];
	const char *time_id = NULL;

	if (w->o->lastip && ptpacket_is_ip(p))
		lastip = lastip_column(w, p, ipbuf, sizeof(ipbuf));
	w->sb_due = false;
	if ((w->o->time || w->o->tcal || w->o->track_sb) && p->kind == PTPKT_LIBIPT)
		time_id = track_time(w, p, timebuf, sizeof(timebuf));
	l.sb_due = w->sb_due;
	l.tsc = w->sb_tsc;
	if (hidden(p, w->o)) {
		if (l.sb_due) {
			l.kind = PTDUMP_TIME;
			emit(w, &l);
		}
		return;
	}
	ptpacket_line(p, w->o, lastip, time_id, timebuf, text, sizeof(text));
	l.text = text;
	w->st->packets++;
	emit(w, &l);
}

/* Packets until the end (0) or an error (negative, reported). */
static int walk_packets(struct walk *w, struct pt_packet_decoder *d, const uint8_t *begin)
{
	while (!w->stop) {
		struct ptpkt *p = &w->cur;
		uint64_t off = 0;
		int ret = pt_pkt_get_offset(d, &off);

		if (ret < 0)
			return diag(w, "error getting offset", off, ret);
		memset(p, 0, sizeof(*p));
		ret = pt_pkt_next(d, &p->pkt, sizeof(p->pkt));
		if (ret == -pte_eos)
			return 0;
		if (ret < 0)
			return diag(w, "error decoding packet", off, ret);
		/*
		 * libipt 2.1 and later (SKZ84) make a TMA with reserved bits set an 8-byte
		 * <invalid> packet even where the trace ends before its 8th byte: its bytes
		 * are not there to print (ptdump's line for it), its line is.
		 */
		if (off + (uint64_t)ret > w->len && w->o->raw)
			return diag(w, "bad packet size", off, -pte_bad_packet);
		p->offset = off;
		p->raw = begin + off;
		p->size = (uint8_t)ret;
		if (p->kind == PTPKT_LIBIPT)
			ptpacket_adopt_newer(p);
		one_packet(w, p);
		if (w->mapped)
			map_drop_behind(begin, off, &w->dropped);
	}
	return 0;
}

static int sync_error(struct walk *w, int ret)
{
	return ret == -pte_eos ? 0 : diag(w, "sync error", 0, ret);
}

/* Synchronize, dump, and after each error resynchronize at the next PSB. */
static int walk_sync(struct walk *w, struct pt_packet_decoder *d, const uint8_t *begin)
{
	int ret;

	if (!w->o->no_sync)
		skip_to_psb(w, d, 0);
	ret = w->o->no_sync ? pt_pkt_sync_set(d, 0) : pt_pkt_sync_forward(d);
	if (ret < 0)
		return w->o->no_sync ? diag(w, "sync error", 0, ret) : sync_error(w, ret);
	w->st->synced = true;
	for (;;) {
		uint64_t off = 0;

		ret = walk_packets(w, d, begin);
		if (!ret || w->stop)
			return ret;
		/* libipt searches from 15 bytes back (a PSB the bad packet began in) */
		if (pt_pkt_get_offset(d, &off) >= 0)
			skip_to_psb(w, d, off >= 15 ? off - 15 : 0);
		ret = pt_pkt_sync_forward(d);
		if (ret < 0)
			return sync_error(w, ret);
		w->st->resyncs++;
		memset(&w->lastip, 0, sizeof(w->lastip));
		tracking_reset(w);
	}
}

/*
 * libipt 2.0.5's PSB search reads the byte after the buffer when the buffer
 * ends on an 8-byte-aligned word of PSB pattern (libipt 2.1 fixed it:
 * commit 037a46c0). Such a buffer is copied with a zero byte after it.
 */
static bool psb_search_overreads(const uint8_t *buf, size_t len)
{
	uint64_t w;

	if (len < 8 || ((uintptr_t)(buf + len) & 7))
		return false;
	memcpy(&w, buf + len - 8, 8);
	return w == 0x8202820282028202ull || w == 0x0282028202820282ull;
}

int ptdump_walk(const uint8_t *buf, size_t len, const struct ptdump_opts *o,
		ptdump_line_fn *fn, void *ctx, struct ptdump_stats *st, struct error *e)
{
	struct walk w = { .o = o, .fn = fn, .ctx = ctx, .st = st };
	struct pt_packet_decoder *d;
	struct pt_config cfg;
	uint8_t *copy = NULL;
	int ret;

	memset(st, 0, sizeof(*st));
	if (!len)
		return 0;
	if (psb_search_overreads(buf, len)) {
		copy = calloc(1, len + 8);
		if (!copy)
			return err_runtime(e, -ENOMEM, "no memory for a copy of the %zu-byte trace",
					   len);
		memcpy(copy, buf, len);
		buf = copy;
	}
	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)buf;
	cfg.end = (uint8_t *)buf + len;
	cfg.decode.callback = ptpacket_decode_unknown;
	cfg.decode.context = &w.cur;
	w.buf = buf;
	w.len = len;
	w.mapped = o->mapped && !copy;
	w.fd = w.mapped ? o->fd : -1;
	cfg.mtc_freq = o->mtc_freq;
	cfg.nom_freq = o->nom_freq;
	cfg.cpuid_0x15_eax = o->cpuid_0x15_eax;
	cfg.cpuid_0x15_ebx = o->cpuid_0x15_ebx;
	w.cfg = &cfg;
	if (o->has_cpu) {
		cfg.cpu = o->cpu;
		/* ptdump's line for a CPU libipt cannot tell the errata of; it goes on. */
		ret = pt_cpu_errata(&cfg.errata, &cfg.cpu);
		if (ret < 0)
			config_line(&w, "failed to determine errata", ret);
	}
	tracking_reset(&w);	/* the clock takes its parameters, errata too, from cfg */
	d = pt_pkt_alloc_decoder(&cfg);
	if (!d) {
		free(copy);
		return err_runtime(e, -ENOMEM, "libipt could not make a packet decoder");
	}
	ret = walk_sync(&w, d, buf);
	st->status = ret < 0 ? -ret : 0;
	pt_pkt_free_decoder(d);
	free(copy);
	return w.stop;
}

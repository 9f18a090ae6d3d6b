// SPDX-License-Identifier: MIT
/* Sideband for the decoder: pevent records applied in time order, libipt-sb's rules. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decode_sb.h"
#include "fileio.h"
#include "sideband.h"

#ifndef PERF_RECORD_MISC_SWITCH_OUT
#define PERF_RECORD_MISC_SWITCH_OUT (1 << 13)
#endif

/* Where the decoder is, as far as the sideband can tell (libipt-sb's ploc). */
enum loc {
	LOC_UNKNOWN,
	LOC_USER,
	LOC_KERNEL,
	LOC_LIKELY_USER,
	LOC_LIKELY_KERNEL,
};

/* One file's reading state. */
struct sbf {
	const struct dsb_file *cfg;
	size_t next;		/* offset of the record after the current one */
	size_t cur;		/* offset of the current record */
	struct sb_record rec;	/* the current record, due at tsc */
	uint64_t tsc;
	bool have;		/* rec holds a record not applied yet */
	bool done;		/* end of file, or removed after an error */
	size_t dropped;		/* the mapping's pages before this are dropped */
	/* Primary only: the process running, and one waiting for the right moment. */
	enum loc loc;
	struct image_proc *ctx, *next_ctx;
	uint32_t tid, next_tid;
	bool tid_known, tid_pending;
};

struct dsb {
	struct image_store *img;
	struct sbf *files;
	size_t nr;
	dsb_diag_fn *diag;
	void *ctx;
};

/* An empty file (or range) still gets a buffer to point at. */
static const uint8_t no_bytes[8];

int dsb_file_load(struct dsb_file *f, struct error *e)
{
	int ret = file_map_input(AT_FDCWD, f->path, false, &f->map, e);
	size_t len = f->map.len;

	if (ret)
		return ret;
	if (f->from > len || (f->to && (f->to > len || f->to <= f->from))) {
		file_unmap(&f->map);
		return err_usage(e, "%s: range 0x%" PRIx64 "-0x%" PRIx64 " is not inside the file "
				 "(%zu bytes)", f->path, f->from, f->to, len);
	}
	if (f->map.p)
		madvise(f->map.p, len, MADV_SEQUENTIAL);
	if (f->to)
		len = (size_t)f->to;
	f->buf = f->map.p ? (uint8_t *)f->map.p + f->from : (uint8_t *)no_bytes;
	f->len = len - (size_t)f->from;
	return 0;
}

void dsb_file_release(struct dsb_file *f)
{
	file_unmap(&f->map);
	f->buf = NULL;
	f->len = 0;
}

uint64_t dsb_time_to_tsc(const struct dsb_pevent *p, uint64_t time)
{
	uint64_t quot, rem;

	/* Time 0 is for synthesized records: the beginning of time. */
	if (!time || !p->time_mult)
		return 0;
	time -= p->time_zero;
	quot = time / p->time_mult;
	rem = time % p->time_mult;
	quot <<= p->time_shift;
	rem <<= p->time_shift;
	rem /= p->time_mult;
	return quot + rem;
}

uint64_t dsb_tsc_to_time(const struct dsb_pevent *p, uint64_t tsc)
{
	uint64_t quot, rem;

	if (p->time_shift >= 64)
		return 0;
	quot = tsc >> p->time_shift;
	rem = tsc & ((1ull << p->time_shift) - 1);
	quot *= p->time_mult;
	rem *= p->time_mult;
	rem >>= p->time_shift;
	return p->time_zero + quot + rem;
}

static void say(struct dsb *sb, const struct sbf *f, enum dsb_diag_kind kind, const char *fmt,
		...) __attribute__((format(printf, 4, 5)));

static void say(struct dsb *sb, const struct sbf *f, enum dsb_diag_kind kind, const char *fmt, ...)
{
	struct dsb_diag d;
	va_list ap;

	if (!sb->diag)
		return;
	d.kind = kind;
	d.file = f->cfg;
	d.offset = f->cfg->from + f->cur;
	d.tsc = f->tsc;
	va_start(ap, fmt);
	vsnprintf(d.msg, sizeof(d.msg), fmt, ap);
	va_end(ap);
	sb->diag(sb->ctx, &d);
}

/*
 * Read the next record of @f by libipt's rules: a type 0 or a record that runs past the
 * end ends the file; a type libipt does not read is stepped over; a record whose size does
 * not add up removes the file (as libipt removes its decoder). Returns false at the end.
 */
static bool fetch(struct dsb *sb, struct sbf *f)
{
	struct perf_event_header h;
	struct error e;
	int n;

	f->have = false;
	for (;;) {
		f->cur = f->next;
		/* Read once, front to back: resident memory does not grow with the file. */
		if (f->cfg->map.p)
			map_drop_behind(f->cfg->buf, f->cur, &f->dropped);
		if (f->done || f->cfg->len - f->cur < sizeof(h)) {
			f->done = true;
			return false;
		}
		memcpy(&h, f->cfg->buf + f->cur, sizeof(h));
		if (!h.type || h.size > f->cfg->len - f->cur) {
			if (h.type)
				say(sb, f, DSB_WARNING, "a record of %u bytes runs past the end "
				    "of the file: the rest is not read", h.size);
			f->done = true;
			return false;
		}
		if (h.size < sizeof(h)) {
			say(sb, f, DSB_ERROR, "sideband error: record size %u is less than a "
			    "header: the rest of the file is not read", h.size);
			f->done = true;
			return false;
		}
		if (sideband_libipt_reads(h.type))
			break;
		f->next = f->cur + h.size;
	}
	err_clear(&e);
	n = sideband_parse(f->cfg->buf, f->cfg->len, f->cur, f->cfg->pev.sample_type, &f->rec, &e);
	if (n < 0) {
		say(sb, f, DSB_ERROR, "sideband error: %s: the rest of the file is not read "
		    "(is --pevent:sample-type right?)", e.why);
		f->done = true;
		return false;
	}
	f->next = f->cur + (size_t)n;
	f->tsc = 0;
	if (f->rec.has_sample_id && (f->cfg->pev.sample_type & PERF_SAMPLE_TIME) &&
	    f->rec.sid.time) {
		uint64_t tsc = dsb_time_to_tsc(&f->cfg->pev, f->rec.sid.time);
		uint64_t off = f->cfg->pev.tsc_offset;

		/* libipt's --pevent:tsc-offset: earlier, never wrapping round. */
		if (off <= tsc)
			tsc -= off;
		else
			tsc = (int64_t)off >= 0 ? 0 : (tsc <= off ? tsc - off : UINT64_MAX);
		f->tsc = tsc;
	}
	f->have = true;
	return true;
}

/* The bodies of the records applied here (the kernel's layouts, up to the name). */
struct body_ids {
	uint32_t pid, tid;	/* COMM, ITRACE_START; SWITCH_CPU_WIDE: next_prev_pid/tid */
};

struct body_mmap {
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
};

struct body_fork {
	uint32_t pid, ppid, tid, ptid;
};

struct body_aux {
	uint64_t offset, size, flags;
};

struct body_lost {
	uint64_t id, lost;
};

/* A record's body as a struct; zero where the record is shorter (the parser checked it). */
static void body(const struct sb_record *r, void *dst, size_t len)
{
	memset(dst, 0, len);
	memcpy(dst, r->body, r->body_len < len ? r->body_len : len);
}

static void cancel_switch(struct sbf *f)
{
	if (f->next_ctx)
		image_proc_put(f->next_ctx);
	f->next_ctx = NULL;
}

/* Make @p the process to switch to at the next suitable event (libipt's rules). */
static void prepare_switch(struct sbf *f, struct image_proc *p, uint32_t tid)
{
	f->next_tid = tid;
	f->tid_pending = true;
	if (f->next_ctx == p)
		return;
	cancel_switch(f);
	if (f->ctx == p)
		return;
	image_proc_hold(p);
	f->next_ctx = p;
}

static void do_switch(struct sbf *f, struct pt_image **image)
{
	if (f->next_ctx) {
		*image = f->next_ctx->image;
		if (f->ctx)
			image_proc_put(f->ctx);
		f->ctx = f->next_ctx;
		f->next_ctx = NULL;
	}
	if (f->tid_pending) {
		f->tid = f->next_tid;
		f->tid_known = true;
		f->tid_pending = false;
	}
}

static struct image_proc *proc(struct dsb *sb, struct sbf *f, uint32_t pid)
{
	struct image_proc *p = image_proc_get(sb->img, pid);

	if (!p)
		say(sb, f, DSB_ERROR, "sideband error: out of memory for process %u", pid);
	return p;
}

static void apply_mmap(struct dsb *sb, struct sbf *f)
{
	const struct sb_record *r = &f->rec;
	const char *file = sideband_mmap_file(r);
	struct image_paths paths;
	struct body_mmap m;
	struct image_proc *p;
	char tried[4400];

	/* libipt reads the kernel from kcore: its files on disk were patched at boot. */
	if ((r->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL || !file)
		return;
	body(r, &m, sizeof(m));
	p = proc(sb, f, m.pid);
	if (!p)
		return;
	paths.symfs = f->cfg->pev.symfs;
	paths.sysroot = f->cfg->pev.sysroot;
	paths.fallback = f->cfg->pev.sysroot_fallback;
	memcpy(paths.vdso, f->cfg->pev.vdso, sizeof(paths.vdso));
	switch (image_proc_map(sb->img, p, file, m.pgoff, m.len, m.addr, &paths, tried,
			       sizeof(tried))) {
	case IMAGE_MAPPED:
		break;
	case IMAGE_SKIPPED_SPECIAL:
		say(sb, f, DSB_WARNING, "sideband warning: image section lost: %s of pid %u "
		    "(0x%" PRIx64 ") has no file to read", file, m.pid, m.addr);
		break;
	case IMAGE_NO_VDSO:
		say(sb, f, DSB_ERROR, "sideband error: bad configuration: [vdso] of pid %u at "
		    "0x%" PRIx64 ": no --pevent:vdso-%s given", m.pid, m.addr,
		    p->abi == IMAGE_ABI_IA32 ? "ia32" : p->abi == IMAGE_ABI_X32 ? "x32" :
		    p->abi == IMAGE_ABI_X64 ? "x64" : "x64/-x32/-ia32 (and its ABI is unknown)");
		break;
	case IMAGE_BAD_FILE:
		say(sb, f, DSB_ERROR, "sideband error: bad file: %s (mapped by pid %u at 0x%"
		    PRIx64 ")%s", tried, m.pid, m.addr, f->cfg->pev.sysroot ||
		    f->cfg->pev.symfs ? "" : "; --sysroot DIR may say where the files are");
		break;
	}
}

static void apply_exec(struct dsb *sb, struct sbf *f)
{
	struct image_proc *p;
	struct body_ids c;

	body(&f->rec, &c, sizeof(c));
	/* A new image for the process; a holder keeps the old until it switches. */
	image_proc_remove(sb->img, c.pid);
	p = proc(sb, f, c.pid);
	if (p && f->cfg->primary)
		prepare_switch(f, p, c.tid);
}

static void apply_switch_to(struct dsb *sb, struct sbf *f, uint32_t pid, uint32_t tid)
{
	struct image_proc *p = proc(sb, f, pid);

	if (p)
		prepare_switch(f, p, tid);
}

static void apply_record(struct dsb *sb, struct sbf *f, struct pt_image **image)
{
	const struct sb_record *r = &f->rec;
	bool primary = f->cfg->primary, out = r->misc & PERF_RECORD_MISC_SWITCH_OUT;
	union {
		struct body_ids ids;
		struct body_fork fork;
		struct body_aux aux;
		struct body_lost lost;
	} b;

	body(r, &b, sizeof(b));
	switch (r->type) {
	case PERF_RECORD_ITRACE_START:
		if (!primary)
			break;
		apply_switch_to(sb, f, b.ids.pid, b.ids.tid);
		/* Tracing just started: no reason to wait for a suitable place. */
		do_switch(f, image);
		break;
	case PERF_RECORD_FORK:
		/* A new thread of a process needs nothing: it shares the image. */
		if (b.fork.ppid == b.fork.pid)
			break;
		if (image_proc_fork(sb->img, b.fork.ppid, b.fork.pid))
			say(sb, f, DSB_ERROR, "sideband error: out of memory for process %u",
			    b.fork.pid);
		break;
	case PERF_RECORD_COMM:
		if (r->misc & PERF_RECORD_MISC_COMM_EXEC)
			apply_exec(sb, f);
		break;
	case PERF_RECORD_SWITCH:
		if (!primary || out)
			break;
		if (!r->has_sample_id || !(f->cfg->pev.sample_type & PERF_SAMPLE_TID)) {
			say(sb, f, DSB_ERROR, "sideband error: bad configuration: a SWITCH record "
			    "without a pid (sample_type has no PERF_SAMPLE_TID)");
			break;
		}
		apply_switch_to(sb, f, r->sid.pid, r->sid.tid);
		break;
	case PERF_RECORD_SWITCH_CPU_WIDE:
		if (!primary)
			break;
		if (out)
			apply_switch_to(sb, f, b.ids.pid, b.ids.tid);
		else if (r->has_sample_id && r->sid.pid)
			apply_switch_to(sb, f, r->sid.pid, r->sid.tid);
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		apply_mmap(sb, f);
		break;
	case PERF_RECORD_LOST:
		say(sb, f, DSB_LOSS, "sideband lost: %" PRIu64 " records", b.lost.lost);
		break;
	case PERF_RECORD_AUX:
		if (primary && (b.aux.flags & PERF_AUX_FLAG_TRUNCATED))
			say(sb, f, DSB_LOSS, "trace lost: the AUX area was full (TRUNCATED at "
			    "offset 0x%" PRIx64 ")", b.aux.offset + b.aux.size);
		break;
	default:
		break;
	}
}

static enum loc loc_of(const struct sbf *f, uint64_t ip)
{
	return ip < f->cfg->pev.kernel_start ? LOC_USER : LOC_KERNEL;
}

static enum loc loc_suppressed(enum loc from)
{
	switch (from) {
	case LOC_KERNEL:
	case LOC_LIKELY_KERNEL:
		return LOC_LIKELY_USER;
	case LOC_USER:
	case LOC_LIKELY_USER:
		return LOC_LIKELY_KERNEL;
	default:
		return LOC_UNKNOWN;
	}
}

/* The IP an event binds to, where it has one that says where the decoder is. */
static bool event_ip(const struct pt_event *ev, uint64_t *ip)
{
	switch (ev->type) {
	case ptev_overflow: *ip = ev->variant.overflow.ip; break;
	case ptev_exec_mode: *ip = ev->variant.exec_mode.ip; break;
	case ptev_tsx: *ip = ev->variant.tsx.ip; break;
	case ptev_exstop: *ip = ev->variant.exstop.ip; break;
	case ptev_mwait: *ip = ev->variant.mwait.ip; break;
	case ptev_ptwrite: *ip = ev->variant.ptwrite.ip; break;
	case ptev_tick: *ip = ev->variant.tick.ip; break;
	default: return false;
	}
	return !ev->ip_suppressed;
}

/* Where an event leaves the decoder (libipt-sb's ploc_from_event). */
static enum loc loc_from_event(const struct sbf *f, const struct pt_event *ev)
{
	bool sup = ev->ip_suppressed;
	uint64_t ip;

	switch (ev->type) {
	case ptev_enabled:
		return loc_of(f, ev->variant.enabled.ip);
	case ptev_disabled:
		return sup ? loc_suppressed(f->loc) : loc_of(f, ev->variant.disabled.ip);
	case ptev_async_disabled:
		return sup ? loc_suppressed(loc_of(f, ev->variant.async_disabled.at)) :
		       loc_of(f, ev->variant.async_disabled.ip);
	case ptev_async_branch:
		return loc_of(f, ev->variant.async_branch.to);
	case ptev_async_paging:
		return sup ? LOC_LIKELY_KERNEL : loc_of(f, ev->variant.async_paging.ip);
	case ptev_paging:
		return LOC_LIKELY_KERNEL;
	default:
		return event_ip(ev, &ip) ? loc_of(f, ip) : LOC_UNKNOWN;
	}
}

static bool kernelish(enum loc l)
{
	return l == LOC_KERNEL || l == LOC_LIKELY_KERNEL || l == LOC_UNKNOWN;
}

/* A postponed switch happens in the kernel, or on the way in or out of it. */
static void place_switch(struct sbf *f, const struct pt_event *ev, struct pt_image **image)
{
	enum loc old = f->loc;

	f->loc = loc_from_event(f, ev);
	if (!f->next_ctx && !f->tid_pending)
		return;
	if (kernelish(old) || kernelish(f->loc))
		do_switch(f, image);
}

static struct sbf *earliest(struct dsb *sb)
{
	struct sbf *best = NULL;

	for (size_t i = 0; i < sb->nr; i++) {
		struct sbf *f = &sb->files[i];

		if (f->have && (!best || f->tsc < best->tsc))
			best = f;
	}
	return best;
}

void dsb_advance(struct dsb *sb, uint64_t tsc, struct pt_image **image)
{
	struct sbf *f;

	/* Every record due by then, in time order across the files. */
	while ((f = earliest(sb)) && f->tsc <= tsc) {
		apply_record(sb, f, image);
		fetch(sb, f);
	}
}

void dsb_event(struct dsb *sb, const struct pt_event *ev, struct pt_image **image)
{
	dsb_advance(sb, ev->tsc, image);
	for (size_t i = 0; i < sb->nr; i++)
		if (sb->files[i].cfg->primary)
			place_switch(&sb->files[i], ev, image);
}

bool dsb_thread(const struct dsb *sb, uint32_t *pid, uint32_t *tid)
{
	for (size_t i = 0; i < sb->nr; i++) {
		const struct sbf *f = &sb->files[i];

		if (f->cfg->primary && f->tid_known) {
			*pid = f->ctx ? f->ctx->pid : 0;
			*tid = f->tid;
			return true;
		}
	}
	return false;
}

int dsb_new(struct dsb **sbp, struct image_store *img, const struct dsb_file *files, size_t nr,
	    dsb_diag_fn *diag, void *ctx, struct error *e)
{
	struct dsb *sb = calloc(1, sizeof(*sb));

	*sbp = NULL;
	if (!sb || !(sb->files = calloc(nr ? nr : 1, sizeof(*sb->files)))) {
		free(sb);
		return err_runtime(e, -ENOMEM, "out of memory for the sideband");
	}
	sb->img = img;
	sb->nr = nr;
	sb->diag = diag;
	sb->ctx = ctx;
	for (size_t i = 0; i < nr; i++) {
		sb->files[i].cfg = &files[i];
		fetch(sb, &sb->files[i]);
	}
	*sbp = sb;
	return 0;
}

void dsb_free(struct dsb *sb)
{
	if (!sb)
		return;
	for (size_t i = 0; i < sb->nr; i++) {
		cancel_switch(&sb->files[i]);
		image_proc_put(sb->files[i].ctx);
	}
	free(sb->files);
	free(sb);
}

// SPDX-License-Identifier: MIT
/* perf.data (intel_pt) to a bundle: trace by stream in buffer order, sideband converted, manifest. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auxring.h"
#include "bundle.h"
#include "fileio.h"
#include "import.h"
#include "manifest.h"
#include "perfdata.h"
#include "sideband.h"
#include "stream.h"

#define MAX_OPEN	64		/* streams with their two files open at once */
#define SB_BUF		(64u << 10)	/* sideband bytes gathered per open stream */
#define COPY_BUF	(1u << 20)
#define VDSO_MAX	(16u << 20)
#define AUXTRACE_INTEL_PT	1

/* intel_pt's values in AUXTRACE_INFO (tools/perf/util/intel-pt.h), in this order. */
enum {
	PT_PMU_TYPE, PT_TIME_SHIFT, PT_TIME_MULT, PT_TIME_ZERO, PT_CAP_USER_TIME_ZERO,
	PT_TSC_BIT, PT_NORETCOMP_BIT, PT_HAVE_SCHED_SWITCH, PT_SNAPSHOT_MODE, PT_PER_CPU_MMAPS,
	PT_MTC_BIT, PT_MTC_FREQ_BITS, PT_TSC_CTC_N, PT_TSC_CTC_D, PT_CYC_BIT,
	PT_MAX_NONTURBO_RATIO, PT_FILTER_STR_LEN, PT_PRIV_MAX,
};

/* A sideband file written through a buffer. */
struct sbfile {
	int fd;
	uint8_t *buf;
	size_t len;
};

/*
 * Where AUXTRACE payloads went in the trace file: a run of buffers that follow
 * each other in the AUX buffer and in the file is one chunk, so a recording's
 * usual stream is one chunk, and only gaps and disorder cost memory.
 */
struct chunk {
	uint64_t aux_off;	/* its offset in the AUX buffer */
	uint64_t pos;		/* in the file */
	uint64_t len;
	size_t seq;		/* arrival, to keep equal offsets in order */
};

struct istream {
	struct stream s;	/* names and counts (s.ring.stats), trace_fd */
	struct sbfile sb;
	bool created;
	uint64_t used;		/* when last written, to close the longest idle */
	struct chunk *chunks;
	size_t nr_chunks, cap_chunks;
	bool unordered;
	uint64_t trace_len;
};

struct import {
	const struct import_opts *o;
	struct import_stats *st;
	struct warnings *w;
	struct perfdata *pd;
	struct bundle *b;
	struct manifest m;
	struct istream **streams;
	int nr_streams;
	int nr_open;
	uint64_t clock;
	struct istream *aux;	/* the stream the AUXTRACE payload being read goes to */
	size_t nr_chunks;	/* of every stream */
	struct sbfile proc;
	bool have_proc;
	bool have_info;		/* AUXTRACE_INFO was read */
	bool per_cpu;
	int pt_attr;		/* the index of the intel_pt attr */
	bool maps_vdso;
	uint64_t kernel_start;
	pid_t exec_pid;		/* the first process that exec'd while traced */
	char exec_comm[17];
	bool have_time_conv;
	uint64_t tc[3];		/* TIME_CONV's shift, mult, zero */
	uint8_t rec[8 + 65536 + sizeof(struct sb_trailer)];
};

/* ---- streams and their files ------------------------------------------ */

static int sb_flush(struct import *im, struct sbfile *f, const char *name, struct error *e)
{
	int ret = f->len ? write_all(f->fd, f->buf, f->len) : 0;

	f->len = 0;
	if (ret)
		return err_runtime(e, ret, "%s/%s: %s", im->o->dir, name, strerror(-ret));
	return 0;
}

static int sb_write(struct import *im, struct sbfile *f, const char *name, const void *p,
		    size_t n, struct error *e)
{
	if (f->len + n > SB_BUF && sb_flush(im, f, name, e))
		return -EIO;
	memcpy(f->buf + f->len, p, n);
	f->len += n;
	return 0;
}

static int stream_close(struct import *im, struct istream *s, struct error *e)
{
	int ret;

	if (s->s.trace_fd < 0)
		return 0;
	ret = sb_flush(im, &s->sb, s->s.sideband, e);
	free(s->sb.buf);
	s->sb.buf = NULL;
	if (bundle_close_stream(im->b, &s->s, ret ? NULL : e) && !ret)
		ret = -EIO;
	im->nr_open--;
	return ret;
}

static int reopen(struct import *im, const char *name, struct error *e)
{
	int fd = openat(bundle_dirfd(im->b), name, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return err_runtime(e, -errno, "%s/%s: %s", im->o->dir, name, strerror(errno));
	return fd;
}

/* The stream's files open, closing the longest idle stream's when too many are. */
static int stream_open(struct import *im, struct istream *s, struct error *e)
{
	s->used = ++im->clock;
	if (s->s.trace_fd >= 0)
		return 0;
	if (im->nr_open >= MAX_OPEN) {
		struct istream *idle = NULL;

		for (int i = 0; i < im->nr_streams; i++)
			if (im->streams[i]->s.trace_fd >= 0 &&
			    (!idle || im->streams[i]->used < idle->used))
				idle = im->streams[i];
		if (idle && stream_close(im, idle, e))
			return -EIO;
	}
	s->sb.buf = malloc(SB_BUF);
	if (!s->sb.buf)
		return err_runtime(e, -ENOMEM, "out of memory");
	if (!s->created) {
		if (bundle_open_stream(im->b, &s->s, e))
			return -EIO;
		s->created = true;
	} else {
		s->s.trace_fd = reopen(im, s->s.trace, e);
		s->s.sb_fd = s->s.trace_fd < 0 ? -1 : reopen(im, s->s.sideband, e);
		if (s->s.sb_fd < 0) {
			if (s->s.trace_fd >= 0)
				close(s->s.trace_fd);
			s->s.trace_fd = -1;
			return -EIO;
		}
	}
	s->sb.fd = s->s.sb_fd;
	im->nr_open++;
	return 0;
}

/* The stream of CPU @cpu (per-CPU) or thread @tid, made on first use. */
static struct istream *stream_get(struct import *im, int cpu, pid_t tid, uint64_t off,
				  struct error *e)
{
	struct istream *s, **n;

	for (int i = im->nr_streams - 1; i >= 0; i--)
		if (im->streams[i]->s.cpu == cpu && im->streams[i]->s.tid == tid)
			return im->streams[i];
	if (im->nr_streams >= IMPORT_MAX_STREAMS) {
		err_usage(e, "at offset %" PRIu64 ": more than %d streams (CPUs or threads)", off,
			  IMPORT_MAX_STREAMS);
		return NULL;
	}
	n = realloc(im->streams, ((size_t)im->nr_streams + 1) * sizeof(*n));
	s = calloc(1, sizeof(*s));
	if (n)
		im->streams = n;
	if (!n || !s) {
		free(s);
		err_runtime(e, -ENOMEM, "out of memory");
		return NULL;
	}
	stream_init(&s->s, cpu, tid);
	s->sb.fd = -1;
	im->streams[im->nr_streams++] = s;
	return s;
}

/* ---- records ----------------------------------------------------------- */

__attribute__((format(printf, 3, 4)))
static int bad(struct error *e, const struct pd_record *r, const char *fmt, ...)
{
	char why[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return err_usage(e, "at offset %" PRIu64 ": %s", r->off, why);
}

static int need_info(struct import *im, const struct pd_record *r, struct error *e)
{
	if (im->have_info)
		return 0;
	return bad(e, r, "a %s record before any AUXTRACE_INFO: this perf.data holds no Intel "
		   "PT trace (record with -e intel_pt//)", sideband_type_name(r->hdr.type) ?:
		   "kernel");
}

static int auxtrace(struct import *im, const struct pd_record *r, struct error *e)
{
	const struct pd_auxtrace *a = &r->aux;
	struct istream *s;
	struct chunk *c;

	if (need_info(im, r, e))
		return -EINVAL;
	if (im->per_cpu && a->cpu > IMPORT_MAX_CPU)
		return bad(e, r, "AUXTRACE of cpu %d in a per-CPU recording", (int)a->cpu);
	if (!im->per_cpu && (!a->tid || a->tid > INT_MAX))
		return bad(e, r, "AUXTRACE of thread %d in a per-thread recording", (int)a->tid);
	s = stream_get(im, im->per_cpu ? (int)a->cpu : -1, im->per_cpu ? -1 : (pid_t)a->tid,
		       r->off, e);
	if (!s || stream_open(im, s, e))
		return -EINVAL;
	im->aux = s;
	im->st->auxtrace++;
	c = s->nr_chunks ? &s->chunks[s->nr_chunks - 1] : NULL;
	if (c && c->aux_off + c->len == a->offset && c->pos + c->len == s->trace_len) {
		c->len += a->size;
		return 0;
	}
	if (im->nr_chunks >= IMPORT_MAX_CHUNKS)
		return bad(e, r, "more than %d AUXTRACE buffers that do not follow each other",
			   IMPORT_MAX_CHUNKS);
	if (s->nr_chunks == s->cap_chunks) {
		s->cap_chunks = s->cap_chunks ? 2 * s->cap_chunks : 4;
		c = realloc(s->chunks, s->cap_chunks * sizeof(*c));
		if (!c)
			return err_runtime(e, -ENOMEM, "out of memory");
		s->chunks = c;
	}
	c = s->chunks;
	if (s->nr_chunks && a->offset < c[s->nr_chunks - 1].aux_off)
		s->unordered = true;
	c[s->nr_chunks] = (struct chunk){ a->offset, s->trace_len, a->size, s->nr_chunks };
	s->nr_chunks++;
	im->nr_chunks++;
	return 0;
}

static int payload(void *ctx, const struct pd_record *r, const void *buf, size_t len,
		   struct error *e)
{
	struct import *im = ctx;
	struct istream *s = im->aux;
	int ret;

	(void)r;
	if (stream_open(im, s, e))
		return -EIO;
	ret = write_all(s->s.trace_fd, buf, len);
	if (ret)
		return err_runtime(e, ret, "%s/%s: %s", im->o->dir, s->s.trace, strerror(-ret));
	s->trace_len += len;
	s->s.ring.stats.aux_bytes += len;
	return 0;
}

/* The record @r with its trailer replaced by the bundle's, in im->rec. Its size, or -EINVAL. */
static int convert(struct import *im, const struct pd_record *r, const struct sb_sample_id *sid,
		   size_t tl, struct error *e)
{
	struct sb_trailer t = { 0 };
	struct perf_event_header h = r->hdr;
	size_t body = r->hdr.size - sizeof(h) - tl;
	uint64_t st = sid->sample_type;

	if (sizeof(h) + body + sizeof(t) > UINT16_MAX)
		return bad(e, r, "a %s record of %zu bytes after its sample_id is made the bundle's "
			   "(more than 65535)", sideband_type_name(h.type) ?: "kernel",
			   sizeof(h) + body + sizeof(t));
	if (st & PERF_SAMPLE_TID) {
		t.pid = sid->pid;
		t.tid = sid->tid;
	}
	t.time = st & PERF_SAMPLE_TIME ? sid->time : 0;
	t.cpu = st & PERF_SAMPLE_CPU ? sid->cpu : 0;
	t.id = st & PERF_SAMPLE_IDENTIFIER ? sid->identifier : st & PERF_SAMPLE_ID ? sid->id : 0;
	h.size = (uint16_t)(sizeof(h) + body + sizeof(t));
	memcpy(im->rec, &h, sizeof(h));
	memcpy(im->rec + sizeof(h), r->data + sizeof(h), body);
	memcpy(im->rec + sizeof(h) + body, &t, sizeof(t));
	return h.size;
}

/* Check the converted record by libipt's rules; the message names the perf.data offset. */
static int check_converted(struct import *im, const struct pd_record *r, size_t n,
			   struct sb_record *sb, struct error *e)
{
	static const char at0[] = "at offset 0: ";

	if (sideband_parse(im->rec, n, 0, SIDEBAND_SAMPLE_TYPE, sb, e) >= 0)
		return 0;
	if (e && !strncmp(e->why, at0, strlen(at0)))
		memmove(e->why, e->why + strlen(at0), strlen(e->why) - strlen(at0) + 1);
	if (e)
		err_what(e, "at offset %" PRIu64, r->off);
	return -EINVAL;
}

/* What the sideband tells the manifest: the vdso and kernel mappings, the exec'd workload. */
static void note_record(struct import *im, const struct sb_record *sb, bool synthesized)
{
	const char *file = sideband_mmap_file(sb);
	uint64_t addr;

	if (file && !strcmp(file, "[vdso]"))
		im->maps_vdso = true;
	if (file && !strncmp(file, "[kernel.kallsyms]", 17) && !im->kernel_start) {
		memcpy(&addr, sb->body + 8, sizeof(addr));
		im->kernel_start = addr;
	}
	if (sb->type == PERF_RECORD_COMM && (sb->misc & PERF_RECORD_MISC_COMM_EXEC) &&
	    !synthesized && !im->exec_pid && sb->body_len > 8) {
		memcpy(&im->exec_pid, sb->body, sizeof(uint32_t));
		snprintf(im->exec_comm, sizeof(im->exec_comm), "%.16s", (const char *)sb->body + 8);
	}
}

static int route(struct import *im, const struct pd_record *r, const struct sb_sample_id *sid,
		 struct istream **sp, struct error *e)
{
	uint64_t st = sid->sample_type;

	if (im->per_cpu && !(st & PERF_SAMPLE_CPU))
		return bad(e, r, "the %s record's sample_id (sample_type 0x%llx) has no CPU: a "
			   "per-CPU recording's sideband cannot be split by CPU",
			   sideband_type_name(r->hdr.type) ?: "kernel", (unsigned long long)st);
	if (!im->per_cpu && !(st & PERF_SAMPLE_TID))
		return bad(e, r, "the %s record's sample_id (sample_type 0x%llx) has no thread: a "
			   "per-thread recording's sideband cannot be split by thread",
			   sideband_type_name(r->hdr.type) ?: "kernel", (unsigned long long)st);
	if (im->per_cpu && sid->cpu > IMPORT_MAX_CPU)
		return bad(e, r, "a %s record of cpu %u", sideband_type_name(r->hdr.type) ?:
			   "kernel", sid->cpu);
	if (!im->per_cpu && sid->tid > INT_MAX)
		return bad(e, r, "a %s record of thread %d", sideband_type_name(r->hdr.type) ?:
			   "kernel", (int)sid->tid);
	*sp = stream_get(im, im->per_cpu ? (int)sid->cpu : -1,
			 im->per_cpu ? -1 : (pid_t)sid->tid, r->off, e);
	return *sp ? stream_open(im, *sp, e) : -EINVAL;
}

static int proc_write(struct import *im, size_t n, struct error *e)
{
	if (!im->have_proc) {
		im->proc.buf = malloc(SB_BUF);
		if (!im->proc.buf)
			return err_runtime(e, -ENOMEM, "out of memory");
		im->proc.fd = bundle_create_file(im->b, BUNDLE_PROC, e);
		if (im->proc.fd < 0)
			return -EIO;
		im->have_proc = true;
	}
	im->st->synthesized++;
	return sb_write(im, &im->proc, BUNDLE_PROC, im->rec, n, e);
}

static int kernel_record(struct import *im, const struct pd_record *r, struct error *e)
{
	const struct pd_attr *attr;
	struct sb_sample_id sid;
	struct sb_record sb;
	struct istream *s = NULL;
	uint64_t body[3] = { 0 };
	bool synthesized;
	size_t tl;
	int n;

	if (r->hdr.type == PERF_RECORD_SAMPLE) {
		im->st->samples++;
		return 0;
	}
	if (need_info(im, r, e) || perfdata_sample_id(im->pd, r, &attr, &sid, &tl, e))
		return -EINVAL;
	n = convert(im, r, &sid, tl, e);
	if (n < 0 || check_converted(im, r, (size_t)n, &sb, e))
		return -EINVAL;
	/* perf's records from /proc carry a zeroed sample_id: no event wrote them. */
	synthesized = (sid.sample_type & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER)) &&
		      !(sid.sample_type & PERF_SAMPLE_IDENTIFIER ? sid.identifier : sid.id);
	note_record(im, &sb, synthesized);
	if (synthesized)
		return proc_write(im, (size_t)n, e);
	if (route(im, r, &sid, &s, e))
		return -EINVAL;
	memcpy(body, sb.body, sb.body_len < sizeof(body) ? sb.body_len : sizeof(body));
	auxring_count(&s->s.ring.stats, &(struct perf_event_header){ sb.type, sb.misc, sb.size },
		      body);
	s->s.ring.stats.sideband_bytes += (uint64_t)n;
	im->st->sideband++;
	return sb_write(im, &s->sb, s->s.sideband, im->rec, (size_t)n, e);
}

/* ---- AUXTRACE_INFO and TIME_CONV --------------------------------------- */

static const char *auxtrace_kind(uint32_t type)
{
	static const char *const kinds[] = {
		"unknown", "Intel PT", "Intel BTS", "CoreSight ETM", "Arm SPE", "s390 CPU-MF",
		"HiSilicon PTT",
	};

	return type < sizeof(kinds) / sizeof(kinds[0]) ? kinds[type] : "an unknown kind";
}

/* perf's address filter string after the values: its length, then it, padded to 8. */
static int info_filter(struct import *im, const struct pd_record *r, const uint64_t *priv,
		       size_t n, struct error *e)
{
	size_t room = r->hdr.size - 16 - PT_PRIV_MAX * 8;
	const char *s = (const char *)r->data + 16 + PT_PRIV_MAX * 8;

	if (n < PT_PRIV_MAX || !priv[PT_FILTER_STR_LEN])
		return 0;
	if (priv[PT_FILTER_STR_LEN] >= room || s[priv[PT_FILTER_STR_LEN]])
		return bad(e, r, "AUXTRACE_INFO's filter string of %" PRIu64 " bytes does not fit "
			   "its %zu bytes with its NUL", priv[PT_FILTER_STR_LEN], room);
	if (manifest_set(&im->m.source.filter, s))
		return err_runtime(e, -ENOMEM, "out of memory");
	return 0;
}

static int info_attr(struct import *im, const struct pd_record *r, uint64_t pmu_type,
		     struct error *e)
{
	const struct pd_attr *a = NULL;

	for (int i = 0; i < perfdata_nr_attrs(im->pd) && !a; i++)
		if (perfdata_attr(im->pd, i)->attr.type == pmu_type) {
			a = perfdata_attr(im->pd, i);
			im->pt_attr = i;
		}
	if (!a)
		return bad(e, r, "AUXTRACE_INFO names PMU type %" PRIu64 ", but no event (attr) of "
			   "that type is in the header", pmu_type);
	im->m.pmu_type = (int)pmu_type;
	im->m.attr.config = a->attr.config;
	im->m.attr.config1 = a->attr.config1;
	im->m.attr.config2 = a->attr.config2;
	im->m.attr.exclude_user = a->attr.exclude_user;
	im->m.attr.exclude_kernel = a->attr.exclude_kernel;
	im->m.attr.exclude_hv = a->attr.exclude_hv;
	if (manifest_set(&im->m.pmu_name, "intel_pt") || manifest_set(&im->m.event, a->name))
		return err_runtime(e, -ENOMEM, "out of memory");
	return 0;
}

/* The MTC period: the config bits that mtc_freq_bits covers. */
static int info_mtc(struct import *im, const struct pd_record *r, uint64_t bits,
		    struct error *e)
{
	uint64_t v;

	if (!bits)
		return 0;
	v = (im->m.attr.config & bits) >> __builtin_ctzll(bits);
	if (v > 15)
		return bad(e, r, "AUXTRACE_INFO's mtc_freq_bits 0x%" PRIx64 " give an MTC period "
			   "of %" PRIu64 " (at most 15)", bits, v);
	im->m.mtc_freq = (unsigned int)v;
	return 0;
}

static int info_values(struct import *im, const struct pd_record *r, const uint64_t *priv,
		       size_t n, struct error *e)
{
	struct manifest *m = &im->m;

	if (priv[PT_PMU_TYPE] > INT_MAX || priv[PT_TIME_SHIFT] > 63 ||
	    priv[PT_TIME_MULT] > UINT32_MAX)
		return bad(e, r, "AUXTRACE_INFO's PMU type %" PRIu64 ", time_shift %" PRIu64 " or "
			   "time_mult %" PRIu64 " is out of range", priv[PT_PMU_TYPE],
			   priv[PT_TIME_SHIFT], priv[PT_TIME_MULT]);
	m->time_conv.time_shift = (uint16_t)priv[PT_TIME_SHIFT];
	m->time_conv.time_mult = (uint32_t)priv[PT_TIME_MULT];
	m->time_conv.time_zero = priv[PT_TIME_ZERO];
	m->time_conv.cap_user_time_zero = priv[PT_CAP_USER_TIME_ZERO] != 0;
	m->source.snapshot = priv[PT_SNAPSHOT_MODE] != 0;
	im->per_cpu = priv[PT_PER_CPU_MMAPS] != 0;
	m->per_thread = !im->per_cpu;
	if (info_attr(im, r, priv[PT_PMU_TYPE], e))
		return -EINVAL;
	if (n > PT_CYC_BIT) {
		if (info_mtc(im, r, priv[PT_MTC_FREQ_BITS], e))
			return -EINVAL;
		m->has_cpuid_0x15 = priv[PT_TSC_CTC_N] && priv[PT_TSC_CTC_D] &&
				    priv[PT_TSC_CTC_N] <= UINT32_MAX &&
				    priv[PT_TSC_CTC_D] <= UINT32_MAX;
		/* CPUID.15H: EAX the denominator, EBX the numerator of TSC/crystal clock. */
		m->cpuid_0x15_eax = m->has_cpuid_0x15 ? (uint32_t)priv[PT_TSC_CTC_D] : 0;
		m->cpuid_0x15_ebx = m->has_cpuid_0x15 ? (uint32_t)priv[PT_TSC_CTC_N] : 0;
	}
	if (n > PT_MAX_NONTURBO_RATIO && priv[PT_MAX_NONTURBO_RATIO]) {
		if (priv[PT_MAX_NONTURBO_RATIO] > 255)
			return bad(e, r, "AUXTRACE_INFO's max_non_turbo_ratio %" PRIu64 " is more "
				   "than 255", priv[PT_MAX_NONTURBO_RATIO]);
		m->nom_freq = (int)priv[PT_MAX_NONTURBO_RATIO];
	}
	return info_filter(im, r, priv, n, e);
}

static int auxtrace_info(struct import *im, const struct pd_record *r, struct error *e)
{
	uint64_t priv[PT_PRIV_MAX] = { 0 };
	uint32_t type;
	size_t n;

	if (im->have_info)
		return bad(e, r, "a second AUXTRACE_INFO");
	if (r->hdr.size < 16)
		return bad(e, r, "AUXTRACE_INFO of %u bytes has no room for its type", r->hdr.size);
	memcpy(&type, r->data + 8, sizeof(type));
	if (type != AUXTRACE_INTEL_PT)
		return bad(e, r, "AUXTRACE_INFO of type %u: the trace is %s, not Intel PT", type,
			   auxtrace_kind(type));
	n = (r->hdr.size - 16u) / 8;
	if (n <= PT_PER_CPU_MMAPS)
		return bad(e, r, "intel_pt's AUXTRACE_INFO holds %zu values, fewer than the %d "
			   "every perf writes", n, PT_PER_CPU_MMAPS + 1);
	memcpy(priv, r->data + 16, (n < PT_PRIV_MAX ? n : PT_PRIV_MAX) * 8);
	if (info_values(im, r, priv, n, e))
		return -EINVAL;
	im->have_info = true;
	return 0;
}

static int time_conv(struct import *im, const struct pd_record *r, struct error *e)
{
	if (r->hdr.size < 32)
		return bad(e, r, "TIME_CONV of %u bytes, less than its 32", r->hdr.size);
	memcpy(im->tc, r->data + 8, sizeof(im->tc));
	im->have_time_conv = true;
	return 0;
}

static int on_record(void *ctx, const struct pd_record *r, struct error *e)
{
	struct import *im = ctx;

	switch (r->hdr.type) {
	case PD_AUXTRACE_INFO:
		return auxtrace_info(im, r, e);
	case PD_TIME_CONV:
		return time_conv(im, r, e);
	case PD_AUXTRACE:
		return auxtrace(im, r, e);
	default:
		return r->hdr.type < PD_USER_TYPE_START ? kernel_record(im, r, e) : 0;
	}
}

/* ---- after the last record ---------------------------------------------- */

static int cmp_chunks(const void *a, const void *b)
{
	const struct chunk *x = a, *y = b;

	if (x->aux_off != y->aux_off)
		return x->aux_off < y->aux_off ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Copy @len bytes at @pos of @from to the end of @to. */
static int copy_range(int from, int to, uint64_t pos, uint64_t len, uint8_t *buf)
{
	while (len) {
		size_t n = len < COPY_BUF ? (size_t)len : COPY_BUF;
		ssize_t r = pread(from, buf, n, (off_t)pos);
		int ret;

		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		ret = write_all(to, buf, (size_t)r);
		if (ret)
			return ret;
		pos += (uint64_t)r;
		len -= (uint64_t)r;
	}
	return 0;
}

/* The payloads arrived out of offset order: write the file again in buffer order. */
static int reorder(struct import *im, struct istream *s, struct error *e)
{
	char tmp[64];
	uint8_t *buf = malloc(COPY_BUF);
	int from, to, ret = 0;

	if (!buf)
		return err_runtime(e, -ENOMEM, "out of memory");
	qsort(s->chunks, s->nr_chunks, sizeof(*s->chunks), cmp_chunks);
	snprintf(tmp, sizeof(tmp), ".%s.sorted", s->s.trace);
	from = openat(bundle_dirfd(im->b), s->s.trace, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	to = bundle_create_file(im->b, tmp, e);
	if (from < 0 || to < 0) {
		ret = from < 0 ? err_runtime(e, -errno, "%s/%s: %s", im->o->dir, s->s.trace,
					     strerror(errno)) : to;
		goto out;
	}
	for (size_t i = 0; !ret && i < s->nr_chunks; i++)
		ret = copy_range(from, to, s->chunks[i].pos, s->chunks[i].len, buf);
	if (!ret && renameat(bundle_dirfd(im->b), tmp, bundle_dirfd(im->b), s->s.trace))
		ret = -errno;
	if (ret)
		err_runtime(e, ret, "%s/%s: putting the buffers in order: %s", im->o->dir,
			    s->s.trace, strerror(-ret));
	else
		im->st->reordered++;
out:
	if (from >= 0)
		close(from);
	if (to >= 0)
		close(to);
	free(buf);
	return ret;
}

static int cmp_streams(const void *a, const void *b)
{
	const struct istream *x = *(struct istream *const *)a, *y = *(struct istream *const *)b;

	if (x->s.cpu != y->s.cpu)
		return x->s.cpu < y->s.cpu ? -1 : 1;
	return x->s.tid < y->s.tid ? -1 : x->s.tid > y->s.tid;
}

/* Close every file, put buffers in order, and list the streams in the manifest. */
static int finish_streams(struct import *im, struct error *e)
{
	int ret = 0;

	for (int i = 0; i < im->nr_streams; i++) {
		struct istream *s = im->streams[i];

		ret = ret ?: stream_open(im, s, e);	/* a stream is both its files, even empty */
		ret = ret ?: stream_close(im, s, e);
		if (!ret && s->unordered)
			ret = reorder(im, s, e);
		if (ret)
			return ret;
	}
	if (im->nr_streams)
		qsort(im->streams, (size_t)im->nr_streams, sizeof(*im->streams), cmp_streams);
	for (int i = 0; i < im->nr_streams; i++) {
		struct mstream *ms = manifest_add_stream(&im->m);

		if (!ms || bundle_describe_stream(&im->streams[i]->s, ms))
			return err_runtime(e, -ENOMEM, "out of memory");
		im->st->trace_bytes += ms->bytes;
	}
	im->st->streams = im->nr_streams;
	if (im->have_proc) {
		ret = sb_flush(im, &im->proc, BUNDLE_PROC, e);
		if (close(im->proc.fd) && !ret)
			ret = err_runtime(e, -errno, "%s/%s: %s", im->o->dir, BUNDLE_PROC,
					  strerror(errno));
		im->proc.fd = -1;
		if (!ret && manifest_set(&im->m.proc_sideband, BUNDLE_PROC))
			ret = err_runtime(e, -ENOMEM, "out of memory");
	}
	return ret;
}

/* The vdso: given, or in perf's build-id cache under the build-id the perf.data names. */
static int save_vdso(struct import *im, struct error *e)
{
	const char *id = perfdata_features(im->pd)->vdso_build_id, *home = getenv("HOME");
	char cached[4096] = "", *text = NULL;
	const char *path = im->o->vdso;
	size_t len;
	int fd, ret;

	if (!path && id && home && home[0]) {
		snprintf(cached, sizeof(cached), "%s/.debug/[vdso]/%s/vdso", home, id);
		path = access(cached, R_OK) ? NULL : cached;
	}
	if (!path) {
		if (im->maps_vdso)
			warn_add(im->w, "the sideband maps [vdso], and no copy of it was found (perf's "
				 "build-id cache has none%s%s): ptxed reports a sideband error there; "
				 "give import --vdso FILE", id ? " for build-id " : "", id ? id : "");
		return 0;
	}
	ret = file_read_all(AT_FDCWD, path, VDSO_MAX, &text, &len, e);
	if (!ret && (len < 4 || memcmp(text, "\177ELF", 4)))
		ret = err_usage(e, "%s: not an ELF file, so not a vdso image", path);
	if (ret) {
		free(text);
		if (im->o->vdso && e && !e->what[0])
			err_what(e, "--vdso");
		return ret;
	}
	ret = bundle_mkdir(im->b, BUNDLE_SYSROOT, e);
	fd = ret ? ret : bundle_create_file(im->b, BUNDLE_VDSO, e);
	if (fd >= 0) {
		ret = write_all(fd, text, len);
		if (close(fd) && !ret)
			ret = -errno;
		if (ret)
			err_runtime(e, ret, "%s/%s: %s", im->o->dir, BUNDLE_VDSO, strerror(-ret));
	}
	free(text);
	snprintf(im->st->vdso, sizeof(im->st->vdso), "%s", path);
	if (!ret && fd >= 0 && manifest_set(&im->m.vdso, BUNDLE_VDSO))
		ret = err_runtime(e, -ENOMEM, "out of memory");
	return fd < 0 ? fd : ret;
}

/* "GenuineIntel,6,94,3" (perf's x86 cpuid), or "GenuineIntel-6-5E-3". */
static void describe_cpu(struct import *im)
{
	const char *s = perfdata_features(im->pd)->cpuid;
	unsigned int f, m, st;
	char vendor[64];

	if (s && (sscanf(s, "%63[^,],%u,%u,%u", vendor, &f, &m, &st) == 4 ||
		  sscanf(s, "%63[^-]-%u-%x-%x", vendor, &f, &m, &st) == 4) &&
	    f <= 0xffff && m <= 0xffff && st <= 0xff) {
		manifest_set(&im->m.cpu.vendor, vendor);
		im->m.cpu.family = f;
		im->m.cpu.model = m;
		im->m.cpu.stepping = st;
		return;
	}
	manifest_set(&im->m.cpu.vendor, "unknown");
	warn_add(im->w, "the perf.data %s: decoders get --cpu none, without errata workarounds",
		 s ? "has a CPU string ptcollect does not read" : "does not say which CPU recorded it");
}

/* A perf record option that names the target, and its value (the word, or after '='). */
static bool target_opt(char *const *argv, int argc, int *i, const char *s, const char *l,
		       const char **val)
{
	const char *a = argv[*i];
	size_t n = strlen(l);

	if (!strcmp(a, s) || !strcmp(a, l)) {
		*val = *i + 1 < argc ? argv[++*i] : "";
		return true;
	}
	if (!strncmp(a, l, n) && a[n] == '=') {
		*val = a + n + 1;
		return true;
	}
	if (!strncmp(a, s, 2) && a[1] != '-' && a[2]) {
		*val = a + 2;
		return true;
	}
	return false;
}

static void add_pids(struct manifest *m, const char *list)
{
	char *end;

	while (*list) {
		long v = strtol(list, &end, 10);

		if (end == list || v <= 0 || v > INT_MAX)
			return;
		m->target.pids[m->target.nr_pids++] = (pid_t)v;
		list = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return;
	}
}

/* The workload in the recording's command line: after "--", or the word the exec'd comm names. */
static int target_command(struct import *im, char *const *argv, int argc, int from)
{
	int start = -1;

	for (int i = from; i < argc && start < 0; i++) {
		const char *base = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];

		if (!strcmp(argv[i], "--"))
			start = i + 1;
		else if (im->exec_comm[0] && !strncmp(base, im->exec_comm, 15) &&
			 strlen(base) >= strlen(im->exec_comm))
			start = i;
	}
	if (start < 0 || start >= argc)
		return 0;
	return manifest_set_argv(&im->m.target.command, &im->m.target.command_argc,
				 argv + start, argc - start);
}

/* perf record's target: -p, -t, -a, -C, else the workload it started (enable_on_exec). */
static int describe_target(struct import *im)
{
	const struct pd_features *f = perfdata_features(im->pd);
	const struct pd_attr *a = perfdata_attr(im->pd, im->pt_attr);
	struct manifest *m = &im->m;
	int argc = f->cmdline_argc, rec = 0;
	char *const *argv = f->cmdline;
	size_t room = 2;

	/* Room for every pid a list in the command line can name: one per two characters. */
	for (int i = 0; i < argc; i++)
		room += strlen(argv[i]) / 2 + 1;
	m->target.pids = calloc(room, sizeof(pid_t));
	if (!m->target.pids)
		return -ENOMEM;
	while (rec < argc && strcmp(argv[rec], "record"))
		rec++;
	for (int i = rec + 1; i < argc && !m->target.kind; i++) {
		const char *v;

		if (!strcmp(argv[i], "--"))
			break;
		if (target_opt(argv, argc, &i, "-p", "--pid", &v))
			m->target.kind = TARGET_PID;
		else if (target_opt(argv, argc, &i, "-t", "--tid", &v))
			m->target.kind = TARGET_TID;
		else if (!strcmp(argv[i], "-a") || !strcmp(argv[i], "--all-cpus") ||
			 target_opt(argv, argc, &i, "-C", "--cpu", &v))
			m->target.kind = TARGET_CPU;
		if (m->target.kind == TARGET_PID || m->target.kind == TARGET_TID)
			add_pids(m, v);
	}
	if (m->target.kind || !a || !a->attr.enable_on_exec)
		return 0;
	m->target.kind = TARGET_COMMAND;
	if (im->exec_pid > 0)
		m->target.pids[m->target.nr_pids++] = im->exec_pid;
	return target_command(im, argv, argc, rec + 1);
}

static int describe_source(struct import *im)
{
	const struct pd_features *f = perfdata_features(im->pd);
	struct msource *s = &im->m.source;
	int ret = 0;

	ret = ret ?: manifest_set(&s->tool, "perf");
	ret = ret ?: manifest_set(&s->version, f->version);
	ret = ret ?: manifest_set(&s->file, im->o->input);
	ret = ret ?: manifest_set(&s->format, perfdata_pipe_mode(im->pd) ? "pipe" : "file");
	ret = ret ?: manifest_set(&s->hostname, f->hostname);
	ret = ret ?: manifest_set(&s->os_release, f->os_release);
	ret = ret ?: manifest_set(&s->arch, f->arch);
	ret = ret ?: manifest_set(&s->cpuid, f->cpuid);
	ret = ret ?: manifest_set(&s->cpudesc, f->cpudesc);
	if (f->cmdline)
		ret = ret ?: manifest_set_argv(&s->command, &s->command_argc, f->cmdline,
					       f->cmdline_argc);
	s->nr_cpus_online = f->nr_cpus_online;
	s->nr_cpus_avail = f->nr_cpus_avail;
	return ret;
}

static int describe(struct import *im, struct error *e)
{
	struct manifest *m = &im->m;
	const uint64_t *tc = im->tc;
	int ret = 0;

	ret = ret ?: manifest_set(&m->tool_version, PTC_VERSION);
	ret = ret ?: manifest_set_argv(&m->command, &m->command_argc, im->o->argv, im->o->argc);
	ret = ret ?: describe_source(im);
	ret = ret ?: describe_target(im);
	if (ret)
		return err_runtime(e, -ENOMEM, "out of memory");
	describe_cpu(im);
	m->attr.sample_type = SIDEBAND_SAMPLE_TYPE;
	if (!m->attr.exclude_kernel)
		m->kernel.start = im->kernel_start;
	if (!m->attr.exclude_kernel && !im->kernel_start)
		warn_add(im->w, "the kernel was traced, but the sideband has no kernel mapping: "
			 "decoders need --pevent:kernel-start");
	if (im->have_time_conv && (tc[0] != m->time_conv.time_shift ||
				   tc[1] != m->time_conv.time_mult ||
				   tc[2] != m->time_conv.time_zero))
		warn_add(im->w, "TIME_CONV and AUXTRACE_INFO give different time conversions; "
			 "AUXTRACE_INFO's is kept, as perf's decoder does");
	m->complete = true;
	return 0;
}

/* ---- the whole ---------------------------------------------------------- */

static void cleanup(struct import *im)
{
	for (int i = 0; i < im->nr_streams; i++) {
		struct istream *s = im->streams[i];

		if (s->s.trace_fd >= 0)
			close(s->s.trace_fd);
		if (s->s.sb_fd >= 0)
			close(s->s.sb_fd);
		free(s->sb.buf);
		free(s->chunks);
		free(s);
	}
	free(im->streams);
	if (im->have_proc && im->proc.fd >= 0)
		close(im->proc.fd);
	free(im->proc.buf);
	manifest_free(&im->m);
	perfdata_close(im->pd);
	bundle_free(im->b);
	free(im);
}

static int run(struct import *im, struct error *e)
{
	static const struct perfdata_ops ops = { on_record, payload };
	int ret;

	ret = perfdata_read(im->pd, &ops, im, e);
	if (!ret && !im->have_info) {
		ret = err_usage(e, "no AUXTRACE_INFO record: this perf.data holds no Intel PT "
				"trace (record with -e intel_pt//)");
		err_what(e, "%s", im->o->input);
	}
	ret = ret ?: finish_streams(im, e);
	ret = ret ?: save_vdso(im, e);
	ret = ret ?: describe(im, e);
	ret = ret ?: bundle_write_manifest(im->b, &im->m, e);
	return ret;
}

int import_perfdata(const struct import_opts *o, struct import_stats *st, struct warnings *w,
		    struct error *e)
{
	struct import *im = calloc(1, sizeof(*im));
	int ret;

	memset(st, 0, sizeof(*st));
	if (!im)
		return err_runtime(e, -ENOMEM, "out of memory");
	im->o = o;
	im->st = st;
	im->w = w;
	im->proc.fd = -1;
	manifest_init(&im->m);
	if (!faccessat(AT_FDCWD, o->dir, F_OK, AT_SYMLINK_NOFOLLOW)) {
		ret = err_usage_code(e, -EEXIST, "it exists: import makes a new bundle");
		err_what(e, "%s", o->dir);
		err_hint(e, "give a name that does not exist yet");
		cleanup(im);
		return ret;
	}
	ret = perfdata_open(&im->pd, o->fd, o->input, e);
	st->pipe = im->pd && perfdata_pipe_mode(im->pd);
	/* DIR appears whole at the end, or not at all: see bundle_create_staged(). */
	ret = ret ?: bundle_create_staged(&im->b, o->dir, e);
	ret = ret ?: run(im, e);
	ret = ret ?: bundle_publish(im->b, e);
	if (ret)
		bundle_discard(im->b);
	cleanup(im);
	return ret;
}

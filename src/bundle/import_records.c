// SPDX-License-Identifier: MIT
/*
 * A perf.data's records as an import reads them: AUXTRACE payloads to their
 * stream's trace, kernel records converted to the bundle's sample_id and
 * routed to their stream's sideband (perf's synthesized ones to proc.pevent),
 * AUXTRACE_INFO and TIME_CONV checked and kept for the manifest.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bundle.h"
#include "fileio.h"
#include "import_records.h"
#include "import_streams.h"

#define AUXTRACE_INTEL_PT	1

/* intel_pt's values in AUXTRACE_INFO (tools/perf/util/intel-pt.h), in this order. */
enum {
	PT_PMU_TYPE, PT_TIME_SHIFT, PT_TIME_MULT, PT_TIME_ZERO, PT_CAP_USER_TIME_ZERO,
	PT_TSC_BIT, PT_NORETCOMP_BIT, PT_HAVE_SCHED_SWITCH, PT_SNAPSHOT_MODE, PT_PER_CPU_MMAPS,
	PT_MTC_BIT, PT_MTC_FREQ_BITS, PT_TSC_CTC_N, PT_TSC_CTC_D, PT_CYC_BIT,
	PT_MAX_NONTURBO_RATIO, PT_FILTER_STR_LEN, PT_PRIV_MAX,
};

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
	s = import_stream_get(im, im->per_cpu ? (int)a->cpu : -1,
			      im->per_cpu ? -1 : (pid_t)a->tid, r->off, e);
	if (!s || import_stream_open(im, s, e))
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

int import_payload(void *ctx, const struct pd_record *r, const void *buf, size_t len,
		   struct error *e)
{
	struct import *im = ctx;
	struct istream *s = im->aux;
	int ret;

	(void)r;
	if (import_stream_open(im, s, e))
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
	*sp = import_stream_get(im, im->per_cpu ? (int)sid->cpu : -1,
				im->per_cpu ? -1 : (pid_t)sid->tid, r->off, e);
	return *sp ? import_stream_open(im, *sp, e) : -EINVAL;
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
	return import_sb_write(im, &im->proc, BUNDLE_PROC, im->rec, n, e);
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
	return import_sb_write(im, &s->sb, s->s.sideband, im->rec, (size_t)n, e);
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

int import_on_record(void *ctx, const struct pd_record *r, struct error *e)
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

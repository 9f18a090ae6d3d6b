// SPDX-License-Identifier: MIT
/* Perf sideband records: reading them by libipt's rules, and writing them from /proc. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fileio.h"
#include "procfs.h"
#include "sideband.h"

#ifndef PERF_RECORD_MISC_MMAP_BUILD_ID
#define PERF_RECORD_MISC_MMAP_BUILD_ID (1 << 14)
#endif

/* Body layout per type: a fixed part, and whether a padded string follows. -1: not checked. */
static const struct {
	const char *name;
	int fixed;
	bool string;
} types[] = {
	[PERF_RECORD_MMAP] = { "MMAP", 32, true },
	[PERF_RECORD_LOST] = { "LOST", 16, false },
	[PERF_RECORD_COMM] = { "COMM", 8, true },
	[PERF_RECORD_EXIT] = { "EXIT", 24, false },
	[PERF_RECORD_THROTTLE] = { "THROTTLE", 24, false },
	[PERF_RECORD_UNTHROTTLE] = { "UNTHROTTLE", 24, false },
	[PERF_RECORD_FORK] = { "FORK", 24, false },
	[PERF_RECORD_READ] = { "READ", -1, false },
	[PERF_RECORD_SAMPLE] = { "SAMPLE", -1, false },
	[PERF_RECORD_MMAP2] = { "MMAP2", 64, true },
	[PERF_RECORD_AUX] = { "AUX", 24, false },
	[PERF_RECORD_ITRACE_START] = { "ITRACE_START", 8, false },
	[PERF_RECORD_LOST_SAMPLES] = { "LOST_SAMPLES", 8, false },
	[PERF_RECORD_SWITCH] = { "SWITCH", 0, false },
	[PERF_RECORD_SWITCH_CPU_WIDE] = { "SWITCH_CPU_WIDE", 8, false },
	[PERF_RECORD_NAMESPACES] = { "NAMESPACES", -1, false },
	[PERF_RECORD_KSYMBOL] = { "KSYMBOL", -1, false },
	[PERF_RECORD_BPF_EVENT] = { "BPF_EVENT", -1, false },
	[PERF_RECORD_CGROUP] = { "CGROUP", -1, false },
	[PERF_RECORD_TEXT_POKE] = { "TEXT_POKE", -1, false },
	[21] = { "AUX_OUTPUT_HW_ID", 8, false },
};

#define NR_TYPES (sizeof(types) / sizeof(types[0]))

const char *sideband_type_name(uint32_t type)
{
	return type < NR_TYPES ? types[type].name : NULL;
}

static void read_trailer(const uint8_t *p, uint64_t st, struct sb_sample_id *s)
{
	uint32_t two[2];
	uint64_t v;

	memset(s, 0, sizeof(*s));
	if (st & PERF_SAMPLE_TID) {
		memcpy(two, p, 8);
		s->pid = two[0];
		s->tid = two[1];
		p += 8;
	}
	if (st & PERF_SAMPLE_TIME) {
		memcpy(&s->time, p, 8);
		p += 8;
	}
	if (st & PERF_SAMPLE_ID) {
		memcpy(&s->id, p, 8);
		p += 8;
	}
	if (st & PERF_SAMPLE_STREAM_ID)
		p += 8;
	if (st & PERF_SAMPLE_CPU) {
		memcpy(two, p, 8);
		s->cpu = two[0];
		p += 8;
	}
	if (st & PERF_SAMPLE_IDENTIFIER) {
		memcpy(&v, p, 8);
		s->id = v;
	}
}

int sideband_parse(const uint8_t *buf, size_t len, size_t off, uint64_t st,
		   struct sb_record *r, struct error *e)
{
	struct perf_event_header h;
	size_t tl = SIDEBAND_TRAILER_LEN(st), body;

	if (len - off < sizeof(h))
		return err_usage(e, "at offset %zu: %zu bytes left, but a record header has 8 (the "
				 "file was cut short)", off, len - off);
	memcpy(&h, buf + off, sizeof(h));
	if (h.size < sizeof(h) || h.size % 8)
		return err_usage(e, "at offset %zu: record size %u is not a multiple of 8 of at "
				 "least 8", off, h.size);
	if (h.size > len - off)
		return err_usage(e, "at offset %zu: a record of %u bytes runs past the end of the "
				 "file (%zu bytes left: cut short)", off, h.size, len - off);
	if (h.type == PERF_RECORD_SAMPLE)
		return err_usage(e, "at offset %zu: a SAMPLE record; a PT sideband file has none",
				 off);
	if (h.size < sizeof(h) + tl)
		return err_usage(e, "at offset %zu: %s record of %u bytes has no room for the "
				 "%zu-byte sample_id of sample_type 0x%" PRIx64, off,
				 sideband_type_name(h.type) ? sideband_type_name(h.type) : "a",
				 h.size, tl, st);
	body = h.size - sizeof(h) - tl;
	memset(r, 0, sizeof(*r));
	r->type = h.type;
	r->misc = h.misc;
	r->size = h.size;
	r->body = buf + off + sizeof(h);
	r->body_len = body;
	if (h.type < NR_TYPES && types[h.type].name && types[h.type].fixed >= 0) {
		size_t want = (size_t)types[h.type].fixed;

		if (types[h.type].string) {
			const uint8_t *s = r->body + want;
			const uint8_t *nul = body > want ? memchr(s, 0, body - want) : NULL;

			if (!nul)
				return err_usage(e, "at offset %zu: %s has no NUL-terminated name "
						 "before its sample_id", off, types[h.type].name);
			want += ((size_t)(nul - s) + 1 + 7) & ~(size_t)7;
		}
		if (body != want)
			return err_usage(e, "at offset %zu: %s record of %u bytes: header 8 + "
					 "body %zu + sample_id %zu (sample_type 0x%" PRIx64 ") "
					 "would be %zu", off, types[h.type].name, h.size, want, tl,
					 st, 8 + want + tl);
	}
	if (tl) {
		r->has_sample_id = true;
		read_trailer(buf + off + h.size - tl, st, &r->sid);
	}
	return h.size;
}

static uint64_t u64_at(const struct sb_record *r, size_t off)
{
	uint64_t v = 0;

	if (off + 8 <= r->body_len)
		memcpy(&v, r->body + off, 8);
	return v;
}

static uint32_t u32_at(const struct sb_record *r, size_t off)
{
	uint32_t v = 0;

	if (off + 4 <= r->body_len)
		memcpy(&v, r->body + off, 4);
	return v;
}

const char *sideband_mmap_file(const struct sb_record *r)
{
	size_t at = r->type == PERF_RECORD_MMAP2 ? 64 : r->type == PERF_RECORD_MMAP ? 32 : 0;

	if (!at || r->body_len <= at || !memchr(r->body + at, 0, r->body_len - at))
		return NULL;
	return (const char *)r->body + at;
}

void sideband_describe(const struct sb_record *r, char *out, size_t len)
{
	const char *file = sideband_mmap_file(r);
	uint32_t prot;

	switch (r->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		prot = r->type == PERF_RECORD_MMAP2 ? u32_at(r, 56) : 0;
		snprintf(out, len, "pid %u tid %u addr 0x%" PRIx64 " len 0x%" PRIx64 " pgoff 0x%"
			 PRIx64 "%s%s%s%s %s", u32_at(r, 0), u32_at(r, 4), u64_at(r, 8), u64_at(r, 16),
			 u64_at(r, 24), r->type == PERF_RECORD_MMAP2 ? " prot " : "",
			 r->type != PERF_RECORD_MMAP2 ? "" : prot & PROT_READ ? "r" : "-",
			 r->type != PERF_RECORD_MMAP2 ? "" : prot & PROT_WRITE ? "w" : "-",
			 r->type != PERF_RECORD_MMAP2 ? "" : prot & PROT_EXEC ? "x" : "-",
			 file ? file : "?");
		break;
	case PERF_RECORD_COMM:
		snprintf(out, len, "pid %u tid %u comm %.*s%s", u32_at(r, 0), u32_at(r, 4),
			 (int)(r->body_len > 8 ? strnlen((const char *)r->body + 8, r->body_len - 8) : 0),
			 (const char *)r->body + 8, r->misc & PERF_RECORD_MISC_COMM_EXEC ? " (exec)" : "");
		break;
	case PERF_RECORD_EXIT:
	case PERF_RECORD_FORK:
		snprintf(out, len, "pid %u ppid %u tid %u ptid %u", u32_at(r, 0), u32_at(r, 4),
			 u32_at(r, 8), u32_at(r, 12));
		break;
	case PERF_RECORD_AUX:
		snprintf(out, len, "offset 0x%" PRIx64 " size 0x%" PRIx64 " flags 0x%" PRIx64 "%s%s%s%s",
			 u64_at(r, 0), u64_at(r, 8), u64_at(r, 16),
			 u64_at(r, 16) & PERF_AUX_FLAG_TRUNCATED ? " TRUNCATED" : "",
			 u64_at(r, 16) & PERF_AUX_FLAG_OVERWRITE ? " OVERWRITE" : "",
			 u64_at(r, 16) & PERF_AUX_FLAG_PARTIAL ? " PARTIAL" : "",
			 u64_at(r, 16) & PERF_AUX_FLAG_COLLISION ? " COLLISION" : "");
		break;
	case PERF_RECORD_ITRACE_START:
		snprintf(out, len, "pid %u tid %u", u32_at(r, 0), u32_at(r, 4));
		break;
	case PERF_RECORD_LOST:
		snprintf(out, len, "id %" PRIu64 " lost %" PRIu64, u64_at(r, 0), u64_at(r, 8));
		break;
	case PERF_RECORD_LOST_SAMPLES:
		snprintf(out, len, "lost %" PRIu64, u64_at(r, 0));
		break;
	case PERF_RECORD_SWITCH:
		snprintf(out, len, "%s", r->misc & PERF_RECORD_MISC_SWITCH_OUT ? "out" : "in");
		break;
	case PERF_RECORD_SWITCH_CPU_WIDE:
		snprintf(out, len, "%s %s pid %u tid %u",
			 r->misc & PERF_RECORD_MISC_SWITCH_OUT ? "out" : "in",
			 r->misc & PERF_RECORD_MISC_SWITCH_OUT ? "next" : "prev", u32_at(r, 0),
			 u32_at(r, 4));
		break;
	default:
		snprintf(out, len, "%zu bytes", r->body_len);
	}
}

/* ---- synthesis from /proc --------------------------------------------- */

/* header + body + string padded to 8 + trailer (time 0: before any real record). */
static int emit(int fd, uint32_t type, uint16_t misc, const void *body, size_t blen,
		const char *str, pid_t pid, pid_t tid)
{
	struct sb_trailer tr = { .pid = (uint32_t)pid, .tid = (uint32_t)tid };
	uint8_t rec[8 + 64 + 4096 + sizeof(tr)];
	struct perf_event_header h = { .type = type, .misc = misc };
	size_t slen = strlen(str) + 1, pad = (slen + 7) & ~(size_t)7;
	size_t n = 8;

	if (pad > 4096)
		return -ENAMETOOLONG;
	memcpy(rec + n, body, blen);
	n += blen;
	memset(rec + n, 0, pad);
	memcpy(rec + n, str, slen);
	n += pad;
	memcpy(rec + n, &tr, sizeof(tr));
	n += sizeof(tr);
	h.size = (uint16_t)n;
	memcpy(rec, &h, 8);
	return write_all(fd, rec, n);
}

static int synth_comms(pid_t pid, int fd, int *count)
{
	char path[96], comm[64];
	pid_t *tids;
	int nr, ret;

	ret = procfs_tasks(pid, &tids, &nr);
	for (int i = 0; !ret && i < nr; i++) {
		uint32_t ids[2] = { (uint32_t)pid, (uint32_t)tids[i] };
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tids[i]);
		f = fopen(path, "re");
		if (!f)
			continue;	/* the thread exited meanwhile */
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
		comm[strcspn(comm, "\n")] = '\0';
		ret = emit(fd, PERF_RECORD_COMM, PERF_RECORD_MISC_USER, ids, 8, comm, pid, tids[i]);
		*count += !ret;
	}
	free(tids);
	return ret;
}

static int synth_mmaps(pid_t pid, int fd, int *count)
{
	char path[64], line[4608];
	FILE *f;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	while (!ret && fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, pgoff, ino;
		unsigned int maj, min;
		char perms[8], name[4096] = "";
		uint8_t body[64];	/* pid tid, addr len pgoff, maj min ino ino_gen, prot flags */
		uint32_t v32[2];
		uint64_t v64[3];
		int n = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &lo, &hi, perms, &pgoff, &maj,
			   &min, &ino, &n) < 7)
			continue;
		if (perms[2] != 'x')
			continue;	/* only code can be traced */
		snprintf(name, sizeof(name), "%s", line + n);
		name[strcspn(name, "\n")] = '\0';
		if (!name[0])
			snprintf(name, sizeof(name), "//anon");
		v32[0] = v32[1] = (uint32_t)pid;
		memcpy(body, v32, 8);
		v64[0] = lo;
		v64[1] = hi - lo;
		v64[2] = pgoff;
		memcpy(body + 8, v64, 24);
		v32[0] = maj;
		v32[1] = min;
		memcpy(body + 32, v32, 8);
		v64[0] = ino;
		v64[1] = 0;	/* ino_generation: not in /proc */
		memcpy(body + 40, v64, 16);
		v32[0] = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
			 PROT_EXEC;
		v32[1] = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
		memcpy(body + 56, v32, 8);
		ret = emit(fd, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, body, 64, name, pid, pid);
		*count += !ret;
	}
	fclose(f);
	return ret;
}

int sideband_synthesize_proc(pid_t pid, int fd, struct error *e)
{
	int count = 0, ret;

	ret = synth_comms(pid, fd, &count);
	if (!ret)
		ret = synth_mmaps(pid, fd, &count);
	if (ret)
		return err_runtime(e, ret, "process %d: %s", pid, ret == -ESRCH ?
				   "it exited before its state could be read" : strerror(-ret));
	return count;
}

int sideband_save_vdso(const char *path, char *err, size_t errlen)
{
	unsigned long long lo = 0, hi = 0;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");
	int fd, ret;

	if (!f) {
		snprintf(err, errlen, "/proc/self/maps: %s", strerror(errno));
		return -errno;
	}
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") && sscanf(line, "%llx-%llx", &lo, &hi) == 2)
			break;
	fclose(f);
	if (!lo || hi <= lo) {
		snprintf(err, errlen, "this process has no [vdso] mapping");
		return -ENOENT;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	ret = write_all(fd, (const void *)(uintptr_t)lo, (size_t)(hi - lo));
	if (close(fd) && !ret)
		ret = -errno;
	if (ret)
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
	return ret;
}

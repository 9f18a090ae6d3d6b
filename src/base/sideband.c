// SPDX-License-Identifier: MIT
/* Perf sideband records: reading them by libipt's rules, and writing them from /proc. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fileio.h"
#include "procfs.h"
#include "sideband.h"
#include "symbols.h"

/*
 * Record names: the kernel's types, and perf's user types (PERF_RECORD_USER_TYPE_START,
 * 64, and up; tools/perf/util/event.h), which perf and libipt's scripts write into
 * files and which the kernel never sends.
 */
static const char *const kernel_names[] = {
	[PERF_RECORD_MMAP] = "MMAP", [PERF_RECORD_LOST] = "LOST", [PERF_RECORD_COMM] = "COMM",
	[PERF_RECORD_EXIT] = "EXIT", [PERF_RECORD_THROTTLE] = "THROTTLE",
	[PERF_RECORD_UNTHROTTLE] = "UNTHROTTLE", [PERF_RECORD_FORK] = "FORK",
	[PERF_RECORD_READ] = "READ", [PERF_RECORD_SAMPLE] = "SAMPLE",
	[PERF_RECORD_MMAP2] = "MMAP2", [PERF_RECORD_AUX] = "AUX",
	[PERF_RECORD_ITRACE_START] = "ITRACE_START", [PERF_RECORD_LOST_SAMPLES] = "LOST_SAMPLES",
	[PERF_RECORD_SWITCH] = "SWITCH", [PERF_RECORD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
	[16] = "NAMESPACES", [17] = "KSYMBOL", [18] = "BPF_EVENT", [19] = "CGROUP",
	[20] = "TEXT_POKE", [21] = "AUX_OUTPUT_HW_ID",
};

static const char *const user_names[] = {
	"HEADER_ATTR", "HEADER_EVENT_TYPE", "HEADER_TRACING_DATA", "HEADER_BUILD_ID",
	"FINISHED_ROUND", "ID_INDEX", "AUXTRACE_INFO", "AUXTRACE", "AUXTRACE_ERROR",
	"THREAD_MAP", "CPU_MAP", "STAT_CONFIG", "STAT", "STAT_ROUND", "EVENT_UPDATE",
	"TIME_CONV", "HEADER_FEATURE", "COMPRESSED", "FINISHED_INIT", "COMPRESSED2",
	"BPF_METADATA",
};

#define USER_TYPE_START 64
#define NR(a) (sizeof(a) / sizeof((a)[0]))

int sideband_each(int dirfd, const char *file, sideband_each_fn *fn, void *ctx,
		  struct error *e)
{
	struct file_map m;
	size_t off = 0, dropped = 0;
	int ret = file_map_input(dirfd, file, false, &m, e);

	while (!ret && off < m.len) {
		struct sb_record r;
		int n = sideband_parse(m.p, m.len, off, SIDEBAND_SAMPLE_TYPE, &r, NULL);

		if (n < 0)
			break;
		off += (size_t)n;
		ret = fn(&r, ctx);
		map_drop_behind(m.p, off, &dropped);	/* a 4 GiB file: not 4 GiB resident */
	}
	file_unmap(&m);
	return ret;
}

const char *sideband_type_name(uint32_t type)
{
	if (type < NR(kernel_names))
		return kernel_names[type];
	if (type >= USER_TYPE_START && type - USER_TYPE_START < NR(user_names))
		return user_names[type - USER_TYPE_START];
	return NULL;
}

/*
 * The records libipt's pevent reader (pev_read()) reads, with the fixed part
 * of their body and whether a NUL-terminated name, padded to 8, follows it.
 * It steps over every other type by its header's size, and reads no
 * sample_id from them.
 */
static const struct {
	bool known;
	uint8_t fixed;
	bool string;
} layout[] = {
	[PERF_RECORD_MMAP] = { true, 32, true },
	[PERF_RECORD_LOST] = { true, 16, false },
	[PERF_RECORD_COMM] = { true, 8, true },
	[PERF_RECORD_EXIT] = { true, 24, false },
	[PERF_RECORD_THROTTLE] = { true, 24, false },
	[PERF_RECORD_UNTHROTTLE] = { true, 24, false },
	[PERF_RECORD_FORK] = { true, 24, false },
	[PERF_RECORD_MMAP2] = { true, 64, true },
	[PERF_RECORD_AUX] = { true, 24, false },
	[PERF_RECORD_ITRACE_START] = { true, 8, false },
	[PERF_RECORD_LOST_SAMPLES] = { true, 8, false },
	[PERF_RECORD_SWITCH] = { true, 0, false },
	[PERF_RECORD_SWITCH_CPU_WIDE] = { true, 8, false },
};

bool sideband_libipt_reads(uint32_t type)
{
	return type < NR(layout) && layout[type].known;
}

static size_t trailer_len(uint64_t st)
{
	return SIDEBAND_TRAILER_LEN(st);
}

static uint64_t take64(const uint8_t **p)
{
	uint64_t v;

	memcpy(&v, *p, 8);
	*p += 8;
	return v;
}

void sideband_read_trailer(const uint8_t *p, uint64_t st, struct sb_sample_id *s)
{
	uint64_t v;

	memset(s, 0, sizeof(*s));
	s->sample_type = st & (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
			       PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER);
	if (st & PERF_SAMPLE_TID) {
		v = take64(&p);
		s->pid = (uint32_t)v;
		s->tid = (uint32_t)(v >> 32);
	}
	if (st & PERF_SAMPLE_TIME)
		s->time = take64(&p);
	if (st & PERF_SAMPLE_ID)
		s->id = take64(&p);
	if (st & PERF_SAMPLE_STREAM_ID)
		s->stream_id = take64(&p);
	if (st & PERF_SAMPLE_CPU)
		s->cpu = (uint32_t)take64(&p);
	if (st & PERF_SAMPLE_IDENTIFIER)
		s->identifier = take64(&p);
}

/* A record libipt reads: body and trailer must add up to the record's size exactly. */
static int check_layout(const struct perf_event_header *h, size_t off, uint64_t st,
			struct sb_record *r, struct error *e)
{
	size_t tl = trailer_len(st), want = layout[h->type].fixed, body;
	const char *name = sideband_type_name(h->type);

	if (h->size < sizeof(*h) + tl)
		return err_usage(e, "at offset %zu: %s record of %u bytes has no room for the "
				 "%zu-byte sample_id of sample_type 0x%" PRIx64, off, name, h->size,
				 tl, st);
	body = h->size - sizeof(*h) - tl;
	if (layout[h->type].string) {
		const uint8_t *s = r->body + want;
		const uint8_t *nul = body > want ? memchr(s, 0, body - want) : NULL;

		if (!nul)
			return err_usage(e, "at offset %zu: %s has no NUL-terminated name before "
					 "its sample_id", off, name);
		want += ((size_t)(nul - s) + 1 + 7) & ~(size_t)7;
	}
	if (body != want)
		return err_usage(e, "at offset %zu: %s record of %u bytes: header 8 + body %zu + "
				 "sample_id %zu (sample_type 0x%" PRIx64 ") would be %zu", off, name,
				 h->size, want, tl, st, 8 + want + tl);
	r->body_len = body;
	r->has_sample_id = true;
	sideband_read_trailer(r->body + body, st, &r->sid);
	return 0;
}

int sideband_parse(const uint8_t *buf, size_t len, size_t off, uint64_t st,
		   struct sb_record *r, struct error *e)
{
	struct perf_event_header h;

	if (len - off < sizeof(h))
		return err_usage(e, "at offset %zu: %zu bytes left, but a record header has 8 "
				 "(the file was cut short)", off, len - off);
	memcpy(&h, buf + off, sizeof(h));
	if (h.size < sizeof(h))
		return err_usage(e, "at offset %zu: record size %u is less than its 8-byte header",
				 off, h.size);
	if (!h.type)
		return err_usage(e, "at offset %zu: a record of type 0, where libipt's reader "
				 "stops (no record has type 0: zeroes, or not a .pevent file)", off);
	if (h.size > len - off)
		return err_usage(e, "at offset %zu: a record of %u bytes runs past the end of the "
				 "file (%zu bytes left: cut short)", off, h.size, len - off);
	memset(r, 0, sizeof(*r));
	r->type = h.type;
	r->misc = h.misc;
	r->size = h.size;
	r->body = buf + off + sizeof(h);
	r->body_len = h.size - sizeof(h);
	if (sideband_libipt_reads(h.type) && check_layout(&h, off, st, r, e))
		return -EINVAL;
	return h.size;
}

const char *sideband_mmap_file(const struct sb_record *r)
{
	size_t at = r->type == PERF_RECORD_MMAP2 ? 64 : r->type == PERF_RECORD_MMAP ? 32 : 0;

	if (!at || r->body_len <= at || !memchr(r->body + at, 0, r->body_len - at))
		return NULL;
	return (const char *)r->body + at;
}

int sideband_mmap_build_id(const struct sb_record *r, char *hex, size_t len)
{
	size_t size;

	if (r->type != PERF_RECORD_MMAP2 || !(r->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) ||
	    r->body_len < 64)
		return 0;
	size = r->body[32];
	if (!size || size > SIDEBAND_BUILD_ID_MAX || 2 * size + 1 > len)
		return 0;
	for (size_t i = 0; i < size; i++)
		snprintf(hex + 2 * i, 3, "%02x", r->body[36 + i]);
	return (int)size;
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

/*
 * The build-id of the file a mapping maps, as raw bytes: through
 * /proc/PID/map_files (the mapped file itself, even when replaced; root
 * only), else through its path when that is still the mapped inode. 0 when
 * it cannot be told.
 */
static size_t mapped_build_id(pid_t pid, const struct procfs_map *m,
			      uint8_t id[SIDEBAND_BUILD_ID_MAX])
{
	char path[96], hex[2 * SIDEBAND_BUILD_ID_MAX + 1];
	struct stat st;
	size_t n = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, m->start,
		 m->end);
	fd = file_open_input(AT_FDCWD, path, NULL);
	if (fd < 0 && m->name[0] == '/') {
		fd = file_open_input(AT_FDCWD, m->name, NULL);
		if (fd >= 0 && (fstat(fd, &st) || major(st.st_dev) != m->maj ||
				minor(st.st_dev) != m->min || st.st_ino != m->ino)) {
			close(fd);	/* another file now has the mapping's name */
			fd = -1;
		}
	}
	if (fd < 0)
		return 0;
	if (!symbols_build_id_fd(fd, hex, sizeof(hex)))
		for (n = 0; hex[2 * n] && sscanf(hex + 2 * n, "%2hhx", &id[n]) == 1; n++)
			;
	close(fd);
	return n;
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
		struct procfs_map m;
		uint8_t body[64];	/* pid tid, addr len pgoff, maj min ino ino_gen, prot flags */
		uint16_t misc = PERF_RECORD_MISC_USER;
		uint32_t v32[2];
		uint64_t v64[3];

		if (!procfs_maps_line(line, &m) || m.perms[2] != 'x')
			continue;	/* only code can be traced */
		v32[0] = v32[1] = (uint32_t)pid;
		memcpy(body, v32, 8);
		v64[0] = m.start;
		v64[1] = m.end - m.start;
		v64[2] = m.pgoff;
		memcpy(body + 8, v64, 24);
		/* build_id_size, 3 reserved, build_id[20] in place of maj, min, ino, ino_gen */
		memset(body + 32, 0, 24);
		body[32] = (uint8_t)mapped_build_id(pid, &m, body + 36);
		if (body[32]) {
			misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
		} else {
			v32[0] = m.maj;
			v32[1] = m.min;
			memcpy(body + 32, v32, 8);
			memcpy(body + 40, &m.ino, 8);	/* ino_generation: not in /proc, 0 */
		}
		v32[0] = (m.perms[0] == 'r' ? PROT_READ : 0) | (m.perms[1] == 'w' ? PROT_WRITE : 0) |
			 PROT_EXEC;
		v32[1] = m.perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
		memcpy(body + 56, v32, 8);
		ret = emit(fd, PERF_RECORD_MMAP2, misc, body, 64, m.name[0] ? m.name : "//anon", pid,
			   pid);
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

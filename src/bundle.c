// SPDX-License-Identifier: MIT
/* The bundle directory: stream files and an atomically written manifest. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bundle.h"
#include "cpu.h"
#include "out.h"
#include "sideband.h"
#include "symbols.h"

#include <gelf.h>
#include <libelf.h>

struct bstream {
	int cpu, tid;
	int trace_fd, sb_fd;
	char trace[32], sideband[40];
	struct auxring_stats st;
	bool closed;
};

struct image {
	char *path;
	char build_id[128];	/* "" when the file has none or is gone */
};

struct bundle {
	const struct record_plan *plan;
	char *dir;
	int dir_fd;
	struct bstream *s;
	int nr, cap;
	struct cpu_id cpu;
	bool started;
	bool cap_user_time_zero;
	uint64_t time_zero;
	uint32_t time_mult;
	uint16_t time_shift;
	struct timespec start, end;
	bool complete;
	const char *stop_reason;
	int exit_status;
	int proc_fd;		/* proc.pevent, -1 until a running target needs it */
	bool proc_written;	/* proc.pevent exists */
	bool vdso;		/* sysroot/vdso-x64.so was saved */
	uint64_t kernel_start;	/* 0: the kernel is not traced */
	uint64_t text_start, text_end;	/* _stext, _etext */
	bool kcore;		/* kcore.text holds the kernel's text */
	struct image *images;
	int nr_images;
	char err[512];
};

__attribute__((format(printf, 4, 5)))
static int fail(char *err, size_t len, int e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -e;
}

/* --force replaces only what is ours: a bundle, or an empty directory. */
static int clear_old(const char *dir, char *err, size_t len)
{
	struct stat st;
	struct dirent *de;
	char path[4200];
	bool ours;
	DIR *d;

	if (lstat(dir, &st)) {
		if (errno == ENOENT)
			return 0;
		return fail(err, len, errno, "-o %s: %s", dir, strerror(errno));
	}
	if (!S_ISDIR(st.st_mode))
		return fail(err, len, ENOTDIR, "-o %s: exists and is not a directory; "
			    "--force only replaces a ptcollect bundle", dir);
	snprintf(path, sizeof(path), "%s/" BUNDLE_MANIFEST, dir);
	ours = access(path, F_OK) == 0;
	d = opendir(dir);
	if (!d)
		return fail(err, len, errno, "-o %s: %s", dir, strerror(errno));
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!ours) {
			closedir(d);
			return fail(err, len, EEXIST, "-o %s: the directory is not empty and holds "
				    "no %s: --force only replaces a ptcollect bundle", dir,
				    BUNDLE_MANIFEST);
		}
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (de->d_type == DT_DIR) {
			/* sysroot/ and the like: one level, files only. */
			DIR *sd = opendir(path);
			struct dirent *se;

			while (sd && (se = readdir(sd))) {
				char sp[8400];

				if (se->d_name[0] == '.' && (!se->d_name[1] || !strcmp(se->d_name, "..")))
					continue;
				snprintf(sp, sizeof(sp), "%s/%s", path, se->d_name);
				unlink(sp);
			}
			if (sd)
				closedir(sd);
			rmdir(path);
		} else {
			unlink(path);
		}
	}
	closedir(d);
	if (rmdir(dir))
		return fail(err, len, errno, "-o %s: cannot replace it: %s", dir, strerror(errno));
	return 0;
}

int bundle_create(struct bundle **bp, const struct record_plan *plan, char *err, size_t len)
{
	struct bundle *b;
	int ret;

	*bp = NULL;
	if (plan->opts.force) {
		ret = clear_old(plan->opts.output, err, len);
		if (ret)
			return ret;
	}
	if (mkdir(plan->opts.output, 0755)) {
		if (errno == EEXIST)
			return fail(err, len, EEXIST, "-o %s: it exists already; choose another "
				    "name or add --force to replace it", plan->opts.output);
		return fail(err, len, errno, "-o %s: cannot create the directory: %s",
			    plan->opts.output, strerror(errno));
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return fail(err, len, ENOMEM, "out of memory");
	b->plan = plan;
	b->dir_fd = -1;
	b->proc_fd = -1;
	b->exit_status = -1;
	b->dir = strdup(plan->opts.output);
	b->dir_fd = open(plan->opts.output, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (!b->dir || b->dir_fd < 0) {
		ret = fail(err, len, errno ? errno : ENOMEM, "-o %s: %s", plan->opts.output,
			   strerror(errno ? errno : ENOMEM));
		bundle_free(b);
		return ret;
	}
	cpu_identify(&b->cpu);
	clock_gettime(CLOCK_REALTIME, &b->start);
	*bp = b;
	return 0;
}

int bundle_stream_add(struct bundle *b, int cpu, int tid, int *idx)
{
	struct bstream *s;

	if (b->nr == b->cap) {
		int cap = b->cap ? b->cap * 2 : 8;
		struct bstream *n = realloc(b->s, cap * sizeof(*n));

		if (!n) {
			snprintf(b->err, sizeof(b->err), "out of memory");
			return -ENOMEM;
		}
		b->s = n;
		b->cap = cap;
	}
	s = &b->s[b->nr];
	memset(s, 0, sizeof(*s));
	s->cpu = cpu;
	s->tid = tid;
	if (cpu >= 0)
		snprintf(s->trace, sizeof(s->trace), "cpu%d.pt", cpu);
	else
		snprintf(s->trace, sizeof(s->trace), "tid%d.pt", tid);
	snprintf(s->sideband, sizeof(s->sideband), "%.*s.pevent",
		 (int)strlen(s->trace) - 3, s->trace);
	s->trace_fd = openat(b->dir_fd, s->trace, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	s->sb_fd = openat(b->dir_fd, s->sideband, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (s->trace_fd < 0 || s->sb_fd < 0) {
		int e = errno;

		snprintf(b->err, sizeof(b->err), "%s/%s: %s", b->dir,
			 s->trace_fd < 0 ? s->trace : s->sideband, strerror(e));
		if (s->trace_fd >= 0)
			close(s->trace_fd);
		if (s->sb_fd >= 0)
			close(s->sb_fd);
		return -e;
	}
	*idx = b->nr++;
	return 0;
}

int bundle_trace_fd(const struct bundle *b, int idx)
{
	return b->s[idx].trace_fd;
}

int bundle_sideband_fd(const struct bundle *b, int idx)
{
	return b->s[idx].sb_fd;
}

const char *bundle_trace_name(const struct bundle *b, int idx)
{
	return b->s[idx].trace;
}

const char *bundle_error(const struct bundle *b)
{
	return b->err;
}

void bundle_stream_update(struct bundle *b, int idx, const struct auxring_stats *st)
{
	b->s[idx].st = *st;
}

void bundle_started(struct bundle *b, const struct perf_event_mmap_page *pc)
{
	b->started = true;
	clock_gettime(CLOCK_REALTIME, &b->start);
	if (!pc)
		return;
	/* perf's rule: the fields mean something only with cap_user_time_zero. */
	b->cap_user_time_zero = pc->cap_user_time_zero;
	b->time_zero = pc->time_zero;
	b->time_mult = pc->time_mult;
	b->time_shift = pc->time_shift;
}

/* ---- what decoders need beside the streams ----------------------------- */

int bundle_add_process(struct bundle *b, pid_t pid, char *err, size_t len)
{
	struct error e = { 0 };
	int ret;

	if (b->proc_fd < 0) {
		b->proc_fd = openat(b->dir_fd, BUNDLE_PROC, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
				    0644);
		if (b->proc_fd < 0)
			return fail(err, len, errno, "%s/%s: %s", b->dir, BUNDLE_PROC, strerror(errno));
		b->proc_written = true;
	}
	ret = sideband_synthesize_proc(pid, b->proc_fd, &e);
	if (ret < 0)
		snprintf(err, len, "%s", e.why);
	return ret < 0 ? ret : 0;
}

int bundle_save_sysroot(struct bundle *b, char *err, size_t len)
{
	char path[4200];
	int ret;

	if (mkdirat(b->dir_fd, "sysroot", 0755) && errno != EEXIST)
		return fail(err, len, errno, "%s/sysroot: %s", b->dir, strerror(errno));
	snprintf(path, sizeof(path), "%s/" BUNDLE_VDSO, b->dir);
	ret = sideband_save_vdso(path, err, len);
	b->vdso = !ret;
	return ret;
}

/* kallsyms for kernel decoding, and where the kernel starts (_text, else _stext). */
int bundle_save_kernel(struct bundle *b, char *err, size_t len)
{
	FILE *in = fopen("/proc/kallsyms", "re"), *out;
	char line[1024], path[4200];
	int ret = 0;

	if (!in)
		return fail(err, len, errno, "/proc/kallsyms: %s", strerror(errno));
	snprintf(path, sizeof(path), "%s/kallsyms", b->dir);
	out = fopen(path, "we");
	if (!out) {
		fclose(in);
		return fail(err, len, errno, "%s: %s", path, strerror(errno));
	}
	while (fgets(line, sizeof(line), in)) {
		unsigned long long a;
		char type, name[256];

		if (fputs(line, out) < 0) {
			ret = fail(err, len, errno, "%s: %s", path, strerror(errno));
			break;
		}
		if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3)
			continue;
		if (!strcmp(name, "_text") || (!b->kernel_start && !strcmp(name, "_stext")))
			b->kernel_start = a;
		if (!strcmp(name, "_stext"))
			b->text_start = a;
		else if (!strcmp(name, "_etext"))
			b->text_end = a;
	}
	fclose(in);
	if (fclose(out) && !ret)
		ret = fail(err, len, errno, "%s: %s", path, strerror(errno));
	if (!ret && !b->kernel_start)
		ret = fail(err, len, EPERM, "/proc/kallsyms shows no kernel addresses "
			   "(kptr_restrict): run as root to trace the kernel");
	return ret;
}

/*
 * --kcore: the kernel's text as the running kernel has it (alternatives and
 * static keys applied), from /proc/kcore, as perf's --kcore keeps it. Saved
 * raw, for ptxed's --raw FILE:BASE.
 */
int bundle_save_kcore(struct bundle *b, char *err, size_t len)
{
	uint64_t start = b->text_start, size = b->text_end - b->text_start;
	int in, out = -1, ret = -ENOENT;
	Elf *elf = NULL;
	size_t n;

	if (!start || b->text_end <= start)
		return fail(err, len, ENOENT, "--kcore: kallsyms gives no _stext/_etext");
	in = open("/proc/kcore", O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return fail(err, len, errno, "--kcore: /proc/kcore: %s", strerror(errno));
	elf_version(EV_CURRENT);
	elf = elf_begin(in, ELF_C_READ, NULL);
	if (!elf || elf_getphdrnum(elf, &n)) {
		ret = fail(err, len, EINVAL, "--kcore: /proc/kcore is not an ELF core file");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		uint64_t done = 0;
		char buf[65536];

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    start < ph.p_vaddr || size > ph.p_memsz ||
		    start - ph.p_vaddr > ph.p_memsz - size)	/* no sum that can wrap */
			continue;
		out = openat(b->dir_fd, BUNDLE_KCORE, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (out < 0) {
			ret = fail(err, len, errno, "%s/%s: %s", b->dir, BUNDLE_KCORE, strerror(errno));
			goto out;
		}
		while (done < size) {
			size_t k = size - done < sizeof(buf) ? size - done : sizeof(buf);
			ssize_t r = pread(in, buf, k, (off_t)(ph.p_offset + start - ph.p_vaddr + done));

			if (r <= 0 || write(out, buf, (size_t)r) != r) {
				ret = fail(err, len, r < 0 ? errno : EIO, "--kcore: copying the kernel "
					   "text: %s", strerror(r < 0 ? errno : EIO));
				goto out;
			}
			done += (uint64_t)r;
		}
		ret = 0;
		b->kcore = true;
		break;
	}
	if (ret == -ENOENT)
		fail(err, len, ENOENT, "--kcore: no segment of /proc/kcore holds the kernel text");
out:
	if (out >= 0 && close(out) && !ret)
		ret = fail(err, len, errno, "%s/%s: %s", b->dir, BUNDLE_KCORE, strerror(errno));
	if (elf)
		elf_end(elf);
	close(in);
	return ret;
}

static void add_image(struct bundle *b, const char *path)
{
	struct image *n;

	if (path[0] != '/' || !strncmp(path, "//", 2))
		return;	/* [vdso], [stack], //anon: not files */
	for (int i = 0; i < b->nr_images; i++)
		if (!strcmp(b->images[i].path, path))
			return;
	n = realloc(b->images, (b->nr_images + 1) * sizeof(*n));
	if (!n)
		return;
	b->images = n;
	n = &b->images[b->nr_images];
	n->path = strdup(path);
	if (!n->path)
		return;
	if (symbols_build_id(path, n->build_id, sizeof(n->build_id)))
		n->build_id[0] = '\0';
	b->nr_images++;
}

/* Every file the sideband maps, with its build-id as it is on disk now. */
static void collect_images(struct bundle *b, const char *file)
{
	int fd = openat(b->dir_fd, file, O_RDONLY | O_CLOEXEC);
	struct stat st;
	uint8_t *buf;
	size_t off = 0;

	if (fd < 0)
		return;
	if (fstat(fd, &st) || !st.st_size || !(buf = malloc((size_t)st.st_size))) {
		close(fd);
		return;
	}
	if (pread(fd, buf, (size_t)st.st_size, 0) == st.st_size) {
		while (off < (size_t)st.st_size) {
			struct sb_record r;
			struct error e = { 0 };
			int n = sideband_parse(buf, (size_t)st.st_size, off, SIDEBAND_SAMPLE_TYPE, &r,
					       &e);
			const char *f;

			if (n < 0)
				break;
			f = sideband_mmap_file(&r);
			if (f)
				add_image(b, f);
			off += (size_t)n;
		}
	}
	free(buf);
	close(fd);
}

/* ---- manifest.json ---------------------------------------------------- */

struct jw {
	FILE *f;
	int depth;
	bool first;
};

static void jw_sep(struct jw *w, const char *key)
{
	fputs(w->first ? "\n" : ",\n", w->f);
	w->first = false;
	fprintf(w->f, "%*s", 2 * w->depth, "");
	if (key) {
		out_json_escape(w->f, key);
		fputs(": ", w->f);
	}
}

static void jw_open(struct jw *w, const char *key, char c)
{
	jw_sep(w, key);
	fputc(c, w->f);
	w->depth++;
	w->first = true;
}

static void jw_close(struct jw *w, char c)
{
	w->depth--;
	if (!w->first)
		fprintf(w->f, "\n%*s", 2 * w->depth, "");
	fputc(c, w->f);
	w->first = false;
}

static void jw_str(struct jw *w, const char *key, const char *v)
{
	jw_sep(w, key);
	if (v)
		out_json_escape(w->f, v);
	else
		fputs("null", w->f);
}

__attribute__((format(printf, 3, 4)))
static void jw_raw(struct jw *w, const char *key, const char *fmt, ...)
{
	va_list ap;

	jw_sep(w, key);
	va_start(ap, fmt);
	vfprintf(w->f, fmt, ap);
	va_end(ap);
}

/* 64-bit values that may pass 2^53 are decimal strings; hex values "0x..." strings. */
static void jw_u64s(struct jw *w, const char *key, uint64_t v)
{
	jw_raw(w, key, "\"%" PRIu64 "\"", v);
}

static void jw_hex(struct jw *w, const char *key, uint64_t v)
{
	jw_raw(w, key, "\"0x%" PRIx64 "\"", v);
}

static void jw_time(struct jw *w, const char *key, const struct timespec *t)
{
	struct tm tm;
	char buf[64];

	if (!t->tv_sec) {
		jw_str(w, key, NULL);
		return;
	}
	gmtime_r(&t->tv_sec, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	jw_raw(w, key, "\"%s.%06ldZ\"", buf, t->tv_nsec / 1000);
}

static uint64_t mtc_freq(const struct record_plan *p)
{
	const struct pmu_term *t = pmu_term_find(&p->pmu, "mtc_period");

	return t ? pmu_term_extract(t, p->ev.config) : 0;
}

/* The options every libipt decoder needs for this CPU and config, in order. */
static void decoder_config(const struct bundle *b, struct jw *w)
{
	const struct record_plan *p = b->plan;

	jw_str(w, NULL, "--cpu");
	jw_raw(w, NULL, "\"%u/%u/%u\"", b->cpu.family, b->cpu.model, b->cpu.stepping);
	jw_str(w, NULL, "--mtc-freq");
	jw_raw(w, NULL, "\"%" PRIu64 "\"", mtc_freq(p));
	if (p->pmu.max_nonturbo_ratio >= 0) {
		jw_str(w, NULL, "--nom-freq");
		jw_raw(w, NULL, "\"%d\"", p->pmu.max_nonturbo_ratio);
	}
	if (b->cpu.has_leaf_0x15) {
		jw_str(w, NULL, "--cpuid-0x15.eax");
		jw_raw(w, NULL, "\"%u\"", b->cpu.cpuid_0x15_eax);
		jw_str(w, NULL, "--cpuid-0x15.ebx");
		jw_raw(w, NULL, "\"%u\"", b->cpu.cpuid_0x15_ebx);
	}
}

static void stream_decoders(const struct bundle *b, struct jw *w, int idx)
{
	char path[4200];

	jw_open(w, "ptdump", '[');
	jw_str(w, NULL, "ptdump");
	decoder_config(b, w);
	snprintf(path, sizeof(path), "%s/%s", b->dir, b->s[idx].trace);
	jw_str(w, NULL, path);
	jw_close(w, ']');

	/* libipt applies options in order: config, time, then sideband files, then the trace. */
	jw_open(w, "ptxed", '[');
	jw_str(w, NULL, "ptxed");
	decoder_config(b, w);
	jw_str(w, NULL, "--pevent:sample-type");
	jw_raw(w, NULL, "\"0x%x\"", SIDEBAND_SAMPLE_TYPE);
	if (b->kcore) {
		snprintf(path, sizeof(path), "%s/" BUNDLE_KCORE ":0x%" PRIx64, b->dir, b->text_start);
		jw_str(w, NULL, "--raw");
		jw_str(w, NULL, path);
	}
	if (b->kernel_start) {
		jw_str(w, NULL, "--pevent:kernel-start");
		jw_raw(w, NULL, "\"0x%" PRIx64 "\"", b->kernel_start);
	}
	if (b->vdso) {
		snprintf(path, sizeof(path), "%s/" BUNDLE_VDSO, b->dir);
		jw_str(w, NULL, "--pevent:vdso-x64");
		jw_str(w, NULL, path);
	}
	if (b->cap_user_time_zero) {
		jw_str(w, NULL, "--pevent:time-zero");
		jw_raw(w, NULL, "\"%" PRIu64 "\"", b->time_zero);
		jw_str(w, NULL, "--pevent:time-shift");
		jw_raw(w, NULL, "\"%u\"", b->time_shift);
		jw_str(w, NULL, "--pevent:time-mult");
		jw_raw(w, NULL, "\"%u\"", b->time_mult);
	}
	snprintf(path, sizeof(path), "%s/%s", b->dir, b->s[idx].sideband);
	jw_str(w, NULL, "--pevent:primary");
	jw_str(w, NULL, path);
	if (b->proc_written) {
		snprintf(path, sizeof(path), "%s/" BUNDLE_PROC, b->dir);
		jw_str(w, NULL, "--pevent:secondary");
		jw_str(w, NULL, path);
	}
	for (int i = 0; i < b->nr; i++) {
		if (i == idx)
			continue;
		snprintf(path, sizeof(path), "%s/%s", b->dir, b->s[i].sideband);
		jw_str(w, NULL, "--pevent:secondary");
		jw_str(w, NULL, path);
	}
	snprintf(path, sizeof(path), "%s/%s", b->dir, b->s[idx].trace);
	jw_str(w, NULL, "--pt");
	jw_str(w, NULL, path);
	jw_close(w, ']');
}

static void write_target(const struct bundle *b, struct jw *w)
{
	const struct record_plan *p = b->plan;
	const struct record_opts *o = &p->opts;

	jw_open(w, "target", '{');
	jw_str(w, "kind", record_target_name(p->target));
	jw_open(w, "pids", '[');
	for (int i = 0; i < o->nr_pids; i++)
		jw_raw(w, NULL, "%d", o->pids[i]);
	for (int i = 0; i < o->nr_tids; i++)
		jw_raw(w, NULL, "%d", o->tids[i]);
	jw_close(w, ']');
	if (o->command) {
		jw_open(w, "command", '[');
		for (int i = 0; i < o->command_argc; i++)
			jw_str(w, NULL, o->command[i]);
		jw_close(w, ']');
	} else {
		jw_str(w, "command", NULL);
	}
	if (b->exit_status >= 0)
		jw_raw(w, "exit_status", "%d", b->exit_status);
	else
		jw_str(w, "exit_status", NULL);
	jw_close(w, '}');
}

static void write_streams(const struct bundle *b, struct jw *w)
{
	jw_open(w, "streams", '[');
	for (int i = 0; i < b->nr; i++) {
		const struct bstream *s = &b->s[i];

		jw_open(w, NULL, '{');
		jw_str(w, "file", s->trace);
		jw_str(w, "sideband", s->sideband);
		jw_raw(w, "cpu", "%d", s->cpu);
		jw_raw(w, "tid", "%d", s->tid);
		jw_u64s(w, "bytes", s->st.aux_bytes);
		jw_u64s(w, "sideband_bytes", s->st.sideband_bytes);
		jw_open(w, "lost", '{');
		jw_raw(w, "truncated", "%" PRIu64, s->st.truncated);
		jw_raw(w, "lost", "%" PRIu64, s->st.lost);
		jw_raw(w, "lost_records", "%" PRIu64, s->st.lost_events);
		jw_raw(w, "partial", "%" PRIu64, s->st.partial);
		jw_raw(w, "collision", "%" PRIu64, s->st.collision);
		jw_raw(w, "sideband_full", "%" PRIu64, s->st.data_full);
		jw_close(w, '}');
		jw_raw(w, "restarts", "%" PRIu64, s->st.restarts);
		jw_raw(w, "itrace_start", "%" PRIu64, s->st.itrace_start);
		stream_decoders(b, w, i);
		jw_close(w, '}');
	}
	jw_close(w, ']');
}

static void write_manifest_body(const struct bundle *b, FILE *f)
{
	const struct record_plan *p = b->plan;
	struct jw w = { .f = f, .depth = 0, .first = true };

	fputc('{', f);
	w.depth = 1;
	jw_str(&w, "format", BUNDLE_FORMAT);
	jw_raw(&w, "version", "%d", BUNDLE_VERSION);
	jw_open(&w, "tool", '{');
	jw_str(&w, "name", "ptcollect");
	jw_str(&w, "version", PTC_VERSION);
	jw_close(&w, '}');
	jw_open(&w, "command", '[');
	jw_str(&w, NULL, "ptcollect");
	for (int i = 0; i < p->opts.argc; i++)
		jw_str(&w, NULL, p->opts.argv[i]);
	jw_close(&w, ']');
	write_target(b, &w);
	jw_str(&w, "mode", p->per_thread ? "per-thread" : "per-cpu");
	jw_open(&w, "pmu", '{');
	jw_str(&w, "name", p->pmu.name);
	jw_raw(&w, "type", "%d", p->pmu.type);
	jw_close(&w, '}');
	jw_open(&w, "attr", '{');
	jw_hex(&w, "config", p->ev.config);
	jw_hex(&w, "config1", p->ev.config1);
	jw_hex(&w, "config2", p->ev.config2);
	jw_raw(&w, "exclude_user", "%s", p->ev.exclude_user ? "true" : "false");
	jw_raw(&w, "exclude_kernel", "%s", p->ev.exclude_kernel ? "true" : "false");
	jw_hex(&w, "sample_type", SIDEBAND_SAMPLE_TYPE);
	jw_close(&w, '}');
	jw_str(&w, "filter", p->filter);
	jw_open(&w, "cpu", '{');
	jw_str(&w, "vendor", b->cpu.vendor);
	jw_raw(&w, "family", "%u", b->cpu.family);
	jw_raw(&w, "model", "%u", b->cpu.model);
	jw_raw(&w, "stepping", "%u", b->cpu.stepping);
	jw_close(&w, '}');
	jw_open(&w, "time_conv", '{');
	jw_raw(&w, "cap_user_time_zero", "%s", b->cap_user_time_zero ? "true" : "false");
	jw_u64s(&w, "time_zero", b->time_zero);
	jw_raw(&w, "time_mult", "%u", b->time_mult);
	jw_raw(&w, "time_shift", "%u", b->time_shift);
	jw_close(&w, '}');
	if (p->pmu.max_nonturbo_ratio >= 0)
		jw_raw(&w, "nom_freq", "%d", p->pmu.max_nonturbo_ratio);
	else
		jw_str(&w, "nom_freq", NULL);
	jw_open(&w, "cpuid_0x15", '{');
	jw_raw(&w, "eax", "%u", b->cpu.cpuid_0x15_eax);
	jw_raw(&w, "ebx", "%u", b->cpu.cpuid_0x15_ebx);
	jw_close(&w, '}');
	jw_raw(&w, "mtc_freq", "%" PRIu64, mtc_freq(p));
	jw_open(&w, "kernel", '{');
	if (b->kernel_start) {
		jw_hex(&w, "start", b->kernel_start);
		jw_str(&w, "kallsyms", "kallsyms");
		jw_str(&w, "kcore", b->kcore ? BUNDLE_KCORE : NULL);
	} else {
		jw_str(&w, "start", NULL);
		jw_str(&w, "kallsyms", NULL);
	}
	jw_close(&w, '}');
	jw_str(&w, "proc_sideband", b->proc_written ? BUNDLE_PROC : NULL);
	jw_str(&w, "vdso", b->vdso ? BUNDLE_VDSO : NULL);
	write_streams(b, &w);
	jw_open(&w, "images", '[');
	for (int i = 0; i < b->nr_images; i++) {
		jw_open(&w, NULL, '{');
		jw_str(&w, "path", b->images[i].path);
		jw_str(&w, "build_id", b->images[i].build_id[0] ? b->images[i].build_id : NULL);
		jw_close(&w, '}');
	}
	jw_close(&w, ']');
	jw_time(&w, "start_time", &b->start);
	jw_time(&w, "end_time", &b->end);
	jw_str(&w, "stop_reason", b->stop_reason);
	jw_raw(&w, "complete", "%s", b->complete ? "true" : "false");
	fputs("\n}\n", f);
}

/* Write manifest.json.tmp, fsync it, rename over manifest.json: readers see old or new. */
static int write_manifest(struct bundle *b, char *err, size_t len)
{
	int fd = openat(b->dir_fd, BUNDLE_MANIFEST ".tmp",
			O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	FILE *f;
	int ret = 0;

	if (fd < 0)
		return fail(err, len, errno, "%s/%s: %s", b->dir, BUNDLE_MANIFEST, strerror(errno));
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		return fail(err, len, errno, "%s/%s: %s", b->dir, BUNDLE_MANIFEST, strerror(errno));
	}
	write_manifest_body(b, f);
	if (fflush(f) || fsync(fd))
		ret = fail(err, len, errno, "%s/%s: %s", b->dir, BUNDLE_MANIFEST, strerror(errno));
	if (fclose(f) && !ret)
		ret = fail(err, len, errno, "%s/%s: %s", b->dir, BUNDLE_MANIFEST, strerror(errno));
	if (!ret && renameat(b->dir_fd, BUNDLE_MANIFEST ".tmp", b->dir_fd, BUNDLE_MANIFEST))
		ret = fail(err, len, errno, "%s/%s: %s", b->dir, BUNDLE_MANIFEST, strerror(errno));
	if (ret)
		unlinkat(b->dir_fd, BUNDLE_MANIFEST ".tmp", 0);
	return ret;
}

int bundle_finish(struct bundle *b, bool complete, const char *stop_reason, int exit_status,
		  char *err, size_t len)
{
	int ret = 0;

	for (int i = 0; i < b->nr; i++) {
		struct bstream *s = &b->s[i];

		if (s->closed)
			continue;
		/* A close error is a write error the kernel reported late. */
		if ((close(s->trace_fd) | close(s->sb_fd)) && !ret) {
			ret = fail(err, len, errno, "%s/%s: %s", b->dir, s->trace, strerror(errno));
			complete = false;
		}
		s->closed = true;
	}
	if (b->proc_fd >= 0 && close(b->proc_fd) && !ret) {
		ret = fail(err, len, errno, "%s/%s: %s", b->dir, BUNDLE_PROC, strerror(errno));
		complete = false;
	}
	b->proc_fd = -1;
	collect_images(b, BUNDLE_PROC);
	for (int i = 0; i < b->nr; i++)
		collect_images(b, b->s[i].sideband);
	clock_gettime(CLOCK_REALTIME, &b->end);
	b->complete = complete;
	b->stop_reason = stop_reason;
	b->exit_status = exit_status;
	if (write_manifest(b, ret ? b->err : err, ret ? sizeof(b->err) : len) && !ret)
		ret = -EIO;
	return ret;
}

/* Written at the start too, so that a collector killed mid-way leaves complete=false. */
int bundle_checkpoint(struct bundle *b, char *err, size_t len)
{
	return write_manifest(b, err, len);
}

/* Nothing was recorded: take the directory away again rather than leave it half-written. */
void bundle_discard(struct bundle *b)
{
	char path[4200];

	for (int i = 0; i < b->nr; i++) {
		unlinkat(b->dir_fd, b->s[i].trace, 0);
		unlinkat(b->dir_fd, b->s[i].sideband, 0);
	}
	unlinkat(b->dir_fd, BUNDLE_PROC, 0);
	unlinkat(b->dir_fd, BUNDLE_VDSO, 0);
	unlinkat(b->dir_fd, "sysroot", AT_REMOVEDIR);
	unlinkat(b->dir_fd, "kallsyms", 0);
	unlinkat(b->dir_fd, BUNDLE_KCORE, 0);
	unlinkat(b->dir_fd, BUNDLE_MANIFEST, 0);
	unlinkat(b->dir_fd, BUNDLE_MANIFEST ".tmp", 0);
	snprintf(path, sizeof(path), "%s", b->dir);
	rmdir(path);
}

void bundle_free(struct bundle *b)
{
	if (!b)
		return;
	for (int i = 0; i < b->nr; i++) {
		if (b->s[i].closed)
			continue;
		close(b->s[i].trace_fd);
		close(b->s[i].sb_fd);
	}
	if (b->proc_fd >= 0)
		close(b->proc_fd);
	if (b->dir_fd >= 0)
		close(b->dir_fd);
	for (int i = 0; i < b->nr_images; i++)
		free(b->images[i].path);
	free(b->images);
	free(b->s);
	free(b->dir);
	free(b);
}

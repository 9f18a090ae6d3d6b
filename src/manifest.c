// SPDX-License-Identifier: MIT
/* manifest.json: the schema, its writer and its reader, in one place. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <unistd.h>

#include "fileio.h"
#include "manifest.h"
#include "utf8.h"

#define TMP_PREFIX	".manifest.json."	/* + 8 random letters: a temporary name */
#define TMP_TRIES	64

static const char *const target_names[] = {
	[TARGET_NONE] = "none",
	[TARGET_COMMAND] = "command",
	[TARGET_PID] = "pid",
	[TARGET_TID] = "tid",
	[TARGET_CPU] = "cpu",
};

const char *target_kind_name(enum target_kind k)
{
	return k <= TARGET_CPU ? target_names[k] : "none";
}

void manifest_init(struct manifest *m)
{
	memset(m, 0, sizeof(*m));
	m->version = MANIFEST_VERSION;
	m->nom_freq = -1;
	m->source.nr_cpus_online = m->source.nr_cpus_avail = -1;
}

static void free_argv(char **argv, int argc)
{
	for (int i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);
}

static void free_source(struct msource *s)
{
	char **strs[] = {
		&s->tool, &s->version, &s->file, &s->format, &s->hostname, &s->os_release,
		&s->arch, &s->cpuid, &s->cpudesc, &s->filter,
	};

	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		free(*strs[i]);
	free_argv(s->command, s->command_argc);
}

void manifest_free(struct manifest *m)
{
	free(m->tool_version);
	free_source(&m->source);
	free_argv(m->command, m->command_argc);
	free(m->target.pids);
	free_argv(m->target.command, m->target.command_argc);
	free(m->event);
	free(m->pmu_name);
	free(m->filter);
	free(m->cpu.vendor);
	free(m->kernel.kallsyms);
	free(m->kernel.kcore);
	free(m->proc_sideband);
	free(m->vdso);
	free(m->sysroot);
	for (int i = 0; i < m->nr_streams; i++) {
		free(m->streams[i].file);
		free(m->streams[i].sideband);
	}
	free(m->streams);
	for (int i = 0; i < m->nr_images; i++) {
		free(m->images[i].path);
		free(m->images[i].build_id);
	}
	free(m->images);
	for (int i = 0; i < m->nr_snapshots; i++) {
		struct msnapshot *sn = &m->snapshots[i];

		for (int j = 0; j < sn->nr_windows; j++)
			free(sn->windows[j].file);
		free(sn->windows);
		free(sn->dir);
		free(sn->cause);
	}
	free(m->snapshots);
	for (int i = 0; i < m->nr_triggers; i++) {
		free(m->triggers[i].spec);
		free(m->triggers[i].kind);
		free(m->triggers[i].action);
		free(m->triggers[i].path);
	}
	free(m->triggers);
	free(m->fires);
	for (int i = 0; i < m->nr_marks; i++)
		free(m->marks[i].text);
	free(m->marks);
	free(m->stop_reason);
	manifest_init(m);
}

int manifest_set(char **dst, const char *src)
{
	char *n = NULL;

	if (src && !(n = strdup(src)))
		return -ENOMEM;
	free(*dst);
	*dst = n;
	return 0;
}

int manifest_set_argv(char ***dst, int *dst_argc, char *const *argv, int argc)
{
	char **n = calloc((size_t)argc + 1, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (int i = 0; i < argc; i++) {
		n[i] = strdup(argv[i]);
		if (!n[i]) {
			free_argv(n, i);
			return -ENOMEM;
		}
	}
	free_argv(*dst, *dst_argc);
	*dst = n;
	*dst_argc = argc;
	return 0;
}

/* Grow @arr of @nr elements of @size by one zeroed element. */
static void *append(void *arrp, int *nr, size_t size)
{
	void **arr = arrp;
	char *n = realloc(*arr, ((size_t)*nr + 1) * size);

	if (!n)
		return NULL;
	*arr = n;
	memset(n + (size_t)*nr * size, 0, size);
	return n + (size_t)(*nr)++ * size;
}

struct mstream *manifest_add_stream(struct manifest *m)
{
	struct mstream *s = append(&m->streams, &m->nr_streams, sizeof(*s));

	if (s)
		s->cpu = s->tid = -1;
	return s;
}

struct mimage *manifest_add_image(struct manifest *m)
{
	return append(&m->images, &m->nr_images, sizeof(struct mimage));
}

struct msnapshot *manifest_add_snapshot(struct manifest *m)
{
	struct msnapshot *s = append(&m->snapshots, &m->nr_snapshots, sizeof(*s));

	if (s)
		s->trigger = -1;
	return s;
}

struct mwindow *manifest_add_window(struct msnapshot *s)
{
	struct mwindow *w = append(&s->windows, &s->nr_windows, sizeof(*w));

	if (w)
		w->cpu = w->tid = -1;
	return w;
}

struct mtrigger *manifest_add_trigger(struct manifest *m)
{
	return append(&m->triggers, &m->nr_triggers, sizeof(struct mtrigger));
}

struct mfire *manifest_add_fire(struct manifest *m)
{
	if (m->nr_fires >= MANIFEST_MAX_FIRES)
		return NULL;
	return append(&m->fires, &m->nr_fires, sizeof(struct mfire));
}

struct mmark *manifest_add_mark(struct manifest *m)
{
	return append(&m->marks, &m->nr_marks, sizeof(struct mmark));
}

uint64_t manifest_perf_time(const struct manifest *m, uint64_t monotonic_ns)
{
	return m->clock.known ? monotonic_ns + (uint64_t)m->clock.perf_minus_monotonic : 0;
}

/* ---- writing ---------------------------------------------------------- */

json_t *manifest_u64_json(uint64_t v)
{
	char b[24];

	snprintf(b, sizeof(b), "%" PRIu64, v);
	return json_string(b);
}

static json_t *hex(uint64_t v)
{
	char b[24];

	snprintf(b, sizeof(b), "0x%" PRIx64, v);
	return json_string(b);
}

/* Strings from outside (arguments, paths, CPUID) need not be UTF-8: see utf8.h. */
static json_t *str_or_null(const char *s)
{
	return s ? utf8_json_string(s) : json_null();
}

static json_t *argv_json(char *const *argv, int argc)
{
	json_t *a;

	if (!argv)
		return json_null();
	a = json_array();
	for (int i = 0; a && i < argc; i++)
		json_array_append_new(a, utf8_json_string(argv[i]));
	return a;
}

static json_t *time_json(const struct timespec *t)
{
	struct tm tm;
	char buf[64];

	if (!t->tv_sec || !gmtime_r(&t->tv_sec, &tm))
		return json_null();
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), ".%06ldZ", t->tv_nsec / 1000);
	return json_string(buf);
}

json_t *manifest_stream_to_json(const struct mstream *s)
{
	return json_pack("{s:s?, s:s?, s:i, s:i, s:o, s:o, s:{s:o, s:o, s:o, s:o, s:o, s:o}, "
			 "s:o, s:o}",
			 "file", s->file, "sideband", s->sideband, "cpu", s->cpu, "tid", s->tid,
			 "bytes", manifest_u64_json(s->bytes), "sideband_bytes", manifest_u64_json(s->sideband_bytes),
			 "lost",
			 "truncated", manifest_u64_json(s->lost.truncated), "lost", manifest_u64_json(s->lost.lost),
			 "lost_records", manifest_u64_json(s->lost.lost_records),
			 "partial", manifest_u64_json(s->lost.partial), "collision", manifest_u64_json(s->lost.collision),
			 "sideband_full", manifest_u64_json(s->lost.sideband_full),
			 "restarts", manifest_u64_json(s->restarts), "itrace_start", manifest_u64_json(s->itrace_start));
}

/* A file the sideband maps: its build-id, else the device and inode the records name. */
static json_t *image_json(const struct mimage *img)
{
	char dev[24];

	snprintf(dev, sizeof(dev), "%x:%x", img->maj, img->min);
	return json_pack("{s:o, s:o, s:o, s:o}", "path", str_or_null(img->path),
			 "build_id", str_or_null(img->build_id),
			 "device", img->has_inode ? json_string(dev) : json_null(),
			 "inode", img->has_inode ? manifest_u64_json(img->ino) : json_null());
}

/* A time on perf's clock, null when it is not known. */
static json_t *perf_time_json(uint64_t t)
{
	return t ? manifest_u64_json(t) : json_null();
}

json_t *manifest_snapshot_to_json(const struct msnapshot *s)
{
	json_t *w = json_array();

	for (int i = 0; w && i < s->nr_windows; i++) {
		const struct mwindow *x = &s->windows[i];

		json_array_append_new(w, json_pack("{s:s?, s:i, s:i, s:o, s:o, s:b}", "file",
				      x->file, "cpu", x->cpu, "tid", x->tid, "bytes",
				      manifest_u64_json(x->bytes), "aux_head", manifest_u64_json(x->aux_head), "wrapped",
				      x->wrapped));
	}
	return json_pack("{s:i, s:s?, s:s?, s:o, s:o, s:o, s:o}", "number", (int)s->number,
			 "dir", s->dir, "cause", s->cause, "trigger",
			 s->trigger >= 0 ? json_integer(s->trigger) : json_null(),
			 "time_ns", manifest_u64_json(s->time_ns), "perf_time", perf_time_json(s->perf_time),
			 "windows", w ? w : json_null());
}

json_t *manifest_trigger_to_json(const struct mtrigger *t)
{
	return json_pack("{s:s?, s:s?, s:s?, s:s?, s:o, s:o, s:o, s:o, s:o}", "spec", t->spec,
			 "kind", t->kind, "action", t->action, "path", t->path, "offset",
			 hex(t->offset), "limit", t->limit ? manifest_u64_json(t->limit) : json_null(),
			 "fires", manifest_u64_json(t->fires), "dropped", manifest_u64_json(t->dropped), "throttled",
			 manifest_u64_json(t->throttled));
}

json_t *manifest_fire_to_json(const struct mfire *f)
{
	return json_pack("{s:i, s:o, s:o, s:i, s:i, s:i, s:o}", "trigger", f->trigger,
			 "time_ns", manifest_u64_json(f->time_ns), "perf_time", perf_time_json(f->perf_time),
			 "pid", f->pid, "tid", f->tid, "cpu", f->cpu, "snapshot",
			 f->snapshot ? json_integer(f->snapshot) : json_null());
}

json_t *manifest_mark_to_json(const struct mmark *k)
{
	return json_pack("{s:o, s:o, s:s?}", "time_ns", manifest_u64_json(k->time_ns), "perf_time",
			 perf_time_json(k->perf_time), "text", k->text);
}

/* What only a scripted session has: snapshots, triggers, fires, marks, the clocks. */
static int session_json(const struct manifest *m, json_t *j)
{
	json_t *sn = json_array(), *tr = json_array(), *fi = json_array(), *mk = json_array();
	char off[24];

	for (int i = 0; sn && i < m->nr_snapshots; i++)
		json_array_append_new(sn, manifest_snapshot_to_json(&m->snapshots[i]));
	for (int i = 0; tr && i < m->nr_triggers; i++)
		json_array_append_new(tr, manifest_trigger_to_json(&m->triggers[i]));
	for (int i = 0; fi && i < m->nr_fires; i++)
		json_array_append_new(fi, manifest_fire_to_json(&m->fires[i]));
	for (int i = 0; mk && i < m->nr_marks; i++)
		json_array_append_new(mk, manifest_mark_to_json(&m->marks[i]));
	snprintf(off, sizeof(off), "%" PRId64, m->clock.perf_minus_monotonic);
	if (json_object_set_new(j, "snapshot", m->snapshot_mode ?
				json_pack("{s:o}", "size", manifest_u64_json(m->snapshot_size)) : json_null()) ||
	    json_object_set_new(j, "snapshots", sn ? sn : json_array()) ||
	    json_object_set_new(j, "triggers", tr ? tr : json_array()) ||
	    json_object_set_new(j, "fires", fi ? fi : json_array()) ||
	    json_object_set_new(j, "marks", mk ? mk : json_array()) ||
	    json_object_set_new(j, "clock", m->clock.known ?
				json_pack("{s:s, s:o}", "perf_minus_monotonic_ns", off, "error_ns",
					  manifest_u64_json(m->clock.error_ns)) : json_null()))
		return -ENOMEM;
	return 0;
}

static const char *mode_name(const struct manifest *m)
{
	return m->no_trace ? "none" : m->per_thread ? "per-thread" : "per-cpu";
}

static json_t *target_json(const struct manifest *m)
{
	json_t *pids = json_array();

	for (int i = 0; pids && i < m->target.nr_pids; i++)
		json_array_append_new(pids, json_integer(m->target.pids[i]));
	return json_pack("{s:s, s:o, s:o, s:o}", "kind", target_kind_name(m->target.kind),
			 "pids", pids, "command",
			 argv_json(m->target.command, m->target.command_argc), "exit_status",
			 m->target.exited ? json_integer(m->target.exit_status) : json_null());
}

static json_t *int_or_null(int v)
{
	return v >= 0 ? json_integer(v) : json_null();
}

static json_t *source_json(const struct msource *s)
{
	if (!s->tool)
		return json_null();
	return json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b}",
			 "tool", s->tool, "version", str_or_null(s->version),
			 "file", str_or_null(s->file), "format", str_or_null(s->format),
			 "hostname", str_or_null(s->hostname),
			 "os_release", str_or_null(s->os_release), "arch", str_or_null(s->arch),
			 "cpuid", str_or_null(s->cpuid), "cpudesc", str_or_null(s->cpudesc),
			 "nr_cpus_online", int_or_null(s->nr_cpus_online),
			 "nr_cpus_avail", int_or_null(s->nr_cpus_avail),
			 "command", argv_json(s->command, s->command_argc),
			 "filter", str_or_null(s->filter), "snapshot", s->snapshot);
}

json_t *manifest_to_json(const struct manifest *m)
{
	json_t *streams = json_array(), *images = json_array(), *j;

	for (int i = 0; streams && i < m->nr_streams; i++)
		json_array_append_new(streams, manifest_stream_to_json(&m->streams[i]));
	for (int i = 0; images && i < m->nr_images; i++)
		json_array_append_new(images, image_json(&m->images[i]));
	j = json_pack("{s:s, s:i, s:{s:s, s:s?}, s:o, s:o, s:o, s:s, s:o, "
		      "s:{s:s?, s:i}, s:{s:o, s:o, s:o, s:b, s:b, s:b, s:o}, s:o, "
		      "s:{s:o, s:i, s:i, s:i}, s:{s:b, s:o, s:I, s:i}, s:o, s:o, s:i}",
		      "format", MANIFEST_FORMAT, "version", m->version,
		      "tool", "name", "ptcollect", "version", m->tool_version,
		      "command", argv_json(m->command, m->command_argc),
		      "source", source_json(&m->source),
		      "target", target_json(m),
		      "mode", mode_name(m),
		      "event", str_or_null(m->event),
		      "pmu", "name", m->pmu_name, "type", m->pmu_type,
		      "attr", "config", hex(m->attr.config), "config1", hex(m->attr.config1),
		      "config2", hex(m->attr.config2), "exclude_user", m->attr.exclude_user,
		      "exclude_kernel", m->attr.exclude_kernel, "exclude_hv", m->attr.exclude_hv,
		      "sample_type", hex(m->attr.sample_type),
		      "filter", str_or_null(m->filter),
		      "cpu", "vendor", str_or_null(m->cpu.vendor), "family", m->cpu.family, "model",
		      m->cpu.model, "stepping", m->cpu.stepping,
		      "time_conv", "cap_user_time_zero", m->time_conv.cap_user_time_zero,
		      "time_zero", manifest_u64_json(m->time_conv.time_zero), "time_mult",
		      (json_int_t)m->time_conv.time_mult, "time_shift", m->time_conv.time_shift,
		      "nom_freq", m->nom_freq >= 0 ? json_integer(m->nom_freq) : json_null(),
		      "cpuid_0x15", m->has_cpuid_0x15 ?
				json_pack("{s:I, s:I}", "eax", (json_int_t)m->cpuid_0x15_eax,
					  "ebx", (json_int_t)m->cpuid_0x15_ebx) : json_null(),
		      "mtc_freq", m->mtc_freq);
	if (!j)
		goto fail;
	if (json_object_set_new(j, "kernel", json_pack("{s:o, s:o, s:o, s:o}",
			"start", m->kernel.start ? hex(m->kernel.start) : json_null(),
			"kallsyms", str_or_null(m->kernel.kallsyms),
			"kcore", str_or_null(m->kernel.kcore),
			"kcore_base", m->kernel.kcore ? hex(m->kernel.kcore_base) : json_null())) ||
	    json_object_set_new(j, "proc_sideband", str_or_null(m->proc_sideband)) ||
	    json_object_set_new(j, "vdso", str_or_null(m->vdso)) ||
	    json_object_set_new(j, "sysroot", str_or_null(m->sysroot)) ||
	    json_object_set_new(j, "streams", streams) ||
	    json_object_set_new(j, "images", images) || session_json(m, j) ||
	    json_object_set_new(j, "start_time", time_json(&m->start_time)) ||
	    json_object_set_new(j, "end_time", time_json(&m->end_time)) ||
	    json_object_set_new(j, "stop_reason", str_or_null(m->stop_reason)) ||
	    json_object_set_new(j, "complete", json_boolean(m->complete))) {
		json_decref(j);
		return NULL;
	}
	return j;
fail:
	json_decref(streams);
	json_decref(images);
	return NULL;
}

/*
 * Create a temporary file in @dirfd under a new name (@name, TMP_PREFIX and
 * random letters): O_EXCL, so nothing already there, a planted link
 * included, is opened or written through. The descriptor, or -errno.
 */
static int create_tmp(int dirfd, char name[static sizeof(TMP_PREFIX) + 8])
{
	static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
	static unsigned int seq;

	for (int t = 0; t < TMP_TRIES; t++) {
		unsigned char r[8];
		int fd;

		if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
			for (size_t i = 0; i < sizeof(r); i++)
				r[i] = (unsigned char)(getpid() * 31 + seq++ * 7 + i * 13);
		memcpy(name, TMP_PREFIX, sizeof(TMP_PREFIX) - 1);
		for (size_t i = 0; i < sizeof(r); i++)
			name[sizeof(TMP_PREFIX) - 1 + i] = letters[r[i] % (sizeof(letters) - 1)];
		name[sizeof(TMP_PREFIX) - 1 + sizeof(r)] = '\0';
		fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd >= 0 ? fd : -errno;
	}
	return -EEXIST;
}

int manifest_write(const struct manifest *m, int dirfd, struct error *e)
{
	json_t *j = manifest_to_json(m);
	char *text = j ? json_dumps(j, JSON_INDENT(2)) : NULL;
	char tmp[sizeof(TMP_PREFIX) + 8];
	int fd, ret = 0;

	json_decref(j);
	if (!text)
		return err_runtime(e, -ENOMEM, "out of memory");
	/* No planted link is followed, and nobody else may read a trace's description. */
	fd = create_tmp(dirfd, tmp);
	if (fd < 0) {
		free(text);
		return err_runtime(e, fd, "%s: a temporary file for it cannot be created: %s",
				   MANIFEST_FILE, strerror(-fd));
	}
	ret = write_all(fd, text, strlen(text));
	if (!ret)
		ret = write_all(fd, "\n", 1);
	if (!ret && fsync(fd))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && renameat(dirfd, tmp, dirfd, MANIFEST_FILE))
		ret = -errno;
	free(text);
	if (ret) {
		unlinkat(dirfd, tmp, 0);
		return err_runtime(e, ret, "%s: %s", MANIFEST_FILE, strerror(-ret));
	}
	return 0;
}

int manifest_lock(int dirfd, const char *dir, struct error *e)
{
	/* A descriptor of our own: flock belongs to the open file, not to the process. */
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), ret;

	if (fd < 0)
		return err_runtime(e, -errno, "%s: %s", dir, strerror(errno));
	if (!flock(fd, LOCK_EX | LOCK_NB))
		return fd;
	ret = -errno;
	close(fd);
	if (ret == -EWOULDBLOCK) {
		err_runtime(e, -EBUSY, "%s: another ptcollect is writing this bundle (a record, "
			    "archive or import still running)", dir);
		err_hint(e, "run it again when that one has ended");
		return -EBUSY;
	}
	return err_runtime(e, ret, "%s: cannot lock it: %s", dir, strerror(-ret));
}

/* ---- reading ---------------------------------------------------------- */

struct rd {
	struct error *e;
	int failed;
};

__attribute__((format(printf, 3, 4)))
static int bad(struct rd *r, const char *key, const char *fmt, ...)
{
	va_list ap;

	if (r->failed)
		return -EINVAL;
	va_start(ap, fmt);
	err_vset(r->e, -EINVAL, true, fmt, ap);
	va_end(ap);
	err_what(r->e, "\"%s\"", key);
	r->failed = 1;
	return -EINVAL;
}

static const char *type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a real number";
	case JSON_TRUE: case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

/* Member @key of @obj; a missing member is an error unless @optional (then NULL). */
static json_t *member(struct rd *r, const json_t *obj, const char *key, const char *path,
		      bool optional)
{
	json_t *v = obj ? json_object_get(obj, key) : NULL;

	if (!v && !optional)
		bad(r, path, "missing");
	return v;
}

static json_t *typed(struct rd *r, const json_t *obj, const char *key, const char *path,
		     json_type t, const char *want, bool nullable)
{
	json_t *v = member(r, obj, key, path, nullable);

	if (!v || (nullable && json_is_null(v)))
		return NULL;
	if (json_typeof(v) != t && !(t == JSON_TRUE && json_is_boolean(v))) {
		bad(r, path, "expected %s, found %s", want, type_name(v));
		return NULL;
	}
	return v;
}

static void rd_str(struct rd *r, const json_t *obj, const char *key, const char *path,
		   char **dst, bool nullable)
{
	json_t *v = typed(r, obj, key, path, JSON_STRING, "a string", nullable);

	if (v && manifest_set(dst, json_string_value(v)))
		r->failed = err_runtime(r->e, -ENOMEM, "out of memory");
}

/* A path inside the bundle: relative, no "..", no empty component. */
static void rd_relpath(struct rd *r, const json_t *obj, const char *key, const char *path,
		       char **dst, bool nullable)
{
	const char *s, *p;

	rd_str(r, obj, key, path, dst, nullable);
	s = *dst;
	if (!s || r->failed)
		return;
	if (!*s || *s == '/')
		goto bad;
	for (p = s; *p; p++)
		if ((unsigned char)*p < 0x20)
			goto bad;
	for (p = s; p;) {
		size_t n = strcspn(p, "/");

		if (!n || (n == 2 && !strncmp(p, "..", 2)) || (n == 1 && *p == '.'))
			goto bad;
		p = p[n] ? p + n + 1 : NULL;
	}
	return;
bad:
	bad(r, path, "'%s' is not a path inside the bundle", s);
}

static void rd_bool(struct rd *r, const json_t *obj, const char *key, const char *path, bool *dst)
{
	json_t *v = typed(r, obj, key, path, JSON_TRUE, "true or false", false);

	if (v)
		*dst = json_is_true(v);
}

static bool rd_int(struct rd *r, const json_t *obj, const char *key, const char *path,
		   long long lo, long long hi, long long *dst, bool nullable)
{
	json_t *v = typed(r, obj, key, path, JSON_INTEGER, "an integer", nullable);

	if (!v)
		return false;
	*dst = json_integer_value(v);
	if (*dst < lo || *dst > hi) {
		bad(r, path, "%lld is out of range (%lld to %lld)", *dst, lo, hi);
		return false;
	}
	return true;
}

/* A decimal string (@base 10) or a "0x" hex string (@base 16) holding a u64. */
static void rd_u64(struct rd *r, const json_t *obj, const char *key, const char *path,
		   int base, uint64_t *dst, bool nullable)
{
	json_t *v = typed(r, obj, key, path, JSON_STRING, base == 10 ? "a decimal string" :
			  "a \"0x\" hex string", nullable);
	const char *s, *digits;
	char *end;

	if (!v)
		return;
	s = json_string_value(v);
	digits = base == 16 ? "0123456789abcdefABCDEF" : "0123456789";
	if (base == 16 && strncmp(s, "0x", 2))
		goto bad;
	if (base == 16)
		s += 2;
	if (!*s || strspn(s, digits) != strlen(s) || strlen(s) > 20)
		goto bad;
	errno = 0;
	*dst = strtoull(s, &end, base);
	if (errno)
		goto bad;
	return;
bad:
	bad(r, path, "'%s' is not %s of 64 bits", json_string_value(v),
	    base == 10 ? "a decimal number" : "a \"0x\" hex number");
}

static void rd_argv(struct rd *r, const json_t *obj, const char *key, const char *path,
		    char ***dst, int *argc, bool nullable)
{
	json_t *v = typed(r, obj, key, path, JSON_ARRAY, "an array of strings", nullable);
	char **argv;
	size_t i;
	json_t *a;

	if (!v || r->failed)
		return;
	argv = calloc(json_array_size(v) + 1, sizeof(*argv));
	if (!argv) {
		r->failed = err_runtime(r->e, -ENOMEM, "out of memory");
		return;
	}
	json_array_foreach(v, i, a) {
		if (!json_is_string(a)) {
			bad(r, path, "element %zu is %s, not a string", i, type_name(a));
			break;
		}
		argv[i] = strdup(json_string_value(a));
		if (!argv[i]) {
			r->failed = err_runtime(r->e, -ENOMEM, "out of memory");
			break;
		}
	}
	free_argv(*dst, *argc);
	*dst = argv;
	*argc = (int)json_array_size(v);
}

static void rd_time(struct rd *r, const json_t *obj, const char *key, struct timespec *t)
{
	json_t *v = typed(r, obj, key, key, JSON_STRING, "a time string", true);
	struct tm tm;
	long usec = 0;
	const char *s;
	char *end;

	memset(t, 0, sizeof(*t));
	if (!v)
		return;
	s = json_string_value(v);
	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (end && *end == '.' && strlen(end) == 8 && end[7] == 'Z' &&
	    strspn(end + 1, "0123456789") == 6)
		usec = strtol(end + 1, NULL, 10);
	else
		end = NULL;
	if (!end) {
		bad(r, key, "'%s' is not a time as YYYY-MM-DDTHH:MM:SS.uuuuuuZ", s);
		return;
	}
	t->tv_sec = timegm(&tm);
	t->tv_nsec = usec * 1000;
}

static void rd_target(struct rd *r, const json_t *m, struct manifest *out)
{
	json_t *t = typed(r, m, "target", "target", JSON_OBJECT, "an object", false);
	json_t *pids, *p;
	char *kind = NULL;
	long long v;
	size_t i;

	if (!t)
		return;
	rd_str(r, t, "kind", "target.kind", &kind, false);
	for (int k = TARGET_NONE; kind && k <= TARGET_CPU; k++)
		if (!strcmp(kind, target_names[k]))
			out->target.kind = (enum target_kind)k;
	if (kind && strcmp(kind, target_kind_name(out->target.kind)))
		bad(r, "target.kind", "'%s' is not command, pid, tid or cpu", kind);
	free(kind);
	pids = typed(r, t, "pids", "target.pids", JSON_ARRAY, "an array", false);
	if (pids && !r->failed) {
		out->target.pids = calloc(json_array_size(pids) + 1, sizeof(pid_t));
		if (!out->target.pids) {
			r->failed = err_runtime(r->e, -ENOMEM, "out of memory");
			return;
		}
		json_array_foreach(pids, i, p) {
			if (!json_is_integer(p) || json_integer_value(p) <= 0 ||
			    json_integer_value(p) > INT_MAX) {
				bad(r, "target.pids", "element %zu is not a process id", i);
				return;
			}
			out->target.pids[out->target.nr_pids++] = (pid_t)json_integer_value(p);
		}
	}
	rd_argv(r, t, "command", "target.command", &out->target.command,
		&out->target.command_argc, true);
	out->target.exited = rd_int(r, t, "exit_status", "target.exit_status", 0, 255 + 128, &v,
				    true);
	out->target.exit_status = out->target.exited ? (int)v : 0;
}

static void rd_stream(struct rd *r, const json_t *s, size_t i, struct mstream *o)
{
	static const struct { const char *key; size_t off; } counts[] = {
		{ "truncated", offsetof(struct mlosses, truncated) },
		{ "lost", offsetof(struct mlosses, lost) },
		{ "lost_records", offsetof(struct mlosses, lost_records) },
		{ "partial", offsetof(struct mlosses, partial) },
		{ "collision", offsetof(struct mlosses, collision) },
		{ "sideband_full", offsetof(struct mlosses, sideband_full) },
	};
	char path[96];
	json_t *lost;
	long long v;

#define P(k) (snprintf(path, sizeof(path), "streams[%zu]." k, i), path)
	if (!json_is_object(s)) {
		bad(r, P(""), "expected an object, found %s", type_name(s));
		return;
	}
	rd_relpath(r, s, "file", P("file"), &o->file, true);
	rd_relpath(r, s, "sideband", P("sideband"), &o->sideband, false);
	if (rd_int(r, s, "cpu", P("cpu"), -1, INT_MAX, &v, false))
		o->cpu = (int)v;
	if (rd_int(r, s, "tid", P("tid"), -1, INT_MAX, &v, false))
		o->tid = (int)v;
	rd_u64(r, s, "bytes", P("bytes"), 10, &o->bytes, false);
	rd_u64(r, s, "sideband_bytes", P("sideband_bytes"), 10, &o->sideband_bytes, false);
	rd_u64(r, s, "restarts", P("restarts"), 10, &o->restarts, false);
	rd_u64(r, s, "itrace_start", P("itrace_start"), 10, &o->itrace_start, false);
	lost = typed(r, s, "lost", P("lost"), JSON_OBJECT, "an object", false);
	for (size_t k = 0; lost && k < sizeof(counts) / sizeof(counts[0]); k++) {
		snprintf(path, sizeof(path), "streams[%zu].lost.%s", i, counts[k].key);
		rd_u64(r, lost, counts[k].key, path, 10,
		       (uint64_t *)((char *)&o->lost + counts[k].off), false);
	}
#undef P
}

/* "MAJOR:MINOR" in hex, each of 32 bits at most, as /proc/PID/maps shows a device. */
static bool parse_dev(const char *s, unsigned int *maj, unsigned int *min)
{
	static const char hexd[] = "0123456789abcdef";
	size_t a = strspn(s, hexd), b = s[a] == ':' ? strspn(s + a + 1, hexd) : 0;

	if (!a || a > 8 || !b || b > 8 || s[a + 1 + b])
		return false;
	*maj = (unsigned int)strtoul(s, NULL, 16);
	*min = (unsigned int)strtoul(s + a + 1, NULL, 16);
	return true;
}

/* An image: an absolute path, a hex build-id or null, and "MAJ:MIN" and inode or nulls. */
static void rd_image(struct rd *r, const json_t *v, size_t i, struct mimage *img)
{
	char path[64], *dev = NULL;
	const char *s;

#define P(k) (snprintf(path, sizeof(path), "images[%zu]." k, i), path)
	if (!json_is_object(v)) {
		bad(r, P(""), "expected an object, found %s", type_name(v));
		return;
	}
	rd_str(r, v, "path", P("path"), &img->path, false);
	if (img->path && img->path[0] != '/')
		bad(r, P("path"), "'%s' is not an absolute path", img->path);
	rd_str(r, v, "build_id", P("build_id"), &img->build_id, true);
	s = img->build_id;
	if (s && (!*s || strlen(s) > 40 || strlen(s) % 2 ||
		  strspn(s, "0123456789abcdef") != strlen(s)))
		bad(r, P("build_id"), "'%s' is not a build-id (1 to 20 bytes in lowercase hex)", s);
	rd_str(r, v, "device", P("device"), &dev, true);
	rd_u64(r, v, "inode", P("inode"), 10, &img->ino, true);
	if (dev && !r->failed && !parse_dev(dev, &img->maj, &img->min))
		bad(r, P("device"), "'%s' is not a device as MAJOR:MINOR in hex", dev);
	img->has_inode = dev != NULL;
	if (!r->failed && img->has_inode != !!json_is_string(json_object_get(v, "inode")))
		bad(r, P("inode"), "a device and an inode go together");
	free(dev);
#undef P
}

static void rd_lists(struct rd *r, const json_t *m, struct manifest *out)
{
	json_t *streams = typed(r, m, "streams", "streams", JSON_ARRAY, "an array", false);
	json_t *images = typed(r, m, "images", "images", JSON_ARRAY, "an array", false);
	json_t *v;
	size_t i;

	json_array_foreach(streams, i, v) {
		struct mstream *s;

		if (r->failed)
			return;
		s = manifest_add_stream(out);
		if (!s) {
			r->failed = err_runtime(r->e, -ENOMEM, "out of memory");
			return;
		}
		rd_stream(r, v, i, s);
	}
	json_array_foreach(images, i, v) {
		struct mimage *img;

		if (r->failed)
			return;
		img = manifest_add_image(out);
		if (!img) {
			r->failed = err_runtime(r->e, -ENOMEM, "out of memory");
			return;
		}
		rd_image(r, v, i, img);
	}
}

static void rd_machine(struct rd *r, const json_t *m, struct manifest *out)
{
	json_t *pmu = typed(r, m, "pmu", "pmu", JSON_OBJECT, "an object", false);
	json_t *attr = typed(r, m, "attr", "attr", JSON_OBJECT, "an object", false);
	json_t *cpu = typed(r, m, "cpu", "cpu", JSON_OBJECT, "an object", false);
	json_t *tc = typed(r, m, "time_conv", "time_conv", JSON_OBJECT, "an object", false);
	json_t *c15 = typed(r, m, "cpuid_0x15", "cpuid_0x15", JSON_OBJECT, "an object", true);
	json_t *k = typed(r, m, "kernel", "kernel", JSON_OBJECT, "an object", false);
	long long v;

	rd_str(r, pmu, "name", "pmu.name", &out->pmu_name, true);
	if (rd_int(r, pmu, "type", "pmu.type", 0, INT_MAX, &v, false))
		out->pmu_type = (int)v;
	rd_u64(r, attr, "config", "attr.config", 16, &out->attr.config, false);
	rd_u64(r, attr, "config1", "attr.config1", 16, &out->attr.config1, false);
	rd_u64(r, attr, "config2", "attr.config2", 16, &out->attr.config2, false);
	rd_bool(r, attr, "exclude_user", "attr.exclude_user", &out->attr.exclude_user);
	rd_bool(r, attr, "exclude_kernel", "attr.exclude_kernel", &out->attr.exclude_kernel);
	rd_bool(r, attr, "exclude_hv", "attr.exclude_hv", &out->attr.exclude_hv);
	rd_u64(r, attr, "sample_type", "attr.sample_type", 16, &out->attr.sample_type, false);
	rd_str(r, cpu, "vendor", "cpu.vendor", &out->cpu.vendor, false);
	if (rd_int(r, cpu, "family", "cpu.family", 0, 0xffff, &v, false))
		out->cpu.family = (unsigned int)v;
	if (rd_int(r, cpu, "model", "cpu.model", 0, 0xffff, &v, false))
		out->cpu.model = (unsigned int)v;
	if (rd_int(r, cpu, "stepping", "cpu.stepping", 0, 0xff, &v, false))
		out->cpu.stepping = (unsigned int)v;
	rd_bool(r, tc, "cap_user_time_zero", "time_conv.cap_user_time_zero",
		&out->time_conv.cap_user_time_zero);
	rd_u64(r, tc, "time_zero", "time_conv.time_zero", 10, &out->time_conv.time_zero, false);
	if (rd_int(r, tc, "time_mult", "time_conv.time_mult", 0, UINT32_MAX, &v, false))
		out->time_conv.time_mult = (uint32_t)v;
	if (rd_int(r, tc, "time_shift", "time_conv.time_shift", 0, 63, &v, false))
		out->time_conv.time_shift = (uint16_t)v;
	out->nom_freq = rd_int(r, m, "nom_freq", "nom_freq", 0, 255, &v, true) ? (int)v : -1;
	if (c15) {
		out->has_cpuid_0x15 = true;
		if (rd_int(r, c15, "eax", "cpuid_0x15.eax", 0, UINT32_MAX, &v, false))
			out->cpuid_0x15_eax = (uint32_t)v;
		if (rd_int(r, c15, "ebx", "cpuid_0x15.ebx", 0, UINT32_MAX, &v, false))
			out->cpuid_0x15_ebx = (uint32_t)v;
	}
	if (rd_int(r, m, "mtc_freq", "mtc_freq", 0, 15, &v, false))
		out->mtc_freq = (unsigned int)v;
	rd_u64(r, k, "start", "kernel.start", 16, &out->kernel.start, true);
	rd_relpath(r, k, "kallsyms", "kernel.kallsyms", &out->kernel.kallsyms, true);
	rd_relpath(r, k, "kcore", "kernel.kcore", &out->kernel.kcore, true);
	rd_u64(r, k, "kcore_base", "kernel.kcore_base", 16, &out->kernel.kcore_base, true);
}

/* "source": null (or absent, as before imports existed) for a bundle ptcollect recorded. */
static void rd_source(struct rd *r, const json_t *m, struct msource *o)
{
	static const struct { const char *key; size_t off; } strs[] = {
		{ "version", offsetof(struct msource, version) },
		{ "file", offsetof(struct msource, file) },
		{ "format", offsetof(struct msource, format) },
		{ "hostname", offsetof(struct msource, hostname) },
		{ "os_release", offsetof(struct msource, os_release) },
		{ "arch", offsetof(struct msource, arch) },
		{ "cpuid", offsetof(struct msource, cpuid) },
		{ "cpudesc", offsetof(struct msource, cpudesc) },
		{ "filter", offsetof(struct msource, filter) },
	};
	json_t *s = typed(r, m, "source", "source", JSON_OBJECT, "an object", true);
	char path[64];
	long long v;

	if (!s)
		return;
	rd_str(r, s, "tool", "source.tool", &o->tool, false);
	for (size_t k = 0; k < sizeof(strs) / sizeof(strs[0]); k++) {
		snprintf(path, sizeof(path), "source.%s", strs[k].key);
		rd_str(r, s, strs[k].key, path, (char **)((char *)o + strs[k].off), true);
	}
	if (rd_int(r, s, "nr_cpus_online", "source.nr_cpus_online", 0, 65536, &v, true))
		o->nr_cpus_online = (int)v;
	if (rd_int(r, s, "nr_cpus_avail", "source.nr_cpus_avail", 0, 65536, &v, true))
		o->nr_cpus_avail = (int)v;
	rd_argv(r, s, "command", "source.command", &o->command, &o->command_argc, true);
	rd_bool(r, s, "snapshot", "source.snapshot", &o->snapshot);
}

/* An optional array member: NULL when absent or null. */
static json_t *opt_array(struct rd *r, const json_t *m, const char *key)
{
	return typed(r, m, key, key, JSON_ARRAY, "an array", true);
}

static void rd_window(struct rd *r, const json_t *v, const char *at, struct mwindow *w)
{
	char path[128];
	long long x;

#define P(k) (snprintf(path, sizeof(path), "%s." k, at), path)
	rd_relpath(r, v, "file", P("file"), &w->file, false);
	if (rd_int(r, v, "cpu", P("cpu"), -1, INT_MAX, &x, false))
		w->cpu = (int)x;
	if (rd_int(r, v, "tid", P("tid"), -1, INT_MAX, &x, false))
		w->tid = (int)x;
	rd_u64(r, v, "bytes", P("bytes"), 10, &w->bytes, false);
	rd_u64(r, v, "aux_head", P("aux_head"), 10, &w->aux_head, false);
	rd_bool(r, v, "wrapped", P("wrapped"), &w->wrapped);
#undef P
}

static void rd_snapshot(struct rd *r, const json_t *v, size_t i, struct msnapshot *s)
{
	char path[96], at[64];
	json_t *ws, *w;
	long long x;
	size_t k;

#define P(k) (snprintf(path, sizeof(path), "snapshots[%zu]." k, i), path)
	if (rd_int(r, v, "number", P("number"), 1, INT_MAX, &x, false))
		s->number = (unsigned int)x;
	rd_relpath(r, v, "dir", P("dir"), &s->dir, false);
	rd_str(r, v, "cause", P("cause"), &s->cause, false);
	if (rd_int(r, v, "trigger", P("trigger"), 0, INT_MAX, &x, true))
		s->trigger = (int)x;
	rd_u64(r, v, "time_ns", P("time_ns"), 10, &s->time_ns, false);
	rd_u64(r, v, "perf_time", P("perf_time"), 10, &s->perf_time, true);
	ws = typed(r, v, "windows", P("windows"), JSON_ARRAY, "an array", false);
	json_array_foreach(ws, k, w) {
		struct mwindow *x2;

		if (r->failed)
			return;
		snprintf(at, sizeof(at), "snapshots[%zu].windows[%zu]", i, k);
		if (!json_is_object(w)) {
			bad(r, at, "expected an object, found %s", type_name(w));
			return;
		}
		x2 = manifest_add_window(s);
		if (!x2) {
			r->failed = err_runtime(r->e, -ENOMEM, "out of memory");
			return;
		}
		rd_window(r, w, at, x2);
	}
#undef P
}

static void rd_trigger(struct rd *r, const json_t *v, size_t i, struct mtrigger *t)
{
	char path[96];

#define P(k) (snprintf(path, sizeof(path), "triggers[%zu]." k, i), path)
	rd_str(r, v, "spec", P("spec"), &t->spec, false);
	rd_str(r, v, "kind", P("kind"), &t->kind, false);
	rd_str(r, v, "action", P("action"), &t->action, false);
	rd_str(r, v, "path", P("path"), &t->path, false);
	rd_u64(r, v, "offset", P("offset"), 16, &t->offset, false);
	rd_u64(r, v, "limit", P("limit"), 10, &t->limit, true);
	rd_u64(r, v, "fires", P("fires"), 10, &t->fires, false);
	rd_u64(r, v, "dropped", P("dropped"), 10, &t->dropped, false);
	rd_u64(r, v, "throttled", P("throttled"), 10, &t->throttled, false);
#undef P
}

static void rd_fire(struct rd *r, const json_t *v, size_t i, int nr_triggers, struct mfire *f)
{
	char path[96];
	long long x;

#define P(k) (snprintf(path, sizeof(path), "fires[%zu]." k, i), path)
	if (rd_int(r, v, "trigger", P("trigger"), 0, nr_triggers - 1, &x, false))
		f->trigger = (int)x;
	rd_u64(r, v, "time_ns", P("time_ns"), 10, &f->time_ns, false);
	rd_u64(r, v, "perf_time", P("perf_time"), 10, &f->perf_time, true);
	if (rd_int(r, v, "pid", P("pid"), -1, INT_MAX, &x, false))
		f->pid = (int)x;
	if (rd_int(r, v, "tid", P("tid"), -1, INT_MAX, &x, false))
		f->tid = (int)x;
	if (rd_int(r, v, "cpu", P("cpu"), -1, INT_MAX, &x, false))
		f->cpu = (int)x;
	if (rd_int(r, v, "snapshot", P("snapshot"), 1, INT_MAX, &x, true))
		f->snapshot = (unsigned int)x;
#undef P
}

static void rd_mark(struct rd *r, const json_t *v, size_t i, struct mmark *k)
{
	char path[96];

#define P(x) (snprintf(path, sizeof(path), "marks[%zu]." x, i), path)
	rd_u64(r, v, "time_ns", P("time_ns"), 10, &k->time_ns, false);
	rd_u64(r, v, "perf_time", P("perf_time"), 10, &k->perf_time, true);
	rd_str(r, v, "text", P("text"), &k->text, false);
#undef P
}

/* Each element of the optional array @key, an object, read by @fn into a new entry. */
#define RD_EACH(r, m, key, add, fn, ...)						\
	do {										\
		json_t *arr_ = opt_array(r, m, key), *v_;				\
		size_t i_;								\
											\
		json_array_foreach(arr_, i_, v_) {					\
			char at_[48];							\
			void *e_;							\
											\
			if ((r)->failed)						\
				break;							\
			snprintf(at_, sizeof(at_), "%s[%zu]", key, i_);			\
			if (!json_is_object(v_)) {					\
				bad(r, at_, "expected an object, found %s", type_name(v_));	\
				break;							\
			}								\
			e_ = add;							\
			if (!e_) {							\
				(r)->failed = err_runtime((r)->e, -ENOMEM, "out of memory");	\
				break;							\
			}								\
			fn(r, v_, i_, ##__VA_ARGS__, e_);				\
		}									\
	} while (0)

static void rd_clock(struct rd *r, const json_t *m, struct manifest *out)
{
	json_t *c = typed(r, m, "clock", "clock", JSON_OBJECT, "an object", true);
	json_t *off = c ? typed(r, c, "perf_minus_monotonic_ns", "clock.perf_minus_monotonic_ns",
				JSON_STRING, "a decimal string", false) : NULL;
	const char *s;
	char *end;

	if (!off)
		return;
	s = json_string_value(off);
	errno = 0;
	out->clock.perf_minus_monotonic = strtoll(s, &end, 10);
	if (!*s || *end || errno || (!isdigit((unsigned char)*s) && *s != '-')) {
		bad(r, "clock.perf_minus_monotonic_ns", "'%s' is not a decimal number of 64 bits",
		    s);
		return;
	}
	rd_u64(r, c, "error_ns", "clock.error_ns", 10, &out->clock.error_ns, false);
	out->clock.known = true;
}

static void rd_session(struct rd *r, const json_t *m, struct manifest *out)
{
	json_t *snap = typed(r, m, "snapshot", "snapshot", JSON_OBJECT, "an object", true);

	if (snap) {
		out->snapshot_mode = true;
		rd_u64(r, snap, "size", "snapshot.size", 10, &out->snapshot_size, false);
	}
	RD_EACH(r, m, "snapshots", manifest_add_snapshot(out), rd_snapshot);
	RD_EACH(r, m, "triggers", manifest_add_trigger(out), rd_trigger);
	RD_EACH(r, m, "fires", manifest_add_fire(out), rd_fire, out->nr_triggers);
	RD_EACH(r, m, "marks", manifest_add_mark(out), rd_mark);
	rd_clock(r, m, out);
}

static void rd_all(struct rd *r, const json_t *m, struct manifest *out)
{
	json_t *tool = typed(r, m, "tool", "tool", JSON_OBJECT, "an object", false);
	char *mode = NULL;

	rd_str(r, tool, "version", "tool.version", &out->tool_version, true);
	rd_argv(r, m, "command", "command", &out->command, &out->command_argc, false);
	rd_source(r, m, &out->source);
	rd_target(r, m, out);
	rd_str(r, m, "mode", "mode", &mode, false);
	if (mode && strcmp(mode, "per-cpu") && strcmp(mode, "per-thread") && strcmp(mode, "none"))
		bad(r, "mode", "'%s' is not per-cpu, per-thread or none", mode);
	out->per_thread = mode && !strcmp(mode, "per-thread");
	out->no_trace = mode && !strcmp(mode, "none");
	free(mode);
	rd_str(r, m, "event", "event", &out->event, true);
	rd_str(r, m, "filter", "filter", &out->filter, true);
	rd_machine(r, m, out);
	rd_relpath(r, m, "proc_sideband", "proc_sideband", &out->proc_sideband, true);
	rd_relpath(r, m, "vdso", "vdso", &out->vdso, true);
	rd_relpath(r, m, "sysroot", "sysroot", &out->sysroot, true);
	rd_lists(r, m, out);
	rd_session(r, m, out);
	rd_time(r, m, "start_time", &out->start_time);
	rd_time(r, m, "end_time", &out->end_time);
	rd_str(r, m, "stop_reason", "stop_reason", &out->stop_reason, true);
	rd_bool(r, m, "complete", "complete", &out->complete);
}

/*
 * Count the values of @text without building them: outside strings, each '{'
 * and '[' opens a container, and a value starts at the text's start, after
 * ':' or ',', and after '['. A malformed text is counted loosely; jansson
 * refuses it later. Linear, no allocation.
 */
int manifest_check_bounds(const char *text, size_t len, struct error *e)
{
	size_t objects = 0, values = 0;
	bool in_str = false, expect = true;

	if (len > MANIFEST_MAX_BYTES)
		return err_usage(e, "larger than %u bytes, the most a manifest has: not a "
				 "ptcollect manifest", MANIFEST_MAX_BYTES);
	for (size_t i = 0; i < len; i++) {
		char c = text[i];

		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = false;
			continue;
		}
		if (c == ' ' || c == '\n' || c == '\t' || c == '\r')
			continue;
		if (expect && c != ']' && c != '}')
			values++;
		expect = c == ':' || c == ',' || c == '[';
		if (c == '{' || c == '[')
			objects++;
		else if (c == '"')
			in_str = true;
		if (objects > MANIFEST_MAX_OBJECTS)
			return err_usage(e, "more than %u objects and arrays, the most a manifest "
					 "has: not a ptcollect manifest", MANIFEST_MAX_OBJECTS);
		if (values > MANIFEST_MAX_VALUES)
			return err_usage(e, "more than %u values, the most a manifest has: not a "
					 "ptcollect manifest", MANIFEST_MAX_VALUES);
	}
	return 0;
}

int manifest_parse(const char *text, size_t len, struct manifest *out, struct error *e)
{
	struct rd r = { .e = e };
	json_error_t je;
	json_t *m, *fmt, *ver;
	int ret;

	manifest_init(out);
	ret = manifest_check_bounds(text, len, e);
	if (ret)
		return ret;
	m = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!m)
		return err_usage(e, "not valid JSON: line %d, column %d: %s", je.line, je.column,
				 je.text);
	fmt = json_object_get(m, "format");
	if (!json_is_object(m) || !json_is_string(fmt) ||
	    strcmp(json_string_value(fmt), MANIFEST_FORMAT)) {
		json_decref(m);
		return err_usage(e, "\"format\" is not \"%s\": not a ptcollect manifest",
				 MANIFEST_FORMAT);
	}
	ver = json_object_get(m, "version");
	if (!json_is_integer(ver) || json_integer_value(ver) != MANIFEST_VERSION) {
		if (json_is_integer(ver))
			err_usage(e, "manifest version %" JSON_INTEGER_FORMAT "; this ptcollect "
				  "reads version %d", json_integer_value(ver), MANIFEST_VERSION);
		else
			err_usage(e, "\"version\" is %s, not an integer", ver ? type_name(ver) :
				  "missing");
		err_hint(e, "read it with the ptcollect that recorded it (tool.version says which)");
		json_decref(m);
		return -EINVAL;
	}
	rd_all(&r, m, out);
	json_decref(m);
	if (r.failed) {
		manifest_free(out);
		return e ? e->code : -EINVAL;
	}
	return 0;
}

int manifest_read(int dirfd, const char *dir, struct manifest *m, struct error *e)
{
	size_t len;
	char *text;
	int ret;

	manifest_init(m);
	ret = file_read_all(dirfd, MANIFEST_FILE, MANIFEST_MAX_BYTES, &text, &len, e);
	if (!ret) {
		ret = manifest_parse(text, len, m, e);
		free(text);
		if (ret)
			err_what(e, "%s/%s", dir, MANIFEST_FILE);
		return ret;
	}
	/* file_read_all named the file relative to @dirfd; name it as the user knows it. */
	if (e) {
		char why[sizeof(e->why)];

		snprintf(why, sizeof(why), "%s", strchr(e->why, ':') ? strchr(e->why, ':') + 2 :
			 e->why);
		snprintf(e->why, sizeof(e->why), "%s", why);
		err_what(e, "%s/%s", dir, MANIFEST_FILE);
	}
	return ret;
}

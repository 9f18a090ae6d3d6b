// SPDX-License-Identifier: MIT
/* manifest.json's writer: it walks the schema's tables (manifest_schema.c). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <unistd.h>

#include "fileio.h"
#include "manifest_schema.h"
#include "utf8.h"

#define TMP_PREFIX	".manifest.json."	/* + 8 random letters: a temporary name */
#define TMP_TRIES	64

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
		if (json_array_append_new(a, utf8_json_string(argv[i]))) {
			json_decref(a);
			return NULL;
		}
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

#define AT(type, base, off) ((type *)((char *)(base) + (off)))

static long long int_of(const struct mfield *f, const void *b)
{
	switch (f->type) {
	case MT_INT: return *AT(const int, b, f->off);
	case MT_UINT: return *AT(const unsigned int, b, f->off);
	case MT_U16: return *AT(const uint16_t, b, f->off);
	case MT_U32: return *AT(const uint32_t, b, f->off);
	default: return 0;
	}
}

static json_t *array_json(const struct mschema *s, const void *arr, int n)
{
	json_t *a = json_array();

	for (int i = 0; a && i < n; i++)
		if (json_array_append_new(a, mschema_write(s, (const char *)arr + (size_t)i *
							     s->size))) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* One field's value; NULL on ENOMEM. */
static json_t *field_json(const struct mfield *f, const void *b)
{
	uint64_t u = 0;
	long long v;
	char buf[32];

	if ((f->flags & MF_IF_BOOL) && !*AT(const bool, b, f->cond_off))
		return json_null();
	if ((f->flags & MF_IF_PTR) && !*AT(void *const, b, f->cond_off))
		return json_null();
	switch (f->type) {
	case MT_CONST:
		return json_string(f->cval);
	case MT_CONST_INT:
		return json_integer(*AT(const int, b, f->off));
	case MT_STR: case MT_RELPATH: case MT_ABSPATH: case MT_BUILD_ID:
		return str_or_null(*AT(char *const, b, f->off));
	case MT_INT: case MT_UINT: case MT_U16: case MT_U32:
		v = int_of(f, b);
		if (((f->flags & MF_NULL_ZERO) && !v) || ((f->flags & MF_NULL_NEG) && v < 0))
			return json_null();
		return json_integer(v);
	case MT_U64: case MT_HEX:
		u = *AT(const uint64_t, b, f->off);
		if ((f->flags & MF_NULL_ZERO) && !u)
			return json_null();
		return f->type == MT_HEX ? hex(u) : manifest_u64_json(u);
	case MT_S64:
		snprintf(buf, sizeof(buf), "%" PRId64, *AT(const int64_t, b, f->off));
		return json_string(buf);
	case MT_BOOL:
		return json_boolean(*AT(const bool, b, f->off));
	case MT_ARGV:
		return argv_json(*AT(char **const, b, f->off), *AT(const int, b, f->count_off));
	case MT_PIDS: {
		const pid_t *p = *AT(pid_t *const, b, f->off);
		json_t *a = json_array();

		for (int i = 0; a && i < *AT(const int, b, f->count_off); i++)
			if (json_array_append_new(a, json_integer(p[i]))) {
				json_decref(a);
				return NULL;
			}
		return a;
	}
	case MT_TIME:
		return time_json(AT(const struct timespec, b, f->off));
	case MT_ENUM:
		return json_string(target_kind_name(*AT(const enum target_kind, b, f->off)));
	case MT_MODE:
		return json_string(*AT(const bool, b, f->count_off) ? "none" :
				   *AT(const bool, b, f->off) ? "per-thread" : "per-cpu");
	case MT_DEVICE:
		snprintf(buf, sizeof(buf), "%x:%x", *AT(const unsigned int, b, f->off),
			 *AT(const unsigned int, b, f->count_off));
		return json_string(buf);
	case MT_OBJECT:
		return mschema_write(f->sub, b);
	case MT_ARRAY:
		return array_json(f->sub, *AT(void *const, b, f->off),
				  *AT(const int, b, f->count_off));
	}
	return NULL;
}

json_t *mschema_write(const struct mschema *s, const void *base)
{
	json_t *o = json_object();

	for (size_t i = 0; o && i < s->nr; i++) {
		json_t *v = field_json(&s->fields[i], base);

		/* json_object_set_new takes @v, also when it fails (and v NULL fails). */
		if (json_object_set_new(o, s->fields[i].key, v)) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

json_t *manifest_to_json(const struct manifest *m)
{
	return mschema_write(&mschema_manifest, m);
}

json_t *manifest_stream_to_json(const struct mstream *s)
{
	return mschema_write(&mschema_stream, s);
}

json_t *manifest_snapshot_to_json(const struct msnapshot *s)
{
	return mschema_write(&mschema_snapshot, s);
}

json_t *manifest_trigger_to_json(const struct mtrigger *t)
{
	return mschema_write(&mschema_trigger, t);
}

json_t *manifest_fire_to_json(const struct mfire *f)
{
	return mschema_write(&mschema_fire, f);
}

json_t *manifest_mark_to_json(const struct mmark *k)
{
	return mschema_write(&mschema_mark, k);
}

json_t *manifest_perf_map_to_json(const struct mperfmap *p)
{
	return mschema_write(&mschema_perf_map, p);
}

json_t *manifest_perf_map_refused_to_json(const struct mperfmap_refused *p)
{
	return mschema_write(&mschema_perf_map_refused, p);
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

/* Writes to a file through a buffer; the first error is kept. */
struct wbuf {
	int fd, err;
	size_t n;
	char b[64u << 10];
};

static void wb_flush(struct wbuf *w)
{
	if (!w->err && w->n)
		w->err = write_all(w->fd, w->b, w->n);
	w->n = 0;
}

static void wb_put(struct wbuf *w, const char *p, size_t len)
{
	while (len) {
		size_t k = sizeof(w->b) - w->n < len ? sizeof(w->b) - w->n : len;

		memcpy(w->b + w->n, p, k);
		w->n += k;
		p += k;
		len -= k;
		if (w->n == sizeof(w->b))
			wb_flush(w);
	}
}

/* @text, each line after the first indented by @indent more. */
static void wb_indented(struct wbuf *w, const char *text, const char *indent)
{
	for (const char *nl; (nl = strchr(text, '\n')); text = nl + 1) {
		wb_put(w, text, (size_t)(nl - text) + 1);
		wb_put(w, indent, strlen(indent));
	}
	wb_put(w, text, strlen(text));
}

#define IMAGES_EMPTY "\n  \"images\": []"

/*
 * The manifest's text, as json_dumps(JSON_INDENT(2)) of it all writes it, but its
 * images each dumped alone into their place: the tree of 80,000 images (50 MB) and its
 * text whole (10 MB) are never held. Returns 0 or a negative errno.
 */
static int write_text(struct wbuf *w, const struct manifest *m)
{
	struct manifest head = *m;
	json_t *j;
	char *text, *at;

	head.images = NULL;
	head.nr_images = 0;
	j = manifest_to_json(&head);
	text = j ? json_dumps(j, JSON_INDENT(2)) : NULL;
	json_decref(j);
	if (!text)
		return -ENOMEM;
	/* A member of the top object is the only "images" a newline and two spaces begin. */
	at = m->nr_images ? strstr(text, IMAGES_EMPTY) : NULL;
	if (!at) {
		free(text);
		j = manifest_to_json(m);
		text = j ? json_dumps(j, JSON_INDENT(2)) : NULL;
		json_decref(j);
		if (!text)
			return -ENOMEM;
		wb_put(w, text, strlen(text));
		free(text);
		return 0;
	}
	wb_put(w, text, (size_t)(at - text) + sizeof(IMAGES_EMPTY) - 2);	/* to its '[' */
	for (int i = 0; i < m->nr_images; i++) {
		json_t *x = mschema_write(&mschema_image, &m->images[i]);
		char *s = x ? json_dumps(x, JSON_INDENT(2)) : NULL;

		json_decref(x);
		if (!s) {
			free(text);
			return -ENOMEM;
		}
		wb_put(w, i ? ",\n    " : "\n    ", i ? 6 : 5);
		wb_indented(w, s, "    ");
		free(s);
	}
	wb_put(w, "\n  ]", 4);
	wb_put(w, at + sizeof(IMAGES_EMPTY) - 1, strlen(at + sizeof(IMAGES_EMPTY) - 1));
	free(text);
	return 0;
}

int manifest_write(const struct manifest *m, int dirfd, struct error *e)
{
	char tmp[sizeof(TMP_PREFIX) + 8];
	struct wbuf *w = malloc(sizeof(*w));
	int fd, ret = 0;

	if (!w)
		return err_runtime(e, -ENOMEM, "out of memory");
	/* No planted link is followed, and nobody else may read a trace's description. */
	fd = create_tmp(dirfd, tmp);
	if (fd < 0) {
		free(w);
		return err_runtime(e, fd, "%s: a temporary file for it cannot be created: %s",
				   MANIFEST_FILE, strerror(-fd));
	}
	w->fd = fd;
	w->err = 0;
	w->n = 0;
	ret = write_text(w, m);
	if (!ret) {
		wb_put(w, "\n", 1);
		wb_flush(w);
		ret = w->err;
	}
	free(w);
	if (ret == -ENOMEM) {
		close(fd);
		unlinkat(dirfd, tmp, 0);
		return err_runtime(e, ret, "out of memory");
	}
	if (!ret && fsync(fd))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && renameat(dirfd, tmp, dirfd, MANIFEST_FILE))
		ret = -errno;
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

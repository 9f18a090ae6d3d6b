// SPDX-License-Identifier: MIT
/*
 * An import's streams and their files: a CPU's (or thread's) trace and
 * sideband files, opened on demand with at most MAX_OPEN open at once, the
 * sideband written through a buffer; after the last record, each trace put
 * in AUX buffer order where its buffers came out of order.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bundle.h"
#include "fileio.h"
#include "import_streams.h"

#define MAX_OPEN	64		/* streams with their two files open at once */
#define COPY_BUF	(1u << 20)

/* ---- streams and their files ------------------------------------------ */

static int sb_flush(struct import *im, struct sbfile *f, const char *name, struct error *e)
{
	int ret = f->len ? write_all(f->fd, f->buf, f->len) : 0;

	f->len = 0;
	if (ret)
		return err_runtime(e, ret, "%s/%s: %s", im->o->dir, name, strerror(-ret));
	return 0;
}

int import_sb_write(struct import *im, struct sbfile *f, const char *name, const void *p,
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
int import_stream_open(struct import *im, struct istream *s, struct error *e)
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
struct istream *import_stream_get(struct import *im, int cpu, pid_t tid, uint64_t off,
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
int import_finish_streams(struct import *im, struct error *e)
{
	int ret = 0;

	for (int i = 0; i < im->nr_streams; i++) {
		struct istream *s = im->streams[i];

		/* A stream is both its files, even empty. */
		ret = ret ?: import_stream_open(im, s, e);
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

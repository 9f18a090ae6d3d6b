// SPDX-License-Identifier: MIT
/* Ordered output for parallel decoders: memory, a temporary file, then the output. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dsink.h"
#include "fileio.h"

#define DOUT_BUF (256u << 10)

int dout_init(struct dout *o, int fd, dout_filter_fn *filter, void *state)
{
	memset(o, 0, sizeof(*o));
	o->fd = fd;
	o->filter = filter;
	o->state = state;
	o->cap = DOUT_BUF;
	o->buf = malloc(o->cap);
	return o->buf ? 0 : -ENOMEM;
}

int dout_flush(struct dout *o)
{
	if (o->len && !o->err) {
		int ret = write_all(o->fd, o->buf, o->len);

		if (ret)
			o->err = ret;
	}
	o->len = 0;
	return o->err;
}

void dout_write(struct dout *o, const void *p, size_t len)
{
	if (o->err)
		return;
	if (o->len + len > o->cap) {
		dout_flush(o);
		if (len >= o->cap) {
			int ret = write_all(o->fd, p, len);

			if (ret)
				o->err = ret;
			return;
		}
	}
	memcpy(o->buf + o->len, p, len);
	o->len += len;
}

void dout_destroy(struct dout *o)
{
	free(o->buf);
	o->buf = NULL;
}

/* Bytes that reached their turn: through the output's filter. */
static void pass(struct dout *o, const uint8_t *p, size_t len)
{
	if (!len)
		return;
	if (o->filter)
		o->filter(o, p, len);
	else
		dout_write(o, p, len);
}

void dsink_init(struct dsink *s, struct dout *out)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	s->out = out;
	s->spill = -1;
}

void dsink_destroy(struct dsink *s)
{
	if (s->spill >= 0)
		close(s->spill);
	free(s->buf);
	pthread_mutex_destroy(&s->lock);
	memset(s, 0, sizeof(*s));
	s->spill = -1;
}

uint8_t *dsink_room(struct dsink *s, size_t n)
{
	if (s->len + n > s->cap) {
		size_t cap = s->cap ? s->cap : 64u << 10;
		uint8_t *b;

		while (cap < s->len + n)
			cap *= 2;
		b = realloc(s->buf, cap);
		if (!b)
			return NULL;
		s->buf = b;
		s->cap = cap;
	}
	return s->buf + s->len;
}

void dsink_put(struct dsink *s, const void *p, size_t n)
{
	uint8_t *d = dsink_room(s, n);

	if (!d) {
		s->err = -ENOMEM;
		return;
	}
	memcpy(d, p, n);
	s->len += n;
}

void dsink_truncate(struct dsink *s, uint64_t pos)
{
	if (pos >= s->base && pos - s->base < s->len)
		s->len = (size_t)(pos - s->base);
}

/* Before its turn: into the temporary file, as a frame (length, bytes) of whole records. */
static int spill(struct dsink *s, const uint8_t *p, size_t len)
{
	uint64_t n = len;
	int ret;

	if (s->spill < 0) {
		const char *dir = getenv("TMPDIR");

		s->spill = open(dir && *dir ? dir : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
		if (s->spill < 0)
			return -errno;
	}
	ret = write_all(s->spill, &n, sizeof(n));
	return ret ? ret : write_all(s->spill, p, len);
}

int dsink_flush(struct dsink *s, uint64_t upto)
{
	size_t n;
	int ret = 0;

	if (!s->out || upto <= s->base)
		return s->err;
	n = (size_t)(upto - s->base);
	if (n > s->len)
		n = s->len;
	pthread_mutex_lock(&s->lock);
	if (s->direct) {
		pass(s->out, s->buf, n);
		ret = s->out->err;
	} else {
		ret = spill(s, s->buf, n);
	}
	pthread_mutex_unlock(&s->lock);
	if (ret && !s->err)
		s->err = ret;
	memmove(s->buf, s->buf + n, s->len - n);
	s->len -= n;
	s->base += n;
	return s->err;
}

/* Read the temporary file back frame by frame, into the output. */
static int readback(struct dsink *s)
{
	uint8_t *buf = NULL;
	size_t cap = 0;
	int ret = 0;

	if (lseek(s->spill, 0, SEEK_SET) < 0)
		return -errno;
	for (;;) {
		uint64_t n;
		ssize_t r = read(s->spill, &n, sizeof(n));

		if (!r)
			break;
		if (r != (ssize_t)sizeof(n)) {
			ret = r < 0 ? -errno : -EIO;
			break;
		}
		if (n > cap) {
			uint8_t *b = realloc(buf, (size_t)n);

			if (!b) {
				ret = -ENOMEM;
				break;
			}
			buf = b;
			cap = (size_t)n;
		}
		r = pread(s->spill, buf, (size_t)n, lseek(s->spill, 0, SEEK_CUR));
		if (r != (ssize_t)n || lseek(s->spill, (off_t)n, SEEK_CUR) < 0) {
			ret = r < 0 ? -errno : -EIO;
			break;
		}
		pass(s->out, buf, (size_t)n);
	}
	free(buf);
	close(s->spill);
	s->spill = -1;
	return ret;
}

int dsink_promote(struct dsink *s)
{
	int ret = 0;

	if (!s->out)
		return 0;
	pthread_mutex_lock(&s->lock);
	if (s->spill >= 0)
		ret = readback(s);
	s->direct = true;
	pthread_mutex_unlock(&s->lock);
	if (ret && !s->err)
		s->err = ret;
	return ret ? ret : s->out->err;
}

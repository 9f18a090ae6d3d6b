// SPDX-License-Identifier: MIT
/* perf.data, file mode and pipe mode: header, attrs, features, records; nothing trusted. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfdata.h"
#include "perfdata_features.h"

#define MAGIC		0x32454c4946524550ull	/* "PERFILE2" read as a little-endian u64 */
#define MAGIC_SWAPPED	0x50455246494c4532ull	/* the same written big-endian */
#define MAGIC_V1	0x454c494646524550ull	/* "PERFFILE": perf.data version 1 */
#define PIPE_HEADER	16	/* magic, size */
#define FILE_HEADER	104	/* magic, size, attr_size, attrs, data, event_types, features */
#define FILE_HEADER_OLD	72	/* the same before feature bits existed */
#define FEAT_BITS	256
#define BUF_LEN		PD_PAYLOAD_CHUNK	/* at least the largest record, 64 KiB */
#define SID_BITS	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | \
			 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

struct idmap {
	uint64_t id;
	int attr;
};

struct perfdata {
	char *name;
	int fd;
	bool seekable;		/* a regular file: pread, else read in order */
	bool pipe;		/* pipe-mode layout */
	uint64_t file_size;	/* seekable only */
	uint64_t data_end;	/* file mode: the data section's end; pipe mode: none */
	/* Buffered input: buf[start, end) holds the bytes from input offset pos on. */
	uint8_t *buf;
	size_t start, end;
	uint64_t pos;
	bool eof;
	struct pd_attr *attrs;
	int nr_attrs;
	struct idmap *ids;
	size_t nr_ids;
	bool ids_sorted;
	struct pd_features feat;
};

/* ---- input ------------------------------------------------------------- */

static int input_error(struct perfdata *pd, int err, struct error *e)
{
	return err_runtime(e, err, "%s: %s", pd->name, strerror(-err));
}

/* Read what is there, up to @n bytes at input offset @at (seekable) or next (a pipe). */
static ssize_t input_read(struct perfdata *pd, void *dst, size_t n, uint64_t at)
{
	for (;;) {
		ssize_t r = pd->seekable ? pread(pd->fd, dst, n, (off_t)at) : read(pd->fd, dst, n);

		if (r >= 0 || errno != EINTR)
			return r < 0 ? -errno : r;
	}
}

/* Make @n bytes (at most BUF_LEN) available at buf + start: 0, 1 at the end of input, or -errno. */
static int fill(struct perfdata *pd, size_t n)
{
	while (pd->end - pd->start < n) {
		ssize_t r;

		if (pd->eof)
			return 1;
		if (pd->start) {
			memmove(pd->buf, pd->buf + pd->start, pd->end - pd->start);
			pd->end -= pd->start;
			pd->start = 0;
		}
		r = input_read(pd, pd->buf + pd->end, BUF_LEN - pd->end, pd->pos + pd->end);
		if (r < 0)
			return (int)r;
		if (!r)
			pd->eof = true;
		pd->end += (size_t)r;
	}
	return 0;
}

static void consume(struct perfdata *pd, size_t n)
{
	pd->start += n;
	pd->pos += n;
}

/* Start reading in order at input offset @at (seekable only). */
static void seek_to(struct perfdata *pd, uint64_t at)
{
	pd->start = pd->end = 0;
	pd->pos = at;
	pd->eof = false;
}

/* Exactly @n bytes at @at of a seekable file, which the caller checked are in it. */
static int read_at(struct perfdata *pd, void *dst, size_t n, uint64_t at, struct error *e)
{
	while (n) {
		ssize_t r = input_read(pd, dst, n, at);

		if (r < 0)
			return input_error(pd, (int)r, e);
		if (!r)
			return err_usage(e, "the file ends at offset %" PRIu64 ", before the %zu "
					 "bytes its header places there (it shrank while read?)", at, n);
		dst = (uint8_t *)dst + r;
		n -= (size_t)r;
		at += (uint64_t)r;
	}
	return 0;
}

/* ---- attrs and ids ----------------------------------------------------- */

static int cmp_ids(const void *a, const void *b)
{
	const struct idmap *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* Add an attr (@len bytes of perf_event_attr at @p) with @nr ids at @ids. */
static int add_attr(struct perfdata *pd, const uint8_t *p, size_t len, const uint8_t *ids,
		    uint64_t nr, uint64_t off, struct error *e)
{
	struct pd_attr *a, *na;
	struct idmap *nm;
	uint32_t size;

	if (pd->nr_attrs >= PD_MAX_ATTRS)
		return err_usage(e, "at offset %" PRIu64 ": more than %d attrs (events)", off,
				 PD_MAX_ATTRS);
	if (nr > PD_MAX_IDS - pd->nr_ids)
		return err_usage(e, "at offset %" PRIu64 ": more than %u event ids in all", off,
				 PD_MAX_IDS);
	memcpy(&size, p + 4, sizeof(size));
	if (size < PERF_ATTR_SIZE_VER0 || size > len)
		return err_usage(e, "at offset %" PRIu64 ": the attr says it has %u bytes, but %zu "
				 "are there (at least %d)", off, size, len, PERF_ATTR_SIZE_VER0);
	na = realloc(pd->attrs, ((size_t)pd->nr_attrs + 1) * sizeof(*na));
	if (!na)
		return err_runtime(e, -ENOMEM, "out of memory");
	pd->attrs = na;
	nm = realloc(pd->ids, (pd->nr_ids + nr + 1) * sizeof(*nm));
	if (!nm)
		return err_runtime(e, -ENOMEM, "out of memory");
	pd->ids = nm;
	a = &pd->attrs[pd->nr_attrs];
	memset(a, 0, sizeof(*a));
	memcpy(&a->attr, p, size < sizeof(a->attr) ? size : sizeof(a->attr));
	a->attr.size = size;
	a->ids = calloc(nr + 1, sizeof(uint64_t));
	if (!a->ids)
		return err_runtime(e, -ENOMEM, "out of memory");
	memcpy(a->ids, ids, nr * sizeof(uint64_t));
	a->nr_ids = (uint32_t)nr;
	for (uint64_t i = 0; i < nr; i++)
		pd->ids[pd->nr_ids++] = (struct idmap){ a->ids[i], pd->nr_attrs };
	pd->nr_attrs++;
	pd->ids_sorted = false;
	return 0;
}

static struct pd_attr *attr_of_id(struct perfdata *pd, uint64_t id)
{
	struct idmap key = { .id = id }, *hit;

	if (!pd->ids_sorted && pd->nr_ids) {
		qsort(pd->ids, pd->nr_ids, sizeof(*pd->ids), cmp_ids);
		pd->ids_sorted = true;
	}
	hit = pd->nr_ids ? bsearch(&key, pd->ids, pd->nr_ids, sizeof(key), cmp_ids) : NULL;
	return hit ? &pd->attrs[hit->attr] : NULL;
}

/* File mode: the attr section, each entry an attr and the section of its ids. */
static int read_attrs(struct perfdata *pd, uint64_t attr_size, uint64_t off, uint64_t size,
		      struct error *e)
{
	uint8_t *entry;
	int ret = 0;

	if (attr_size < PERF_ATTR_SIZE_VER0 + 16 || attr_size > 4096)
		return err_usage(e, "at offset 16: attr_size %" PRIu64 " is not the size of an "
				 "attr and its id section (%d to 4096)", attr_size,
				 PERF_ATTR_SIZE_VER0 + 16);
	if (size / attr_size > PD_MAX_ATTRS)
		return err_usage(e, "at offset 32: the attr section holds %" PRIu64 " attrs, more "
				 "than %d", size / attr_size, PD_MAX_ATTRS);
	entry = malloc(attr_size);
	if (!entry)
		return err_runtime(e, -ENOMEM, "out of memory");
	for (uint64_t i = 0; !ret && i < size / attr_size; i++) {
		uint64_t at = off + i * attr_size, sec[2];
		uint8_t *ids = NULL;
		uint32_t asize;

		ret = read_at(pd, entry, attr_size, at, e);
		if (ret)
			break;
		memcpy(&asize, entry + 4, sizeof(asize));
		memcpy(sec, entry + attr_size - 16, sizeof(sec));
		if (asize + 16 != attr_size) {
			ret = err_usage(e, "at offset %" PRIu64 ": attr %" PRIu64 " has size %u, but "
					"the header's attr_size %" PRIu64 " leaves it %" PRIu64, at,
					i, asize, attr_size, attr_size - 16);
			break;
		}
		if (sec[1] % 8 || sec[0] > pd->file_size || sec[1] > pd->file_size - sec[0] ||
		    sec[1] / 8 > PD_MAX_IDS) {
			ret = err_usage(e, "at offset %" PRIu64 ": attr %" PRIu64 "'s ids (%" PRIu64
					" bytes at %" PRIu64 ") are not a list of ids inside the "
					"file (%" PRIu64 " bytes)", at + attr_size - 16, i, sec[1],
					sec[0], pd->file_size);
			break;
		}
		ids = malloc(sec[1] + 1);
		ret = ids ? read_at(pd, ids, sec[1], sec[0], e) :
			    err_runtime(e, -ENOMEM, "out of memory");
		if (!ret)
			ret = add_attr(pd, entry, asize, ids, sec[1] / 8, at, e);
		free(ids);
	}
	free(entry);
	return ret;
}

/* Pipe mode: HEADER_ATTR is an attr and then its ids, to the end of the record. */
static int header_attr(struct perfdata *pd, const struct pd_record *r, struct error *e)
{
	size_t len = r->hdr.size - sizeof(r->hdr);
	const uint8_t *p = r->data + sizeof(r->hdr);
	uint32_t asize;

	if (len < PERF_ATTR_SIZE_VER0)
		return err_usage(e, "at offset %" PRIu64 ": HEADER_ATTR of %u bytes has no room "
				 "for an attr", r->off, r->hdr.size);
	memcpy(&asize, p + 4, sizeof(asize));
	if (asize < PERF_ATTR_SIZE_VER0 || asize > len || (len - asize) % 8)
		return err_usage(e, "at offset %" PRIu64 ": HEADER_ATTR's attr of %u bytes does not "
				 "fit its %zu bytes with whole ids after it", r->off, asize, len);
	return add_attr(pd, p, asize, p + asize, (len - asize) / 8, r->off, e);
}

/* ---- features ---------------------------------------------------------- */





/* Event names, in the order of the attrs. */
static int feat_event_desc(struct perfdata *pd, struct pd_cursor *c, struct error *e)
{
	uint32_t nr, sz, nr_ids;

	if (pd_take(c, &nr, sizeof(nr), e) || pd_take(c, &sz, sizeof(sz), e))
		return -EINVAL;
	for (uint32_t i = 0; i < nr; i++) {
		char *name = NULL;

		if (sz > c->left) {
			return err_usage(e, "at offset %" PRIu64 ": event_desc: an attr of %u bytes "
					 "runs past its section", c->off, sz);
		}
		c->p += sz;
		c->left -= sz;
		c->off += sz;
		if (pd_take(c, &nr_ids, sizeof(nr_ids), e) || pd_take_string(c, &name, e))
			return -EINVAL;
		if (nr_ids > c->left / 8) {
			free(name);
			return err_usage(e, "at offset %" PRIu64 ": event_desc: %u ids cannot fit in "
					 "%zu bytes", c->off, nr_ids, c->left);
		}
		c->p += (size_t)nr_ids * 8;
		c->left -= (size_t)nr_ids * 8;
		c->off += (uint64_t)nr_ids * 8;
		if ((int)i < pd->nr_attrs && !pd->attrs[i].name)
			pd->attrs[i].name = name;
		else
			free(name);
	}
	return 0;
}



/* One feature's contents (@len bytes at input offset @off); the ones not used are passed over. */
static int feature(struct perfdata *pd, int feat, const uint8_t *p, size_t len, uint64_t off,
		   struct error *e)
{
	struct pd_cursor c = { p, len, off, pd_feat_name(feat) };
	struct pd_features *f = &pd->feat;

	switch (feat) {
	case FEAT_HOSTNAME: return pd_take_string(&c, &f->hostname, e);
	case FEAT_OSRELEASE: return pd_take_string(&c, &f->os_release, e);
	case FEAT_VERSION: return pd_take_string(&c, &f->version, e);
	case FEAT_ARCH: return pd_take_string(&c, &f->arch, e);
	case FEAT_CPUDESC: return pd_take_string(&c, &f->cpudesc, e);
	case FEAT_CPUID: return pd_take_string(&c, &f->cpuid, e);
	case FEAT_NRCPUS: return pd_feat_nrcpus(f, &c, e);
	case FEAT_CMDLINE: return pd_feat_cmdline(f, &c, e);
	case FEAT_EVENT_DESC: return feat_event_desc(pd, &c, e);
	case FEAT_BUILD_ID: return pd_feat_build_id(f, &c, e);
	default: return 0;
	}
}


/* File mode: a section table after the data, one entry per feature bit set, in bit order. */
static int read_features(struct perfdata *pd, const uint64_t bits[4], uint64_t table,
			 struct error *e)
{
	int nr = 0, i = 0, ret = 0;

	for (int b = 0; b < FEAT_BITS; b++)
		nr += !!(bits[b / 64] & (1ull << (b % 64)));
	if (table > pd->file_size || (uint64_t)nr * 16 > pd->file_size - table)
		return err_usage(e, "at offset %" PRIu64 ": the table of %d feature sections runs "
				 "past the end of the file (%" PRIu64 " bytes)", table, nr,
				 pd->file_size);
	for (int b = 0; !ret && b < FEAT_BITS; b++) {
		uint64_t sec[2];
		uint8_t *p;

		if (!(bits[b / 64] & (1ull << (b % 64))))
			continue;
		ret = read_at(pd, sec, sizeof(sec), table + 16 * (uint64_t)i++, e);
		if (ret)
			continue;
		/*
		 * Every section inside the file, those not read too: a file cut in
		 * the features perf writes last (CPU_TOPOLOGY and on) was cut short
		 * like any other, and is refused like any other cut.
		 */
		if (sec[0] > pd->file_size || sec[1] > pd->file_size - sec[0])
			return err_usage(e, "at offset %" PRIu64 ": feature %s: %" PRIu64 " bytes at "
					 "%" PRIu64 " run past the end of the file (%" PRIu64 " bytes: "
					 "cut short?)", table + 16 * (uint64_t)(i - 1),
					 pd_feat_name(b) ? pd_feat_name(b) : pd_feat_perf_name(b),
					 sec[1], sec[0], pd->file_size);
		if (!pd_feat_name(b))
			continue;
		if (sec[1] > PD_MAX_FEATURE)
			return err_usage(e, "at offset %" PRIu64 ": feature %s: %" PRIu64 " bytes at "
					 "%" PRIu64 " are more than features are (up to %u bytes)",
					 table + 16 * (uint64_t)(i - 1), pd_feat_name(b), sec[1],
					 sec[0], PD_MAX_FEATURE);
		p = malloc(sec[1] + 1);
		if (!p)
			return err_runtime(e, -ENOMEM, "out of memory");
		ret = read_at(pd, p, sec[1], sec[0], e);
		if (!ret)
			ret = feature(pd, b, p, sec[1], sec[0], e);
		free(p);
	}
	return ret;
}

/* Pipe mode: HEADER_FEATURE is a u64 feature number, then the same contents. */
static int header_feature(struct perfdata *pd, const struct pd_record *r, struct error *e)
{
	uint64_t feat;

	if (r->hdr.size < sizeof(r->hdr) + 8)
		return err_usage(e, "at offset %" PRIu64 ": HEADER_FEATURE of %u bytes has no "
				 "feature number", r->off, r->hdr.size);
	memcpy(&feat, r->data + 8, sizeof(feat));
	if (feat >= FEAT_BITS)
		return 0;
	return feature(pd, (int)feat, r->data + 16, r->hdr.size - 16u, r->off + 16, e);
}

/* Pipe mode: EVENT_UPDATE of type NAME (2) names the event of an id. */
static int event_update(struct perfdata *pd, const struct pd_record *r, struct error *e)
{
	struct pd_attr *a;
	uint64_t v[2];	/* type, id */
	size_t len = r->hdr.size;

	if (len < 24)
		return 0;
	memcpy(v, r->data + 8, sizeof(v));
	if (v[0] != 2 || !(a = attr_of_id(pd, v[1])) || !memchr(r->data + 24, 0, len - 24))
		return 0;
	free(a->name);
	a->name = strdup((const char *)r->data + 24);
	return a->name ? 0 : err_runtime(e, -ENOMEM, "out of memory");
}

/* ---- the header -------------------------------------------------------- */

static int check_magic(uint64_t magic, struct error *e)
{
	if (magic == MAGIC)
		return 0;
	if (magic == MAGIC_SWAPPED)
		return err_usage(e, "at offset 0: a big-endian perf.data; only little-endian "
				 "(x86) recordings are read");
	if (magic == MAGIC_V1)
		return err_usage(e, "at offset 0: perf.data version 1 (PERFFILE), from a perf "
				 "older than 2.6.37; only version 2 (PERFILE2) is read");
	return err_usage(e, "at offset 0: not a perf.data file (no PERFILE2 magic)");
}

/* File mode: sections checked against the file, then attrs and features read. */
static int file_header(struct perfdata *pd, struct error *e)
{
	uint64_t h[13] = { 0 };	/* magic size attr_size attrs(2) data(2) event_types(2) feat(4) */
	size_t len;
	int ret;

	if (!pd->seekable)
		return err_usage(e, "a file-mode perf.data cannot be read from a pipe (its "
				 "features follow its data): give its path, or record with -o -");
	memcpy(h, pd->buf + pd->start, 16);
	len = h[1] == FILE_HEADER_OLD ? FILE_HEADER_OLD : FILE_HEADER;
	if (h[1] != FILE_HEADER && h[1] != FILE_HEADER_OLD)
		return err_usage(e, "at offset 8: header size %" PRIu64 " is neither a pipe-mode "
				 "(16) nor a file-mode (104) header", h[1]);
	if (pd->file_size < len)
		return err_usage(e, "at offset %" PRIu64 ": the file ends inside its %zu-byte "
				 "header (too short)", pd->file_size, len);
	ret = read_at(pd, h, len, 0, e);
	if (ret)
		return ret;
	if (h[5] > pd->file_size || h[6] > pd->file_size - h[5])
		return err_usage(e, "at offset 40: the data section (%" PRIu64 " bytes at %" PRIu64
				 ") runs past the end of the file (%" PRIu64 " bytes: cut short?)",
				 h[6], h[5], pd->file_size);
	if (h[3] > pd->file_size || h[4] > pd->file_size - h[3])
		return err_usage(e, "at offset 24: the attr section (%" PRIu64 " bytes at %" PRIu64
				 ") runs past the end of the file (%" PRIu64 " bytes)", h[4], h[3],
				 pd->file_size);
	ret = read_attrs(pd, h[2], h[3], h[4], e);
	if (!ret && len == FILE_HEADER)
		ret = read_features(pd, h + 9, h[5] + h[6], e);
	pd->data_end = h[5] + h[6];
	seek_to(pd, h[5]);
	return ret;
}

int perfdata_open(struct perfdata **pdp, int fd, const char *name, struct error *e)
{
	struct perfdata *pd = calloc(1, sizeof(*pd));
	uint64_t h[2];
	struct stat st;
	int ret;

	*pdp = NULL;
	if (!pd || !(pd->name = strdup(name)) || !(pd->buf = malloc(BUF_LEN))) {
		perfdata_close(pd);
		return err_runtime(e, -ENOMEM, "out of memory");
	}
	pd->fd = fd;
	pd->feat.nr_cpus_online = pd->feat.nr_cpus_avail = -1;
	if (fstat(fd, &st)) {
		ret = input_error(pd, -errno, e);
		goto fail;
	}
	pd->seekable = S_ISREG(st.st_mode);
	pd->file_size = pd->seekable ? (uint64_t)st.st_size : UINT64_MAX;
	pd->data_end = UINT64_MAX;
	ret = fill(pd, PIPE_HEADER);
	if (ret < 0) {
		ret = input_error(pd, ret, e);
		goto fail;
	}
	if (ret) {
		ret = err_usage(e, "at offset %zu: the input ends inside the 16-byte header of a "
				"perf.data (too short)", pd->end - pd->start);
		goto usage;
	}
	memcpy(h, pd->buf + pd->start, sizeof(h));
	ret = check_magic(h[0], e);
	if (!ret && h[1] == PIPE_HEADER) {
		pd->pipe = true;
		consume(pd, PIPE_HEADER);
	} else if (!ret) {
		ret = file_header(pd, e);
	}
	if (!ret) {
		*pdp = pd;
		return 0;
	}
usage:
	if (e && e->usage)
		err_what(e, "%s", name);
fail:
	perfdata_close(pd);
	return ret;
}


void perfdata_close(struct perfdata *pd)
{
	if (!pd)
		return;
	for (int i = 0; i < pd->nr_attrs; i++) {
		free(pd->attrs[i].ids);
		free(pd->attrs[i].name);
	}
	free(pd->attrs);
	free(pd->ids);
	pd_features_free(&pd->feat);
	free(pd->buf);
	free(pd->name);
	free(pd);
}

/* ---- records ----------------------------------------------------------- */

/* The input ended @have bytes into what starts at @off and needs @need. */
static int cut_short(struct perfdata *pd, const char *what, uint64_t off, uint64_t need,
		     uint64_t have, struct error *e)
{
	return err_usage(e, "at offset %" PRIu64 ": the %s ends after %" PRIu64 " of its %" PRIu64
			 " bytes (the %s was cut short)", off, what, have, need,
			 pd->pipe ? "stream" : "file");
}

static const char *type_name(uint32_t type)
{
	const char *n = sideband_type_name(type);

	return n ? n : "unknown";
}

/* The bytes that follow a record outside its size: AUXTRACE's payload, pipe-mode tracing data. */
static int payload(struct perfdata *pd, const struct perfdata_ops *ops, void *ctx,
		   const struct pd_record *r, uint64_t size, struct error *e)
{
	uint64_t done = 0;

	if (size > pd->data_end - pd->pos)
		return err_usage(e, "at offset %" PRIu64 ": %s says %" PRIu64 " bytes follow it, "
				 "past the end of the data section (%" PRIu64 ")", r->off,
				 type_name(r->hdr.type), size, pd->data_end);
	while (done < size) {
		size_t n = size - done < BUF_LEN ? (size_t)(size - done) : BUF_LEN;
		int ret = fill(pd, n);

		if (ret < 0)
			return input_error(pd, ret, e);
		if (ret)
			return cut_short(pd, r->hdr.type == PD_AUXTRACE ? "AUXTRACE payload" :
					 "tracing data", pd->pos - done, size,
					 done + pd->end - pd->start, e);
		if (r->hdr.type == PD_AUXTRACE && ops->payload &&
		    (ret = ops->payload(ctx, r, pd->buf + pd->start, n, e)))
			return ret;
		consume(pd, n);
		done += n;
	}
	return 0;
}

static int check_record(struct perfdata *pd, const struct pd_record *r, struct error *e)
{
	const struct perf_event_header *h = &r->hdr;

	if (h->type == PD_COMPRESSED || h->type == PD_COMPRESSED2)
		return err_usage(e, "at offset %" PRIu64 ": a COMPRESSED record: this perf.data was "
				 "recorded with -z (zstd); uncompress it first with 'perf inject -i "
				 "FILE -o NEW'", r->off);
	if (h->type == PD_AUXTRACE && h->size < PD_AUXTRACE_LEN)
		return err_usage(e, "at offset %" PRIu64 ": AUXTRACE record of %u bytes, less than "
				 "its %d", r->off, h->size, PD_AUXTRACE_LEN);
	if (h->type == PD_HEADER_ATTR)
		return header_attr(pd, r, e);
	if (h->type == PD_HEADER_FEATURE)
		return header_feature(pd, r, e);
	if (h->type == PD_EVENT_UPDATE)
		return event_update(pd, r, e);
	return 0;
}

/* The next record: 0, 1 at a clean end, or an error. */
static int next_record(struct perfdata *pd, struct pd_record *r, struct error *e)
{
	struct perf_event_header h;
	int ret;

	memset(r, 0, sizeof(*r));
	r->off = pd->pos;
	if (pd->pos == pd->data_end)
		return 1;
	if (pd->data_end - pd->pos < sizeof(h))
		return err_usage(e, "at offset %" PRIu64 ": %" PRIu64 " bytes are left of the data "
				 "section, too few for a record header", pd->pos,
				 pd->data_end - pd->pos);
	ret = fill(pd, sizeof(h));
	if (ret < 0)
		return input_error(pd, ret, e);
	if (ret && pd->end == pd->start && pd->pipe)
		return 1;
	if (ret)
		return cut_short(pd, "record header", pd->pos, sizeof(h), pd->end - pd->start, e);
	memcpy(&h, pd->buf + pd->start, sizeof(h));
	if (h.size < sizeof(h))
		return err_usage(e, "at offset %" PRIu64 ": a %s record (type %u) of size %u, less "
				 "than its 8-byte header", pd->pos, type_name(h.type), h.type, h.size);
	if (!h.type)
		return err_usage(e, "at offset %" PRIu64 ": a record of type 0 (no record has it: "
				 "zeroes, or not a record boundary)", pd->pos);
	if (h.size > pd->data_end - pd->pos)
		return err_usage(e, "at offset %" PRIu64 ": a %s record of %u bytes runs past the "
				 "end of the data section (%" PRIu64 ")", pd->pos, type_name(h.type),
				 h.size, pd->data_end);
	ret = fill(pd, h.size);
	if (ret < 0)
		return input_error(pd, ret, e);
	if (ret)
		return cut_short(pd, type_name(h.type), pd->pos, h.size, pd->end - pd->start, e);
	r->data = pd->buf + pd->start;
	r->hdr = h;
	if (h.type == PD_AUXTRACE && h.size >= PD_AUXTRACE_LEN) {
		memcpy(&r->aux.size, r->data + 8, 8);
		memcpy(&r->aux.offset, r->data + 16, 8);
		memcpy(&r->aux.reference, r->data + 24, 8);
		memcpy(&r->aux.idx, r->data + 32, 4);
		memcpy(&r->aux.tid, r->data + 36, 4);
		memcpy(&r->aux.cpu, r->data + 40, 4);
	}
	return check_record(pd, r, e);
}

/* Bytes that follow record @r: the payload of AUXTRACE, the data of HEADER_TRACING_DATA. */
static uint64_t follows(const struct pd_record *r)
{
	uint32_t size;

	if (r->hdr.type == PD_AUXTRACE)
		return r->aux.size;
	if (r->hdr.type == PD_HEADER_TRACING_DATA && r->hdr.size >= 12) {
		memcpy(&size, r->data + 8, sizeof(size));
		return size;
	}
	return 0;
}

int perfdata_read(struct perfdata *pd, const struct perfdata_ops *ops, void *ctx,
		  struct error *e)
{
	struct pd_record r;
	int ret;

	while (!(ret = next_record(pd, &r, e))) {
		uint64_t more = follows(&r);

		ret = ops->record ? ops->record(ctx, &r, e) : 0;
		if (ret)
			break;
		/* The record's bytes stay in the buffer until here; reading on moves them. */
		consume(pd, r.hdr.size);
		r.data = NULL;
		ret = more ? payload(pd, ops, ctx, &r, more, e) : 0;
		if (ret)
			break;
	}
	if (ret < 0 && e && e->usage)
		err_what(e, "%s", pd->name);
	return ret < 0 ? ret : 0;
}

/* ---- sample_id --------------------------------------------------------- */

static uint64_t trailer_type(const struct pd_attr *a)
{
	return a->attr.sample_id_all ? a->attr.sample_type & SID_BITS : 0;
}

/* Where the id is, counted in u64s from the record's end (perf's is_pos), or 0: nowhere. */
static int id_pos(const struct pd_attr *a)
{
	uint64_t st = trailer_type(a);

	if (st & PERF_SAMPLE_IDENTIFIER)
		return 1;
	if (!(st & PERF_SAMPLE_ID))
		return 0;
	return 1 + !!(st & PERF_SAMPLE_CPU) + !!(st & PERF_SAMPLE_STREAM_ID);
}

/* Which attr wrote @r, when the attrs' trailers differ: by the id at their common place. */
static int find_attr(struct perfdata *pd, const struct pd_record *r,
		     const struct pd_attr **attr, struct error *e)
{
	int pos = id_pos(&pd->attrs[0]);
	uint64_t id;

	for (int i = 1; i < pd->nr_attrs; i++) {
		if (id_pos(&pd->attrs[i]) != pos || !pos)
			return err_usage(e, "at offset %" PRIu64 ": the events' sample_id trailers "
					 "differ (sample_type 0x%llx and 0x%llx) and hold no id at "
					 "one place: which event wrote a record cannot be told",
					 r->off, (unsigned long long)pd->attrs[0].attr.sample_type,
					 (unsigned long long)pd->attrs[i].attr.sample_type);
	}
	if (r->hdr.size < sizeof(r->hdr) + 8 * (size_t)pos)
		return err_usage(e, "at offset %" PRIu64 ": a %s record of %u bytes has no room for "
				 "its sample_id", r->off, type_name(r->hdr.type), r->hdr.size);
	memcpy(&id, r->data + r->hdr.size - 8 * pos, sizeof(id));
	/* Synthesized records have id 0 (perf takes them as the first event's). */
	*attr = id ? attr_of_id(pd, id) : &pd->attrs[0];
	if (!*attr)
		return err_usage(e, "at offset %" PRIu64 ": a %s record names event id %" PRIu64
				 ", which no attr in the header has", r->off,
				 type_name(r->hdr.type), id);
	return 0;
}

static bool uniform_trailers(const struct perfdata *pd)
{
	for (int i = 1; i < pd->nr_attrs; i++)
		if (trailer_type(&pd->attrs[i]) != trailer_type(&pd->attrs[0]))
			return false;
	return true;
}

int perfdata_sample_id(struct perfdata *pd, const struct pd_record *r,
		       const struct pd_attr **attr, struct sb_sample_id *sid, size_t *trailer_len,
		       struct error *e)
{
	const struct pd_attr *a = NULL;
	uint64_t st, id;
	size_t tl;

	if (!pd->nr_attrs)
		return err_usage(e, "at offset %" PRIu64 ": a %s record before any attr (event) is "
				 "known", r->off, type_name(r->hdr.type));
	if (uniform_trailers(pd))
		a = &pd->attrs[0];
	else if (find_attr(pd, r, &a, e))
		return -EINVAL;
	st = trailer_type(a);
	tl = SIDEBAND_TRAILER_LEN(st);
	if (r->hdr.size < sizeof(r->hdr) + tl)
		return err_usage(e, "at offset %" PRIu64 ": a %s record of %u bytes has no room for "
				 "the %zu-byte sample_id of sample_type 0x%llx", r->off,
				 type_name(r->hdr.type), r->hdr.size, tl, (unsigned long long)st);
	sideband_read_trailer(r->data + r->hdr.size - tl, st, sid);
	id = st & PERF_SAMPLE_IDENTIFIER ? sid->identifier : sid->id;
	if (uniform_trailers(pd) && (st & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER))) {
		a = id ? attr_of_id(pd, id) : &pd->attrs[0];
		if (!a)
			return err_usage(e, "at offset %" PRIu64 ": a %s record names event id %"
					 PRIu64 ", which no attr in the header has", r->off,
					 type_name(r->hdr.type), id);
	}
	*attr = a;
	*trailer_len = tl;
	return 0;
}

/* ---- accessors --------------------------------------------------------- */

bool perfdata_pipe_mode(const struct perfdata *pd)
{
	return pd->pipe;
}

const struct pd_features *perfdata_features(const struct perfdata *pd)
{
	return &pd->feat;
}

int perfdata_nr_attrs(const struct perfdata *pd)
{
	return pd->nr_attrs;
}

const struct pd_attr *perfdata_attr(const struct perfdata *pd, int i)
{
	return i >= 0 && i < pd->nr_attrs ? &pd->attrs[i] : NULL;
}

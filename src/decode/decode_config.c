// SPDX-License-Identifier: MIT
/* The decode configuration: what command lines and bundles fill, owned strings. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decode_config.h"

void decode_config_init(struct decode_config *c)
{
	memset(c, 0, sizeof(*c));
	c->mode = DECODE_INSN;
	c->jobs = 0;	/* decode_default_jobs() */
	c->conv.time_mult = 1;
}

void decode_pevent_free(struct dsb_pevent *p)
{
	free(p->sysroot);
	free(p->symfs);
	for (int i = 0; i < 4; i++)
		free(p->vdso[i]);
	memset(p, 0, sizeof(*p));
}

static int dup_or_null(char **dst, const char *src)
{
	*dst = NULL;
	if (src && !(*dst = strdup(src)))
		return -ENOMEM;
	return 0;
}

int decode_pevent_copy(struct dsb_pevent *dst, const struct dsb_pevent *src)
{
	*dst = *src;
	dst->sysroot = NULL;
	dst->symfs = NULL;
	memset(dst->vdso, 0, sizeof(dst->vdso));
	if (dup_or_null(&dst->sysroot, src->sysroot) || dup_or_null(&dst->symfs, src->symfs))
		goto nomem;
	for (int i = 0; i < 4; i++)
		if (dup_or_null(&dst->vdso[i], src->vdso[i]))
			goto nomem;
	return 0;
nomem:
	decode_pevent_free(dst);
	return -ENOMEM;
}

int decode_stream_add_sb(struct decode_stream *s, const char *path, uint64_t from, uint64_t to,
			 bool primary, const struct dsb_pevent *pev)
{
	struct dsb_file *n = realloc(s->sb, (s->nr_sb + 1) * sizeof(*n)), *f;

	if (!n)
		return -ENOMEM;
	s->sb = n;
	f = &n[s->nr_sb];
	memset(f, 0, sizeof(*f));
	f->path = strdup(path);
	if (!f->path || decode_pevent_copy(&f->pev, pev)) {
		free(f->path);
		return -ENOMEM;
	}
	f->from = from;
	f->to = to;
	f->primary = primary;
	s->nr_sb++;
	return 0;
}

static void free_files(struct decode_file *f, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		free(f[i].path);
	free(f);
}

void decode_config_free(struct decode_config *c)
{
	for (size_t s = 0; s < c->nr_streams; s++) {
		struct decode_stream *st = &c->streams[s];

		for (size_t i = 0; i < st->nr_sb; i++) {
			free(st->sb[i].path);
			decode_pevent_free(&st->sb[i].pev);
			dsb_file_release(&st->sb[i]);
		}
		free(st->sb);
		free(st->name);
		free(st->pt);
	}
	free(c->streams);
	free_files(c->files, c->nr_files);
	free_files(c->kcore, c->nr_kcore);
	decode_pevent_free(&c->conv);
	free(c->sysroot);
	free(c->perfmap_dir);
	memset(c, 0, sizeof(*c));
}

int decode_config_set_sysroot(struct decode_config *c, const char *dir)
{
	free(c->sysroot);
	if (dup_or_null(&c->sysroot, dir))
		return -ENOMEM;
	for (size_t s = 0; s < c->nr_streams; s++)
		for (size_t i = 0; i < c->streams[s].nr_sb; i++) {
			struct dsb_pevent *p = &c->streams[s].sb[i].pev;

			free(p->symfs);
			if (dup_or_null(&p->symfs, dir))
				return -ENOMEM;
		}
	return 0;
}

// SPDX-License-Identifier: MIT
/* A recording's state: its warnings, its stop, its clock and totals, its manifest kept in step. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <time.h>

#include "session_state.h"

void session_warn(struct session *s, int code, const char *fmt, ...)
{
	struct error e = { 0 };
	va_list ap;

	va_start(ap, fmt);
	err_vset(&e, code, false, fmt, ap);
	va_end(ap);
	if (s->ops && s->ops->warn)
		s->ops->warn(s->ops->arg, &e);
}

void session_stop(struct session *s, const char *why)
{
	if (s->stop)
		return;
	s->stop = true;
	s->res->stop_reason = why;
}

double session_elapsed(const struct session *s)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - s->t0.tv_sec) + (double)(t.tv_nsec - s->t0.tv_nsec) / 1e9;
}

void session_totals(const struct session *s, uint64_t *bytes, uint64_t *losses)
{
	*bytes = *losses = 0;
	for (int i = 0; i < s->nr_streams; i++) {
		const struct auxring_stats *a = &s->streams[i].ring.stats;

		*bytes += a->aux_bytes;
		*losses += a->truncated + a->partial + a->collision + a->lost;
	}
}

int session_sync_manifest(struct session *s, struct error *e)
{
	struct mstream *ms;

	for (int i = 0; i < s->m.nr_streams; i++) {
		free(s->m.streams[i].file);
		free(s->m.streams[i].sideband);
	}
	s->m.nr_streams = 0;
	for (int i = 0; i < s->nr_streams; i++) {
		ms = manifest_add_stream(&s->m);
		if (!ms || bundle_describe_stream(&s->streams[i], ms))
			return err_runtime(e, -ENOMEM, "out of memory");
		/* In snapshot mode a stream's bytes are in its snapshots' windows. */
		if (s->p->opts.script.snapshot && manifest_set(&ms->file, NULL))
			return err_runtime(e, -ENOMEM, "out of memory");
	}
	if (s->steer)
		steer_sync(s->steer);
	return bundle_write_manifest(s->bundle, &s->m, e);
}

// SPDX-License-Identifier: MIT
/* A stream's names and its counts as the manifest holds them. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "stream.h"

void stream_init(struct stream *s, int cpu, pid_t tid)
{
	memset(s, 0, sizeof(*s));
	s->cpu = cpu;
	s->tid = tid;
	s->trace_fd = s->sb_fd = s->ring_fd = -1;
	stream_name(s);
}

void stream_name(struct stream *s)
{
	if (s->cpu >= 0)
		snprintf(s->trace, sizeof(s->trace), "cpu%d.pt", s->cpu);
	else
		snprintf(s->trace, sizeof(s->trace), "tid%d.pt", (int)s->tid);
	snprintf(s->sideband, sizeof(s->sideband), "%.*s.pevent",
		 (int)strlen(s->trace) - 3, s->trace);
}

int stream_describe(const struct stream *s, struct mstream *m)
{
	const struct auxring_stats *st = &s->ring.stats;

	if (manifest_set(&m->file, s->trace) || manifest_set(&m->sideband, s->sideband))
		return -ENOMEM;
	m->cpu = s->cpu;
	m->tid = s->tid;
	m->bytes = st->aux_bytes;
	m->sideband_bytes = st->sideband_bytes;
	m->lost.truncated = st->truncated;
	m->lost.lost = st->lost;
	m->lost.lost_records = st->lost_events;
	m->lost.partial = st->partial;
	m->lost.collision = st->collision;
	m->lost.sideband_full = st->data_full;
	m->restarts = st->restarts;
	m->itrace_start = st->itrace_start;
	return 0;
}

// SPDX-License-Identifier: MIT
/* A stream: its ring, its events and the names of its files. */
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

bool stream_unreported(const struct stream *s, uint64_t *n)
{
	uint64_t said = s->ring.stats.lost_events;

	*n = s->lost_counted && s->lost_kernel > said ? s->lost_kernel - said : 0;
	return s->lost_counted;
}

// SPDX-License-Identifier: MIT
/* Numbered snapshots: stop every stream, write each window, start them again. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "events.h"
#include "monotime.h"
#include "snapshot.h"

/* The entry of snapshot @sn->number, made before any window is written. */
static struct msnapshot *entry(const struct snapshots *sn, const struct snapshot_cause *why,
			       struct manifest *m)
{
	struct msnapshot *s = manifest_add_snapshot(m);
	char dir[32];

	if (!s)
		return NULL;
	snprintf(dir, sizeof(dir), SNAPSHOT_DIR_FMT, sn->number);
	s->number = sn->number;
	s->trigger = why->trigger;
	s->time_ns = sn->freeze_ns;
	s->perf_time = manifest_perf_time(m, sn->freeze_ns);
	if (manifest_set(&s->dir, dir) || manifest_set(&s->cause, why->what))
		return NULL;
	return s;
}

/* One stream's window to DIR/<stream>.pt. */
static int write_window(const struct snapshots *sn, struct bundle *b, struct stream *st,
			struct msnapshot *s, struct error *e)
{
	struct mwindow *w = manifest_add_window(s);
	struct auxring_window aw;
	char name[64];
	int fd, ret;

	if (!w)
		return err_runtime(e, -ENOMEM, "out of memory");
	snprintf(name, sizeof(name), "%s/%s", s->dir, st->trace);
	w->cpu = st->cpu;
	w->tid = st->tid;
	if (manifest_set(&w->file, name))
		return err_runtime(e, -ENOMEM, "out of memory");
	fd = bundle_create_file(b, name, e);
	if (fd < 0)
		return fd;
	ret = auxring_snapshot(&st->ring, fd, sn->size, &aw);
	if (close(fd) && !ret)
		ret = -errno;
	w->bytes = aw.bytes;
	w->aux_head = aw.head;
	w->wrapped = aw.wrapped;
	if (ret)
		return err_runtime(e, ret, "writing %s/%s: %s", bundle_path(b), name,
				   strerror(-ret));
	return 0;
}

/* The stream that traces where the trigger fired, or -1. */
static int fire_stream(const struct stream *streams, int n, const struct snapshot_cause *why)
{
	for (int i = 0; i < n; i++)
		if ((why->cpu >= 0 && streams[i].cpu == why->cpu) ||
		    (why->tid > 0 && streams[i].tid == why->tid))
			return i;
	return -1;
}

int snapshot_take(struct snapshots *sn, struct bundle *b, struct stream *streams, int n,
		  const struct snapshot_cause *why, bool resume, struct manifest *m,
		  struct error *e)
{
	int first = fire_stream(streams, n, why), ret = 0;
	struct msnapshot *s;

	/* The freeze: intel_pt publishes its head only when the event stops. */
	if (first >= 0)
		events_disable(&streams[first]);
	for (int i = 0; i < n; i++)
		if (i != first)
			events_disable(&streams[i]);
	sn->freeze_ns = monotime_ns();
	sn->number++;
	s = entry(sn, why, m);
	if (!s)
		ret = err_runtime(e, -ENOMEM, "out of memory");
	if (!ret)
		ret = bundle_mkdir(b, s->dir, e);
	for (int i = 0; !ret && i < n; i++)
		ret = write_window(sn, b, &streams[i], s, e);
	if (resume)
		for (int i = 0; i < n; i++)
			events_enable(&streams[i]);
	return ret;
}

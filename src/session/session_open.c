// SPDX-License-Identifier: MIT
/*
 * A recording's events opened, and their rings and files: on every CPU for
 * the target's threads (found again on a rescan for -p), or one stream per
 * thread; a thread that exited meanwhile is no error.
 */
#include <errno.h>
#include <stdlib.h>

#include "procfs.h"
#include "session_open.h"

#define RESCANS		8	/* passes over /proc for threads a -p target starts meanwhile */

/* ---- events ----------------------------------------------------------- */

static int target_gone(struct error *e)
{
	return err_runtime(e, -ESRCH, "every thread of the target exited before tracing began");
}

static bool has_tid(const struct session *s, pid_t tid)
{
	for (int i = 0; i < s->nr_tids; i++)
		if (s->tids[i] == tid)
			return true;
	return false;
}

/*
 * Open the events of thread @tid on every CPU stream. A thread that exited
 * meanwhile is no error: it is simply not traced. A thread @found_later, on a
 * rescan, may have been started by a traced thread since: it then inherited
 * its events already, and intel_pt (an exclusive PMU) refuses a second one on
 * the same CPU with EBUSY.
 */
static int open_thread(struct session *s, pid_t tid, bool found_later, struct error *e)
{
	pid_t *n;
	int ret;

	for (int c = 0; c < s->nr_streams; c++) {
		ret = events_open(&s->ev, &s->streams[c], tid, s->streams[c].cpu, e);
		if (ret == -ESRCH) {
			err_clear(e);	/* a refusal that is no failure leaves no words behind */
			return 0;
		}
		if (ret == -EBUSY && found_later && c == 0) {
			err_clear(e);
			break;	/* traced through its inherited events */
		}
		if (ret)
			return ret;
	}
	n = realloc(s->tids, ((size_t)s->nr_tids + 1) * sizeof(*n));
	if (!n)
		return err_runtime(e, -ENOMEM, "out of memory");
	s->tids = n;
	s->tids[s->nr_tids++] = tid;
	return 0;
}

/* -p: threads started between the plan and now are found by scanning again. */
static int open_new_threads(struct session *s, struct error *e)
{
	const struct record_opts *o = &s->p->opts;

	for (int pass = 0; pass < RESCANS; pass++) {
		bool found = false;

		for (int i = 0; i < o->nr_pids; i++) {
			pid_t *tids;
			int nr, ret = procfs_tasks(o->pids[i], &tids, &nr);

			for (int j = 0; !ret && j < nr; j++) {
				char st;

				if (has_tid(s, tids[j]))
					continue;
				/* A zombie (the plan left it out and said so) has no events. */
				st = procfs_state(tids[j]);
				if (st == 'Z' || st == 'X')
					continue;
				found = true;
				ret = open_thread(s, tids[j], true, e);
			}
			if (ret != -ESRCH)
				free(tids);
			if (ret && ret != -ESRCH)
				return ret;
		}
		if (!found)
			break;
	}
	return 0;
}

static int open_per_cpu(struct session *s, struct error *e)
{
	const struct plan *p = s->p;
	int ret = 0;

	if (p->target == TARGET_CPU) {
		for (int c = 0; !ret && c < s->nr_streams; c++)
			ret = events_open(&s->ev, &s->streams[c], -1, s->streams[c].cpu, e);
		return ret;
	}
	if (p->target == TARGET_COMMAND)
		return open_thread(s, s->w.pid, false, e);
	for (int i = 0; !ret && i < p->nr_tids; i++)
		ret = open_thread(s, p->tids[i], false, e);
	if (!ret && p->target == TARGET_PID)
		ret = open_new_threads(s, e);
	if (!ret && !s->nr_tids)
		ret = target_gone(e);
	return ret;
}

/* Per-thread mode: a stream whose thread exited meanwhile is dropped. */
static int open_per_thread(struct session *s, struct error *e)
{
	int kept = 0, ret;

	for (int i = 0; i < s->nr_streams; i++) {
		struct stream *st = &s->streams[i];

		if (st->tid == 0) {	/* the workload's own stream */
			st->tid = s->w.pid;
			stream_name(st);
		}
		ret = events_open(&s->ev, st, st->tid, -1, e);
		if (ret == -ESRCH) {
			err_clear(e);
			session_warn(s, ret, "thread %d exited before tracing began: it is not "
				     "traced", (int)st->tid);
			events_close(st);
			continue;
		}
		if (ret)
			return ret;
		s->streams[kept++] = *st;
	}
	s->nr_streams = kept;
	if (!kept)
		return target_gone(e);
	return 0;
}

/* The streams' events, rings and files: the sideband alone in snapshot mode. */
int session_open_streams(struct session *s, struct error *e)
{
	const struct plan *p = s->p;
	int ret;

	ret = p->per_thread ? open_per_thread(s, e) : open_per_cpu(s, e);
	for (int i = 0; !ret && i < s->nr_streams; i++)
		ret = events_map(&s->ev, &s->streams[i], e);
	if (!ret)
		ret = bundle_create(&s->bundle, p->opts.output, p->output == PLAN_OUTPUT_REPLACE,
				    e);
	for (int i = 0; !ret && i < s->nr_streams; i++) {
		struct stream *st = &s->streams[i];

		if (!p->opts.script.snapshot) {
			ret = bundle_open_stream(s->bundle, st, e);
			continue;
		}
		st->sb_fd = bundle_create_file(s->bundle, st->sideband, e);
		ret = st->sb_fd < 0 ? st->sb_fd : 0;
	}
	return ret;
}

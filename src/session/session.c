// SPDX-License-Identifier: MIT
/*
 * A recording set up and run. Events are opened disabled (session_open); a
 * workload is forked and held before exec so its events exist before its
 * first instruction (enable on exec, as perf does); running targets are
 * enabled once every ring is mapped. One poll loop (session_loop) serves
 * every ring, the signals and the timers; session_end ends it all.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bundle.h"
#include "events.h"
#include "freeze.h"
#include "kimage.h"
#include "privs.h"
#include "session.h"
#include "session_end.h"
#include "session_loop.h"
#include "session_open.h"
#include "session_state.h"
#include "snapshot.h"
#include "steer.h"
#include "vdso.h"
#include "workload.h"

#define SNAPSHOTS_UNTRIGGERED 64	/* room kept for snapshots by signal and control */

/* ---- the bundle's files ------------------------------------------------ */

/* What decoders need besides the streams; a failure costs decoding, not the trace. */
/* A saved file's close is its last write: a failure there is the save's failure. */
static int close_saved(int fd, int ret, struct error *e)
{
	if (fd >= 0 && close(fd) && !ret)
		ret = err_runtime(e, -errno, "%s", strerror(errno));
	return ret;
}

static void save_vdso(struct session *s)
{
	struct error e = { 0 };
	int fd, ret;

	ret = bundle_mkdir(s->bundle, BUNDLE_SYSROOT, &e);
	fd = ret ? ret : bundle_create_file(s->bundle, BUNDLE_VDSO, &e);
	ret = close_saved(fd, fd < 0 ? fd : vdso_save(fd, &e), &e);
	if (ret)
		session_warn(s, ret, "the vdso is not saved (%s); decoders will miss its code",
			     e.why);
	else if (manifest_set(&s->m.vdso, BUNDLE_VDSO))
		session_warn(s, -ENOMEM, "out of memory");
}

static void save_kernel(struct session *s)
{
	struct error e = { 0 };
	struct kimage k;
	int fd, ret;

	fd = bundle_create_file(s->bundle, BUNDLE_KALLSYMS, &e);
	ret = close_saved(fd, fd < 0 ? fd : kimage_save_kallsyms("/proc/kallsyms", fd, &k, &e),
			  &e);
	if (ret) {
		session_warn(s, ret, "%s; kernel addresses cannot be decoded", e.why);
		return;
	}
	s->m.kernel.start = k.start;
	if (manifest_set(&s->m.kernel.kallsyms, BUNDLE_KALLSYMS)) {
		session_warn(s, -ENOMEM, "out of memory: the manifest does not name %s",
			     BUNDLE_KALLSYMS);
		return;
	}
	if (!s->p->opts.kcore)
		return;
	fd = bundle_create_file(s->bundle, BUNDLE_KCORE, &e);
	ret = close_saved(fd, fd < 0 ? fd : kimage_save_text("/proc/kcore", fd, &k, &e), &e);
	if (ret) {
		session_warn(s, ret, "%s", e.why);
		return;
	}
	s->m.kernel.kcore_base = k.text_start;
	if (manifest_set(&s->m.kernel.kcore, BUNDLE_KCORE))
		session_warn(s, -ENOMEM, "out of memory: the manifest does not name %s",
			     BUNDLE_KCORE);
}

/* ---- setup and run ------------------------------------------------------ */

/*
 * The room the last manifest needs at most (manifest_size_bound): the fires
 * the triggers' limits allow (MANIFEST_MAX_FIRES without one), and in
 * snapshot mode a snapshot per fire and SNAPSHOTS_UNTRIGGERED more.
 */
static size_t last_manifest_room(const struct session *s)
{
	uint64_t fires = 0, snaps;

	for (int i = 0; i < s->m.nr_triggers; i++)
		fires += s->m.triggers[i].limit ? s->m.triggers[i].limit : MANIFEST_MAX_FIRES;
	if (fires > MANIFEST_MAX_FIRES)
		fires = MANIFEST_MAX_FIRES;
	snaps = s->p->opts.script.snapshot ? fires + SNAPSHOTS_UNTRIGGERED : 0;
	return manifest_size_bound(&s->m, fires, snaps);
}

static int reserve(struct session *s, struct error *e)
{
	size_t room = last_manifest_room(s);

	return room ? bundle_reserve(s->bundle, room, e) : err_runtime(e, -ENOMEM,
								    "out of memory");
}

static void note_time_conv(struct session *s)
{
	const struct perf_event_mmap_page *pc;

	if (!s->nr_streams)
		return;
	pc = auxring_ctrl(&s->streams[0].ring);
	/* perf's rule: the fields mean something only with cap_user_time_zero. */
	s->m.time_conv.cap_user_time_zero = pc->cap_user_time_zero;
	s->m.time_conv.time_zero = pc->time_zero;
	s->m.time_conv.time_mult = pc->time_mult;
	s->m.time_conv.time_shift = pc->time_shift;
}

/* Per-CPU snapshot mode where every trigger takes a snapshot: early freezes pay. */
static bool freezes(const struct plan *p)
{
	if (!p->opts.script.snapshot || p->per_thread || !p->script.nr_specs)
		return false;
	for (int i = 0; i < p->script.nr_specs; i++)
		if (p->script.specs[i].action != TRIGGER_ACT_SNAPSHOT)
			return false;
	return true;
}

/*
 * Tracing begins: running targets' events are enabled now (a workload's at
 * its exec), unless a trigger is to start them; the triggers are armed
 * before that, a workload's while it is held after its exec; then the
 * script hears that it is live.
 */
static int begin(struct session *s, struct error *e)
{
	const struct plan *p = s->p;
	int ret;

	s->tracing = !p->script.start_off && !p->opts.script.no_trace;
	if (p->target != TARGET_COMMAND || p->script.scope != SCOPE_WORKLOAD) {
		ret = steer_arm(s->steer, -1, e);
		if (ret)
			return ret;
	}
	if (p->target != TARGET_COMMAND && s->tracing)
		for (int i = 0; i < s->nr_streams; i++)
			events_enable(&s->streams[i]);
	if (p->opts.command) {
		ret = workload_release(&s->w, p->opts.command[0], e);
		if (!ret && p->script.scope == SCOPE_WORKLOAD)
			ret = steer_arm(s->steer, s->w.pid, e);
		if (!ret)
			ret = workload_run(&s->w, p->script.guard, e);
		if (ret)
			return ret;
	}
	s->res->began = true;
	if (freezes(p) && freeze_start(&s->fz, s->streams, s->nr_streams,
				       steer_trigger_fd(s->steer), e))
		session_warn(s, e->code, "%s; snapshots come a little later after a fire", e->why);
	err_clear(e);
	if (bundle_begun(s->bundle, e))
		session_warn(s, e->code, "%s", e->why);
	err_clear(e);
	if (steer_ready(s->steer, e))
		session_warn(s, e->code, "%s", e->why);
	err_clear(e);
	return 0;
}

/*
 * -p with breakpoint triggers: every thread of the process becomes our
 * tracee before they are armed, so that a stray debug trap is kept from it.
 * When ptrace refuses (traced already, ptrace_scope, permission), the
 * breakpoints are armed as uprobes instead, and the manifest says so.
 */
static int guard_process(struct session *s, struct error *e)
{
	char why[sizeof(s->p->script.fallback)] = "";
	int ret = exechold_group_seize(&s->pg, s->p->script.pid, why, sizeof(why), e);

	if (!ret) {
		if (s->ops && s->ops->note) {
			snprintf(why, sizeof(why), "breakpoint triggers: every thread of process %d "
				 "is ptcollect's tracee until the end (stray debug traps are kept "
				 "from it)", (int)s->p->script.pid);
			s->ops->note(s->ops->arg, why);
		}
		return 0;
	}
	if (ret != -EPERM || !why[0])
		return ret;
	err_clear(e);
	s->script = malloc(sizeof(*s->script));
	if (!s->script)
		return err_runtime(e, -ENOMEM, "out of memory");
	/* A shallow copy: the specs' strings stay the plan's. */
	*s->script = s->p->script;
	script_fall_back(s->script, why);
	s->sp = s->script;
	for (int i = 0; i < s->sp->nr_specs && i < s->m.nr_triggers; i++) {
		struct mtrigger *t = &s->m.triggers[i];

		if (!s->sp->specs[i].fallback)
			continue;
		if (manifest_set(&t->kind, "uprobe") || manifest_set(&t->guard, "uprobe") ||
		    manifest_set(&t->fallback, why))
			return err_runtime(e, -ENOMEM, "out of memory");
	}
	session_warn(s, -EPERM, "%s: breakpoint trigger(s) armed as uprobes instead, which make no "
		     "debug traps", why);
	return 0;
}

static int run(struct session *s, struct error *e)
{
	const struct plan *p = s->p;
	struct steer_ops ops = session_steer_ops(s);
	int ret = 0;

	if (p->script.scope == SCOPE_PROCESS && p->script.guard)
		ret = guard_process(s, e);
	if (!ret)
		ret = steer_open(&s->steer, s->sp, &ops, &s->m, e);
	if (!ret && p->opts.command)
		ret = workload_start(&s->w, p->exec_path, p->opts.command, &s->old_mask,
				     p->script.scope == SCOPE_WORKLOAD,
				     p->opts.user ? &p->user : NULL, e);
	if (!ret)
		ret = session_open_streams(s, e);
	if (ret)
		return ret;
	s->snaps.size = p->script.snapshot_size;
	clock_gettime(CLOCK_MONOTONIC, &s->t0);
	clock_gettime(CLOCK_REALTIME, &s->m.start_time);
	note_time_conv(s);
	if (!p->opts.script.no_trace) {
		save_vdso(s);
		if (!p->attr.exclude_kernel)
			save_kernel(s);
	}
	ret = session_sync_manifest(s, e);
	/* A disk without room for the last manifest is refused before tracing. */
	if (!ret)
		ret = reserve(s, e);
	if (!ret)
		ret = begin(s, e);
	if (ret)
		return ret;
	/* What was running before us: after enabling, so nothing falls between. */
	if (p->target != TARGET_COMMAND && !p->opts.script.no_trace)
		session_synthesize_running(s);
	ret = session_loop(s, e);
	session_end(s);
	if (!ret && s->write_err.code) {
		*e = s->write_err;
		ret = e->code;
	}
	return ret;
}

int session_run(const struct plan *p, const struct session_ops *ops,
		struct session_result *res, struct error *e)
{
	struct session s = {
		.p = p, .sp = &p->script, .ops = ops, .res = res, .proc_fd = -1, .sig_fd = -1, .timer_fd = -1,
		.w = { .go_fd = -1, .exec_err_fd = -1 },
	};
	int ret;

	plan_events(p, &s.ev);
	memset(res, 0, sizeof(*res));
	manifest_init(&s.m);
	s.streams = calloc((size_t)p->nr_streams + 1, sizeof(*s.streams));
	if (!s.streams || plan_describe(p, &s.m)) {
		ret = err_runtime(e, -ENOMEM, "out of memory");
		goto out;
	}
	if (p->nr_streams)
		memcpy(s.streams, p->streams, (size_t)p->nr_streams * sizeof(*s.streams));
	s.nr_streams = p->nr_streams;
	/* The plan checked the hard limit; a soft one below the need is raised to it. */
	ret = privs_raise_nofile(p->fd_need);
	if (ret)
		session_warn(&s, ret, "RLIMIT_NOFILE cannot be raised: %s", strerror(-ret));
	ret = session_setup_signals(&s, e);
	if (!ret)
		ret = run(&s, e);
	if (s.bundle && res->began)
		ret = session_finish(&s, ret, e);
	else if (s.bundle)
		bundle_discard(s.bundle);
	session_totals(&s, &res->bytes, &res->losses);
	res->seconds = res->began ? session_elapsed(&s) : 0;
	res->workload_ran = s.w.ran;
	res->workload_status = s.w.status;
out:
	workload_kill(&s.w);
	workload_close(&s.w);
	for (int i = 0; i < s.nr_streams; i++) {
		events_close(&s.streams[i]);
		if (s.bundle)
			bundle_close_stream(s.bundle, &s.streams[i], NULL);
	}
	res->streams = s.streams;
	res->nr_streams = s.nr_streams;
	if (s.proc_fd >= 0)
		close(s.proc_fd);
	bundle_free(s.bundle);
	free(s.tids);
	steer_close(s.steer);
	session_release_process(&s);
	free(s.script);
	/* The caller reports from it (record --json). */
	res->manifest = s.m;
	if (s.sig_fd >= 0)
		close(s.sig_fd);
	if (s.timer_fd >= 0)
		close(s.timer_fd);
	return ret;
}

void session_result_free(struct session_result *res)
{
	manifest_free(&res->manifest);
	free(res->streams);
	res->streams = NULL;
	res->nr_streams = 0;
}

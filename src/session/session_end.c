// SPDX-License-Identifier: MIT
/*
 * A recording's ending: the last snapshot, the hardware stopped and its last
 * bytes taken, the workload ended, the -p process let go, and the bundle's
 * last manifest written.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "images.h"
#include "perfmaps.h"
#include "session_end.h"
#include "session_loop.h"

#define GRACE_SECONDS	5	/* a workload gets this long between SIGTERM and SIGKILL */

/*
 * The workload outlives a stop by a limit: it is ours to end. SIGTERM, then
 * SIGKILL after a grace period, or at once on another stop signal.
 */
static void end_workload(struct session *s)
{
	struct timespec t0, t;
	bool again = false;

	if (s->w.pid <= 0)
		return;
	if (!s->child_signalled)
		workload_signal(&s->w, SIGTERM);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!workload_reap(&s->w)) {
		struct pollfd pf = { .fd = s->sig_fd, .events = POLLIN };
		struct signalfd_siginfo si;

		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec >= GRACE_SECONDS)
			break;
		if (poll(&pf, 1, 100) > 0)
			while (read(s->sig_fd, &si, sizeof(si)) == sizeof(si))
				again |= si.ssi_signo != SIGCHLD;
		if (again)
			break;
	}
	/* Which way the grace ended: a slow end is not told from a second stop signal else. */
	if (s->w.pid > 0 && again) {
		session_warn(s, -EINTR, "the workload (pid %d) had not ended since SIGTERM when "
			     "another stop signal came: it was killed", (int)s->w.pid);
		workload_kill(&s->w);
	} else if (s->w.pid > 0) {
		session_warn(s, -ETIMEDOUT, "the workload (pid %d) did not end within %d s of "
			     "SIGTERM: it was killed", (int)s->w.pid, GRACE_SECONDS);
		workload_kill(&s->w);
	}
}

static bool uprobes(const struct script_plan *sp)
{
	for (int i = 0; i < sp->nr_specs; i++)
		if (sp->specs[i].kind == TRIGGER_UPROBE)
			return true;
	return false;
}

static const char *target_name(const struct session *s, char *buf, size_t len)
{
	if (s->sp->scope == SCOPE_PROCESS)
		snprintf(buf, len, "process %d", (int)s->sp->pid);
	else
		snprintf(buf, len, "the workload");
	return buf;
}

/* One SIGTRAP as the guard saw it: what tells ours from the program's. */
static const char *trap_text(const struct exechold_trap *tr, char *buf, size_t len)
{
	char code[16];

	if (tr->si_code == EXECHOLD_NO_SIGINFO)
		snprintf(code, sizeof(code), "unknown");
	else
		snprintf(code, sizeof(code), "%d", tr->si_code);
	snprintf(buf, len, "si_code %s, si_addr 0x%" PRIx64 ", ip 0x%" PRIx64 ", TF %d, byte "
		 "before ip %s%02x, ptrace DR6 0x%" PRIx64 ", thread %d on CPU %d", code,
		 tr->fault_addr, tr->ip, tr->tf, tr->prev_byte < 0 ? "unread " : "0x",
		 tr->prev_byte < 0 ? 0 : tr->prev_byte, tr->dr6, (int)tr->tid, tr->cpu);
	return buf;
}

int session_finish(struct session *s, int ret, struct error *e)
{
	const struct exechold_traps *t = &s->w.traps;
	char who[64], last[MANIFEST_TRAP_TEXT];
	struct warnings iw = { 0 };
	struct error fe = { 0 };

	if (s->p->script.scope == SCOPE_WORKLOAD || s->p->script.scope == SCOPE_PROCESS) {
		uint64_t missed;
		int follows = steer_children(s->steer, &missed);

		if (!follows && uprobes(s->sp))
			session_warn(s, -EOPNOTSUPP, "uprobe triggers counted the traced process "
				     "only, not its children: following them needs the kernel's "
				     "BTF (/sys/kernel/btf/vmlinux)");
		if (missed)
			session_warn(s, -E2BIG, "uprobe triggers missed %" PRIu64 " child "
				     "process(es) of the traced one: the BPF map of followed "
				     "processes was full", missed);
	}
	if (t->swallowed)
		session_warn(s, -EINTR, "the kernel sent %s %" PRIu64 " debug trap(s) of our "
			     "breakpoints that no perf event claimed (the last: %s): kept from it, "
			     "which would have died of them", target_name(s, who, sizeof(who)),
			     t->swallowed, trap_text(&t->last_swallowed, last, sizeof(last)));
	if (t->passed)
		session_warn(s, -EINTR, "%" PRIu64 " SIGTRAP(s) of %s passed on to it as its own "
			     "(the last: %s)", t->passed, target_name(s, who, sizeof(who)),
			     trap_text(&t->last_passed, last, sizeof(last)));
	for (int i = 0; i < s->m.nr_triggers; i++)
		if (s->m.triggers[i].guard && !strcmp(s->m.triggers[i].guard, "tracee")) {
			struct mtrigger *mt = &s->m.triggers[i];

			mt->stray_traps = t->swallowed;
			mt->passed_traps = t->passed;
			/* The evidence, where CI keeps only the bundle (no memory: left out). */
			if (t->swallowed)
				manifest_set(&mt->stray_trap,
					     trap_text(&t->last_swallowed, last, sizeof(last)));
			if (t->passed)
				manifest_set(&mt->passed_trap,
					     trap_text(&t->last_passed, last, sizeof(last)));
		}

	for (int i = 0; i < s->nr_streams; i++)
		if (bundle_close_stream(s->bundle, &s->streams[i], &fe) && !ret)
			ret = fe.code, *e = fe;
	if (s->proc_fd >= 0 && close(s->proc_fd) && !ret)
		ret = err_runtime(e, -errno, "%s/%s: %s", bundle_path(s->bundle), BUNDLE_PROC,
				  strerror(errno));
	s->proc_fd = -1;
	if (images_collect(bundle_dirfd(s->bundle), &s->m, &fe))
		session_warn(s, fe.code, "the list of mapped files is incomplete: %s", fe.why);
	images_check(&s->m, &iw);
	for (int i = 0; i < iw.nr; i++)
		session_warn(s, -ESTALE, "%s", iw.msg[i]);
	if (iw.dropped)
		session_warn(s, -ESTALE, "... and %d more warning(s) about the mapped files, not "
			     "shown", iw.dropped);
	/* JIT code's names: its perf maps live in /tmp only as long as nobody cleans it. */
	memset(&iw, 0, sizeof(iw));
	perfmaps_copy(bundle_dirfd(s->bundle), "/tmp", s->p->target != TARGET_COMMAND ?
		      PERFMAPS_OWNER_OF_PROCESS : s->p->opts.user ? s->p->user.uid : geteuid(),
		      &s->m, &iw);
	for (int i = 0; i < iw.nr; i++)
		session_warn(s, -EPERM, "%s", iw.msg[i]);
	clock_gettime(CLOCK_REALTIME, &s->m.end_time);
	/* No failure ends a recording without a word in its manifest. */
	if (ret && !s->res->stop_reason)
		s->res->stop_reason = "an error ended the recording";
	if (manifest_set(&s->m.stop_reason, s->res->stop_reason) && !ret)
		ret = err_runtime(e, -ENOMEM, "out of memory: the manifest has no stop reason");
	s->m.complete = !ret;
	s->m.target.exited = s->w.ran;
	s->m.target.exit_status = s->w.status;
	/* The room kept for this manifest, in case the disk filled. */
	bundle_unreserve(s->bundle);
	if (session_sync_manifest(s, &fe) && fe.code == -ENOSPC && s->m.nr_images) {
		/* The room kept did not count the mapped files: the sideband still names them. */
		session_warn(s, fe.code, "%s: the disk is full: the list of mapped files is left "
			     "out of the manifest", bundle_path(s->bundle));
		err_clear(&fe);
		for (int i = 0; i < s->m.nr_images; i++) {
			free(s->m.images[i].path);
			free(s->m.images[i].build_id);
		}
		s->m.nr_images = 0;
		session_sync_manifest(s, &fe);
	}
	s->res->manifest_written = !fe.code;
	if (fe.code && !ret)
		ret = fe.code, *e = fe;
	return ret;
}

void session_release_process(struct session *s)
{
	int left;

	if (!s->pg)
		return;
	left = exechold_group_release(s->pg, &s->w.traps);
	if (left)
		session_warn(s, -ETIMEDOUT, "%d thread(s) of process %d did not stop to be let go "
			     "within 2 s: they stay ptcollect's tracees until it exits", left,
			     (int)s->sp->pid);
	exechold_group_free(s->pg);
	s->pg = NULL;
}

/* The last snapshot, then stop the hardware and take what it wrote before it stopped. */
void session_end(struct session *s)
{
	const struct script_opts *o = &s->p->opts.script;
	struct error e = { 0 };

	freeze_stop(s->fz);
	s->fz = NULL;
	steer_quiet(s->steer);
	/* The breakpoints are off: the -p process's threads are let go. */
	session_release_process(s);
	if (o->snapshot && !o->no_final_snapshot && !s->write_err.code)
		session_act_snapshot(s, &(struct snapshot_cause){ .what = "final", .trigger = -1,
							  .cpu = -1 }, &e);
	for (int i = 0; i < s->nr_streams; i++)
		events_disable(&s->streams[i]);
	session_drain_all(s, true);
	/* After the last drain: what the kernel dropped that no LOST record will say. */
	for (int i = 0; i < s->nr_streams; i++)
		events_count_lost(&s->streams[i]);
	end_workload(s);
}

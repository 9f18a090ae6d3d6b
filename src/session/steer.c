// SPDX-License-Identifier: MIT
/* Trigger fires and control commands turned into the session's actions, and the ready signal. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "control.h"
#include "fileio.h"
#include "monotime.h"
#include "steer.h"
#include "trigger.h"

#define FIRE_BATCH 64

struct steer {
	const struct script_plan *sp;
	struct steer_ops ops;
	struct manifest *m;
	struct trigger_set *ts;		/* NULL: no triggers */
	struct control *ctl;		/* NULL: no control channel */
	uint64_t fires;			/* acted on, all triggers */
	uint64_t per[TRIGGER_MAX];	/* acted on, per trigger */
	bool counted_out;		/* --trigger-count reached */
	bool ending;			/* fires are recorded, no longer acted on */
	bool ctl_end_said;
};

__attribute__((format(printf, 3, 4)))
static void warn(struct steer *st, int code, const char *fmt, ...)
{
	struct error e = { 0 };
	va_list ap;

	va_start(ap, fmt);
	err_vset(&e, code, false, fmt, ap);
	va_end(ap);
	if (st->ops.warn)
		st->ops.warn(st->ops.arg, &e);
}

/* ---- opening ---------------------------------------------------------------- */

static void measure_clock(struct manifest *m)
{
	int64_t off;
	uint64_t err;

	/* Without it fires keep their CLOCK_MONOTONIC times only. */
	if (!trigger_perf_clock_offset(&off, &err, NULL)) {
		m->clock.known = true;
		m->clock.perf_minus_monotonic = off;
		m->clock.error_ns = err;
	}
}

static int add_triggers(struct steer *st, struct error *e)
{
	const struct script_plan *sp = st->sp;
	int ret;

	if (!sp->nr_specs)
		return 0;
	ret = trigger_set_new(&st->ts, e);
	for (int i = 0; !ret && i < sp->nr_specs; i++) {
		ret = trigger_add(st->ts, &sp->specs[i], sp->trigger_count, e);
		ret = ret < 0 ? ret : 0;
	}
	return ret;
}

int steer_open(struct steer **out, const struct script_plan *sp, const struct steer_ops *ops,
	       struct manifest *m, struct error *e)
{
	struct steer *st = calloc(1, sizeof(*st));
	int ret;

	if (!st)
		return err_runtime(e, -ENOMEM, "out of memory");
	st->sp = sp;
	st->ops = *ops;
	st->m = m;
	measure_clock(m);
	ret = add_triggers(st, e);
	if (!ret && sp->has_control) {
		ret = control_open(&st->ctl, sp->control_text, e);
		if (ret)
			err_what(e, "--control");
	}
	if (ret) {
		steer_close(st);
		return ret;
	}
	*out = st;
	return 0;
}

int steer_trigger_fd(const struct steer *st)
{
	return st->ts ? trigger_fd(st->ts) : -1;
}

int steer_arm(struct steer *st, pid_t pid, struct error *e)
{
	if (!st->ts)
		return 0;
	if (st->sp->scope == SCOPE_PROCESS)
		pid = st->sp->pid;
	else if (st->sp->scope == SCOPE_EVERY_PROCESS)
		pid = -1;
	return trigger_arm(st->ts, pid, e);
}

int steer_children(const struct steer *st, uint64_t *unfollowed)
{
	*unfollowed = 0;
	return st->ts ? trigger_children(st->ts, unfollowed) : 1;
}

/* ---- status and ready ------------------------------------------------------------ */

/* The status line: one JSON object, u64 counts as decimal strings. malloc'd. */
static char *status_line(struct steer *st)
{
	struct steer_status ss = { .state = "tracing" };
	json_t *j;
	char *line;

	if (st->ops.status)
		st->ops.status(st->ops.arg, &ss);
	j = json_pack("{s:s, s:i, s:o, s:o, s:o, s:i, s:i, s:o, s:i, s:o}", "state", ss.state,
		      "pid", (int)getpid(),
		      "elapsed_ns", manifest_u64_json((uint64_t)(ss.seconds * 1e9)),
		      "bytes", manifest_u64_json(ss.bytes), "losses", manifest_u64_json(ss.losses),
		      "streams", ss.streams, "snapshots", st->m->nr_snapshots,
		      "fires", manifest_u64_json(st->fires), "marks", st->m->nr_marks,
		      "workload", ss.workload > 0 ? json_integer(ss.workload) : json_null());
	line = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	return line;
}

/* FILE appears whole: written under a temporary name beside it, then renamed. */
static int write_ready_file(const char *path, const char *line, struct error *e)
{
	char tmp[4200];
	int fd, ret;

	snprintf(tmp, sizeof(tmp), "%s.tmp-%d", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return err_runtime(e, -errno, "--ready %s: %s", path, strerror(errno));
	ret = write_all(fd, line, strlen(line));
	ret = ret ?: write_all(fd, "\n", 1);
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret) {
		unlink(tmp);
		return err_runtime(e, ret, "--ready %s: %s", path, strerror(-ret));
	}
	return 0;
}

int steer_ready(struct steer *st, struct error *e)
{
	char *line;
	int ret = 0;

	if (st->sp->ready_ack && st->ctl)
		control_reply(st->ctl, "ready");
	if (!st->sp->ready_path)
		return 0;
	line = status_line(st);
	if (!line)
		return err_runtime(e, -ENOMEM, "out of memory");
	ret = write_ready_file(st->sp->ready_path, line, e);
	free(line);
	return ret;
}

/* ---- trigger fires ------------------------------------------------------------------ */

/* The last snapshot, if it was taken after @t: it holds what ran at @t. */
static unsigned int snapshot_after(const struct manifest *m, uint64_t t)
{
	const struct msnapshot *s = m->nr_snapshots ? &m->snapshots[m->nr_snapshots - 1] : NULL;

	return s && s->time_ns >= t ? s->number : 0;
}

static unsigned int act(struct steer *st, const struct trigger_fire *f)
{
	enum trigger_action a = st->sp->specs[f->idx].action;
	struct error e = { 0 };
	unsigned int snap = 0;
	int ret = 0;

	switch (a) {
	case TRIGGER_ACT_SNAPSHOT:
		/* Fires that came before the last freeze are in that snapshot already. */
		snap = snapshot_after(st->m, f->time);
		if (snap)
			break;
		ret = st->ops.snapshot(st->ops.arg, &(struct snapshot_cause){
			.what = "trigger", .trigger = (int)f->idx, .cpu = f->cpu, .tid = f->tid }, &e);
		snap = ret > 0 ? (unsigned int)ret : 0;
		break;
	case TRIGGER_ACT_START:
	case TRIGGER_ACT_STOP:
		ret = st->ops.tracing(st->ops.arg, a == TRIGGER_ACT_START, &e);
		break;
	default:
		break;
	}
	if (ret < 0)
		warn(st, ret, "--trigger '%s': %s", st->sp->specs[f->idx].text, e.why);
	return snap;
}

static void record_fire(struct steer *st, const struct trigger_fire *f, unsigned int snap)
{
	struct mfire *mf = manifest_add_fire(st->m);

	if (!mf)
		return;		/* MANIFEST_MAX_FIRES listed; the trigger still counts it */
	mf->trigger = (int)f->idx;
	mf->time_ns = f->time;
	mf->perf_time = manifest_perf_time(st->m, f->time);
	mf->pid = f->pid;
	mf->tid = f->tid;
	mf->cpu = f->cpu;
	mf->snapshot = snap;
}

static void on_fire(struct steer *st, const struct trigger_fire *f)
{
	if (st->counted_out || f->idx >= (unsigned int)st->sp->nr_specs)
		return;
	st->fires++;
	st->per[f->idx]++;
	record_fire(st, f, st->ending ? 0 : act(st, f));
	if (st->sp->trigger_count && st->fires >= st->sp->trigger_count) {
		st->counted_out = true;
		trigger_disarm_all(st->ts);
		st->ops.stop(st->ops.arg, "--trigger-count reached");
	}
}

/* @flush: the last reads, the fires the set holds back for their order too. */
static void on_fires(struct steer *st, bool flush)
{
	int (*poll_fires)(struct trigger_set *, struct trigger_fire *, size_t, struct error *) =
		flush ? trigger_flush_fires : trigger_poll_fires;
	struct trigger_fire f[FIRE_BATCH];
	struct error e = { 0 };
	int n;

	while ((n = poll_fires(st->ts, f, FIRE_BATCH, &e)) > 0)
		for (int i = 0; i < n; i++)
			on_fire(st, &f[i]);
	if (n < 0)
		warn(st, n, "%s", e.why);
}

/* ---- control commands --------------------------------------------------------------- */

static void answer(struct steer *st, int ret, const struct error *e)
{
	if (ret < 0)
		control_refuse(st->ctl, e->why);
	else
		control_ack(st->ctl);
}

static void add_mark(struct steer *st, const char *text)
{
	struct mmark *k = manifest_add_mark(st->m);
	uint64_t t = monotime_ns();

	if (!k || manifest_set(&k->text, text)) {
		warn(st, -ENOMEM, "out of memory: the mark '%s' is not kept", text);
		return;
	}
	k->time_ns = t;
	k->perf_time = manifest_perf_time(st->m, t);
}

static void command(struct steer *st, const struct control_cmd *cmd)
{
	struct error e = { 0 };
	char *line;
	int ret = 0;

	switch (cmd->word) {
	case CONTROL_ENABLE:
	case CONTROL_DISABLE:
		ret = st->ops.tracing(st->ops.arg, cmd->word == CONTROL_ENABLE, &e);
		break;
	case CONTROL_SNAPSHOT:
		/* Whether it may is the plan's verdict (script_snapshot_check), said by ops. */
		ret = st->ops.snapshot(st->ops.arg, &(struct snapshot_cause){
			.what = "control", .trigger = -1, .cpu = -1 }, &e);
		break;
	case CONTROL_STOP:
		st->ops.stop(st->ops.arg, "the control channel said stop");
		break;
	case CONTROL_STATUS:
		line = status_line(st);
		control_reply(st->ctl, line ? line : "{}");
		free(line);
		return;
	case CONTROL_MARK:
		add_mark(st, cmd->text);
		break;
	case CONTROL_PING:
		break;
	}
	answer(st, ret, &e);
}

static void on_control(struct steer *st)
{
	struct control_cmd *cmd = malloc(sizeof(*cmd));
	int ret = 0, n = 0;

	if (!cmd)
		return;
	/* A bounded number: the session's loop hears its signals between two batches. */
	while (n++ < CONTROL_BATCH && (ret = control_next(st->ctl, cmd)) == 1)
		command(st, cmd);
	free(cmd);
	if (ret == -ENODATA && !st->ctl_end_said) {
		st->ctl_end_said = true;
		warn(st, ret, "--control: CTL was closed; the recording goes on without it");
	}
}

/* ---- the poll loop's side ----------------------------------------------------------- */

int steer_fds(const struct steer *st, struct pollfd *pf)
{
	int n = 0;

	if (st->ts)
		pf[n++] = (struct pollfd){ .fd = trigger_fd(st->ts), .events = POLLIN };
	if (st->ctl && control_fd(st->ctl) >= 0)
		pf[n++] = (struct pollfd){ .fd = control_fd(st->ctl), .events = POLLIN };
	if (st->ctl && control_out_pending(st->ctl) && control_ack_fd(st->ctl) >= 0)
		pf[n++] = (struct pollfd){ .fd = control_ack_fd(st->ctl), .events = POLLOUT };
	return n;
}

void steer_handle(struct steer *st, const struct pollfd *pf, int n)
{
	bool read_ctl = false;

	for (int i = 0; i < n; i++) {
		if (!pf[i].revents)
			continue;
		if (st->ts && pf[i].fd == trigger_fd(st->ts)) {
			on_fires(st, false);
		} else if (st->ctl && pf[i].events == POLLOUT) {
			control_flush(st->ctl);
		} else if (st->ctl) {
			on_control(st);
			read_ctl = true;
		}
	}
	/* Lines the last batch left: poll says nothing of them. */
	if (!read_ctl && steer_pending(st))
		on_control(st);
}

bool steer_holding(const struct steer *st)
{
	return st && st->ts && trigger_pending(st->ts);
}

bool steer_pending(const struct steer *st)
{
	return st && st->ctl && control_pending(st->ctl);
}

void steer_sync(struct steer *st)
{
	for (int i = 0; st->ts && i < st->m->nr_triggers && i < st->sp->nr_specs; i++) {
		struct trigger_stats ts;

		trigger_get_stats(st->ts, (unsigned int)i, &ts);
		st->m->triggers[i].fires = st->per[i];
		st->m->triggers[i].dropped = ts.dropped;
		st->m->triggers[i].dropped_counted = ts.dropped_counted;
		st->m->triggers[i].throttled = ts.throttled;
		st->m->triggers[i].late = ts.late;
	}
}

void steer_quiet(struct steer *st)
{
	st->ending = true;
	if (st->ts) {
		/* Fires already in flight still count. */
		trigger_disarm_all(st->ts);
		on_fires(st, true);
	}
	if (st->ctl)
		control_flush(st->ctl);
	steer_sync(st);
}

void steer_close(struct steer *st)
{
	if (!st)
		return;
	trigger_set_free(st->ts);
	control_close(st->ctl);
	free(st);
}

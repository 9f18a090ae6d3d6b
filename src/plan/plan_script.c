// SPDX-License-Identifier: MIT
/* Snapshot sizes, triggers, the control channel and the ready signal, checked once. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "exechold.h"
#include "fileio.h"
#include "plan_script.h"
#include "procfs.h"

/* ---- -S ------------------------------------------------------------------ */

int script_parse_snapshot(const char *arg, struct script_opts *o, struct error *e)
{
	const char *s = arg ? arg : "";
	unsigned long long v;
	char *end;

	o->snapshot = true;
	o->snapshot_size = 0;
	/* perf's 'e': a snapshot at the end, which is ours by default. */
	if (*s == 'e')
		s++;
	if (!*s)
		return 0;
	errno = 0;
	v = isdigit((unsigned char)*s) ? strtoull(s, &end, 0) : 0;
	if (isdigit((unsigned char)*s) && !errno && !*end) {
		o->snapshot_size = v;	/* perf's: bytes, in C syntax */
		return 0;
	}
	if (!cli_parse_size(s, &o->snapshot_size, NULL))
		return 0;
	err_usage(e, "'%s' is not a snapshot size", arg);
	err_hint(e, "write -S for the whole AUX area, or -SSIZE with SIZE in bytes (65536, "
		 "0x10000) or with a unit (64K, 4M), attached to -S as perf writes it");
	return -EINVAL;
}

static uint64_t pow2_pages(uint64_t bytes)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), n = page;

	while (n < bytes && n < (1ULL << 62))
		n *= 2;
	return n;
}

int script_snapshot_sizes(const struct script_opts *o, uint64_t dflt_aux, uint64_t *aux,
			  uint64_t *window, struct error *e)
{
	bool given = *aux != 0;

	if (!given)
		*aux = o->snapshot_size ? pow2_pages(o->snapshot_size) : dflt_aux;
	*window = o->snapshot_size ? o->snapshot_size : *aux;
	if (*aux < SCRIPT_SNAPSHOT_MIN_AUX) {
		err_usage(e, "the AUX area is %" PRIu64 " bytes; snapshot mode needs %d at least",
			  *aux, SCRIPT_SNAPSHOT_MIN_AUX);
		err_what(e, "-m");
		return -EINVAL;
	}
	if (*window > *aux) {
		err_usage(e, "a snapshot of %" PRIu64 " bytes does not fit the AUX area of %"
			  PRIu64 " bytes (-m ,%" PRIu64 "K)", *window, *aux, *aux >> 10);
		err_what(e, "-S%" PRIu64, o->snapshot_size);
		err_hint(e, "give a larger AUX area (-m ,%" PRIu64 "K) or a smaller SIZE, or leave "
			 "-m out: the AUX area then fits SIZE", pow2_pages(*window) >> 10);
		return -EINVAL;
	}
	return 0;
}

/* ---- triggers --------------------------------------------------------------- */

static const char *scope_why(const struct script_target *t)
{
	if (t->whole_system)
		return "with -a or -C, triggers watch every process";
	return "several processes are traced";
}

void script_fall_back(struct script_plan *sp, const char *why)
{
	for (int i = 0; i < sp->nr_specs; i++) {
		if (sp->specs[i].kind != TRIGGER_BREAKPOINT)
			continue;
		sp->specs[i].kind = TRIGGER_UPROBE;
		sp->specs[i].fallback = true;
	}
	snprintf(sp->fallback, sizeof(sp->fallback), "%s", why);
	sp->guard = false;
}

/* Which processes the triggers watch: the workload, one process, or every one. */
static int resolve_scope(const struct script_target *t, struct script_plan *out,
			 struct error *e)
{
	bool breakpoints = false;
	pid_t pid = 0;

	for (int i = 0; i < out->nr_specs; i++)
		breakpoints |= out->specs[i].kind == TRIGGER_BREAKPOINT;
	if (t->workload && !t->whole_system) {
		out->scope = SCOPE_WORKLOAD;
		out->guard = breakpoints;
		return 0;
	}
	for (int i = 0; i < t->nr_pids; i++) {
		pid_t p = procfs_tgid(t->pids[i]);

		p = p ? p : t->pids[i];
		if (pid && p != pid)
			pid = -1;
		else if (!pid)
			pid = p;
	}
	if (!t->whole_system && pid > 0) {
		char why[sizeof(out->fallback)];

		out->scope = SCOPE_PROCESS;
		out->pid = pid;
		/* Its threads become our tracees at the start, or uprobes stand in. */
		if (breakpoints && exechold_group_check(pid, why, sizeof(why)) == -EPERM)
			script_fall_back(out, why);
		else
			out->guard = breakpoints;
		return 0;
	}
	if (breakpoints) {
		err_usage(e, "a breakpoint trigger watches one process, but %s", scope_why(t));
		err_what(e, "--trigger");
		err_hint(e, "trace one process (-- COMMAND or -p PID), or use a uprobe: trigger, "
			 "which can watch every process that runs the file");
		return -EINVAL;
	}
	out->scope = SCOPE_EVERY_PROCESS;
	return 0;
}

static enum trigger_action default_action(const struct script_opts *o)
{
	return o->snapshot ? TRIGGER_ACT_SNAPSHOT : TRIGGER_ACT_MARK;
}

/* A parsed and resolved spec: its action decided, and checked against the mode. */
static int check_action(const struct script_opts *o, const char *text, struct trigger_spec *s,
			struct error *e)
{
	if (s->action == TRIGGER_ACT_DEFAULT)
		s->action = default_action(o);
	if (s->action == TRIGGER_ACT_SNAPSHOT && !o->snapshot) {
		err_usage(e, "'%s': a snapshot needs snapshot mode (-S)", text);
		err_hint(e, "add -S, or give the trigger another action (=mark, =start, =stop)");
		return -EINVAL;
	}
	if (o->no_trace && (s->action == TRIGGER_ACT_START || s->action == TRIGGER_ACT_STOP)) {
		err_usage(e, "'%s': there is no trace to %s with --no-trace", text,
			  trigger_action_name(s->action));
		err_hint(e, "use =mark with --no-trace");
		return -EINVAL;
	}
	return 0;
}

static int resolve_triggers(const struct script_opts *o, const struct script_target *t,
			    struct script_plan *sp, struct error *e, struct warnings *w)
{
	for (int i = 0; i < o->nr_triggers; i++) {
		struct trigger_spec *s = &sp->specs[i];
		int ret = trigger_spec_parse(o->triggers[i], s, e);

		if (!ret) {
			sp->nr_specs = i + 1;
			ret = trigger_spec_resolve(s, e, w);
		}
		if (!ret)
			ret = check_action(o, o->triggers[i], s, e);
		if (ret) {
			err_what(e, "--trigger");
			return ret;
		}
		sp->start_off |= s->action == TRIGGER_ACT_START;
	}
	sp->trigger_count = o->trigger_count;
	return o->nr_triggers ? resolve_scope(t, sp, e) : 0;
}

/* ---- the control channel and the ready signal --------------------------------- */

/* A FIFO ptcollect opens read-write, as perf does: it must exist and let us. */
static int check_fifo(const char *spec, const char *role, const char *path, struct error *e)
{
	struct stat st;

	if (stat(path, &st)) {
		err_usage_code(e, -errno, "%s FIFO %s: %s", role, path, strerror(errno));
		err_hint(e, "create it first: mkfifo %s", path);
	} else if (!S_ISFIFO(st.st_mode)) {
		err_usage(e, "%s FIFO %s: not a FIFO", role, path);
		err_hint(e, "give a FIFO made with mkfifo, or use fd:CTL[,ACK]");
	} else if (access(path, R_OK | W_OK)) {
		err_usage_code(e, -errno, "%s FIFO %s: %s: ptcollect opens it to read and write",
			       role, path, strerror(errno));
		err_hint(e, "give this user read and write permission on it");
	} else {
		return 0;
	}
	err_what(e, "--control %s", spec);
	return e->code;
}

static int check_fd(const char *spec, const char *role, int fd, bool reads, struct error *e)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		err_usage_code(e, -EBADF, "%s descriptor %d is not open", role, fd);
	else if (reads ? (fl & O_ACCMODE) == O_WRONLY : (fl & O_ACCMODE) == O_RDONLY)
		err_usage_code(e, -EBADF, "%s descriptor %d is open for %s only", role, fd,
			       reads ? "writing" : "reading");
	else
		return 0;
	err_what(e, "--control %s", spec);
	return e->code;
}

static int resolve_control(const struct script_opts *o, struct script_plan *sp, struct error *e)
{
	struct control_spec *c = &sp->control;
	int ret;

	if (!o->control)
		return 0;
	ret = control_spec_parse(o->control, c, e);
	if (ret) {
		err_what(e, "--control");
		return ret;
	}
	sp->has_control = true;
	sp->control_text = o->control;
	if (c->fifo) {
		ret = check_fifo(o->control, "CTL", c->ctl_path, e);
		if (!ret && c->ack_path[0])
			ret = check_fifo(o->control, "ACK", c->ack_path, e);
		return ret;
	}
	ret = check_fd(o->control, "CTL", c->ctl_fd, true, e);
	if (!ret && c->ack_fd >= 0)
		ret = check_fd(o->control, "ACK", c->ack_fd, false, e);
	return ret;
}

static int resolve_ready(const struct script_opts *o, struct script_plan *sp, struct error *e)
{
	char *copy, *dir;
	struct stat st;
	size_t len;
	int ret = 0;

	if (!o->ready)
		return 0;
	if (!strcmp(o->ready, "ack")) {
		bool ack = sp->has_control && (sp->control.fifo ? sp->control.ack_path[0] != '\0' :
					       sp->control.ack_fd >= 0);

		if (!ack) {
			err_usage(e, "'ack' sends the line \"ready\" on the control channel's ACK, "
				  "and there is none");
			err_what(e, "--ready ack");
			err_hint(e, "add --control fifo:CTL,ACK, or give --ready a file name "
				 "(./ack for a file named ack)");
			return -EINVAL;
		}
		sp->ready_ack = true;
		return 0;
	}
	if (!*o->ready)
		return err_usage(e, "--ready: the file name is empty");
	if (!lstat(o->ready, &st)) {
		err_usage_code(e, -EEXIST, "it exists already: a script would take it for the "
			       "signal at once");
		err_what(e, "--ready %s", o->ready);
		err_hint(e, "remove it before the recording, or name another file");
		return -EEXIST;
	}
	copy = strdup(o->ready);
	if (!copy)
		return err_runtime(e, -ENOMEM, "out of memory");
	/* The file comes whole, through a temporary one named FILE.tmp-PID beside it. */
	len = strlen(basename(copy)) + strlen(".tmp-") + 10;
	dir = dirname(copy);
	ret = fileio_try_create_in(dir, len);
	if (ret) {
		err_usage_code(e, ret, "cannot create it in the directory %s: %s", dir,
			       strerror(-ret));
		err_what(e, "--ready %s", o->ready);
	}
	free(copy);
	if (!ret && !(sp->ready_path = strdup(o->ready)))
		ret = err_runtime(e, -ENOMEM, "out of memory");
	return ret;
}

int script_check_syntax(const struct script_opts *o, struct error *e)
{
	struct control_spec c;

	if (o->no_trace && o->snapshot)
		return err_usage(e, "--no-trace records no trace, so -S has nothing to snapshot");
	if (o->no_final_snapshot && !o->snapshot)
		return err_usage(e, "--no-final-snapshot is about snapshot mode: add -S");
	if (o->trigger_count && !o->nr_triggers)
		return err_usage(e, "--trigger-count %" PRIu64 ": there is no --trigger to count",
				 o->trigger_count);
	for (int i = 0; i < o->nr_triggers; i++) {
		struct trigger_spec s;

		if (trigger_spec_parse(o->triggers[i], &s, e)) {
			err_what(e, "--trigger");
			return e->code;
		}
		trigger_spec_free(&s);
	}
	if (o->control && control_spec_parse(o->control, &c, e)) {
		err_what(e, "--control");
		return e->code;
	}
	return 0;
}

int script_resolve(const struct script_opts *o, const struct script_target *t,
		   struct script_plan *sp, struct error *e, struct warnings *w)
{
	int ret;

	memset(sp, 0, sizeof(*sp));
	sp->snapshot = o->snapshot;
	ret = script_check_syntax(o, e);
	if (!ret)
		ret = resolve_triggers(o, t, sp, e, w);
	if (!ret)
		ret = resolve_control(o, sp, e);
	if (!ret)
		ret = resolve_ready(o, sp, e);
	return ret;
}

int script_snapshot_check(const struct script_plan *sp, struct error *e)
{
	if (sp->snapshot)
		return 0;
	return err_usage(e, "this recording is not in snapshot mode (-S)");
}

void script_plan_free(struct script_plan *sp)
{
	for (int i = 0; i < sp->nr_specs; i++)
		trigger_spec_free(&sp->specs[i]);
	free(sp->ready_path);
	sp->nr_specs = 0;
	sp->ready_path = NULL;
}

int script_describe(const struct script_opts *o, const struct script_plan *sp,
		    struct manifest *m)
{
	m->no_trace = o->no_trace;
	m->snapshot_mode = o->snapshot;
	m->snapshot_size = sp->snapshot_size;
	for (int i = 0; i < sp->nr_specs; i++) {
		const struct trigger_spec *s = &sp->specs[i];
		struct mtrigger *t = manifest_add_trigger(m);

		if (!t || manifest_set(&t->spec, s->text) ||
		    manifest_set(&t->kind, trigger_kind_name(s->kind)) ||
		    manifest_set(&t->action, trigger_action_name(s->action)) ||
		    manifest_set(&t->path, s->path))
			return -ENOMEM;
		if (s->kind == TRIGGER_BREAKPOINT && sp->guard && manifest_set(&t->guard, "tracee"))
			return -ENOMEM;
		if (s->fallback && (manifest_set(&t->guard, "uprobe") ||
				    manifest_set(&t->fallback, sp->fallback)))
			return -ENOMEM;
		t->offset = s->offset;
		t->limit = o->trigger_count;
		t->late_counted = true;		/* steer_sync() counts them */
	}
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * trigwatch SPEC N PID: perf's side of the trigger-to-freeze figure in make
 * bench-kernel. The "script that sees the fire": it arms SPEC (a uprobe, on
 * every process) through ptcollect's own trigger library, so it hears each
 * fire exactly as fast as a ptcollect session does, and sends SIGUSR2 to
 * PID (perf record -S) at once. Prints "armed", then for each of N fires
 * "FIRE PERF_TIME CPU" (the fire on perf's sample clock), then exits.
 *
 * trigwatch --aux PERF.DATA: "AUX CPU TIME" for each PERF_RECORD_AUX with
 * the OVERWRITE flag in perf.data (the stops that end snapshot windows),
 * read with ptcollect's perfdata reader; perf report -D takes minutes for it
 * in the rig, dumping the trace too.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfdata.h"
#include "trigger.h"
#include "trigger_spec.h"

static int fail(const char *what, const struct error *e)
{
	fprintf(stderr, "trigwatch: %s: %s %s\n", what, e->what, e->why);
	return 1;
}

/* Each PERF_RECORD_AUX with OVERWRITE: the stop that ended a snapshot window. */
static int on_record(void *ctx, const struct pd_record *r, struct error *e)
{
	struct perfdata *pd = ctx;
	const struct pd_attr *a;
	struct sb_sample_id sid;
	size_t tlen;
	uint64_t flags;

	if (r->hdr.type != PERF_RECORD_AUX || r->hdr.size < 32)
		return 0;
	if (perfdata_sample_id(pd, r, &a, &sid, &tlen, e))
		return e->code;
	memcpy(&flags, r->data + 24, sizeof(flags));
	if (flags & PERF_AUX_FLAG_OVERWRITE)
		printf("AUX %u %" PRIu64 "\n", sid.cpu, sid.time);
	return 0;
}

static int perf_aux(const char *path)
{
	struct perfdata_ops ops = { .record = on_record };
	struct perfdata *pd;
	struct error e = { 0 };
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0 || perfdata_open(&pd, fd, path, &e)) {
		fprintf(stderr, "trigwatch: %s: %s\n", path, fd < 0 ? strerror(errno) : e.why);
		return 1;
	}
	ret = perfdata_read(pd, &ops, pd, &e);
	if (ret)
		fprintf(stderr, "trigwatch: %s: %s\n", path, e.why);
	perfdata_close(pd);
	close(fd);
	return ret ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct trigger_fire f[64], out[256];
	struct warnings w = { 0 };
	struct error e = { 0 };
	struct trigger_spec s;
	struct trigger_set *ts;
	uint64_t want, seen = 0, err_ns;
	int64_t off;
	pid_t pid;

	if (argc == 3 && !strcmp(argv[1], "--aux"))
		return perf_aux(argv[2]);
	if (argc != 4) {
		fprintf(stderr, "usage: trigwatch SPEC N PID\n");
		return 2;
	}
	want = strtoull(argv[2], NULL, 10);
	pid = (pid_t)atoi(argv[3]);
	if (want > 256)
		want = 256;
	if (trigger_spec_parse(argv[1], &s, &e) || trigger_spec_resolve(&s, &e, &w))
		return fail(argv[1], &e);
	if (trigger_perf_clock_offset(&off, &err_ns, &e))
		return fail("perf clock", &e);
	if (trigger_set_new(&ts, &e) || trigger_add(ts, &s, 0, &e) < 0 || trigger_arm(ts, -1, &e))
		return fail("arming", &e);
	printf("armed\n");
	fflush(stdout);
	while (seen < want) {
		struct pollfd p = { .fd = trigger_fd(ts), .events = POLLIN };
		int n;

		if (poll(&p, 1, 30000) <= 0)
			break;
		n = trigger_poll_fires(ts, f, 64, &e);
		if (n < 0)
			return fail("reading fires", &e);
		/* Signal first, write later: the signal is what is timed. */
		if (n > 0)
			kill(pid, SIGUSR2);
		for (int i = 0; i < n && seen < want; i++)
			out[seen++] = f[i];
	}
	for (uint64_t i = 0; i < seen; i++)
		printf("FIRE %" PRIu64 " %d\n", out[i].time + (uint64_t)off, out[i].cpu);
	trigger_set_free(ts);
	trigger_spec_free(&s);
	return seen == want ? 0 : 1;
}

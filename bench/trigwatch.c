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
 * the OVERWRITE flag in perf.data (the stops that end snapshot windows);
 * perf report -D takes minutes for it in the rig, dumping the trace too.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trigger.h"
#include "trigger_spec.h"

static int fail(const char *what, const struct error *e)
{
	fprintf(stderr, "trigwatch: %s: %s %s\n", what, e->what, e->why);
	return 1;
}

/* perf.data's header, as tools/perf/util/header.h lays it out. */
struct section {
	uint64_t offset, size;
};

struct file_header {
	uint64_t magic, size, attr_size;
	struct section attrs, data, event_types;
	uint64_t features[4];
};

#define RECORD_AUXTRACE 71	/* perf's own: the trace bytes follow the record */

static int perf_aux(const char *path)
{
	FILE *f = fopen(path, "r");
	struct file_header h;
	struct perf_event_attr a;
	uint64_t pos, end, st, tpos, cpos;
	uint8_t rec[65536];

	if (!f || fread(&h, sizeof(h), 1, f) != 1 || memcmp(&h.magic, "PERFILE2", 8)) {
		fprintf(stderr, "trigwatch: %s: not a perf.data file\n", path);
		return 1;
	}
	/* The first event is intel_pt's (perf puts it in front): its sample_id layout. */
	memset(&a, 0, sizeof(a));
	if (fseek(f, (long)h.attrs.offset, SEEK_SET) ||
	    fread(&a, h.attr_size < sizeof(a) ? h.attr_size : sizeof(a), 1, f) != 1)
		return 1;
	st = a.sample_type;
	tpos = 8 + 24 + (st & PERF_SAMPLE_TID ? 8 : 0);
	cpos = tpos + (st & PERF_SAMPLE_TIME ? 8 : 0) + (st & PERF_SAMPLE_ID ? 8 : 0) +
	       (st & PERF_SAMPLE_STREAM_ID ? 8 : 0);
	for (pos = h.data.offset, end = h.data.offset + h.data.size; pos + 8 <= end;) {
		struct perf_event_header eh;
		uint64_t flags, t, more = 0;
		uint32_t cpu;

		if (fseek(f, (long)pos, SEEK_SET) || fread(&eh, sizeof(eh), 1, f) != 1 ||
		    eh.size < sizeof(eh))
			break;
		memcpy(rec, &eh, sizeof(eh));
		if (eh.size > sizeof(eh) && fread(rec + sizeof(eh), eh.size - sizeof(eh), 1, f) != 1)
			break;
		if (eh.type == RECORD_AUXTRACE)
			memcpy(&more, rec + 8, 8);
		if (eh.type == PERF_RECORD_AUX && eh.size >= cpos + 4) {
			memcpy(&flags, rec + 24, 8);
			memcpy(&t, rec + tpos, 8);
			memcpy(&cpu, rec + cpos, 4);
			if (flags & PERF_AUX_FLAG_OVERWRITE)
				printf("AUX %u %" PRIu64 "\n", cpu, t);
		}
		pos += eh.size + more;
	}
	fclose(f);
	return 0;
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

// SPDX-License-Identifier: MIT
/* Bundles written by the recorder's own code, for the commands that read them. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bundle.h"
#include "sideband.h"
#include "stream.h"
#include "testbundle.h"
#include "treerm.h"

void testbundle_describe(struct manifest *m, const struct perf_event_mmap_page *pc)
{
	static char *self[] = { "ptcollect", "record", "--", "/bin/true" };
	static char *cmd[] = { "/bin/true" };

	manifest_init(m);
	cr_assert_eq(manifest_set(&m->tool_version, "test"), 0);
	cr_assert_eq(manifest_set_argv(&m->command, &m->command_argc, self, 4), 0);
	cr_assert_eq(manifest_set_argv(&m->target.command, &m->target.command_argc, cmd, 1), 0);
	m->target.kind = TARGET_COMMAND;
	cr_assert_eq(manifest_set(&m->pmu_name, "intel_pt"), 0);
	cr_assert_eq(manifest_set(&m->event, "intel_pt//u"), 0);
	cr_assert_eq(manifest_set(&m->cpu.vendor, "GenuineIntel"), 0);
	m->pmu_type = 8;
	m->attr.config = 0x300e601;
	m->attr.exclude_kernel = m->attr.exclude_hv = true;
	m->attr.sample_type = SIDEBAND_SAMPLE_TYPE;
	m->cpu.family = 6;
	m->cpu.model = 94;
	m->cpu.stepping = 3;
	m->nom_freq = 24;
	m->mtc_freq = 3;
	m->time_conv.cap_user_time_zero = pc->cap_user_time_zero;
	m->time_conv.time_zero = pc->time_zero;
	m->time_conv.time_mult = pc->time_mult;
	m->time_conv.time_shift = pc->time_shift;
}

void testbundle_describe_cpu(struct manifest *m, const char *extra)
{
	char *self[] = { "ptcollect", "record", "-a", (char *)extra };

	manifest_init(m);
	cr_assert_eq(manifest_set(&m->tool_version, "test"), 0);
	cr_assert_eq(manifest_set_argv(&m->command, &m->command_argc, self, extra ? 4 : 3), 0);
	m->target.kind = TARGET_CPU;
	cr_assert_eq(manifest_set(&m->pmu_name, "intel_pt"), 0);
	cr_assert_eq(manifest_set(&m->event, "intel_pt//u"), 0);
	cr_assert_eq(manifest_set(&m->cpu.vendor, "GenuineIntel"), 0);
	m->cpu.family = 6;
	m->cpu.model = 85;
	m->cpu.stepping = 4;
	m->nom_freq = -1;
	m->attr.sample_type = 0x10086;
}

void testbundle_sb_record(FILE *f, uint32_t type, const void *body, size_t len, uint64_t time)
{
	uint16_t hdr[4] = { 0 };
	uint32_t tid[2] = { 4242, 4242 }, cpu[2] = { 0, 0 };
	uint64_t id = 1;

	memcpy(hdr, &type, 4);
	hdr[3] = (uint16_t)(8 + len + 32);
	cr_assert(fwrite(hdr, 8, 1, f) == 1 && fwrite(body, len, 1, f) == 1);
	cr_assert(fwrite(tid, 8, 1, f) == 1 && fwrite(&time, 8, 1, f) == 1);
	cr_assert(fwrite(cpu, 8, 1, f) == 1 && fwrite(&id, 8, 1, f) == 1);
}

void testbundle_write_manifest(const char *dir, struct manifest *m, bool finish)
{
	testbundle_write_streams(dir, m, finish, 2);
}

void testbundle_write_streams(const char *dir, struct manifest *m, bool finish, int nr)
{
	struct auxring_stats stats = { .aux_bytes = 4096, .truncated = 2, .data_full = 1,
				       .restarts = 3 };
	struct error e = { 0 };
	struct stream *st = calloc((size_t)nr, sizeof(*st));
	struct bundle *b;
	char data[4096];

	cr_assert(st);
	cr_assert_eq(bundle_create(&b, dir, false, &e), 0, "%s", e.why);
	memset(data, 0x55, sizeof(data));
	for (int i = 0; i < nr; i++) {
		stream_init(&st[i], i, -1);
		cr_assert_eq(bundle_open_stream(b, &st[i], &e), 0, "%s", e.why);
		cr_assert_eq(write(st[i].trace_fd, data, sizeof(data)), 4096);
		st[i].ring.stats = stats;
		cr_assert_eq(bundle_describe_stream(&st[i], manifest_add_stream(m)), 0);
	}
	cr_assert_eq(bundle_write_manifest(b, m, &e), 0, "%s", e.why);
	if (finish) {
		for (int i = 0; i < nr; i++)
			cr_assert_eq(bundle_close_stream(b, &st[i], &e), 0, "%s", e.why);
		m->complete = true;
		cr_assert_eq(manifest_set(&m->stop_reason, "the workload exited"), 0);
		cr_assert_eq(bundle_write_manifest(b, m, &e), 0, "%s", e.why);
	}
	for (int i = 0; i < nr; i++)
		bundle_close_stream(b, &st[i], NULL);
	free(st);
	bundle_free(b);
	manifest_free(m);
}

void testbundle_write(const char *dir, const struct perf_event_mmap_page *pc, bool finish)
{
	struct manifest m;

	testbundle_describe(&m, pc);
	testbundle_write_manifest(dir, &m, finish);
}

char *testbundle_dir(void)
{
	char *d = strdup("/tmp/ptc-bundle-XXXXXX");

	cr_assert(mkdtemp(d));
	cr_assert_eq(rmdir(d), 0);	/* bundle_create makes it */
	return d;
}

void testbundle_remove(const char *dir)
{
	cr_assert_eq(tree_remove(dir), 0, "%s: %s", dir, strerror(errno));
}

// SPDX-License-Identifier: MIT
/* A manifest with every field set, each to a value no other field has. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mfill.h"

static unsigned int seq = 1;

/* A distinct string: "@what-N". */
static char *str(const char *what)
{
	char *s = NULL;

	if (asprintf(&s, "%s-%u", what, seq++) < 0)
		abort();
	return s;
}

static uint64_t u64(void)
{
	uint64_t n = seq++;

	return 0x100000000000ull * n + n;
}

static int num(void)
{
	return (int)seq++;
}

static char **argv(int *argc, const char *what)
{
	char **a = calloc(4, sizeof(*a));

	for (int i = 0; i < 3; i++)
		a[i] = str(what);
	*argc = 3;
	return a;
}

void mfill(struct manifest *m)
{
	manifest_init(m);
	seq = 1;
	m->tool_version = str("tool-version");
	m->command = argv(&m->command_argc, "command");
	m->source.tool = str("src-tool");
	m->source.version = str("src-version");
	m->source.file = str("src-file");
	m->source.format = str("src-format");
	m->source.hostname = str("src-host");
	m->source.os_release = str("src-os");
	m->source.arch = str("src-arch");
	m->source.cpuid = str("src-cpuid");
	m->source.cpudesc = str("src-cpudesc");
	m->source.nr_cpus_online = num();
	m->source.nr_cpus_avail = num();
	m->source.command = argv(&m->source.command_argc, "src-command");
	m->source.filter = str("src-filter");
	m->source.snapshot = true;
	m->target.kind = TARGET_TID;
	m->target.pids = calloc(3, sizeof(pid_t));
	m->target.nr_pids = 2;
	m->target.pids[0] = num();
	m->target.pids[1] = num();
	m->target.command = argv(&m->target.command_argc, "target-command");
	m->target.exited = true;
	m->target.exit_status = 137;
	m->per_thread = true;
	m->event = str("event");
	m->pmu_name = str("pmu");
	m->pmu_type = num();
	m->attr.config = u64();
	m->attr.config1 = u64();
	m->attr.config2 = u64();
	m->attr.exclude_user = true;
	m->attr.exclude_kernel = false;
	m->attr.exclude_hv = true;
	m->attr.sample_type = u64();
	m->filter = str("filter");
	m->cpu.vendor = str("vendor");
	m->cpu.family = (unsigned int)num();
	m->cpu.model = (unsigned int)num();
	m->cpu.stepping = (unsigned int)num();
	m->time_conv.cap_user_time_zero = true;
	m->time_conv.time_zero = u64();
	m->time_conv.time_mult = 0xfedcba98;
	m->time_conv.time_shift = 31;
	m->nom_freq = 42;
	m->has_cpuid_0x15 = true;
	m->cpuid_0x15_eax = 0xfffffff0;
	m->cpuid_0x15_ebx = 0xfffffff1;
	m->mtc_freq = 9;
	m->kernel.start = u64();
	m->kernel.kallsyms = str("kallsyms");
	m->kernel.kcore = str("kcore");
	m->kernel.kcore_base = u64();
	m->proc_sideband = str("proc");
	m->vdso = str("vdso");
	m->sysroot = str("sysroot");
	for (int i = 0; i < 2; i++) {
		struct mstream *s = manifest_add_stream(m);

		s->file = str("stream-file");
		s->sideband = str("stream-sb");
		s->cpu = num();
		s->tid = num();
		s->bytes = u64();
		s->sideband_bytes = u64();
		s->lost.truncated = u64();
		s->lost.lost = u64();
		s->lost.lost_records = u64();
		s->lost.partial = u64();
		s->lost.collision = u64();
		s->lost.sideband_full = u64();
		s->lost.counted = true;
		s->lost.unreported = u64();
		s->restarts = u64();
		s->itrace_start = u64();
	}
	for (int i = 0; i < 2; i++) {
		struct mimage *img = manifest_add_image(m);
		char *p = str("/image");

		img->path = p;
		img->build_id = i ? NULL : strdup("0123456789abcdef0123456789abcdef01234567");
		img->has_inode = i;
		img->maj = i ? 0x103 : 0;
		img->min = i ? 0x2a : 0;
		img->ino = i ? u64() : 0;
	}
	for (int i = 0; i < 2; i++) {
		struct mperfmap *pm = manifest_add_perf_map(m);

		pm->pid = num();
		pm->file = str("perf-maps/perf");
		pm->bytes = u64();
		pm->cut = i;
	}
	for (int i = 0; i < 2; i++) {
		struct mperfmap_refused *pr = manifest_add_perf_map_refused(m);

		pr->pid = num();
		pr->why = str("group or others may write it");
	}
	m->snapshot_mode = true;
	m->snapshot_size = u64();
	m->clock.known = true;
	m->clock.perf_minus_monotonic = -(int64_t)u64();
	m->clock.error_ns = u64();
	for (int i = 0; i < 2; i++) {
		struct msnapshot *s = manifest_add_snapshot(m);

		s->number = (unsigned int)num();
		s->dir = str("snap");
		s->cause = str("cause");
		s->trigger = i;
		s->time_ns = u64();
		s->perf_time = u64();
		for (int k = 0; k < 2; k++) {
			struct mwindow *w = manifest_add_window(s);

			w->file = str("window");
			w->cpu = num();
			w->tid = num();
			w->bytes = u64();
			w->aux_head = u64();
			w->wrapped = k;
		}
	}
	for (int i = 0; i < 2; i++) {
		struct mtrigger *t = manifest_add_trigger(m);

		t->spec = str("spec");
		t->kind = str("kind");
		t->action = str("action");
		t->path = str("path");
		t->offset = u64();
		t->limit = u64();
		t->fires = u64();
		t->dropped = u64();
		t->throttled = u64();
		t->late = u64();
		t->late_counted = true;
		t->dropped_counted = !(t->dropped & 1);
		t->guard = str("guard");
		t->fallback = str("fallback");
		t->stray_trap = str("stray_trap");
		t->passed_trap = str("passed_trap");
		t->stray_traps = u64();
		t->passed_traps = u64();
	}
	for (int i = 0; i < 2; i++) {
		struct mfire *f = manifest_add_fire(m);

		f->trigger = i;
		f->time_ns = u64();
		f->perf_time = u64();
		f->pid = num();
		f->tid = num();
		f->cpu = num();
		f->snapshot = (unsigned int)num();
	}
	for (int i = 0; i < 2; i++) {
		struct mmark *k = manifest_add_mark(m);

		k->time_ns = u64();
		k->perf_time = u64();
		k->text = str("mark");
	}
	m->start_time = (struct timespec){ 1700000000, 123456000 };
	m->end_time = (struct timespec){ 1700000100, 654321000 };
	m->stop_reason = str("stop");
	m->complete = true;
}

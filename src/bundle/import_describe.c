// SPDX-License-Identifier: MIT
/*
 * What an import's bundle holds besides its streams: the vdso (given, or
 * from perf's build-id cache), and the manifest's description of the
 * recording from the perf.data's header: its CPU, its target, its source.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bundle.h"
#include "fileio.h"
#include "import_describe.h"

#define VDSO_MAX	(16u << 20)

/* The vdso: given, or in perf's build-id cache under the build-id the perf.data names. */
int import_save_vdso(struct import *im, struct error *e)
{
	const char *id = perfdata_features(im->pd)->vdso_build_id, *home = getenv("HOME");
	char cached[4096] = "", *text = NULL;
	const char *path = im->o->vdso;
	size_t len;
	int fd, ret;

	if (!path && id && home && home[0]) {
		snprintf(cached, sizeof(cached), "%s/.debug/[vdso]/%s/vdso", home, id);
		path = access(cached, R_OK) ? NULL : cached;
	}
	if (!path) {
		if (im->maps_vdso)
			warn_add(im->w, "the sideband maps [vdso], and no copy of it was found (perf's "
				 "build-id cache has none%s%s): ptxed reports a sideband error there; "
				 "give import --vdso FILE", id ? " for build-id " : "", id ? id : "");
		return 0;
	}
	ret = file_read_all(AT_FDCWD, path, VDSO_MAX, &text, &len, e);
	if (!ret && (len < 4 || memcmp(text, "\177ELF", 4)))
		ret = err_usage(e, "%s: not an ELF file, so not a vdso image", path);
	if (ret) {
		free(text);
		if (im->o->vdso && e && !e->what[0])
			err_what(e, "--vdso");
		return ret;
	}
	ret = bundle_mkdir(im->b, BUNDLE_SYSROOT, e);
	fd = ret ? ret : bundle_create_file(im->b, BUNDLE_VDSO, e);
	if (fd >= 0) {
		ret = write_all(fd, text, len);
		if (close(fd) && !ret)
			ret = -errno;
		if (ret)
			err_runtime(e, ret, "%s/%s: %s", im->o->dir, BUNDLE_VDSO, strerror(-ret));
	}
	free(text);
	snprintf(im->st->vdso, sizeof(im->st->vdso), "%s", path);
	if (!ret && fd >= 0 && manifest_set(&im->m.vdso, BUNDLE_VDSO))
		ret = err_runtime(e, -ENOMEM, "out of memory");
	return fd < 0 ? fd : ret;
}

/* "GenuineIntel,6,94,3" (perf's x86 cpuid), or "GenuineIntel-6-5E-3". */
static void describe_cpu(struct import *im)
{
	const char *s = perfdata_features(im->pd)->cpuid;
	unsigned int f, m, st;
	char vendor[64];

	if (s && (sscanf(s, "%63[^,],%u,%u,%u", vendor, &f, &m, &st) == 4 ||
		  sscanf(s, "%63[^-]-%u-%x-%x", vendor, &f, &m, &st) == 4) &&
	    f <= 0xffff && m <= 0xffff && st <= 0xff) {
		manifest_set(&im->m.cpu.vendor, vendor);
		im->m.cpu.family = f;
		im->m.cpu.model = m;
		im->m.cpu.stepping = st;
		return;
	}
	manifest_set(&im->m.cpu.vendor, "unknown");
	warn_add(im->w, "the perf.data %s: decoders get --cpu none, without errata workarounds",
		 s ? "has a CPU string ptcollect does not read" : "does not say which CPU recorded it");
}

/* A perf record option that names the target, and its value (the word, or after '='). */
static bool target_opt(char *const *argv, int argc, int *i, const char *s, const char *l,
		       const char **val)
{
	const char *a = argv[*i];
	size_t n = strlen(l);

	if (!strcmp(a, s) || !strcmp(a, l)) {
		*val = *i + 1 < argc ? argv[++*i] : "";
		return true;
	}
	if (!strncmp(a, l, n) && a[n] == '=') {
		*val = a + n + 1;
		return true;
	}
	if (!strncmp(a, s, 2) && a[1] != '-' && a[2]) {
		*val = a + 2;
		return true;
	}
	return false;
}

static void add_pids(struct manifest *m, const char *list)
{
	char *end;

	while (*list) {
		long v = strtol(list, &end, 10);

		if (end == list || v <= 0 || v > INT_MAX)
			return;
		m->target.pids[m->target.nr_pids++] = (pid_t)v;
		list = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return;
	}
}

/* The workload in the recording's command line: after "--", or the word the exec'd comm names. */
static int target_command(struct import *im, char *const *argv, int argc, int from)
{
	int start = -1;

	for (int i = from; i < argc && start < 0; i++) {
		const char *base = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];

		if (!strcmp(argv[i], "--"))
			start = i + 1;
		else if (im->exec_comm[0] && !strncmp(base, im->exec_comm, 15) &&
			 strlen(base) >= strlen(im->exec_comm))
			start = i;
	}
	if (start < 0 || start >= argc)
		return 0;
	return manifest_set_argv(&im->m.target.command, &im->m.target.command_argc,
				 argv + start, argc - start);
}

/* perf record's target: -p, -t, -a, -C, else the workload it started (enable_on_exec). */
static int describe_target(struct import *im)
{
	const struct pd_features *f = perfdata_features(im->pd);
	const struct pd_attr *a = perfdata_attr(im->pd, im->pt_attr);
	struct manifest *m = &im->m;
	int argc = f->cmdline_argc, rec = 0;
	char *const *argv = f->cmdline;
	size_t room = 2;

	/* Room for every pid a list in the command line can name: one per two characters. */
	for (int i = 0; i < argc; i++)
		room += strlen(argv[i]) / 2 + 1;
	m->target.pids = calloc(room, sizeof(pid_t));
	if (!m->target.pids)
		return -ENOMEM;
	while (rec < argc && strcmp(argv[rec], "record"))
		rec++;
	for (int i = rec + 1; i < argc && !m->target.kind; i++) {
		const char *v;

		if (!strcmp(argv[i], "--"))
			break;
		if (target_opt(argv, argc, &i, "-p", "--pid", &v))
			m->target.kind = TARGET_PID;
		else if (target_opt(argv, argc, &i, "-t", "--tid", &v))
			m->target.kind = TARGET_TID;
		else if (!strcmp(argv[i], "-a") || !strcmp(argv[i], "--all-cpus") ||
			 target_opt(argv, argc, &i, "-C", "--cpu", &v))
			m->target.kind = TARGET_CPU;
		if (m->target.kind == TARGET_PID || m->target.kind == TARGET_TID)
			add_pids(m, v);
	}
	if (m->target.kind || !a || !a->attr.enable_on_exec)
		return 0;
	m->target.kind = TARGET_COMMAND;
	if (im->exec_pid > 0)
		m->target.pids[m->target.nr_pids++] = im->exec_pid;
	return target_command(im, argv, argc, rec + 1);
}

static int describe_source(struct import *im)
{
	const struct pd_features *f = perfdata_features(im->pd);
	struct msource *s = &im->m.source;
	int ret = 0;

	ret = ret ?: manifest_set(&s->tool, "perf");
	ret = ret ?: manifest_set(&s->version, f->version);
	ret = ret ?: manifest_set(&s->file, im->o->input);
	ret = ret ?: manifest_set(&s->format, perfdata_pipe_mode(im->pd) ? "pipe" : "file");
	ret = ret ?: manifest_set(&s->hostname, f->hostname);
	ret = ret ?: manifest_set(&s->os_release, f->os_release);
	ret = ret ?: manifest_set(&s->arch, f->arch);
	ret = ret ?: manifest_set(&s->cpuid, f->cpuid);
	ret = ret ?: manifest_set(&s->cpudesc, f->cpudesc);
	if (f->cmdline)
		ret = ret ?: manifest_set_argv(&s->command, &s->command_argc, f->cmdline,
					       f->cmdline_argc);
	s->nr_cpus_online = f->nr_cpus_online;
	s->nr_cpus_avail = f->nr_cpus_avail;
	return ret;
}

int import_describe(struct import *im, struct error *e)
{
	struct manifest *m = &im->m;
	const uint64_t *tc = im->tc;
	int ret = 0;

	ret = ret ?: manifest_set(&m->tool_version, PTC_VERSION);
	ret = ret ?: manifest_set_argv(&m->command, &m->command_argc, im->o->argv, im->o->argc);
	ret = ret ?: describe_source(im);
	ret = ret ?: describe_target(im);
	if (ret)
		return err_runtime(e, -ENOMEM, "out of memory");
	describe_cpu(im);
	m->attr.sample_type = SIDEBAND_SAMPLE_TYPE;
	if (!m->attr.exclude_kernel)
		m->kernel.start = im->kernel_start;
	if (!m->attr.exclude_kernel && !im->kernel_start)
		warn_add(im->w, "the kernel was traced, but the sideband has no kernel mapping: "
			 "decoders need --pevent:kernel-start");
	if (im->have_time_conv && (tc[0] != m->time_conv.time_shift ||
				   tc[1] != m->time_conv.time_mult ||
				   tc[2] != m->time_conv.time_zero))
		warn_add(im->w, "TIME_CONV and AUXTRACE_INFO give different time conversions; "
			 "AUXTRACE_INFO's is kept, as perf's decoder does");
	m->complete = true;
	return 0;
}

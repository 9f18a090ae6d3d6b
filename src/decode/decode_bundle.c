// SPDX-License-Identifier: MIT
/* decode DIR: the manifest of a bundle into a decode configuration. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle.h"
#include "decode_bundle.h"
#include "decoders.h"
#include "filter.h"
#include "manifest.h"

static char *in_dir(const char *dir, const char *name)
{
	char *p;

	return asprintf(&p, "%s/%s", dir, name) < 0 ? NULL : p;
}

/* The sideband settings of the bundle's records, as its ptxed lines give them. */
static int pevent(const struct manifest *m, const char *dir, struct dsb_pevent *p)
{
	struct stat st;
	char *sysroot = in_dir(dir, "sysroot");

	memset(p, 0, sizeof(*p));
	p->sample_type = m->attr.sample_type;
	p->kernel_start = m->kernel.start;
	p->time_mult = 1;
	if (m->time_conv.cap_user_time_zero) {
		p->time_zero = m->time_conv.time_zero;
		p->time_mult = m->time_conv.time_mult;
		p->time_shift = m->time_conv.time_shift;
	}
	if (m->vdso && !(p->vdso[IMAGE_ABI_X64] = in_dir(dir, m->vdso)))
		goto nomem;
	if (!sysroot)
		goto nomem;
	if (!stat(sysroot, &st) && S_ISDIR(st.st_mode)) {
		p->sysroot = sysroot;
		p->sysroot_fallback = true;
	} else {
		free(sysroot);
	}
	return 0;
nomem:
	free(sysroot);
	return -ENOMEM;
}

/*
 * Stream @i of @m: its trace (@file: the stream's, or one of its snapshot
 * windows), its sideband first, then proc.pevent and the others'.
 */
static int add_stream(struct decode_config *c, const struct manifest *m, const char *dir, int i,
		      const char *file, const struct dsb_pevent *pev)
{
	struct decode_stream *n = realloc(c->streams, (c->nr_streams + 1) * sizeof(*n)), *s;
	char *path;
	int ret = 0;

	if (!n)
		return -ENOMEM;
	c->streams = n;
	s = memset(&n[c->nr_streams++], 0, sizeof(*n));
	s->name = strdup(file);
	s->pt = in_dir(dir, file);
	if (!s->name || !s->pt)
		return -ENOMEM;
	for (int j = -1; !ret && j < m->nr_streams; j++) {
		const char *sb = j < 0 ? m->streams[i].sideband : j == i ? NULL :
				 m->streams[j].sideband;

		if (j == 0 && m->proc_sideband) {
			path = in_dir(dir, m->proc_sideband);
			ret = path ? decode_stream_add_sb(s, path, 0, 0, false, pev) : -ENOMEM;
			free(path);
		}
		if (!sb || ret)
			continue;
		path = in_dir(dir, sb);
		ret = path ? decode_stream_add_sb(s, path, 0, 0, j < 0, pev) : -ENOMEM;
		free(path);
	}
	return ret;
}

/*
 * What a stream is called on the command line: "cpu0" or "cpu0.pt"; a
 * snapshot's window "snap-1/cpu0" or "snap-1/cpu0.pt". A stream of a
 * snapshot-mode bundle has no file (its bytes are in the windows).
 */
static bool named(const char *file, char *const *names, size_t nr)
{
	size_t len;

	if (!file)
		return false;
	len = strcspn(file, ".");
	if (!nr)
		return true;
	for (size_t k = 0; k < nr; k++)
		if (!strcmp(names[k], file) || (strlen(names[k]) == len &&
						 !strncmp(names[k], file, len)))
			return true;
	return false;
}

/* The stream a snapshot's window was taken from (its sideband is the window's), or -1. */
static int window_stream(const struct manifest *m, const struct mwindow *w)
{
	for (int i = 0; i < m->nr_streams; i++)
		if (m->streams[i].cpu == w->cpu && m->streams[i].tid == w->tid)
			return i;
	return -1;
}

/*
 * The recording's address filters as IA32_RTIT_CTL's ADDRn_CFG and ADDRn_A/B
 * (filter_ranges()). libipt uses them only for erratum SKL014: a TIP.PGD
 * without its IP after a direct jump or call out of a FilterEn range or into
 * a TraceStop range binds to that branch, found by the ranges; without them
 * libipt takes no filter and decodes on past it. Only when every filter is a
 * range of addresses: a filter on a file is at other addresses in each
 * process and libipt takes one configuration for the whole decode, and one
 * range left out would make the code in it look untraced.
 */
static void addr_filters(struct pt_conf_addr_filter *f, const char *kernel_str)
{
	struct filter_ranges r;
	uint64_t *ab = &f->addr0_a;

	if (!filter_ranges(kernel_str, &r))
		return;
	memset(f, 0, sizeof(*f));
	for (int n = 0; n < r.nr; n++) {
		f->config.addr_cfg |= (uint64_t)r.cfg[n] << (4 * n);
		ab[2 * n] = r.a[n];
		ab[2 * n + 1] = r.b[n];
	}
}

static int fill(struct decode_config *c, const struct manifest *m, const char *dir,
		char *const *names, size_t nr, struct error *e)
{
	struct dsb_pevent pev;
	int ret;

	if (decoder_cpu_known(m)) {
		c->cpu.vendor = pcv_intel;
		c->cpu.family = (uint16_t)m->cpu.family;
		c->cpu.model = (uint8_t)m->cpu.model;
		c->cpu.stepping = (uint8_t)m->cpu.stepping;
	}
	/* decode DIR takes no --filter:addrN_* (the manifest gives the configuration). */
	if (!c->addr_filter.config.addr_cfg)
		addr_filters(&c->addr_filter, m->filter);
	c->mtc_freq = (uint8_t)m->mtc_freq;
	c->nom_freq = m->nom_freq > 0 && m->nom_freq <= 255 ? (uint8_t)m->nom_freq : 0;
	if (m->has_cpuid_0x15) {
		c->cpuid_0x15_eax = m->cpuid_0x15_eax;
		c->cpuid_0x15_ebx = m->cpuid_0x15_ebx;
	}
	if (pevent(m, dir, &pev))
		return err_runtime(e, -ENOMEM, "out of memory");
	decode_pevent_free(&c->conv);
	c->conv = pev;
	c->have_conv = m->time_conv.cap_user_time_zero;
	if (m->kernel.kcore) {
		struct decode_file k = { .raw = true, .addr = m->kernel.kcore_base };
		struct decode_file *n = realloc(c->kcore, (c->nr_kcore + 1) * sizeof(*n));

		if (!n || !(k.path = in_dir(dir, m->kernel.kcore))) {
			c->kcore = n ? n : c->kcore;
			return err_runtime(e, -ENOMEM, "out of memory");
		}
		c->kcore = n;
		n[c->nr_kcore++] = k;
	}
	for (int i = 0; i < m->nr_streams; i++) {
		/* A stream that holds no trace has nothing to decode (info lists it as empty). */
		if (!named(m->streams[i].file, names, nr) || (!nr && !m->streams[i].bytes))
			continue;
		ret = add_stream(c, m, dir, i, m->streams[i].file, &pev);
		if (ret)
			return err_runtime(e, ret, "out of memory");
	}
	/* Snapshot mode: each window is a trace of its own, with its stream's sideband. */
	for (int k = 0; k < m->nr_snapshots; k++) {
		const struct msnapshot *sn = &m->snapshots[k];

		for (int w = 0; w < sn->nr_windows; w++) {
			const struct mwindow *win = &sn->windows[w];
			int i = window_stream(m, win);

			if (!named(win->file, names, nr) || (!nr && !win->bytes))
				continue;
			if (i < 0)
				return err_runtime(e, -EINVAL, "%s/manifest.json: snapshot %u's window "
						   "%s belongs to no stream (cpu %d, tid %d)", dir,
						   sn->number, win->file, win->cpu, win->tid);
			ret = add_stream(c, m, dir, i, win->file, &pev);
			if (ret)
				return err_runtime(e, ret, "out of memory");
		}
	}
	return 0;
}

/* The JIT perf maps record copied (perf-maps/perf-PID.map), when there are. */
static int perfmap_dir(struct decode_config *c, const char *dir)
{
	char *maps = in_dir(dir, BUNDLE_PERF_MAPS);
	struct stat st;

	if (!maps)
		return -ENOMEM;
	if (!lstat(maps, &st) && S_ISDIR(st.st_mode)) {
		free(c->perfmap_dir);
		c->perfmap_dir = maps;
	} else {
		free(maps);
	}
	return 0;
}

int decode_bundle(struct decode_config *c, const char *dir, char *const *names, size_t nr,
		  struct error *e)
{
	struct manifest m;
	int fd, ret;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return err_usage_code(e, -errno, "%s: %s", dir, strerror(errno));
	ret = manifest_read(fd, dir, &m, e);
	close(fd);
	if (ret)
		return ret;
	for (size_t k = 0; k < nr; k++) {
		bool found = false;

		for (int i = 0; i < m.nr_streams && !found; i++)
			found = named(m.streams[i].file, &names[k], 1);
		for (int i = 0; i < m.nr_snapshots && !found; i++)
			for (int w = 0; w < m.snapshots[i].nr_windows && !found; w++)
				found = named(m.snapshots[i].windows[w].file, &names[k], 1);
		if (!found) {
			ret = err_usage(e, "%s: no stream '%s' in the bundle", dir, names[k]);
			err_hint(e, "'ptcollect info %s' lists its streams", dir);
			goto out;
		}
	}
	ret = fill(c, &m, dir, names, nr, e);
	if (!ret)
		ret = perfmap_dir(c, dir);
	if (!ret)
		ret = (int)c->nr_streams;
	else if (ret == -ENOMEM)
		err_runtime(e, ret, "out of memory");
out:
	manifest_free(&m);
	return ret;
}

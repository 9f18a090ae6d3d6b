// SPDX-License-Identifier: MIT
/* perf.data's header features read from their bytes: strings, cmdline, nrcpus, build-ids, names. */
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata_features.h"

#define MAX_CPUS	(1 << 16)

int pd_take(struct pd_cursor *c, void *dst, size_t n, struct error *e)
{
	if (c->left < n)
		return err_usage(e, "at offset %" PRIu64 ": %s ends %zu bytes early", c->off,
				 c->what, n - c->left);
	memcpy(dst, c->p, n);
	c->p += n;
	c->left -= n;
	c->off += n;
	return 0;
}

/* perf's header string: a u32 length, then that many bytes, NUL-terminated within. */
int pd_take_string(struct pd_cursor *c, char **dst, struct error *e)
{
	uint32_t len;
	char *s;

	if (pd_take(c, &len, sizeof(len), e))
		return -EINVAL;
	if (len > c->left || !memchr(c->p, 0, len))
		return err_usage(e, "at offset %" PRIu64 ": %s: a string of %u bytes %s", c->off,
				 c->what, len, len > c->left ? "runs past its section" :
				 "has no terminating NUL");
	s = strdup((const char *)c->p);
	if (!s)
		return err_runtime(e, -ENOMEM, "out of memory");
	free(*dst);
	*dst = s;
	c->p += len;
	c->left -= len;
	c->off += len;
	return 0;
}

int pd_feat_cmdline(struct pd_features *f, struct pd_cursor *c, struct error *e)
{
	uint32_t nr;

	if (pd_take(c, &nr, sizeof(nr), e))
		return -EINVAL;
	if (nr > c->left / 4)
		return err_usage(e, "at offset %" PRIu64 ": cmdline: %u strings cannot fit in %zu "
				 "bytes", c->off - 4, nr, c->left);
	for (int i = 0; i < f->cmdline_argc; i++)
		free(f->cmdline[i]);
	free(f->cmdline);
	f->cmdline_argc = 0;
	f->cmdline = calloc((size_t)nr + 1, sizeof(char *));
	if (!f->cmdline)
		return err_runtime(e, -ENOMEM, "out of memory");
	for (uint32_t i = 0; i < nr; i++) {
		if (pd_take_string(c, &f->cmdline[i], e))
			return -EINVAL;
		f->cmdline_argc++;
	}
	return 0;
}

int pd_feat_nrcpus(struct pd_features *f, struct pd_cursor *c, struct error *e)
{
	uint32_t v[2];	/* available, online */

	if (pd_take(c, v, sizeof(v), e))
		return -EINVAL;
	if (v[0] > MAX_CPUS || v[1] > MAX_CPUS)
		return err_usage(e, "at offset %" PRIu64 ": nrcpus: %u available, %u online: more "
				 "than %d", c->off - 8, v[0], v[1], MAX_CPUS);
	f->nr_cpus_avail = (int)v[0];
	f->nr_cpus_online = (int)v[1];
	return 0;
}

/*
 * The build-ids of the recording: header, pid, 24 bytes of build-id (its
 * length in byte 20 when misc has bit 15), the file's name. Only the vdso's
 * is kept: it names the vdso in perf's build-id cache.
 */
int pd_feat_build_id(struct pd_features *f, struct pd_cursor *c, struct error *e)
{
	static const char hex[] = "0123456789abcdef";

	while (c->left) {
		struct perf_event_header h;
		const uint8_t *id;
		size_t n = 20;

		if (pd_take(c, &h, sizeof(h), e))
			return -EINVAL;
		if (h.size < 36 || h.size - sizeof(h) > c->left)
			return err_usage(e, "at offset %" PRIu64 ": build_id: an entry of %u bytes "
					 "%s", c->off - 8, h.size, h.size < 36 ? "is too short" :
					 "runs past its section");
		id = c->p + 4;
		if ((h.misc & (1 << 15)) && id[20] <= 20)
			n = id[20];
		if (memchr(c->p + 28, 0, h.size - 36) && !strcmp((const char *)c->p + 28, "[vdso]") &&
		    n) {
			char *s = malloc(2 * n + 1);

			if (!s)
				return err_runtime(e, -ENOMEM, "out of memory");
			for (size_t i = 0; i < n; i++) {
				s[2 * i] = hex[id[i] >> 4];
				s[2 * i + 1] = hex[id[i] & 15];
			}
			s[2 * n] = '\0';
			free(f->vdso_build_id);
			f->vdso_build_id = s;
		}
		c->p += h.size - sizeof(h);
		c->left -= h.size - sizeof(h);
		c->off += h.size - sizeof(h);
	}
	return 0;
}

const char *pd_feat_name(int feat)
{
	static const char *const names[] = {
		[FEAT_BUILD_ID] = "build_id", [FEAT_HOSTNAME] = "hostname",
		[FEAT_OSRELEASE] = "osrelease", [FEAT_VERSION] = "version", [FEAT_ARCH] = "arch",
		[FEAT_NRCPUS] = "nrcpus", [FEAT_CPUDESC] = "cpudesc", [FEAT_CPUID] = "cpuid",
		[FEAT_CMDLINE] = "cmdline", [FEAT_EVENT_DESC] = "event_desc",
	};

	return feat >= 0 && feat < (int)(sizeof(names) / sizeof(names[0])) && names[feat] ?
	       names[feat] : NULL;
}

/* perf's names of its header features (HEADER_*), as `perf report --header` lists them. */
const char *pd_feat_perf_name(int feat)
{
	static const char *const names[] = {
		"RESERVED", "TRACING_DATA", "BUILD_ID", "HOSTNAME", "OSRELEASE", "VERSION",
		"ARCH", "NRCPUS", "CPUDESC", "CPUID", "TOTAL_MEM", "CMDLINE", "EVENT_DESC",
		"CPU_TOPOLOGY", "NUMA_TOPOLOGY", "BRANCH_STACK", "PMU_MAPPINGS", "GROUP_DESC",
		"AUXTRACE", "STAT", "CACHE", "SAMPLE_TIME", "MEM_TOPOLOGY", "CLOCKID",
		"DIR_FORMAT", "BPF_PROG_INFO", "BPF_BTF", "COMPRESSED", "CPU_PMU_CAPS",
		"CLOCK_DATA", "HYBRID_TOPOLOGY", "PMU_CAPS",
	};

	return feat >= 0 && feat < (int)(sizeof(names) / sizeof(names[0])) ? names[feat] :
	       "unknown to ptcollect";
}

void pd_features_free(struct pd_features *f)
{
	free(f->hostname);
	free(f->os_release);
	free(f->version);
	free(f->arch);
	free(f->cpudesc);
	free(f->cpuid);
	for (int i = 0; i < f->cmdline_argc; i++)
		free(f->cmdline[i]);
	free(f->cmdline);
	free(f->vdso_build_id);
}

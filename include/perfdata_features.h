/* SPDX-License-Identifier: MIT */
/*
 * perf.data's header features, read from their bytes without trusting them:
 * the strings (hostname, osrelease, ...), cmdline, nrcpus and the vdso's
 * build-id, into struct pd_features; every length is checked against what
 * is left of the section, and a refusal names the offset. Where the
 * sections are (file mode's table, pipe mode's HEADER_FEATURE) is perfdata's.
 */
#ifndef PTC_PERFDATA_FEATURES_H
#define PTC_PERFDATA_FEATURES_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* What the header's features say about the recording machine; NULL or -1 when absent. */
struct pd_features {
	char *hostname, *os_release, *version, *arch, *cpudesc, *cpuid;
	int nr_cpus_online, nr_cpus_avail;
	char **cmdline;
	int cmdline_argc;
	char *vdso_build_id;	/* lowercase hex of the [vdso] in HEADER_BUILD_ID */
};

/* Header features this reader takes in (tools/perf/util/header.h). */
enum {
	FEAT_BUILD_ID = 2,
	FEAT_HOSTNAME = 3,
	FEAT_OSRELEASE = 4,
	FEAT_VERSION = 5,
	FEAT_ARCH = 6,
	FEAT_NRCPUS = 7,
	FEAT_CPUDESC = 8,
	FEAT_CPUID = 9,
	FEAT_CMDLINE = 11,
	FEAT_EVENT_DESC = 12,
};

/* A feature section being read: what is left of it, where, and which feature. */
struct pd_cursor {
	const uint8_t *p;
	size_t left;
	uint64_t off;		/* input offset of p, for messages */
	const char *what;	/* the feature */
};

/* @n bytes from @c into @dst; a usage error when the section has fewer. */
int pd_take(struct pd_cursor *c, void *dst, size_t n, struct error *e);

/* perf's header string: a u32 length, then that many bytes, NUL-terminated within. */
int pd_take_string(struct pd_cursor *c, char **dst, struct error *e);

/* The contents of CMDLINE, NRCPUS and BUILD_ID (the vdso's build-id) into @f. */
int pd_feat_cmdline(struct pd_features *f, struct pd_cursor *c, struct error *e);
int pd_feat_nrcpus(struct pd_features *f, struct pd_cursor *c, struct error *e);
int pd_feat_build_id(struct pd_features *f, struct pd_cursor *c, struct error *e);

/* ptcollect's name of a feature it reads ("hostname", ...), or NULL. */
const char *pd_feat_name(int feat);

/* perf's name of any feature (HEADER_*), as `perf report --header` lists it. */
const char *pd_feat_perf_name(int feat);

void pd_features_free(struct pd_features *f);

#endif

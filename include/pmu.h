/* SPDX-License-Identifier: MIT */
/*
 * The intel_pt PMU as sysfs describes it: type, format/ terms with their bit
 * layout, caps/, nr_addr_filters and the timing files. Every read of sysfs is
 * rooted at $PTCOLLECT_SYSFS when set (default /sys), so fixture PMUs can stand
 * in for the real one in tests.
 */
#ifndef PTC_PMU_H
#define PTC_PMU_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

#define PMU_NAME_MAX	64
#define PMU_MAX_TERMS	64
#define PMU_MAX_CAPS	64

enum pmu_field {
	PMU_FIELD_CONFIG,
	PMU_FIELD_CONFIG1,
	PMU_FIELD_CONFIG2,
};

/* One format/ term: "config:0", "config:14-17", "config1:0-3,config:5". */
struct pmu_term {
	char name[PMU_NAME_MAX];
	enum pmu_field field;
	uint64_t mask;		/* bits of field this term covers, in order */
};

struct pmu_cap {
	char name[PMU_NAME_MAX];
	uint64_t value;		/* caps/ files are hex (perf reads them with %x) */
};

struct pmu {
	char name[PMU_NAME_MAX];
	char sysfs[4096];	/* .../bus/event_source/devices/NAME */
	bool present;
	int type;
	int nr_terms;
	struct pmu_term terms[PMU_MAX_TERMS];
	int nr_caps;
	struct pmu_cap caps[PMU_MAX_CAPS];
	int nr_addr_filters;	/* -1 when the file is absent */
	int max_nonturbo_ratio;	/* -1 when absent */
	uint64_t tsc_art_ratio_num, tsc_art_ratio_den;	/* 0/0 when absent */
};

/* Root for sysfs reads: $PTCOLLECT_SYSFS or "/sys". */
const char *pmu_sysfs_root(void);
/* True when $PTCOLLECT_SYSFS points somewhere else than /sys (a fixture). */
bool pmu_sysfs_is_fixture(void);

/*
 * Load PMU @name. Returns 0 with pmu->present set, or a negative errno with
 * @e: -ENOENT (a runtime error) when the PMU does not exist (pmu->present
 * false), -EINVAL (usage) for a name that cannot be a PMU's, another runtime
 * error for a malformed sysfs (why says which file and what is wrong).
 */
int pmu_load(struct pmu *pmu, const char *name, struct error *e);

const struct pmu_term *pmu_term_find(const struct pmu *pmu, const char *name);
/* Value of caps/@name, or @def when the file is absent. */
uint64_t pmu_cap(const struct pmu *pmu, const char *name, uint64_t def);
bool pmu_has_cap(const struct pmu *pmu, const char *name);

/* Largest value the term's bits can hold. */
uint64_t pmu_term_max(const struct pmu_term *t);
/* Put @val into the term's bits of *@field_val (bits not set by val are cleared). */
void pmu_term_apply(const struct pmu_term *t, uint64_t val, uint64_t *field_val);
/* Value of the term's bits in @field_val. */
uint64_t pmu_term_extract(const struct pmu_term *t, uint64_t field_val);

#endif

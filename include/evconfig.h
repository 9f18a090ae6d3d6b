/* SPDX-License-Identifier: MIT */
/*
 * Event strings in perf's syntax, "intel_pt/TERMS/MODS", turned into the
 * attr fields that decide what is traced, with perf's default terms and
 * rules, and checked against the PMU's format/ and caps/.
 */
#ifndef PTC_EVCONFIG_H
#define PTC_EVCONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "pmu.h"

struct evconfig {
	uint64_t config, config1, config2;
	bool exclude_user, exclude_kernel, exclude_hv;
	char pmu_name[PMU_NAME_MAX];
	bool forced_pt;		/* pt was 0 (written or in config=) and is 1 now, as in perf */
};

/* The event used when no -e is given. */
#define EVCONFIG_DEFAULT "intel_pt//u"

/*
 * Parse @spec against @pmu into @ev. With @pmu NULL only the syntax is
 * checked (terms and modifiers well formed; ev->pmu_name set). Returns 0, or
 * -EINVAL with a usage error in @e naming the term or modifier that is wrong
 * and what is valid instead.
 */
int evconfig_parse(const char *spec, const struct pmu *pmu, struct evconfig *ev, struct error *e);

/* perf's default config for intel_pt on this PMU ("tsc,mtc,mtc_period=..."). */
uint64_t evconfig_default_config(const struct pmu *pmu, char *terms, size_t termslen);

/* Valid values of a period term (cyc_thresh, mtc_period, psb_period) as a bitmap. */
uint64_t evconfig_period_valid(const struct pmu *pmu, const char *term);
/* Format a bitmap of valid values as "0,3,6-9". */
void evconfig_valid_values(uint64_t valid, char *out, size_t len);

#endif

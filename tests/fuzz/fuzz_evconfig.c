// SPDX-License-Identifier: MIT
/* Event strings against a fixed Skylake-like PMU: never crash, always say why on error. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "evconfig.h"

static struct pmu pmu;

static void add_term(const char *name, uint64_t mask)
{
	struct pmu_term *t = &pmu.terms[pmu.nr_terms++];

	strcpy(t->name, name);
	t->field = PMU_FIELD_CONFIG;
	t->mask = mask;
}

static void add_cap(const char *name, uint64_t v)
{
	struct pmu_cap *c = &pmu.caps[pmu.nr_caps++];

	strcpy(c->name, name);
	c->value = v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct error e = { 0 };
	char spec[512];
	struct evconfig ev;

	if (!pmu.present) {
		strcpy(pmu.name, "intel_pt");
		pmu.present = true;
		add_term("pt", 1);
		add_term("cyc", 2);
		add_term("mtc", 1 << 9);
		add_term("tsc", 1 << 10);
		add_term("branch", 1 << 13);
		add_term("ptw", 1 << 12);
		add_term("mtc_period", 0xfULL << 14);
		add_term("cyc_thresh", 0xfULL << 19);
		add_term("psb_period", 0xfULL << 24);
		add_cap("mtc", 1);
		add_cap("psb_cyc", 1);
		add_cap("mtc_periods", 0x249);
		add_cap("psb_periods", 0x3f);
		add_cap("cycle_thresholds", 0x3fff);
	}
	if (size >= sizeof(spec))
		size = sizeof(spec) - 1;
	memcpy(spec, data, size);
	spec[size] = '\0';
	/* Every refusal is a usage error that carries a message. */
	if (evconfig_parse(spec, &pmu, &ev, &e) && (!e.why[0] || !e.usage))
		abort();
	err_clear(&e);
	if (evconfig_parse(spec, NULL, &ev, &e) && (!e.why[0] || !e.usage))
		abort();
	err_clear(&e);
	return 0;
}

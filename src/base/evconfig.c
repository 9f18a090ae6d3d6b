// SPDX-License-Identifier: MIT
/*
 * "intel_pt/TERMS/MODS" -> attr.config and the exclusion bits, by perf's
 * rules: perf's default terms for intel_pt, raw config=/config1=/config2=
 * terms applied first, then format terms, each clearing its own field bits,
 * in the order given. Then the values are checked against caps/: perf's own
 * checks for the period fields, and the driver's for feature bits, so that
 * what the kernel would refuse with a bare EINVAL is refused here by name.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evconfig.h"

#define EV_MAX_TERMS 64

struct ev_term {
	char name[PMU_NAME_MAX];
	uint64_t val;
};

/* Feature bits the driver only accepts when a capability says the CPU has them. */
static const struct {
	const char *term;
	const char *cap;
	const char *needs_term;	/* another term that must be set too */
} features[] = {
	{ "cyc",	"psb_cyc",		NULL },
	{ "mtc",	"mtc",			NULL },
	{ "ptw",	"ptwrite",		NULL },
	{ "fup_on_ptw",	"ptwrite",		"ptw" },
	{ "pwr_evt",	"power_event_trace",	NULL },
	{ "event",	"event_trace",		NULL },
	{ "notnt",	"tnt_disable",		NULL },
};

/* Period fields: their valid values are a bitmap in caps/ (perf's check). */
static const struct {
	const char *term;
	const char *bitmap_cap;
	const char *supported_cap;
} periods[] = {
	{ "cyc_thresh",	"cycle_thresholds",	"psb_cyc" },
	{ "mtc_period",	"mtc_periods",		"mtc" },
	{ "psb_period",	"psb_periods",		"psb_cyc" },
};

/* Closest set bit to @target at or below it, else the first above (perf's pick). */
static int pick_bit(uint64_t bits, int target)
{
	int pick = -1;

	for (int pos = 0; bits; bits >>= 1, pos++) {
		if (!(bits & 1))
			continue;
		if (pos <= target || pick < 0)
			pick = pos;
		if (pos >= target)
			break;
	}
	return pick;
}

static void apply_named(const struct pmu *pmu, const char *name, uint64_t val, uint64_t *cfg)
{
	const struct pmu_term *t = pmu_term_find(pmu, name);

	if (t && t->field == PMU_FIELD_CONFIG)
		pmu_term_apply(t, val, cfg);
}

uint64_t evconfig_default_config(const struct pmu *pmu, char *terms, size_t termslen)
{
	uint64_t cfg = 0, mtc_periods = 0;
	char buf[256];
	int pos = 0;

	pos += snprintf(buf + pos, sizeof(buf) - pos, "tsc");
	apply_named(pmu, "tsc", 1, &cfg);
	if (pmu_cap(pmu, "mtc", 1)) {
		mtc_periods = pmu_cap(pmu, "mtc_periods", 0);
		if (mtc_periods) {
			int p = pick_bit(mtc_periods, 3);

			pos += snprintf(buf + pos, sizeof(buf) - pos, ",mtc,mtc_period=%d", p);
			apply_named(pmu, "mtc", 1, &cfg);
			apply_named(pmu, "mtc_period", p, &cfg);
		}
	}
	/* perf only picks a PSB period when MTC periods exist; keep that quirk. */
	if (pmu_cap(pmu, "psb_cyc", 1) && mtc_periods) {
		uint64_t psb_periods = pmu_cap(pmu, "psb_periods", 0);

		if (psb_periods) {
			int p = pick_bit(psb_periods, 3);

			pos += snprintf(buf + pos, sizeof(buf) - pos, ",psb_period=%d", p);
			apply_named(pmu, "psb_period", p, &cfg);
		}
	}
	if (pmu_term_find(pmu, "pt") && pmu_term_find(pmu, "branch")) {
		pos += snprintf(buf + pos, sizeof(buf) - pos, ",pt,branch");
		apply_named(pmu, "pt", 1, &cfg);
		apply_named(pmu, "branch", 1, &cfg);
	}
	if (terms)
		snprintf(terms, termslen, "%s", buf);
	return cfg;
}

static void list_terms(const struct pmu *pmu, char *out, size_t len)
{
	size_t n = 0;

	out[0] = '\0';
	for (int i = 0; i < pmu->nr_terms && n < len; i++)
		n += snprintf(out + n, len - n, "%s, ", pmu->terms[i].name);
	if (n < len)
		snprintf(out + n, len - n, "config, config1, config2");
}

/* "0,3,6-9": the values set in a capability bitmap. */
void evconfig_valid_values(uint64_t valid, char *out, size_t len)
{
	size_t n = 0;

	out[0] = '\0';
	for (int v = 0; v < 64 && n < len; v++) {
		int end = v;

		if (!(valid & (1ULL << v)))
			continue;
		while (end + 1 < 64 && (valid & (1ULL << (end + 1))))
			end++;
		if (end > v + 1)
			n += snprintf(out + n, len - n, "%s%d-%d", n ? "," : "", v, end);
		else if (end == v + 1)
			n += snprintf(out + n, len - n, "%s%d,%d", n ? "," : "", v, end);
		else
			n += snprintf(out + n, len - n, "%s%d", n ? "," : "", v);
		v = end;
	}
}

uint64_t evconfig_period_valid(const struct pmu *pmu, const char *term)
{
	for (size_t i = 0; i < sizeof(periods) / sizeof(periods[0]); i++) {
		uint64_t valid;

		if (strcmp(periods[i].term, term))
			continue;
		valid = pmu_cap(pmu, periods[i].bitmap_cap, 0);
		if (!pmu_cap(pmu, periods[i].supported_cap, 1))
			valid = 0;
		return valid | 1;	/* 0 is always valid */
	}
	return 0;
}

/* Split "name[=value]". Returns 0 or -EINVAL with @e. */
static int parse_term(const char *s, size_t len, struct ev_term *t, struct error *e)
{
	const char *eq = memchr(s, '=', len);
	size_t nlen = eq ? (size_t)(eq - s) : len;
	char num[32];
	char *end;

	if (!nlen || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return err_usage(e, "'%.*s' is not a term (expected NAME or NAME=VALUE)",
				 (int)len, s);
	for (size_t i = 0; i < nlen; i++) {
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-')
			return err_usage(e, "'%.*s' is not a term name", (int)nlen, s);
	}
	if (nlen >= sizeof(t->name))
		return err_usage(e, "term name '%.*s' is too long", (int)nlen, s);
	memcpy(t->name, s, nlen);
	t->name[nlen] = '\0';
	if (!eq) {
		t->val = 1;
		return 0;
	}
	len -= nlen + 1;
	if (!len || len >= sizeof(num))
		return err_usage(e, "term '%s' needs a value (decimal or 0x hex)", t->name);
	memcpy(num, eq + 1, len);
	num[len] = '\0';
	errno = 0;
	if (!isdigit((unsigned char)num[0]))
		goto bad;
	if (num[0] == '0' && (num[1] == 'x' || num[1] == 'X')) {
		if (!isxdigit((unsigned char)num[2]))
			goto bad;
		t->val = strtoull(num + 2, &end, 16);
	} else {
		t->val = strtoull(num, &end, 10);
	}
	if (*end || errno)
		goto bad;
	return 0;
bad:
	return err_usage(e, "term '%s': '%s' is not a number (decimal or 0x hex)",
			 t->name, num);
}

static int check_caps(const struct pmu *pmu, const struct evconfig *ev, struct error *e)
{
	char valid_str[256];

	for (size_t i = 0; i < sizeof(periods) / sizeof(periods[0]); i++) {
		const struct pmu_term *t = pmu_term_find(pmu, periods[i].term);
		uint64_t valid, v;

		if (!t || t->field != PMU_FIELD_CONFIG)
			continue;
		v = pmu_term_extract(t, ev->config);
		valid = evconfig_period_valid(pmu, periods[i].term);
		if (v < 64 && (valid & (1ULL << v)))
			continue;
		evconfig_valid_values(valid, valid_str, sizeof(valid_str));
		return err_usage(e, "%s=%" PRIu64 " is not supported by this PMU "
				 "(caps/%s); valid values: %s", periods[i].term, v,
				 periods[i].bitmap_cap, valid_str);
	}
	for (size_t i = 0; i < sizeof(features) / sizeof(features[0]); i++) {
		const struct pmu_term *t = pmu_term_find(pmu, features[i].term);
		const struct pmu_term *need;

		if (!t || t->field != PMU_FIELD_CONFIG || !pmu_term_extract(t, ev->config))
			continue;
		if (!pmu_cap(pmu, features[i].cap, 0)) {
			return err_usage(e, "%s is not supported by this PMU (caps/%s is %s); "
					 "drop '%s' from the event", features[i].term,
					 features[i].cap, pmu_has_cap(pmu, features[i].cap) ?
					 "0" : "absent", features[i].term);
		}
		need = features[i].needs_term ? pmu_term_find(pmu, features[i].needs_term) : NULL;
		if (need && !pmu_term_extract(need, ev->config))
			return err_usage(e, "%s needs %s: add '%s' to the event", features[i].term,
					 features[i].needs_term, features[i].needs_term);
	}
	return 0;
}

static int parse_mods(const char *mods, struct evconfig *ev, struct error *e)
{
	bool u = false, k = false;

	for (const char *m = mods; *m; m++) {
		if (*m == 'u') {
			u = true;
		} else if (*m == 'k') {
			k = true;
		} else {
			return err_usage(e, "modifier '%c' in '%s' is not supported; valid "
					 "modifiers: u (user), k (kernel), uk (both)", *m, mods);
		}
	}
	/* perf: the first u or k excludes everything, then each lets its level in. */
	if (u || k) {
		ev->exclude_user = !u;
		ev->exclude_kernel = !k;
		ev->exclude_hv = true;
	}
	return 0;
}

int evconfig_parse(const char *spec, const struct pmu *pmu, struct evconfig *ev, struct error *e)
{
	struct ev_term terms[EV_MAX_TERMS];
	const struct pmu_term *pt;
	const char *s1, *s2, *p;
	int nr = 0, ret;
	size_t plen;

	memset(ev, 0, sizeof(*ev));
	s1 = strchr(spec, '/');
	s2 = s1 ? strchr(s1 + 1, '/') : NULL;
	if (!s1 || !s2)
		return err_usage(e, "'%s' is not an event of the form PMU/TERMS/MODIFIERS "
				 "(e.g. intel_pt//u or intel_pt/cyc,mtc_period=3/u)", spec);
	plen = s1 - spec;
	if (!plen || plen >= sizeof(ev->pmu_name))
		return err_usage(e, "'%s' does not start with a PMU name (e.g. intel_pt//u)",
				 spec);
	if (pmu && (plen != strlen(pmu->name) || strncmp(spec, pmu->name, plen)))
		return err_usage(e, "PMU '%.*s' is not supported: ptcollect records %s events",
				 (int)plen, spec, pmu->name);
	memcpy(ev->pmu_name, spec, plen);
	ev->pmu_name[plen] = '\0';

	for (p = s1 + 1; p < s2;) {
		const char *comma = memchr(p, ',', s2 - p);
		size_t len = comma ? (size_t)(comma - p) : (size_t)(s2 - p);

		if (nr == EV_MAX_TERMS)
			return err_usage(e, "too many terms (at most %d)", EV_MAX_TERMS);
		ret = parse_term(p, len, &terms[nr++], e);
		if (ret)
			return ret;
		p += len + (comma ? 1 : 0);
		if (comma && p == s2)
			return err_usage(e, "empty term after ',' in '%.*s'",
					 (int)(s2 - s1 - 1), s1 + 1);
	}
	ret = parse_mods(s2 + 1, ev, e);
	if (ret || !pmu)
		return ret;	/* no PMU: a syntax check only */

	ev->config = evconfig_default_config(pmu, NULL, 0);
	/* Raw terms first (perf applies them before the format terms). */
	for (int i = 0; i < nr; i++) {
		if (!strcmp(terms[i].name, "config"))
			ev->config = terms[i].val;
		else if (!strcmp(terms[i].name, "config1"))
			ev->config1 = terms[i].val;
		else if (!strcmp(terms[i].name, "config2"))
			ev->config2 = terms[i].val;
	}
	for (int i = 0; i < nr; i++) {
		const struct pmu_term *t;
		uint64_t *field;
		char valid[1024];

		if (!strncmp(terms[i].name, "config", 6) &&
		    (!terms[i].name[6] || !strcmp(terms[i].name + 6, "1") ||
		     !strcmp(terms[i].name + 6, "2")))
			continue;
		t = pmu_term_find(pmu, terms[i].name);
		if (!t) {
			list_terms(pmu, valid, sizeof(valid));
			return err_usage(e, "unknown term '%s' for PMU %s; valid terms: %s",
					 terms[i].name, pmu->name, valid);
		}
		if (terms[i].val > pmu_term_max(t))
			return err_usage(e, "%s=%" PRIu64 " is too big for the term "
					 "(maximum %" PRIu64 ")", terms[i].name, terms[i].val,
					 pmu_term_max(t));
		field = t->field == PMU_FIELD_CONFIG ? &ev->config :
			t->field == PMU_FIELD_CONFIG1 ? &ev->config1 : &ev->config2;
		pmu_term_apply(t, terms[i].val, field);
	}
	/*
	 * perf sets pt=1 whatever was written (intel_pt_validate_config): the
	 * driver refuses pt=0 with branch=1 and reads pt=0,branch=0 as its
	 * legacy mode, which perf never sends. The config stays perf's.
	 */
	pt = pmu_term_find(pmu, "pt");
	if (pt && pt->field == PMU_FIELD_CONFIG && !pmu_term_extract(pt, ev->config)) {
		pmu_term_apply(pt, 1, &ev->config);
		ev->forced_pt = true;
	}
	return check_caps(pmu, ev, e);
}

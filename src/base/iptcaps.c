// SPDX-License-Identifier: MIT
/* The libipt in use and what it decodes. */
#include <stdio.h>
#include <string.h>

#include "iptcaps.h"

/* Per packet kind: the libipt version that first decodes it. */
static const struct {
	const char *name;
	unsigned since;
} newer[] = {
	[IPTCAPS_EVENT_TRACE] = { "Event Trace", 0x201 },
	[IPTCAPS_TRIG] = { "TRIG", 0x202 },
};

const char *const iptcaps_errata[] = {
	"bdm70", "bdm64", "skd007", "skd022", "skd010", "skl014", "apl12", "apl11", "skl168",
	"skz84", NULL,
};

void iptcaps_get(struct iptcaps *c)
{
	struct pt_version v = pt_library_version();
	unsigned loaded = (unsigned)v.major << 8 | v.minor;

	memset(c, 0, sizeof(*c));
	snprintf(c->loaded, sizeof(c->loaded), "%u.%u.%u", v.major, v.minor, v.patch);
	snprintf(c->built, sizeof(c->built), "%u.%u.%u", LIBIPT_VERSION_MAJOR,
		 LIBIPT_VERSION_MINOR, LIBIPT_VERSION_PATCH);
	/* The code for a packet is compiled in from the headers, the decoding is the library's. */
	c->version = loaded < PTC_LIBIPT ? loaded : PTC_LIBIPT;
	c->event_trace = c->version >= newer[IPTCAPS_EVENT_TRACE].since;
	c->trig = c->version >= newer[IPTCAPS_TRIG].since;
}

bool iptcaps_decodes(const struct iptcaps *c, enum iptcaps_pkt pkt)
{
	return c->version >= newer[pkt].since;
}

const char *iptcaps_pkt_name(enum iptcaps_pkt pkt)
{
	return newer[pkt].name;
}

void iptcaps_lacks(const struct iptcaps *c, enum iptcaps_pkt pkt, char *buf, size_t size)
{
	/* The older of the two is the one that lacks it. */
	const char *which = c->version < PTC_LIBIPT ? c->loaded : c->built;

	snprintf(buf, size, "this libipt %s does not decode %s packets; ptcollect built with "
		 "libipt \u2265 %u.%u does", which, newer[pkt].name, newer[pkt].since >> 8,
		 newer[pkt].since & 0xff);
}

int iptcaps_newer_packet(const uint8_t *p, size_t len, const char **name)
{
	if (len >= 1 && p[0] == 0xd9) {
		*name = "TRIG";
		return IPTCAPS_TRIG;
	}
	if (len >= 2 && p[0] == 0x02 && (p[1] == 0x13 || p[1] == 0x53)) {
		*name = p[1] == 0x13 ? "CFE" : "EVD";
		return IPTCAPS_EVENT_TRACE;
	}
	return -1;
}

size_t iptcaps_cpus(uint8_t *models, size_t max)
{
	static const struct pt_errata none;
	size_t n = 0;

	for (unsigned m = 0; m < 256; m++) {
		struct pt_cpu cpu = { .vendor = pcv_intel, .family = 6, .model = (uint8_t)m };
		struct pt_errata e;

		memset(&e, 0, sizeof(e));
		if (pt_cpu_errata(&e, &cpu) < 0 || !memcmp(&e, &none, sizeof(e)))
			continue;
		if (n < max)
			models[n] = (uint8_t)m;
		n++;
	}
	return n;
}

void iptcaps_summary(const struct iptcaps *c, char *buf, size_t size)
{
	uint8_t models[256];
	size_t n = iptcaps_cpus(models, sizeof(models));
	char built[48] = "";

	if (strcmp(c->built, c->loaded))
		snprintf(built, sizeof(built), " (built with %s)", c->built);
	snprintf(buf, size, "libipt %s%s: %s Event Trace, %s TRIG; the errata of %zu Intel CPU "
		 "models", c->loaded, built, c->event_trace ? "decodes" : "no",
		 c->trig ? "decodes" : "no", n);
}

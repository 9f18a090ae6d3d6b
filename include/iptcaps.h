/* SPDX-License-Identifier: MIT */
/*
 * The libipt in use: the version compiled against and the one loaded, and what
 * they decode (Event Trace since 2.1, TRIG since 2.2, the CPUs whose errata they know).
 */
#ifndef PTC_IPTCAPS_H
#define PTC_IPTCAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <intel-pt.h>

/* The libipt headers compiled against, as one number: 0x202 for 2.2. */
#define PTC_LIBIPT (LIBIPT_VERSION_MAJOR << 8 | LIBIPT_VERSION_MINOR)

/* What packets a libipt may not decode. */
enum iptcaps_pkt {
	IPTCAPS_EVENT_TRACE,	/* CFE and EVD: libipt 2.1 */
	IPTCAPS_TRIG,		/* TRIG: libipt 2.2 */
};

/*
 * intel_pt's event term (RTIT_CTL.EventEn): the kernel's format/event is config:31. A
 * bundle's attr.config with it set holds Event Trace packets.
 */
#define IPTCAPS_CONFIG_EVENT (1ull << 31)

struct iptcaps {
	char loaded[32];	/* pt_library_version(): "2.2.0" */
	char built[32];		/* the headers': "2.2.0" */
	unsigned version;	/* the lower of the two, 0x202 for 2.2 */
	bool event_trace;	/* decodes CFE/EVD (Event Trace) */
	bool trig;		/* decodes TRIG */
};

void iptcaps_get(struct iptcaps *c);

/* Whether @c decodes @pkt. */
bool iptcaps_decodes(const struct iptcaps *c, enum iptcaps_pkt pkt);

/* The packets' name: "Event Trace", "TRIG". */
const char *iptcaps_pkt_name(enum iptcaps_pkt pkt);

/*
 * "this libipt 2.0.5 does not decode Event Trace packets; ptcollect built with libipt ≥ 2.1
 * does" into @buf.
 */
void iptcaps_lacks(const struct iptcaps *c, enum iptcaps_pkt pkt, char *buf, size_t size);

/*
 * The packet at @p (@len bytes left) is one that libipt decodes only from some version on:
 * that packet kind, or -1; @name gets the packet's ("CFE", "EVD", "TRIG").
 */
int iptcaps_newer_packet(const uint8_t *p, size_t len, const char **name);

/*
 * The CPU models (family 6) for which the loaded libipt knows errata, ascending, into
 * @models (at most @max); returns how many there are.
 */
size_t iptcaps_cpus(uint8_t *models, size_t max);

/*
 * One line for --version: "libipt 2.2.0: decodes Event Trace, decodes TRIG; the errata of
 * 46 Intel CPU models".
 */
void iptcaps_summary(const struct iptcaps *c, char *buf, size_t size);

/* The errata libipt knows by name (pt_errata's fields), NULL-terminated. */
extern const char *const iptcaps_errata[];

#endif

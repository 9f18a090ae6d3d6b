/* SPDX-License-Identifier: MIT */
/*
 * Intel PT packets as libipt's ptdump prints them: one line per packet with
 * its offset, name and payload, and "[offset: what: why]" for a decoding
 * error, after which the dump resynchronizes at the next PSB. The lines are
 * those of ptdump from libipt 2.3 with its default options, or with the
 * options in struct ptdump_opts.
 *
 * ptcollect links Debian's libipt 2.0.5. Packets and bits that came later are
 * decoded here, through libipt's unknown-packet callback, the way libipt 2.3
 * reads them: CFE and EVD (libipt 2.1), TRIG (2.2), and the IF bit of
 * MODE.Exec (2.1). Any other opcode is an error, as it is for ptdump.
 */
#ifndef PTC_PTPACKET_H
#define PTC_PTPACKET_H

#include <intel-pt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dumpfield.h"
#include "error.h"

/* Who decoded the packet: libipt (see pkt), or this module. */
enum ptpkt_kind {
	PTPKT_LIBIPT,
	PTPKT_CFE,	/* control-flow event */
	PTPKT_EVD,	/* event data */
	PTPKT_TRIG,	/* trigger */
};

struct ptpkt {
	uint64_t offset;
	const uint8_t *raw;	/* the packet's bytes */
	uint8_t size;
	enum ptpkt_kind kind;
	struct pt_packet pkt;	/* PTPKT_LIBIPT */
	bool exec_if;		/* MODE.Exec: the interrupt flag (libipt 2.0.5 drops it) */
	union {
		struct {
			uint8_t type, vector;
			bool ip;
		} cfe;
		struct {
			uint8_t type;
			uint64_t payload;
		} evd;
		struct {
			uint8_t trbv;
			uint16_t icnt;
			bool ip, icntv, mult;
		} trig;
	} x;
};

/* ptdump's options that change its default lines (ptdump --help says what each does). */
struct ptdump_opts {
	bool no_offset;		/* --no-offset */
	bool raw;		/* --raw: the packet's bytes */
	bool lastip;		/* --lastip: the last IP after each IP packet */
	bool exec_mode;		/* --exec-mode: the mode on MODE.Exec */
	bool no_pad;		/* --no-pad */
	bool no_timing;		/* --no-timing: no TSC, CBR, TMA, MTC, CYC */
	bool no_cyc;		/* --no-cyc */
	bool no_sync;		/* --no-sync: decode from offset 0, no PSB search first */
	bool quiet;		/* --quiet: errors only */
	bool time;		/* --time: libipt's TSC estimate after timing packets */
	bool tcal;		/* --tcal: its calibration (fast counter:cycles) instead */
	bool time_delta;	/* --time-delta: the change since the last one */
	bool no_tcal;		/* --no-tcal: no calibration */
	bool no_wall_clock;	/* --no-wall-clock: no error without a TSC yet */
	bool keep_tcal_on_ovf;	/* --keep-tcal-on-ovf */
	uint8_t mtc_freq;	/* --mtc-freq, --nom-freq, --cpuid-0x15.eax/ebx: libipt's config */
	uint8_t nom_freq;
	uint32_t cpuid_0x15_eax, cpuid_0x15_ebx;
	bool track_sb;		/* track time for sideband (ptdump's --pevent:*): sb_due lines */
	bool has_cpu;		/* --cpu F/M[/S]: libipt's errata for @cpu */
	struct pt_cpu cpu;
	bool mapped;		/* the buffer maps a file privately: pages behind may be dropped */
	int fd;			/* with mapped: the file, from offset 0, for its holes; or -1 */
};

#define PTDUMP_LINE_MAX 160

enum ptdump_kind {
	PTDUMP_PACKET,
	PTDUMP_ERROR,
	PTDUMP_TIME,	/* a hidden timing packet's time update (sideband due): no text */
};

/* One line of the dump, as the walker reports it. */
struct ptdump_line {
	enum ptdump_kind kind;
	uint64_t offset;
	const char *text;		/* the line as ptdump prints it, without newline */
	const struct ptpkt *pkt;	/* PTDUMP_PACKET */
	const char *context;		/* PTDUMP_ERROR: "error decoding packet", ... */
	int code;			/* PTDUMP_ERROR: libipt's error code (negative), or 0 */
	bool sb_due;			/* sideband up to @tsc is due before this line */
	uint64_t tsc;
};

/* Returns 0 to go on; anything else stops the walk and is returned by it. */
typedef int ptdump_line_fn(const struct ptdump_line *line, void *ctx);

struct ptdump_stats {
	uint64_t packets;	/* packets reported (after the options' filters) */
	uint64_t errors;	/* error lines */
	uint64_t resyncs;	/* PSBs found again after an error */
	bool synced;		/* a PSB was found (or --no-sync) */
	int status;		/* ptdump's exit status for this stream */
};

/*
 * Dump the trace in @buf (@len bytes) as ptdump does, reporting each line
 * to @fn. Returns 0, @fn's non-zero return, or a negative errno with @e
 * (only when memory runs out). @st gets the counts.
 */
int ptdump_walk(const uint8_t *buf, size_t len, const struct ptdump_opts *o,
		ptdump_line_fn *fn, void *ctx, struct ptdump_stats *st, struct error *e);

/* The packet's name as ptdump prints it: "tip.pge", "mode.exec", "cfe", ... */
const char *ptpacket_name(const struct ptpkt *p);

/*
 * ptdump's line for @p into @line (at least PTDUMP_LINE_MAX bytes). @lastip
 * is the text of the last-IP column (--lastip), or NULL; @time_id and @time
 * those of the time column (--time: "tsc", --tcal: "fcr"), or NULL.
 */
void ptpacket_line(const struct ptpkt *p, const struct ptdump_opts *o, const char *lastip,
		   const char *time_id, const char *time,
		   char *line, size_t len);

/* The packet's payload as typed fields (not its offset, name or size). */
void ptpacket_fields(const struct ptpkt *p, struct dump_fields *f);

#endif

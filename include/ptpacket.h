/* SPDX-License-Identifier: MIT */
/*
 * Intel PT packets as libipt's ptdump reads them, and the options of its
 * dump (struct ptdump_opts). A packet's line and typed fields are
 * ptpacket_print.h's; the dump of a whole trace, ptdump_walk.h's. The lines
 * are those of ptdump from libipt 2.3 with its default options, or with the
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

/* The packet's name as ptdump prints it: "tip.pge", "mode.exec", "cfe", ... */
const char *ptpacket_name(const struct ptpkt *p);

/* libipt's callback for opcodes it does not know; @context is the struct ptpkt being read. */
int ptpacket_decode_unknown(struct pt_packet_unknown *unknown, const struct pt_config *config,
			    const uint8_t *pos, void *context);

/* A packet libipt 2.1 or 2.2 decoded itself (CFE, EVD, TRIG) into @p's own fields. */
void ptpacket_adopt_newer(struct ptpkt *p);

/* A sext-48 IP's 64 bits. */
uint64_t ptpacket_sext48(uint64_t v);

/* FUP, TIP, TIP.PGE or TIP.PGD. */
bool ptpacket_is_ip(const struct ptpkt *p);

#endif

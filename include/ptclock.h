/* SPDX-License-Identifier: MIT */
/*
 * The TSC estimate between timing packets, and the calibration of cycles against time that
 * it needs for CYC: what `dump --time` and `dump --tcal` print. libipt computes the same
 * internally and does not export it; ptdump's output is the reference, so every step here
 * gives the same numbers and the same errors (libipt's pte_* codes) as libipt's.
 *
 * Units: the TSC; the CTC (crystal clock), which MTC and TMA carry a part of; the fast
 * counter (FC), which ticks at the TSC's rate, FC = CTC * cpuid[0x15].ebx / .eax; and core
 * cycles, which CYC counts. The calibration finds FC per cycle ("fcr"), in fixed point.
 */
#ifndef PTC_PTCLOCK_H
#define PTC_PTCLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include <intel-pt.h>

/* fcr is FC per cycle times 2^PTCLOCK_FCR_SHIFT. */
#define PTCLOCK_FCR_SHIFT 8

/* What the estimate needs of the trace's pt_config. */
struct ptclock_params {
	uint32_t ctc_den, ctc_num;	/* cpuid[0x15] eax, ebx: FC = CTC * num / den */
	uint8_t mtc_shift;		/* MTC's 8 bits are CTC bits mtc_shift.. */
	uint8_t nom_ratio;		/* the P1 (nominal) core:bus ratio, 0 unknown */
	bool skl168;			/* CYC may be lost before a PSB */
};

/* The running estimate. */
struct ptclock_est {
	uint64_t tsc;		/* the estimate: anchor + fc */
	uint64_t anchor;	/* the TSC at the last MTC (at a TSC: minus its TMA's FC) */
	uint64_t fc;		/* FC since the anchor, from TMA and CYC */
	uint32_t ctc;		/* CTC of the last MTC, or of the TMA */
	uint32_t ctc_fc0;	/* CTC when fc last counted from 0: where a CYC's cycles start */
	bool have_tsc, have_tma, have_mtc;
	bool cyc_lost;		/* a CYC since the last MTC that could not be counted */
};

/* The calibration: FC per cycle, measured over MTC periods (or TSC to TSC without MTC). */
struct ptclock_cal {
	uint64_t fcr;
	bool have_fcr;
	uint64_t tsc;		/* the last TSC, 0 for none */
	uint64_t cyc_tsc;	/* cycles since it */
	uint64_t cyc_mtc;	/* cycles since the MTC at ctc */
	uint32_t ctc;
	bool have_mtc;
	bool psb_first_mtc;	/* the first MTC after a PSB, when SKL168 applies */
};

struct ptclock {
	struct ptclock_params p;
	struct ptclock_est est;
	struct ptclock_cal cal;
};

/* Both the estimate and the calibration from scratch, for a trace of @cfg. */
void ptclock_init(struct ptclock *c, const struct pt_config *cfg);

/*
 * The estimate's steps, one for each timing packet. A TSC cannot be wrong; the others return
 * 0 or -pte_*, and on an error leave the estimate as libipt does (ready for the next packet).
 */
void ptclock_tsc(struct ptclock *c, uint64_t tsc);
int ptclock_cbr(struct ptclock *c, uint8_t ratio);
int ptclock_tma(struct ptclock *c, uint16_t ctc, uint16_t fc);
int ptclock_mtc(struct ptclock *c, uint8_t ctc);
/* @fcr from ptclock_fcr(); 0 (no calibration) counts the CYC as lost. */
int ptclock_cyc(struct ptclock *c, uint64_t cyc, uint64_t fcr);

/* The estimate into @tsc (also without a TSC yet); -pte_no_time when there was no TSC. */
int ptclock_now(const struct ptclock *c, uint64_t *tsc);

/* The calibration's steps. @in_psb: the packet is in a PSB+ header. */
void ptclock_cal_reset(struct ptclock *c);
void ptclock_cal_psb(struct ptclock *c);
void ptclock_cal_ovf(struct ptclock *c);
int ptclock_cal_tsc(struct ptclock *c, uint64_t tsc, bool in_psb);
int ptclock_cal_cbr(struct ptclock *c, uint8_t ratio, bool in_psb);
int ptclock_cal_mtc(struct ptclock *c, uint8_t ctc);
void ptclock_cal_cyc(struct ptclock *c, uint64_t cyc);

/* The calibrated fcr into @fcr; -pte_no_time before any. */
int ptclock_fcr(const struct ptclock *c, uint64_t *fcr);

#endif

// SPDX-License-Identifier: MIT
/*
 * The TSC estimate and its calibration (see ptclock.h). A TSC sets the time; its TMA says
 * where in the CTC and FC the TSC fell; each MTC then adds the CTC time since the last one,
 * and each CYC the FC its cycles stand for. Calibration measures FC per cycle over MTC
 * periods (TSC to TSC in PSB+ without MTC), or takes it from CBR and the nominal ratio.
 */
#include <string.h>

#include "ptclock.h"

/* MTC carries 8 CTC bits; TMA the low 16; TSC is 56 bits wide. */
#define MTC_CTC_BITS	8
#define TMA_CTC_BITS	16
#define TSC_BITS	56

void ptclock_init(struct ptclock *c, const struct pt_config *cfg)
{
	memset(c, 0, sizeof(*c));
	c->p.ctc_den = cfg->cpuid_0x15_eax;
	c->p.ctc_num = cfg->cpuid_0x15_ebx;
	c->p.mtc_shift = cfg->mtc_freq;
	c->p.nom_ratio = cfg->nom_freq;
	c->p.skl168 = cfg->errata.skl168;
}

/* The CTC values MTC can tell apart: they wrap at this. */
static uint32_t ctc_period(const struct ptclock_params *p)
{
	return 1u << (p->mtc_shift + MTC_CTC_BITS);
}

/*
 * The FC from CTC @then to CTC @now, and the CTC ticks in @ctc when not NULL. Only one
 * wrap of the CTC bits can be seen; more (lost MTCs) makes the estimate short until the next
 * TSC, and a distance no wrap explains is a bad packet.
 */
static int fc_between(const struct ptclock_params *p, uint32_t then, uint32_t now,
		      uint64_t *fc, uint32_t *ctc)
{
	if (now < then)
		now += ctc_period(p);
	if (now < then)
		return -pte_bad_packet;
	if (!p->ctc_den || !p->ctc_num)
		return -pte_bad_config;
	*fc = (uint64_t)(now - then) * p->ctc_num / p->ctc_den;
	if (ctc)
		*ctc = now - then;
	return 0;
}

/* ---- the estimate ---- */

void ptclock_tsc(struct ptclock *c, uint64_t tsc)
{
	struct ptclock_est *e = &c->est;

	/* The full time: all before it, lost CYCs too, is forgotten; ctc_fc0 is kept. */
	e->tsc = e->anchor = tsc;
	e->fc = 0;
	e->ctc = 0;
	e->have_tsc = true;
	e->have_tma = e->have_mtc = false;
	e->cyc_lost = false;
}

/* The estimate scales cycles by the calibration, not by CBR; a ratio of 0 is still bad. */
int ptclock_cbr(struct ptclock *c, uint8_t ratio)
{
	(void)c;
	return ratio ? 0 : -pte_bad_packet;
}

int ptclock_tma(struct ptclock *c, uint16_t ctc, uint16_t fc)
{
	struct ptclock_est *e = &c->est;
	uint32_t period = ctc_period(&c->p);

	/* A TMA belongs to the TSC before it, and to no other. */
	if (!e->have_tsc || e->have_tma)
		return -pte_bad_context;
	e->have_tma = true;
	/* The TSC was taken @fc after the CTC tick: the anchor goes back to that tick. */
	e->anchor -= fc;
	e->fc += fc;
	e->ctc = e->ctc_fc0 = ctc & (period - 1);
	/*
	 * When TMA holds all the CTC bits MTC has, it serves as the first MTC. (Bits are
	 * compared, not periods: a --mtc-freq of 24 or more makes the period's shift overflow.)
	 */
	if (c->p.mtc_shift + MTC_CTC_BITS <= TMA_CTC_BITS)
		e->have_mtc = true;
	return 0;
}

/*
 * The TMA's CTC (low bits only) with the high bits that the first MTC after it tells. When
 * the MTC's low bits are below the TMA's, they wrapped in between: the TMA was one step of
 * 2^16 earlier, kept to the CTC bits MTC has.
 */
static uint32_t tma_ctc_whole(const struct ptclock_params *p, uint32_t tma, uint32_t mtc)
{
	uint32_t low_mask = (1u << TMA_CTC_BITS) - 1;
	uint32_t high = mtc & ~low_mask;

	if ((mtc & low_mask) < tma)
		high = (high - (1u << TMA_CTC_BITS)) & (0xffu << p->mtc_shift);
	return tma | high;
}

int ptclock_mtc(struct ptclock *c, uint8_t payload)
{
	struct ptclock_est *e = &c->est;
	uint32_t now = (uint32_t)payload << c->p.mtc_shift, then = e->ctc;
	bool first = !e->have_mtc;
	uint64_t fc;
	int ret;

	/* Before the TSC's TMA there is no CTC to count from; the MTCs after it count. */
	if (e->have_tsc && !e->have_tma)
		return 0;
	/*
	 * The next CYC's cycles start here, unless none were counted (or lost) since the last
	 * MTC: then they run from where counting last started.
	 */
	if (e->fc || e->cyc_lost || first)
		e->ctc_fc0 = now;
	e->ctc = now;
	e->fc = 0;
	e->have_mtc = true;
	e->cyc_lost = false;
	if (first) {
		/* Without a TMA nothing tells where in its period the trace began. */
		if (!e->have_tma)
			return 0;
		then = tma_ctc_whole(&c->p, then, now);
	}
	ret = fc_between(&c->p, then, now, &fc, NULL);
	if (ret < 0)
		return ret;
	e->anchor += fc;
	e->tsc = e->anchor;
	return 0;
}

/*
 * A CYC that is the first since its MTC may count cycles from MTC periods before it (a
 * high CYC threshold): take off the cycles those periods' FC stands for, at @fcr, and keep
 * none rather than wrap; an estimate running slow is the lesser error.
 */
static int cyc_this_period(const struct ptclock *c, uint64_t *cyc, uint64_t fcr)
{
	uint64_t fc, before;
	int ret;

	if (c->est.ctc == c->est.ctc_fc0)
		return 0;
	ret = fc_between(&c->p, c->est.ctc_fc0, c->est.ctc, &fc, NULL);
	if (ret < 0)
		return ret;
	before = (fc << PTCLOCK_FCR_SHIFT) / fcr;
	*cyc = *cyc > before ? *cyc - before : 0;
	return 0;
}

int ptclock_cyc(struct ptclock *c, uint64_t cyc, uint64_t fcr)
{
	struct ptclock_est *e = &c->est;
	int ret;

	if (!fcr) {
		e->cyc_lost = true;
		return 0;
	}
	if (!e->fc) {
		ret = cyc_this_period(c, &cyc, fcr);
		if (ret < 0)
			return ret;
	}
	e->fc += (cyc * fcr) >> PTCLOCK_FCR_SHIFT;
	e->tsc = e->anchor + e->fc;
	return 0;
}

int ptclock_now(const struct ptclock *c, uint64_t *tsc)
{
	*tsc = c->est.tsc;
	return c->est.have_tsc ? 0 : -pte_no_time;
}

/* ---- the calibration ---- */

void ptclock_cal_reset(struct ptclock *c)
{
	memset(&c->cal, 0, sizeof(c->cal));
}

static void set_fcr(struct ptclock_cal *cal, uint64_t fcr)
{
	cal->fcr = fcr;
	cal->have_fcr = true;
}

int ptclock_fcr(const struct ptclock *c, uint64_t *fcr)
{
	if (!c->cal.have_fcr)
		return -pte_no_time;
	*fcr = c->cal.fcr;
	return 0;
}

/* SKL168: the CYCs just before a PSB may be lost, so the first MTC after one is suspect. */
void ptclock_cal_psb(struct ptclock *c)
{
	if (c->p.skl168)
		c->cal.psb_first_mtc = true;
}

/* After an overflow the counts since the last TSC and MTC are incomplete; the fcr stays. */
void ptclock_cal_ovf(struct ptclock *c)
{
	struct ptclock_cal *cal = &c->cal;

	cal->tsc = 0;
	cal->cyc_tsc = 0;
	cal->cyc_mtc = 0;
	cal->ctc = 0;
	cal->have_mtc = false;
}

void ptclock_cal_cyc(struct ptclock *c, uint64_t cyc)
{
	c->cal.cyc_mtc += cyc;
	c->cal.cyc_tsc += cyc;
}

/* fcr = @fc << shift / @cyc; an @fc the shift would overflow is refused, not wrapped. */
static int fcr_of(uint64_t fc, uint64_t cyc, uint64_t *fcr)
{
	if (fc >> (64 - PTCLOCK_FCR_SHIFT))
		return -pte_internal;
	*fcr = (fc << PTCLOCK_FCR_SHIFT) / cyc;
	return 0;
}

/*
 * A TSC in PSB+ ends a measurement from the last TSC, unless MTCs measure (they are finer).
 * Outside PSB+ a TSC may follow lost time: it only starts one.
 */
int ptclock_cal_tsc(struct ptclock *c, uint64_t tsc, bool in_psb)
{
	struct ptclock_cal *cal = &c->cal;
	uint64_t last = cal->tsc, cyc = cal->cyc_tsc, fcr;
	int ret;

	cal->tsc = tsc;
	cal->cyc_tsc = 0;
	if (!in_psb || !last || !cyc || cal->have_mtc)
		return 0;
	if (tsc < last)
		tsc += 1ull << TSC_BITS;
	if (tsc < last)
		return -pte_bad_packet;
	ret = fcr_of(tsc - last, cyc, &fcr);
	if (ret < 0)
		return ret;
	set_fcr(cal, fcr);
	return 0;
}

/*
 * FC ticks at the nominal (P1) ratio, cycles at the CBR: fcr = P1 / CBR when P1 is known.
 * A CBR outside PSB+ is a frequency change: what was measured before no longer holds.
 */
int ptclock_cal_cbr(struct ptclock *c, uint8_t ratio, bool in_psb)
{
	if (!in_psb)
		ptclock_cal_reset(c);
	if (!c->p.nom_ratio)
		return 0;
	if (!ratio)
		return -pte_bad_packet;
	set_fcr(&c->cal, ((uint64_t)c->p.nom_ratio << PTCLOCK_FCR_SHIFT) / ratio);
	return 0;
}

/*
 * SKL168 at the first MTC after a PSB: the period is not used when MTCs were lost in it
 * (more CTC than one MTC step), or, at MTC periods short enough to tell, when its FC is
 * less than the cycles counted plus a little under one 4096-cycle wrap would take at the
 * last fcr: a wrap CYC was probably dropped.
 */
static bool skl168_suspect(const struct ptclock *c, uint32_t ctc, uint64_t fc, uint64_t cyc)
{
	if ((1u << c->p.mtc_shift) < ctc)
		return true;
	if (c->p.mtc_shift < 10 && c->cal.have_fcr)
		return (c->cal.fcr * (cyc + 0xf00)) >> PTCLOCK_FCR_SHIFT < fc;
	return false;
}

int ptclock_cal_mtc(struct ptclock *c, uint8_t payload)
{
	struct ptclock_cal *cal = &c->cal;
	uint32_t now = (uint32_t)payload << c->p.mtc_shift, then = cal->ctc, ctc;
	uint64_t cyc = cal->cyc_mtc, fc, fcr;
	bool suspect = cal->psb_first_mtc;
	int ret;

	cal->psb_first_mtc = false;
	if (!cal->have_mtc) {
		/* The first MTC starts the measurement. */
		cal->have_mtc = true;
		cal->ctc = now;
		cal->cyc_mtc = 0;
		return 0;
	}
	/* No cycles yet: measure this period and the next together. */
	if (!cyc)
		return 0;
	cal->ctc = now;
	cal->cyc_mtc = 0;
	ret = fc_between(&c->p, then, now, &fc, &ctc);
	if (ret < 0)
		return ret;
	ret = fcr_of(fc, cyc, &fcr);
	if (ret < 0)
		return ret;
	if (suspect && skl168_suspect(c, ctc, fc, cyc))
		return 0;
	set_fcr(cal, fcr);
	return 0;
}

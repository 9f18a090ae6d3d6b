// SPDX-License-Identifier: MIT
/*
 * The TSC estimate and its calibration (ptclock), packet by packet, against values worked
 * out by hand in the comments. Most use mtc_freq 3 (MTC's 8 bits are CTC bits 3..10, so
 * MTC's CTC wraps at 2^11 = 0x800 and TMA's 16 bits hold all of it) and CPUID 0x15
 * eax 1, ebx 100: one CTC tick is 100 FC (TSC) ticks.
 */
#include <criterion/criterion.h>
#include <inttypes.h>

#include "ptclock.h"

static void clock_for(struct ptclock *c, uint8_t mtc_freq, uint8_t nom, bool skl168)
{
	struct pt_config cfg;

	pt_config_init(&cfg);
	cfg.mtc_freq = mtc_freq;
	cfg.nom_freq = nom;
	cfg.cpuid_0x15_eax = 1;
	cfg.cpuid_0x15_ebx = 100;
	cfg.errata.skl168 = skl168;
	ptclock_init(c, &cfg);
}

static uint64_t now(const struct ptclock *c)
{
	uint64_t tsc = ~0ull;

	cr_assert_eq(ptclock_now(c, &tsc), 0);
	return tsc;
}

/* The calibration has an fcr, and it is @want. */
static void fcr_is(const struct ptclock *c, uint64_t want)
{
	uint64_t fcr = 0;

	cr_assert_eq(ptclock_fcr(c, &fcr), 0);
	cr_expect_eq(fcr, want, "fcr %" PRIu64 ", not %" PRIu64, fcr, want);
}

/* MTC @mtc, then the estimate is @tsc. */
static void mtc_to(struct ptclock *c, uint8_t mtc, uint64_t tsc)
{
	cr_assert_eq(ptclock_mtc(c, mtc), 0);
	cr_expect_eq(now(c), tsc, "after MTC %#x: %" PRIu64 ", not %" PRIu64, mtc, now(c), tsc);
}

/* CYC @cyc at @fcr, then the estimate is @tsc. */
static void cyc_to(struct ptclock *c, uint64_t cyc, uint64_t fcr, uint64_t tsc)
{
	cr_assert_eq(ptclock_cyc(c, cyc, fcr), 0);
	cr_expect_eq(now(c), tsc, "after CYC %" PRIu64 ": %" PRIu64 ", not %" PRIu64, cyc,
		     now(c), tsc);
}

/* A TSC, its TMA at CTC @tma (FC 0), then MTC @mtc: the first that counts. */
static void tsc_tma_mtc(struct ptclock *c, uint64_t tsc, uint16_t tma, uint8_t mtc)
{
	ptclock_tsc(c, tsc);
	cr_assert_eq(ptclock_tma(c, tma, 0), 0);
	cr_assert_eq(ptclock_mtc(c, mtc), 0);
}

Test(ptclock, no_tsc_no_time)
{
	struct ptclock c;
	uint64_t tsc = 1;

	clock_for(&c, 3, 0, false);
	cr_expect_eq(ptclock_now(&c, &tsc), -pte_no_time);
	cr_expect_eq(tsc, 0);
	/* A TMA without its TSC is out of place. */
	cr_expect_eq(ptclock_tma(&c, 0x100, 0), -pte_bad_context);
}

Test(ptclock, a_tsc_then_mtcs)
{
	struct ptclock c;

	clock_for(&c, 3, 0, false);
	ptclock_tsc(&c, 0x10000);
	cr_expect_eq(now(&c), 0x10000);
	/* MTCs between the TSC and its TMA do not count: no CTC to count from yet. */
	mtc_to(&c, 0x7f, 0x10000);
	/*
	 * The TSC was taken 40 FC after CTC tick 0x2105, which is 0x105 in the CTC bits MTC has
	 * (0..10): the anchor goes back to 0x10000 - 40 = 65496. The estimate does not move.
	 */
	cr_assert_eq(ptclock_tma(&c, 0x2105, 40), 0);
	cr_expect_eq(now(&c), 0x10000);
	cr_expect_eq(ptclock_tma(&c, 0x105, 40), -pte_bad_context, "one TMA per TSC");
	/* MTC 0x21 is CTC 0x21 << 3 = 0x108: 3 ticks, 300 FC: 65496 + 300 = 65796. */
	mtc_to(&c, 0x21, 65796);
	/* MTC 0x22 is CTC 0x110: 8 ticks, 800 FC: 66596. */
	mtc_to(&c, 0x22, 66596);
	/* A new TSC sets the time again. */
	ptclock_tsc(&c, 0x20000);
	cr_expect_eq(now(&c), 0x20000);
}

Test(ptclock, a_cbr_of_0_is_bad)
{
	struct ptclock c;

	clock_for(&c, 3, 36, false);
	cr_expect_eq(ptclock_cbr(&c, 0), -pte_bad_packet);
	cr_expect_eq(ptclock_cbr(&c, 18), 0);
	cr_expect_eq(ptclock_cal_cbr(&c, 0, true), -pte_bad_packet);
}

Test(ptclock, a_wrapped_ctc)
{
	struct ptclock c;

	clock_for(&c, 3, 0, false);
	/*
	 * TMA at CTC 0x7f0, MTC 0x00 is CTC 0: MTC's CTC wrapped at 0x800, so 0x10 = 16 ticks
	 * passed, 1600 FC: 1000 + 1600 = 2600.
	 */
	tsc_tma_mtc(&c, 1000, 0x7f0, 0x00);
	cr_expect_eq(now(&c), 2600);
	/* MTC 0xff is CTC 0x7f8: 0x7f8 ticks on, 204000 FC: 206600. */
	mtc_to(&c, 0xff, 206600);
}

Test(ptclock, a_wrapped_ctc_past_the_tma_bits)
{
	struct ptclock c;

	/*
	 * mtc_freq 9: MTC's bits are CTC 9..16, wrapping at 2^17; TMA's 16 bits miss bit 16,
	 * which the first MTC tells. TMA at 0xfff0, MTC 0x00 (CTC 0): its low 16 bits (0) are
	 * below the TMA's, so the TMA was at 0x10000 less than the MTC's high bits, 0 - 0x10000,
	 * kept to bits 9..16: 0x10000, the TMA was at 0x1fff0. From there to 0 wraps at 0x20000:
	 * 0x10 ticks, 1600 FC: 5000 + 1600 = 6600.
	 */
	clock_for(&c, 9, 0, false);
	tsc_tma_mtc(&c, 5000, 0xfff0, 0x00);
	cr_expect_eq(now(&c), 6600);
	/*
	 * The same TMA, MTC 0x80 (CTC 0x10000): low bits 0 < 0xfff0 again, high 0x10000 - 0x10000
	 * = 0, the TMA at 0xfff0: 0x10 ticks again, 6600.
	 */
	tsc_tma_mtc(&c, 5000, 0xfff0, 0x80);
	cr_expect_eq(now(&c), 6600);
	/* TMA at 0x0010, MTC 0x01 (CTC 0x200): no wrap, 0x1f0 ticks, 49600 FC: 54600. */
	tsc_tma_mtc(&c, 5000, 0x0010, 0x01);
	cr_expect_eq(now(&c), 54600);
}

Test(ptclock, a_lost_mtc)
{
	struct ptclock c;

	clock_for(&c, 3, 0, false);
	ptclock_tsc(&c, 1000);
	ptclock_tma(&c, 0x100, 0);
	/* MTC 0x21 (CTC 0x108): 8 ticks, 1800. */
	mtc_to(&c, 0x21, 1800);
	/* 0x22 and 0x23 lost; 0x24 (CTC 0x120) counts their time too: 24 ticks, 4200. */
	mtc_to(&c, 0x24, 4200);
}

Test(ptclock, no_ctc_ratio_is_a_bad_config)
{
	struct ptclock c;
	struct pt_config cfg;

	pt_config_init(&cfg);
	cfg.mtc_freq = 3;
	ptclock_init(&c, &cfg);
	ptclock_tsc(&c, 1000);
	ptclock_tma(&c, 0x100, 0);
	cr_expect_eq(ptclock_mtc(&c, 0x21), -pte_bad_config);
	cr_expect_eq(now(&c), 1000);
}

/* fcr 2.0 FC per cycle (512 / 2^8), from MTCs: 0x20 to 0x21 is 8 ticks, 800 FC, 400 cycles. */
static void calibrate_by_mtc(struct ptclock *c)
{
	uint64_t fcr = 0;

	cr_expect_eq(ptclock_fcr(c, &fcr), -pte_no_time);
	cr_assert_eq(ptclock_cal_mtc(c, 0x20), 0);
	ptclock_cal_cyc(c, 300);
	ptclock_cal_cyc(c, 100);
	cr_assert_eq(ptclock_cal_mtc(c, 0x21), 0);
	fcr_is(c, 512);
}

Test(ptclock, a_cyc_run_with_calibration)
{
	struct ptclock c;
	uint64_t fcr = 0;

	clock_for(&c, 3, 0, false);
	calibrate_by_mtc(&c);
	ptclock_fcr(&c, &fcr);
	ptclock_tsc(&c, 10000);
	ptclock_tma(&c, 0x100, 0);
	/* CYC 100 at 2.0: 200 FC, 10200; CYC 50: 100 more, 10300. */
	cyc_to(&c, 100, fcr, 10200);
	cyc_to(&c, 50, fcr, 10300);
	/* MTC 0x21 (CTC 0x108): the CTC decides, 10000 + 800; the CYCs' FC is dropped. */
	mtc_to(&c, 0x21, 10800);
	/* MTC 0x22 (CTC 0x110), no CYC in between: 11600. */
	mtc_to(&c, 0x22, 11600);
	/*
	 * CYC 600: the first CYC since CTC 0x108, so its cycles began there. The period before
	 * 0x110 is 800 FC, 800 / 2.0 = 400 of its cycles; 200 are this period's, 400 FC: 12000.
	 */
	cyc_to(&c, 600, fcr, 12000);
	/* CYC 300 runs on: 600 FC, 12600. */
	cyc_to(&c, 300, fcr, 12600);
	/* MTCs 0x23, 0x24: the CTC decides again, 11600 + 1600 = 13200. */
	cr_assert_eq(ptclock_mtc(&c, 0x23), 0);
	mtc_to(&c, 0x24, 13200);
	/*
	 * CYC 100: counted from 0x118 (CYCs came before that MTC), and 0x118 to 0x120 took
	 * 400 cycles: fewer than that leave none for this period, 13200.
	 */
	cyc_to(&c, 100, fcr, 13200);
}

Test(ptclock, a_cyc_run_without_calibration)
{
	struct ptclock c;

	clock_for(&c, 3, 0, false);
	ptclock_tsc(&c, 10000);
	ptclock_tma(&c, 0x100, 0);
	/* fcr 0: the CYC is lost, the estimate stays. */
	cyc_to(&c, 100, 0, 10000);
	/* MTC 0x21 (CTC 0x108): 10800; the lost CYC means cycles count from here on. */
	mtc_to(&c, 0x21, 10800);
	/*
	 * Calibrated now (by CBR: nominal 36, ratio 18, 2.0 FC per cycle, 512): CYC 100 is 200
	 * FC, 11000. Had the lost CYC been forgotten, its cycles would have counted from the
	 * TMA's 0x100: 400 of them before 0x108, none left, 10800.
	 */
	c.p.nom_ratio = 36;
	cr_assert_eq(ptclock_cal_cbr(&c, 18, true), 0);
	cr_assert_eq(ptclock_cyc(&c, 100, c.cal.fcr), 0);
	cr_expect_eq(c.cal.fcr, 512);
	cr_expect_eq(now(&c), 11000);
}

Test(ptclock, calibration_by_tsc_in_psb)
{
	struct ptclock c;

	clock_for(&c, 3, 0, false);
	/* Outside PSB+ a TSC starts a measurement only. */
	cr_assert_eq(ptclock_cal_tsc(&c, 0x1000, false), 0);
	ptclock_cal_cyc(&c, 0x80);
	/* In PSB+: 0x100 TSC ticks over 0x80 cycles: 2.0, 512. */
	cr_assert_eq(ptclock_cal_tsc(&c, 0x1100, true), 0);
	fcr_is(&c, 512);
	/* 0x100 ticks over 0x10 cycles, but outside PSB+: not used, 2.0 stays. */
	ptclock_cal_cyc(&c, 0x10);
	cr_assert_eq(ptclock_cal_tsc(&c, 0x1200, false), 0);
	fcr_is(&c, 512);
	/* From there, 0x300 ticks over 0x100 cycles: 3.0, 768. */
	ptclock_cal_cyc(&c, 0x100);
	cr_assert_eq(ptclock_cal_tsc(&c, 0x1500, true), 0);
	fcr_is(&c, 768);
	/* The TSC's 56 bits wrap: 0x80 before 2^56 to 0x80 is 0x100 ticks; over 0x40, 4.0. */
	ptclock_cal_tsc(&c, (1ull << 56) - 0x80, true);
	ptclock_cal_cyc(&c, 0x40);
	cr_assert_eq(ptclock_cal_tsc(&c, 0x80, true), 0);
	fcr_is(&c, 1024);
	/* Once MTCs measure, TSCs do not. */
	ptclock_cal_mtc(&c, 0x20);
	ptclock_cal_cyc(&c, 0x100);
	cr_assert_eq(ptclock_cal_tsc(&c, 0x1800, true), 0);
	fcr_is(&c, 1024);
}

Test(ptclock, calibration_by_mtc_and_cbr)
{
	struct ptclock c;

	clock_for(&c, 3, 36, false);
	calibrate_by_mtc(&c);
	/* No cycles from 0x21 to 0x22: measure on to 0x23, 16 ticks, 1600 FC / 200 = 8.0. */
	cr_assert_eq(ptclock_cal_mtc(&c, 0x22), 0);
	ptclock_cal_cyc(&c, 200);
	cr_assert_eq(ptclock_cal_mtc(&c, 0x23), 0);
	fcr_is(&c, 2048);
	/* A CBR in PSB+: nominal 36 / ratio 24 = 1.5, 384. */
	cr_assert_eq(ptclock_cal_cbr(&c, 24, true), 0);
	fcr_is(&c, 384);
	/* An OVF keeps the fcr but starts over: the next MTC only starts a measurement. */
	ptclock_cal_ovf(&c);
	ptclock_cal_cyc(&c, 100);
	cr_assert_eq(ptclock_cal_mtc(&c, 0x30), 0);
	fcr_is(&c, 384);
	/* A CBR outside PSB+ is a frequency change: 36 / 36 = 1.0, and nothing before holds. */
	cr_assert_eq(ptclock_cal_cbr(&c, 36, false), 0);
	fcr_is(&c, 256);
	cr_expect_not(c.cal.have_mtc);
}

/* MTC @from, a PSB, @cyc cycles, MTC @to: the period SKL168 makes suspect. */
static void across_psb(struct ptclock *c, uint8_t from, uint64_t cyc, uint8_t to)
{
	ptclock_cal_mtc(c, from);
	ptclock_cal_psb(c);
	ptclock_cal_cyc(c, cyc);
	cr_assert_eq(ptclock_cal_mtc(c, to), 0);
}

Test(ptclock, skl168_first_mtc_after_psb)
{
	struct ptclock c;
	uint64_t fcr = 0;

	/*
	 * MTC 0x20, a PSB, MTC 0x22: 16 ticks, more than one MTC step (8), so MTCs were lost,
	 * and CYCs perhaps with them: the period does not count.
	 */
	clock_for(&c, 3, 0, true);
	across_psb(&c, 0x20, 100, 0x22);
	cr_expect_eq(ptclock_fcr(&c, &fcr), -pte_no_time);
	/* Without the erratum it counts: 1600 FC / 100 = 16.0, 4096. */
	clock_for(&c, 3, 0, false);
	across_psb(&c, 0x20, 100, 0x22);
	fcr_is(&c, 4096);
}

Test(ptclock, skl168_lost_wrap_cyc)
{
	struct ptclock c;

	/*
	 * A CTC tick of 1000 FC here; fcr 2.0 (512) known from CBR 36/18. MTC 0x20, a PSB,
	 * MTC 0x21: 8 ticks, 8000 FC over 100 cycles. At 2.0, 100 + 0xf00 = 3940 cycles (one
	 * 4096-cycle wrap, a little less) would be 7880 FC, still below 8000: a wrap CYC was
	 * lost before the PSB, the period does not count.
	 */
	clock_for(&c, 3, 36, true);
	c.p.ctc_num = 1000;
	cr_assert_eq(ptclock_cal_cbr(&c, 18, true), 0);
	across_psb(&c, 0x20, 100, 0x21);
	fcr_is(&c, 512);
	/* Only the first MTC after the PSB is suspect: 0x21 to 0x22 counts, 80.0, 20480. */
	ptclock_cal_cyc(&c, 100);
	cr_assert_eq(ptclock_cal_mtc(&c, 0x22), 0);
	fcr_is(&c, 20480);
	/* Without the erratum the first counts too. */
	clock_for(&c, 3, 36, false);
	c.p.ctc_num = 1000;
	ptclock_cal_cbr(&c, 18, true);
	across_psb(&c, 0x20, 100, 0x21);
	fcr_is(&c, 20480);
}

Test(ptclock, tma_as_the_first_mtc)
{
	struct ptclock c;

	/*
	 * mtc_freq 8: MTC's bits are CTC 8..15, all within TMA's 16, so the TMA stands in for
	 * an MTC and the next CYC's cycles count from it. TMA at 0x100, MTC 0x02 (CTC 0x200):
	 * 0x100 ticks, 25600 FC, 26600. CYC 13000 at 2.0 (CBR 36/18): 25600 FC is 12800 of its
	 * cycles before 0x200, 200 left, 400 FC: 27000.
	 */
	clock_for(&c, 8, 36, false);
	ptclock_cal_cbr(&c, 18, true);
	tsc_tma_mtc(&c, 1000, 0x100, 0x02);
	cr_expect_eq(now(&c), 26600);
	cyc_to(&c, 13000, c.cal.fcr, 27000);
}

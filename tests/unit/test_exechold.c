// SPDX-License-Identifier: MIT
/*
 * Which SIGTRAPs the breakpoint guard swallows (exechold_trap_is_stray()):
 * a debug trap our breakpoint caused (TRAP_HWBKPT anywhere; TRAP_BRKPT or
 * TRAP_TRACE with IP at one of our breakpoints, TF clear and no icebp before
 * IP); the workload's own traps (int3, its icebp, its single-step, raise,
 * kill) are passed on.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <string.h>

#include "exechold.h"

#ifndef TRAP_HWBKPT
#define TRAP_HWBKPT 4
#endif

#define BP 0x555555555279ull

static const uint64_t bps[] = { 0x401000, BP };

/* A trap with @code at @ip, TF @tf, the byte before IP @prev (-1: unread). */
static struct exechold_trap trap(int code, uint64_t ip, bool tf, int prev)
{
	return (struct exechold_trap){ .si_code = code, .fault_addr = ip, .ip = ip, .tf = tf,
				       .prev_byte = prev, .tid = 1, .cpu = -1 };
}

static bool stray(struct exechold_trap t)
{
	return exechold_trap_is_stray(&t, bps, 2);
}

Test(exechold, a_hardware_breakpoints_trap_is_swallowed)
{
	cr_expect(stray(trap(TRAP_HWBKPT, BP, false, 0x90)));
	/* DR6 left a trap bit: only our breakpoints are armed in our tracee. */
	cr_expect(stray(trap(TRAP_HWBKPT, 0x1234, false, -1)));
}

/*
 * exc_debug_user(): an empty DR6 is taken for an icebp (TRAP_BRKPT); DR6.BS
 * gives TRAP_TRACE. The first is what killed the stress's workloads on a KVM
 * guest (si_code 1, si_addr and IP at trig_hit, TF 0, 0xff before it,
 * ptrace's DR6 0xffff0ff0).
 */
Test(exechold, a_misreported_trap_at_our_breakpoint_is_swallowed)
{
	cr_expect(stray(trap(TRAP_BRKPT, BP, false, 0xff)), "DR6 read back empty");
	cr_expect(stray(trap(TRAP_BRKPT, 0x401000, false, -1)), "the other breakpoint");
	cr_expect(stray(trap(TRAP_TRACE, BP, false, 0xc3)), "DR6 said BS, TF clear");
}

Test(exechold, the_programs_own_traps_are_passed_on)
{
	cr_expect(!stray(trap(SI_KERNEL, BP, false, 0xc3)), "int3 (SI_KERNEL), even at BP");
	cr_expect(!stray(trap(TRAP_BRKPT, BP + 1, false, 0xf1)), "its icebp");
	cr_expect(!stray(trap(TRAP_BRKPT, BP, false, 0xf1)), "its icebp right before BP");
	cr_expect(!stray(trap(TRAP_BRKPT, 0x1000, false, 0x90)), "TRAP_BRKPT elsewhere");
	cr_expect(!stray(trap(TRAP_TRACE, BP, true, 0xc3)), "its single-step onto BP");
	cr_expect(!stray(trap(TRAP_TRACE, 0x1000, false, 0x9d)),
		  "its last single-step (the popf that cleared TF)");
	cr_expect(!stray(trap(TRAP_TRACE, BP, true, 0xf1)), "single-step over an icebp");
	cr_expect(!stray(trap(SI_TKILL, BP, false, 0xc3)), "raise(SIGTRAP)");
	cr_expect(!stray(trap(SI_USER, BP, false, 0xc3)), "kill -TRAP");
	cr_expect(!stray(trap(EXECHOLD_NO_SIGINFO, BP, false, 0xc3)), "no siginfo");
}

Test(exechold, without_breakpoints_only_trap_hwbkpt_is_ours)
{
	struct exechold_trap t = trap(TRAP_BRKPT, BP, false, 0xc3);

	cr_expect(!exechold_trap_is_stray(&t, NULL, 0));
	t.si_code = TRAP_TRACE;
	cr_expect(!exechold_trap_is_stray(&t, NULL, 0));
	t.si_code = TRAP_HWBKPT;
	cr_expect(exechold_trap_is_stray(&t, NULL, 0));
}

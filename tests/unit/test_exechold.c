// SPDX-License-Identifier: MIT
/*
 * Which SIGTRAPs the breakpoint guard swallows (exechold_trap_is_stray()):
 * only a hardware breakpoint's debug trap (si_code TRAP_HWBKPT); the
 * workload's own traps (int3, icebp, single-step, raise, kill) are passed on.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <string.h>

#include "exechold.h"

#ifndef TRAP_HWBKPT
#define TRAP_HWBKPT 4
#endif

static bool stray(int code)
{
	struct exechold_trap t = { .si_code = code, .prev_byte = -1, .cpu = -1 };

	return exechold_trap_is_stray(&t);
}

Test(exechold, only_a_hardware_breakpoints_trap_is_swallowed)
{
	cr_expect(stray(TRAP_HWBKPT));
	cr_expect(!stray(TRAP_BRKPT), "icebp");
	cr_expect(!stray(TRAP_TRACE), "single-step");
	cr_expect(!stray(SI_KERNEL), "int3 on x86 (SI_KERNEL)");
	cr_expect(!stray(SI_TKILL), "raise(SIGTRAP)");
	cr_expect(!stray(SI_USER), "kill -TRAP");
	cr_expect(!stray(EXECHOLD_NO_SIGINFO), "no siginfo");
}

// SPDX-License-Identifier: MIT
/*
 * Which SIGTRAPs the breakpoint guard swallows (exechold.h): only a hardware
 * breakpoint's debug trap (si_code TRAP_HWBKPT); the workload's own traps
 * (int3, raise, kill, single-step) and every other signal are passed on.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <string.h>

#include "exechold.h"

#ifndef TRAP_HWBKPT
#define TRAP_HWBKPT 4
#endif

static siginfo_t si(int signo, int code)
{
	siginfo_t s;

	memset(&s, 0, sizeof(s));
	s.si_signo = signo;
	s.si_code = code;
	return s;
}

Test(exechold, only_a_hardware_breakpoints_trap_is_swallowed)
{
	siginfo_t hw = si(SIGTRAP, TRAP_HWBKPT), brk = si(SIGTRAP, TRAP_BRKPT);
	siginfo_t trace = si(SIGTRAP, TRAP_TRACE), kern = si(SIGTRAP, SI_KERNEL);
	siginfo_t tkill = si(SIGTRAP, SI_TKILL), user = si(SIGTRAP, SI_USER);
	siginfo_t segv = si(SIGSEGV, TRAP_HWBKPT);

	cr_expect(exechold_is_hwbkpt(&hw));
	cr_expect(!exechold_is_hwbkpt(&brk), "int3");
	cr_expect(!exechold_is_hwbkpt(&trace), "single-step");
	cr_expect(!exechold_is_hwbkpt(&kern), "int3 on x86 (SI_KERNEL)");
	cr_expect(!exechold_is_hwbkpt(&tkill), "raise(SIGTRAP)");
	cr_expect(!exechold_is_hwbkpt(&user), "kill -TRAP");
	cr_expect(!exechold_is_hwbkpt(&segv), "another signal with the same code number");
}

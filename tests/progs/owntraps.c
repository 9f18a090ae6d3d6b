// SPDX-License-Identifier: MIT
/*
 * A workload that makes its own debug traps under a breakpoint on trig_asm()
 * or trig_step(): it calls each N times (each a fire of the one watched),
 * then traps once, dying of its SIGTRAP (no handler), as it would untraced:
 *
 * - int3: an int3 (SIGTRAP SI_KERNEL, IP after the 0xcc);
 * - icebp: an icebp (0xf1) in the byte right before trig_asm, run by
 *   falling into it: SIGTRAP TRAP_BRKPT with IP at trig_asm, the
 *   breakpoint's address, as a misreported debug trap of the breakpoint has;
 * - step: TF set (popf) right before a call of trig_step (a nop before it):
 *   SIGTRAP TRAP_TRACE with IP at trig_step, TF set.
 *
 * x86-64 only (the test says skipped elsewhere).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
void trig_asm(void);
void icebp_then_trig(void);
void trig_step(void);

__asm__(".text\n"
	".globl icebp_then_trig\n"
	".type icebp_then_trig, @function\n"
	"icebp_then_trig:\n"
	"	.byte 0xf1\n"			/* icebp: a #DB trap, IP after it */
	".size icebp_then_trig, 1\n"
	".globl trig_asm\n"
	".type trig_asm, @function\n"
	"trig_asm:\n"
	"	nop\n"
	"	ret\n"
	".size trig_asm, 2\n"
	"	nop\n"
	".globl trig_step\n"
	".type trig_step, @function\n"
	"trig_step:\n"
	"	nop\n"
	"	ret\n"
	".size trig_step, 2\n");

static void step_into_trig(void)
{
	/* TF on: the trap comes after the next instruction, the call: IP at trig_step. */
	__asm__ volatile("pushfq\n\t"
			 "orq $0x100, (%%rsp)\n\t"
			 "popfq\n\t"
			 "call trig_step\n\t"
			 "pushfq\n\t"
			 "andq $~0x100, (%%rsp)\n\t"
			 "popfq" ::: "memory", "cc");
}

int main(int argc, char **argv)
{
	long n;

	if (argc != 3 || (n = atol(argv[2])) < 0) {
		fprintf(stderr, "usage: owntraps int3|icebp|step N\n");
		return 2;
	}
	for (long i = 0; i < n; i++) {
		trig_asm();
		trig_step();
	}
	if (!strcmp(argv[1], "int3"))
		__asm__ volatile("int3");
	else if (!strcmp(argv[1], "icebp"))
		icebp_then_trig();
	else if (!strcmp(argv[1], "step"))
		step_into_trig();
	else
		return 2;
	fprintf(stderr, "owntraps: the %s trap did not end me\n", argv[1]);
	return 1;
}
#else
int main(void)
{
	fprintf(stderr, "owntraps: x86-64 only\n");
	return 77;
}
#endif

/*
 * callprog: a played program whose function f is called exactly 1000 times, 10 of those
 * calls slow by a known amount of work (tests/kernel/cases/72-report-calls.sh). Freestanding,
 * as playprog (prog.S), at fixed addresses:
 *   cc -nostdlib -static -no-pie -Wl,-Ttext=0x401000 -o callprog callprog.S
 * f(n) runs a loop of n iterations (two instructions each). Calls 50, 150, ..., 950
 * (counting from 1) pass n = SLOW, the others n = 0: a fast call is 4 instructions
 * (mov, test, jz, ret), a slow one 4 + 2 * SLOW = 204 (jz not taken, then the loop).
 * It takes no input: every run is the same instruction sequence.
 */
	.intel_syntax noprefix
	.set	CALLS, 1000
	.set	EVERY, 100		/* one slow call in EVERY */
	.set	SLOW, 100		/* the slow calls' loop length */
	.text
	.globl	_start
	.type	_start, @function
_start:
	mov	ebx, CALLS
	mov	r12d, EVERY / 2		/* the first slow call is the 50th */
1:	xor	edi, edi
	dec	r12d
	jnz	2f
	mov	edi, SLOW
	mov	r12d, EVERY
2:	call	f
	dec	ebx
	jnz	1b
	mov	eax, 1			/* write(1, msg, len) */
	mov	edi, 1
	lea	rsi, [rip + msg]
	mov	edx, OFFSET msglen
	syscall
	mov	eax, 60			/* exit(0) */
	xor	edi, edi
	syscall
	.size	_start, . - _start

/* f(n): n iterations of an empty loop */
	.globl	f
	.type	f, @function
f:	mov	eax, edi
	test	eax, eax
	jz	4f
3:	dec	eax
	jnz	3b
4:	ret
	.size	f, . - f

	.section .rodata
msg:	.ascii	"callprog: done\n"
	.set	msglen, . - msg

	.section .note.GNU-stack, "", @progbits

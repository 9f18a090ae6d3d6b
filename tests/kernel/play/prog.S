/*
 * playprog: the freestanding program whose Intel PT stream the rig's simulated PMU plays
 * (tests/kernel/README.md, "Played streams"). No libc, static, at fixed addresses:
 *   cc -nostdlib -static -no-pie -Wl,-Ttext=0x401000 -o playprog prog.S
 * Every kind of branch a user-only trace records, each a known number of times:
 *   - direct calls and their RETs (compressed to a taken TNT bit each), nested two deep;
 *   - conditional branches, taken and not taken (TNT bits);
 *   - an indirect call and an indirect jump through a table (TIP);
 *   - a RET with no CALL on the call stack (TIP, not compressed);
 *   - write(2) (TIP.PGD into the kernel, TIP.PGE back) and exit(2) (TIP.PGD, the end).
 * It takes no input: every run is the same instruction sequence.
 */
	.intel_syntax noprefix
	.text
	.globl	_start
_start:
	mov	ebx, 3			/* three rounds */
1:	mov	edi, 4
	call	sum			/* sum(4): four calls of leaf */
	dec	ebx
	jnz	1b
	lea	rax, [rip + twice]
	mov	edi, 5
	call	rax			/* indirect call: TIP */
	mov	ecx, 2
	lea	rdx, [rip + table]
	jmp	[rdx + rcx * 8]		/* indirect jump: TIP to case2 */
case0:	mov	eax, 0
	jmp	out
case1:	mov	eax, 1
	jmp	out
case2:	lea	rax, [rip + out]
	push	rax
	ret				/* no CALL on the stack: TIP */
out:	mov	eax, 1			/* write(1, msg, len) */
	mov	edi, 1
	lea	rsi, [rip + msg]
	mov	edx, OFFSET msglen
	syscall
	mov	eax, 60			/* exit(0) */
	xor	edi, edi
	syscall

/* sum(n): leaf(n) + leaf(n - 1) + ... + leaf(1) */
sum:	xor	eax, eax
2:	call	leaf
	dec	edi
	jnz	2b
	ret

leaf:	add	eax, edi
	ret

twice:	lea	eax, [rdi + rdi]
	ret

	.section .rodata
	.balign	8
table:	.quad	case0, case1, case2
msg:	.ascii	"playprog: done\n"
	.set	msglen, . - msg

	.section .note.GNU-stack, "", @progbits

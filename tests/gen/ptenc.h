/* SPDX-License-Identifier: MIT */
/*
 * ptenc: what the trace generators (ptgen, ptwalk) share: libipt's encoder over a 1 MiB
 * buffer written out to OUTDIR/trace.pt as it fills, TNT bits gathered into TNT.64
 * packets, a PSB+, the files beside the trace and the command line's numbers. Any
 * failure prints "PROGRAM: what: why" and exits 1 (a bad number exits 2).
 */
#ifndef PTENC_H
#define PTENC_H

#include <intel-pt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct ptenc {
	struct pt_encoder *enc;
	uint8_t *buf;
	size_t cap;
	FILE *out;
	char path[4096];
	uint64_t tnt;		/* pending TNT bits, oldest first */
	unsigned ntnt;
};

/* Print "PROGRAM: @what: " and libipt's (@err < 0) or errno's (@err > 0) text; exit 1. */
void ptenc_die(const char *what, int err) __attribute__((noreturn));

/* Start @e: the encoder, its buffer and @dir/trace.pt. */
void ptenc_open(struct ptenc *e, const char *dir);

/* Write out what is pending (TNT bits too), close the trace and free @e's encoder. */
void ptenc_close(struct ptenc *e);

/* Write what the encoder holds to the trace and start again at the buffer's beginning. */
void ptenc_flush(struct ptenc *e);

/* Encode @p (the buffer is written out first when it is nearly full). */
void ptenc_emit(struct ptenc *e, struct pt_packet *p);

/* An IP packet (TIP, TIP.PGE, TIP.PGD, FUP) of @type. */
void ptenc_emit_ip(struct ptenc *e, enum pt_packet_type type, enum pt_ip_compression ipc,
		   uint64_t ip);

/* A TNT.64 packet of @bits bits, oldest first from the top. */
void ptenc_emit_tnt(struct ptenc *e, uint64_t payload, unsigned bits);

/* Add one TNT bit; a TNT.64 packet is written at 47. True when one was. */
bool ptenc_tnt_bit(struct ptenc *e, bool taken);

/* Write the pending TNT bits, if any, as one packet. True when one was written. */
bool ptenc_tnt_flush(struct ptenc *e);

/* A PSB+: PSB, TSC (unless @tsc is NULL), MODE.Exec (64-bit), FUP at @ip (when @fup), PSBEND. */
void ptenc_psb(struct ptenc *e, const uint64_t *tsc, bool fup, uint64_t ip);

/* Write @len bytes at @p to @dir/@name. */
void ptenc_write_file(const char *dir, const char *name, const void *p, size_t len);

/* @s as a positive number (option @what), or a message and exit 2. */
uint64_t ptenc_number(const char *s, const char *what);

#endif

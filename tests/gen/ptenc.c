// SPDX-License-Identifier: MIT
/* ptenc: the trace generators' encoder, trace file and command line (ptenc.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ptenc.h"

void ptenc_die(const char *what, int err)
{
	fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, what,
		err < 0 ? pt_errstr(pt_errcode(err)) : strerror(err));
	exit(1);
}

void ptenc_open(struct ptenc *e, const char *dir)
{
	struct pt_config cfg;

	memset(e, 0, sizeof(*e));
	snprintf(e->path, sizeof(e->path), "%s/trace.pt", dir);
	e->out = fopen(e->path, "wb");
	if (!e->out)
		ptenc_die(e->path, errno);
	e->cap = 1 << 20;
	e->buf = malloc(e->cap);
	if (!e->buf)
		ptenc_die("buffer", ENOMEM);
	pt_config_init(&cfg);
	cfg.begin = e->buf;
	cfg.end = e->buf + e->cap;
	e->enc = pt_alloc_encoder(&cfg);
	if (!e->enc)
		ptenc_die("encoder", ENOMEM);
}

void ptenc_close(struct ptenc *e)
{
	ptenc_tnt_flush(e);
	ptenc_flush(e);
	if (fclose(e->out))
		ptenc_die(e->path, errno);
	pt_free_encoder(e->enc);
	free(e->buf);
	e->out = NULL;
	e->enc = NULL;
	e->buf = NULL;
}

void ptenc_flush(struct ptenc *e)
{
	uint64_t off = 0;
	int err = pt_enc_get_offset(e->enc, &off);

	if (err < 0)
		ptenc_die("offset", err);
	if (off && fwrite(e->buf, 1, off, e->out) != off)
		ptenc_die("write trace", errno);
	err = pt_enc_sync_set(e->enc, 0);
	if (err < 0)
		ptenc_die("sync", err);
}

void ptenc_emit(struct ptenc *e, struct pt_packet *p)
{
	uint64_t off = 0;
	int err = pt_enc_get_offset(e->enc, &off);

	if (err < 0)
		ptenc_die("offset", err);
	if (off + 64 > e->cap)	/* a packet is at most 16 bytes */
		ptenc_flush(e);
	err = pt_enc_next(e->enc, p);
	if (err < 0)
		ptenc_die("encode", err);
}

void ptenc_emit_ip(struct ptenc *e, enum pt_packet_type type, enum pt_ip_compression ipc,
		   uint64_t ip)
{
	struct pt_packet p = { .type = type };

	p.payload.ip.ipc = ipc;
	p.payload.ip.ip = ip;
	ptenc_emit(e, &p);
}

void ptenc_emit_tnt(struct ptenc *e, uint64_t payload, unsigned bits)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = ppt_tnt_64;
	p.payload.tnt.bit_size = (uint8_t)bits;
	p.payload.tnt.payload = payload;
	ptenc_emit(e, &p);
}

bool ptenc_tnt_flush(struct ptenc *e)
{
	if (!e->ntnt)
		return false;
	ptenc_emit_tnt(e, e->tnt, e->ntnt);
	e->tnt = 0;
	e->ntnt = 0;
	return true;
}

bool ptenc_tnt_bit(struct ptenc *e, bool taken)
{
	e->tnt = (e->tnt << 1) | taken;
	return ++e->ntnt == 47 && ptenc_tnt_flush(e);
}

void ptenc_psb(struct ptenc *e, const uint64_t *tsc, bool fup, uint64_t ip)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = ppt_psb;
	ptenc_emit(e, &p);
	if (tsc) {
		p.type = ppt_tsc;
		p.payload.tsc.tsc = *tsc;
		ptenc_emit(e, &p);
	}
	memset(&p, 0, sizeof(p));
	p.type = ppt_mode;
	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec.csl = 1;
	ptenc_emit(e, &p);
	if (fup)
		ptenc_emit_ip(e, ppt_fup, pt_ipc_sext_48, ip);
	memset(&p, 0, sizeof(p));
	p.type = ppt_psbend;
	ptenc_emit(e, &p);
}

void ptenc_write_file(const char *dir, const char *name, const void *p, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(p, 1, len, f) != len || fclose(f))
		ptenc_die(path, errno);
}

uint64_t ptenc_number(const char *s, const char *what)
{
	char *end;
	uint64_t v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || !*s || !v) {
		fprintf(stderr, "%s: %s '%s' is not a positive number\n",
			program_invocation_short_name, what, s);
		exit(2);
	}
	return v;
}

// SPDX-License-Identifier: MIT
/* ptdump's line for one Intel PT packet, and the packet's payload as typed fields. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ptpacket_print.h"

/* ---- one line --------------------------------------------------------------- */

/* ptdump's columns, each of ptdump's width (the sizes include the NUL). */
struct cols {
	char offset[17];
	char raw[33];
	char opcode[10];
	char payload[49];	/* 25 for most packets, 48 for TNT and TRIG */
	char track_id[5];
	char track[17];
};

#define STANDARD 25
#define EXTENDED 48

__attribute__((format(printf, 3, 4)))
static void field(char *f, size_t size, const char *fmt, ...)
{
	va_list ap;

	memset(f, 0, size);
	va_start(ap, fmt);
	vsnprintf(f, size, fmt, ap);
	va_end(ap);
}

static void ip_payload(struct cols *c, const struct pt_packet_ip *ip)
{
	switch (ip->ipc) {
	case pt_ipc_suppressed:
		field(c->payload, STANDARD, "%x: ????????????????", pt_ipc_suppressed);
		return;
	case pt_ipc_update_16:
		field(c->payload, STANDARD, "%x: ????????????%04" PRIx64, ip->ipc, ip->ip);
		return;
	case pt_ipc_update_32:
		field(c->payload, STANDARD, "%x: ????????%08" PRIx64, ip->ipc, ip->ip);
		return;
	case pt_ipc_update_48:
		field(c->payload, STANDARD, "%x: ????%012" PRIx64, ip->ipc, ip->ip);
		return;
	case pt_ipc_sext_48:
		field(c->payload, STANDARD, "%x: %016" PRIx64, ip->ipc, ptpacket_sext48(ip->ip));
		return;
	case pt_ipc_full:
		break;
	}
	field(c->payload, STANDARD, "%x: %016" PRIx64, ip->ipc, ip->ip);
}

/* Taken '!', not taken '.', oldest first. */
static void tnt_bits(char *out, size_t size, const struct pt_packet_tnt *t)
{
	size_t n = t->bit_size < size - 1 ? t->bit_size : size - 1;

	for (size_t i = 0; i < n; i++)
		out[i] = t->payload & 1ull << (t->bit_size - 1 - i) ? '!' : '.';
	out[n] = '\0';
}

static const char *exec_mode(const struct pt_packet_mode_exec *m)
{
	switch (pt_get_exec_mode(m)) {
	case ptem_64bit: return "64-bit";
	case ptem_32bit: return "32-bit";
	case ptem_16bit: return "16-bit";
	default: return "unknown";
	}
}

static void mode_cols(struct cols *c, const struct ptpkt *p, const struct ptdump_opts *o)
{
	const struct pt_packet_mode *m = &p->pkt.payload.mode;

	if (m->leaf == pt_mol_exec) {
		const char *csd = m->bits.exec.csd ? "cs.d" : "";
		const char *csl = m->bits.exec.csl ? "cs.l" : "";

		field(c->opcode, sizeof(c->opcode), "mode.exec");
		field(c->payload, STANDARD, "%s%s%s%s%s", csd, *csd && *csl ? ", " : "", csl,
		      p->exec_if && (*csd || *csl) ? ", " : "", p->exec_if ? "if" : "");
		if (o->exec_mode) {
			field(c->track_id, sizeof(c->track_id), "em");
			field(c->track, sizeof(c->track), "%s", exec_mode(&m->bits.exec));
		}
	} else if (m->leaf == pt_mol_tsx) {
		const char *intx = m->bits.tsx.intx ? "intx" : "";
		const char *abrt = m->bits.tsx.abrt ? "abrt" : "";

		field(c->opcode, sizeof(c->opcode), "mode.tsx");
		field(c->payload, STANDARD, "%s%s%s", intx, *intx && *abrt ? ", " : "", abrt);
	} else {
		field(c->opcode, sizeof(c->opcode), "mode");
		field(c->payload, STANDARD, "leaf: %x", m->leaf);
	}
}

/* ptdump's wake reason of a PWRX: one of interrupt, store, hardware, else "bad". */
static const char *pwrx_reason(const struct pt_packet_pwrx *x)
{
	int n = x->interrupt + x->store + x->autonomous;

	if (n != 1)
		return "bad";
	return x->interrupt ? "int" : x->store ? " st" : " hw";
}

static void power_cols(struct cols *c, const struct pt_packet *k)
{
	if (k->type == ppt_pwre)
		field(c->payload, STANDARD, "c%u.%u%s", (k->payload.pwre.state + 1) & 0xf,
		      (k->payload.pwre.sub_state + 1) & 0xf, k->payload.pwre.hw ? ", hw" : "");
	else
		field(c->payload, STANDARD, "%s: c%u, c%u", pwrx_reason(&k->payload.pwrx),
		      (k->payload.pwrx.last + 1) & 0xf, (k->payload.pwrx.deepest + 1) & 0xf);
}

static void timing_cols(struct cols *c, const struct pt_packet *k)
{
	switch (k->type) {
	case ppt_tsc:
		field(c->payload, STANDARD, "%" PRIx64, k->payload.tsc.tsc);
		break;
	case ppt_cbr:
		field(c->payload, STANDARD, "%x", k->payload.cbr.ratio);
		break;
	case ppt_tma:
		field(c->payload, STANDARD, "%x, %x", k->payload.tma.ctc, k->payload.tma.fc);
		break;
	case ppt_mtc:
		field(c->payload, STANDARD, "%x", k->payload.mtc.ctc);
		break;
	default:
		field(c->payload, STANDARD, "%" PRIx64, k->payload.cyc.value);
		break;
	}
}

static void libipt_cols(struct cols *c, const struct ptpkt *p, const struct ptdump_opts *o)
{
	const struct pt_packet *k = &p->pkt;

	snprintf(c->opcode, sizeof(c->opcode), "%s", ptpacket_name(p));
	switch (k->type) {
	case ppt_fup:
	case ppt_tip:
	case ppt_tip_pge:
	case ppt_tip_pgd:
		ip_payload(c, &k->payload.ip);
		break;
	case ppt_tnt_8:
	case ppt_tnt_64:
		tnt_bits(c->payload, EXTENDED + 1, &k->payload.tnt);
		break;
	case ppt_mode:
		mode_cols(c, p, o);
		break;
	case ppt_pip:
		field(c->payload, STANDARD, "%" PRIx64 "%s", k->payload.pip.cr3,
		      k->payload.pip.nr ? ", nr" : "");
		field(c->track_id, sizeof(c->track_id), "cr3");
		field(c->track, sizeof(c->track), "%016" PRIx64, k->payload.pip.cr3);
		break;
	case ppt_vmcs:
		field(c->payload, STANDARD, "%" PRIx64, k->payload.vmcs.base);
		field(c->track_id, sizeof(c->track_id), "vmcs");
		field(c->track, sizeof(c->track), "%016" PRIx64, k->payload.vmcs.base);
		break;
	case ppt_tsc:
	case ppt_cbr:
	case ppt_tma:
	case ppt_mtc:
	case ppt_cyc:
		timing_cols(c, k);
		break;
	case ppt_mnt:
		field(c->payload, STANDARD, "%" PRIx64, k->payload.mnt.payload);
		break;
	case ppt_exstop:
		field(c->payload, STANDARD, "%s", k->payload.exstop.ip ? "ip" : "");
		break;
	case ppt_mwait:
		field(c->payload, STANDARD, "%08x, %08x", k->payload.mwait.hints,
		      k->payload.mwait.ext);
		break;
	case ppt_pwre:
	case ppt_pwrx:
		power_cols(c, k);
		break;
	case ppt_ptw:
		field(c->payload, STANDARD, "%x: %" PRIx64 "%s", k->payload.ptw.plc,
		      k->payload.ptw.payload, k->payload.ptw.ip ? ", ip" : "");
		break;
	default:	/* pad, psb, psbend, ovf, stop: no payload */
		break;
	}
}

static const char *cfe_type_name(uint8_t type)
{
	static const char *const names[] = {
		[1] = "intr", [2] = "iret", [3] = "smi", [4] = "rsm", [5] = "sipi",
		[6] = "init", [7] = "vmentry", [8] = "vmexit", [9] = "vmexit_intr",
		[10] = "shutdown", [12] = "uintr", [13] = "uiret", [14] = "swintr",
		[15] = "syscall",
	};

	return type < sizeof(names) / sizeof(names[0]) && names[type] ? names[type] : "unknown";
}

static const char *evd_type_name(uint8_t type)
{
	static const char *const names[] = { "cr2", "vmxq", "vmxr" };

	return type < 3 ? names[type] : "unknown";
}

static void cfe_cols(struct cols *c, const struct ptpkt *p)
{
	uint8_t t = p->x.cfe.type;
	const char *ip = p->x.cfe.ip ? ", ip" : "";

	field(c->opcode, sizeof(c->opcode), "cfe");
	field(c->track_id, sizeof(c->track_id), "type");
	field(c->track, sizeof(c->track), "%s", cfe_type_name(t));
	/* Interrupts carry a vector (decimal), SIPI a page (hex), the others nothing. */
	if (t == 1 || t == 9 || t == 12 || t == 14)
		field(c->payload, STANDARD, "%u: %u%s", t, p->x.cfe.vector, ip);
	else if (t == 5)
		field(c->payload, STANDARD, "%u: %x%s", t, p->x.cfe.vector, ip);
	else
		field(c->payload, STANDARD, "%u%s", t, ip);
}

static void ext_cols(struct cols *c, const struct ptpkt *p)
{
	if (p->kind == PTPKT_CFE) {
		cfe_cols(c, p);
	} else if (p->kind == PTPKT_EVD) {
		field(c->opcode, sizeof(c->opcode), "evd");
		field(c->payload, STANDARD, "%u: %" PRIx64, p->x.evd.type, p->x.evd.payload);
		field(c->track_id, sizeof(c->track_id), "type");
		field(c->track, sizeof(c->track), "%s", evd_type_name(p->x.evd.type));
	} else {
		field(c->opcode, sizeof(c->opcode), "trig");
		if (p->x.trig.icntv)
			field(c->payload, EXTENDED, "%02x%s%s, icnt: %u", p->x.trig.trbv,
			      p->x.trig.ip ? ", ip" : "", p->x.trig.mult ? ", mult" : "",
			      p->x.trig.icnt);
		else
			field(c->payload, EXTENDED, "%02x%s%s", p->x.trig.trbv,
			      p->x.trig.ip ? ", ip" : "", p->x.trig.mult ? ", mult" : "");
	}
}

/* @s, then spaces up to @width (printf's "%-*s", without printf: a dump prints millions). */
static void column(char *line, size_t len, size_t *n, const char *s, size_t width)
{
	size_t l = strlen(s);

	if (*n + (l > width ? l : width) >= len)
		return;
	memcpy(line + *n, s, l);
	*n += l;
	for (; l < width; l++)
		line[(*n)++] = ' ';
	line[*n] = '\0';
}

/* ptdump's print_buffer(): fixed-width columns, the payload only where there is one. */
static void cols_line(const struct cols *c, const struct ptdump_opts *o, char *line, size_t len)
{
	bool sep = false;
	size_t n = 0;

	line[0] = '\0';
	if (!o->no_offset) {
		column(line, len, &n, c->offset, sizeof(c->offset));
		sep = true;
	}
	if (c->raw[0]) {
		column(line, len, &n, sep ? " " : "", 0);
		column(line, len, &n, c->raw, sizeof(c->raw));
		sep = true;
	}
	column(line, len, &n, sep ? " " : "", 0);
	column(line, len, &n, c->opcode, c->payload[0] ? sizeof(c->opcode) : 0);
	if (c->track_id[0]) {
		column(line, len, &n, " ", 0);
		column(line, len, &n, c->payload, STANDARD);
		column(line, len, &n, " ", 0);
		column(line, len, &n, c->track_id, sizeof(c->track_id));
		column(line, len, &n, c->track, 0);
	} else if (c->payload[0]) {
		column(line, len, &n, " ", 0);
		column(line, len, &n, c->payload, 0);
	}
}

/* @width lowercase hex digits of @v, NUL-terminated. */
static void hex(char *out, uint64_t v, int width)
{
	static const char digits[] = "0123456789abcdef";

	out[width] = '\0';
	while (width--) {
		out[width] = digits[v & 0xf];
		v >>= 4;
	}
}

void ptpacket_line(const struct ptpkt *p, const struct ptdump_opts *o, const char *lastip,
		   const char *time_id, const char *time, char *line, size_t len)
{
	struct cols c;

	memset(&c, 0, sizeof(c));
	hex(c.offset, p->offset, 16);
	if (o->raw)
		for (int i = 0; i < p->size && i < 16; i++)
			hex(c.raw + 2 * i, p->raw[i], 2);
	if (p->kind == PTPKT_LIBIPT)
		libipt_cols(&c, p, o);
	else
		ext_cols(&c, p);
	if (lastip && ptpacket_is_ip(p)) {
		field(c.track_id, sizeof(c.track_id), "ip");
		field(c.track, sizeof(c.track), "%s", lastip);
	}
	if (time_id) {
		field(c.track_id, sizeof(c.track_id), "%s", time_id);
		field(c.track, sizeof(c.track), "%s", time);
	}
	cols_line(&c, o, line, len);
}

/* ---- typed fields ------------------------------------------------------------ */

static const char *ipc_name(enum pt_ip_compression ipc)
{
	switch (ipc) {
	case pt_ipc_suppressed: return "suppressed";
	case pt_ipc_update_16: return "update-16";
	case pt_ipc_update_32: return "update-32";
	case pt_ipc_update_48: return "update-48";
	case pt_ipc_sext_48: return "sext-48";
	case pt_ipc_full: return "full";
	}
	return "invalid";
}

static void ip_fields(const struct pt_packet_ip *ip, struct dump_fields *f)
{
	dump_field_put(f, "ipc", DF_U64, ip->ipc, NULL);
	dump_field_put(f, "compression", DF_STR, 0, ipc_name(ip->ipc));
	if (ip->ipc != pt_ipc_suppressed)
		dump_field_put(f, "ip", DF_HEX,
			       ip->ipc == pt_ipc_sext_48 ? ptpacket_sext48(ip->ip) : ip->ip, NULL);
}

static void mode_fields(const struct ptpkt *p, struct dump_fields *f)
{
	const struct pt_packet_mode *m = &p->pkt.payload.mode;

	if (m->leaf == pt_mol_exec) {
		dump_field_put(f, "csl", DF_BOOL, m->bits.exec.csl, NULL);
		dump_field_put(f, "csd", DF_BOOL, m->bits.exec.csd, NULL);
		dump_field_put(f, "if", DF_BOOL, p->exec_if, NULL);
		dump_field_put(f, "exec_mode", DF_STR, 0, exec_mode(&m->bits.exec));
	} else if (m->leaf == pt_mol_tsx) {
		dump_field_put(f, "intx", DF_BOOL, m->bits.tsx.intx, NULL);
		dump_field_put(f, "abrt", DF_BOOL, m->bits.tsx.abrt, NULL);
	} else {
		dump_field_put(f, "leaf", DF_U64, m->leaf, NULL);
	}
}

static void power_fields(const struct pt_packet *k, struct dump_fields *f)
{
	if (k->type == ppt_pwre) {
		dump_field_put(f, "state", DF_U64, k->payload.pwre.state, NULL);
		dump_field_put(f, "sub_state", DF_U64, k->payload.pwre.sub_state, NULL);
		dump_field_put(f, "hw", DF_BOOL, k->payload.pwre.hw, NULL);
	} else {
		dump_field_put(f, "last", DF_U64, k->payload.pwrx.last, NULL);
		dump_field_put(f, "deepest", DF_U64, k->payload.pwrx.deepest, NULL);
		dump_field_put(f, "interrupt", DF_BOOL, k->payload.pwrx.interrupt, NULL);
		dump_field_put(f, "store", DF_BOOL, k->payload.pwrx.store, NULL);
		dump_field_put(f, "autonomous", DF_BOOL, k->payload.pwrx.autonomous, NULL);
	}
}

static void libipt_fields(const struct ptpkt *p, struct dump_fields *f)
{
	const struct pt_packet *k = &p->pkt;

	switch (k->type) {
	case ppt_fup:
	case ppt_tip:
	case ppt_tip_pge:
	case ppt_tip_pgd:
		ip_fields(&k->payload.ip, f);
		break;
	case ppt_tnt_8:
	case ppt_tnt_64:
		tnt_bits(f->buf, sizeof(f->buf), &k->payload.tnt);
		dump_field_put(f, "bits", DF_U64, k->payload.tnt.bit_size, NULL);
		dump_field_put(f, "tnt", DF_STR, 0, f->buf);
		break;
	case ppt_mode:
		mode_fields(p, f);
		break;
	case ppt_pip:
		dump_field_put(f, "cr3", DF_HEX, k->payload.pip.cr3, NULL);
		dump_field_put(f, "nr", DF_BOOL, k->payload.pip.nr, NULL);
		break;
	case ppt_vmcs:
		dump_field_put(f, "base", DF_HEX, k->payload.vmcs.base, NULL);
		break;
	case ppt_tsc:
		dump_field_put(f, "tsc", DF_HEX, k->payload.tsc.tsc, NULL);
		break;
	case ppt_cbr:
		dump_field_put(f, "ratio", DF_U64, k->payload.cbr.ratio, NULL);
		break;
	case ppt_tma:
		dump_field_put(f, "ctc", DF_U64, k->payload.tma.ctc, NULL);
		dump_field_put(f, "fc", DF_U64, k->payload.tma.fc, NULL);
		break;
	case ppt_mtc:
		dump_field_put(f, "ctc", DF_U64, k->payload.mtc.ctc, NULL);
		break;
	case ppt_cyc:
		dump_field_put(f, "cyc", DF_HEX, k->payload.cyc.value, NULL);
		break;
	case ppt_mnt:
		dump_field_put(f, "payload", DF_HEX, k->payload.mnt.payload, NULL);
		break;
	case ppt_exstop:
		dump_field_put(f, "ip", DF_BOOL, k->payload.exstop.ip, NULL);
		break;
	case ppt_mwait:
		dump_field_put(f, "hints", DF_U64, k->payload.mwait.hints, NULL);
		dump_field_put(f, "ext", DF_U64, k->payload.mwait.ext, NULL);
		break;
	case ppt_pwre:
	case ppt_pwrx:
		power_fields(k, f);
		break;
	case ppt_ptw:
		dump_field_put(f, "plc", DF_U64, k->payload.ptw.plc, NULL);
		dump_field_put(f, "payload", DF_HEX, k->payload.ptw.payload, NULL);
		dump_field_put(f, "ip", DF_BOOL, k->payload.ptw.ip, NULL);
		break;
	default:
		break;
	}
}

void ptpacket_fields(const struct ptpkt *p, struct dump_fields *f)
{
	f->n = 0;
	f->buf[0] = '\0';
	switch (p->kind) {
	case PTPKT_LIBIPT:
		libipt_fields(p, f);
		break;
	case PTPKT_CFE:
		dump_field_put(f, "cfe_type", DF_U64, p->x.cfe.type, NULL);
		dump_field_put(f, "cfe_name", DF_STR, 0, cfe_type_name(p->x.cfe.type));
		dump_field_put(f, "vector", DF_U64, p->x.cfe.vector, NULL);
		dump_field_put(f, "ip", DF_BOOL, p->x.cfe.ip, NULL);
		break;
	case PTPKT_EVD:
		dump_field_put(f, "evd_type", DF_U64, p->x.evd.type, NULL);
		dump_field_put(f, "evd_name", DF_STR, 0, evd_type_name(p->x.evd.type));
		dump_field_put(f, "payload", DF_HEX, p->x.evd.payload, NULL);
		break;
	case PTPKT_TRIG:
		dump_field_put(f, "trbv", DF_U64, p->x.trig.trbv, NULL);
		dump_field_put(f, "ip", DF_BOOL, p->x.trig.ip, NULL);
		dump_field_put(f, "mult", DF_BOOL, p->x.trig.mult, NULL);
		if (p->x.trig.icntv)
			dump_field_put(f, "icnt", DF_U64, p->x.trig.icnt, NULL);
		break;
	}
}

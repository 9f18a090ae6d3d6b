// SPDX-License-Identifier: MIT
/* Intel PT packets as libipt's ptdump prints them; the packets libipt 2.0.5 lacks, decoded here. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "iptcaps.h"
#include "pttime.h"
#include "ptpacket.h"

/* Opcodes libipt 2.0.5 does not know (Intel SDM, "Intel PT packets"; libipt 2.1/2.2). */
#define OPC_EXT		0x02
#define OPC_TRIG	0xd9
#define EXT_CFE		0x13
#define EXT_EVD		0x53
#define CFE_SIZE	4	/* 02 13, type|ip, vector */
#define EVD_SIZE	11	/* 02 53, type, 8-byte payload */
#define TRIG_SIZE	3	/* d9, ip|icntv|mult, trbv */
#define TRIG_ICNT_SIZE	5	/* ... and a 2-byte instruction count */
#define MODE_EXEC_IF	0x04

/* ---- decoding what libipt 2.0.5 leaves unknown ------------------------------ */

static uint64_t le_value(const uint8_t *p, int n)
{
	uint64_t v = 0;

	while (n--)
		v = (v << 8) | p[n];
	return v;
}

static int decode_trig(struct ptpkt *x, const uint8_t *pos, const uint8_t *end)
{
	int size = TRIG_SIZE;

	if (end - pos < TRIG_SIZE)
		return -pte_eos;
	if (pos[1] & 0x40) {
		if (end - pos < TRIG_ICNT_SIZE)
			return -pte_eos;
		x->x.trig.icnt = (uint16_t)le_value(pos + TRIG_SIZE, 2);
		size = TRIG_ICNT_SIZE;
	}
	x->kind = PTPKT_TRIG;
	x->x.trig.ip = pos[1] >> 7 & 1;
	x->x.trig.icntv = pos[1] >> 6 & 1;
	x->x.trig.mult = pos[1] >> 5 & 1;
	x->x.trig.trbv = pos[2];
	return size;
}

static int decode_ext(struct ptpkt *x, const uint8_t *pos, const uint8_t *end)
{
	if (pos[1] == EXT_CFE) {
		if (end - pos < CFE_SIZE)
			return -pte_eos;
		x->kind = PTPKT_CFE;
		x->x.cfe.type = pos[2] & 0x1f;
		x->x.cfe.ip = pos[2] >> 7 & 1;
		x->x.cfe.vector = pos[3];
		return CFE_SIZE;
	}
	if (pos[1] == EXT_EVD) {
		if (end - pos < EVD_SIZE)
			return -pte_eos;
		x->kind = PTPKT_EVD;
		x->x.evd.type = pos[2] & 0x1f;
		x->x.evd.payload = le_value(pos + 3, 8);
		return EVD_SIZE;
	}
	return -pte_bad_opc;
}

/* libipt's callback for opcodes it does not know; @context is the packet being read. */
static int decode_unknown(struct pt_packet_unknown *unknown, const struct pt_config *config,
			  const uint8_t *pos, void *context)
{
	struct ptpkt *x = context;

	unknown->priv = x;
	if (pos >= config->end)
		return -pte_eos;
	if (pos[0] == OPC_TRIG)
		return decode_trig(x, pos, config->end);
	if (pos[0] == OPC_EXT && config->end - pos >= 2)
		return decode_ext(x, pos, config->end);
	return -pte_bad_opc;
}

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

static uint64_t sext48(uint64_t v)
{
	return v & (1ull << 47) ? v | ~0ull << 48 : v & ~(~0ull << 48);
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
		field(c->payload, STANDARD, "%x: %016" PRIx64, ip->ipc, sext48(ip->ip));
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

static bool is_ip_packet(const struct ptpkt *p)
{
	return p->kind == PTPKT_LIBIPT &&
	       (p->pkt.type == ppt_fup || p->pkt.type == ppt_tip || p->pkt.type == ppt_tip_pge ||
		p->pkt.type == ppt_tip_pgd);
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
static void render(const struct cols *c, const struct ptdump_opts *o, char *line, size_t len)
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
	if (lastip && is_ip_packet(p)) {
		field(c.track_id, sizeof(c.track_id), "ip");
		field(c.track, sizeof(c.track), "%s", lastip);
	}
	if (time_id) {
		field(c.track_id, sizeof(c.track_id), "%s", time_id);
		field(c.track, sizeof(c.track), "%s", time);
	}
	render(&c, o, line, len);
}

const char *ptpacket_name(const struct ptpkt *p)
{
	static const char *const names[] = {
		[ppt_pad] = "pad", [ppt_psb] = "psb", [ppt_psbend] = "psbend", [ppt_fup] = "fup",
		[ppt_tip] = "tip", [ppt_tip_pge] = "tip.pge", [ppt_tip_pgd] = "tip.pgd",
		[ppt_tnt_8] = "tnt.8", [ppt_tnt_64] = "tnt.64", [ppt_mode] = "mode",
		[ppt_pip] = "pip", [ppt_vmcs] = "vmcs", [ppt_cbr] = "cbr", [ppt_tsc] = "tsc",
		[ppt_tma] = "tma", [ppt_mtc] = "mtc", [ppt_cyc] = "cyc", [ppt_stop] = "stop",
		[ppt_ovf] = "ovf", [ppt_mnt] = "mnt", [ppt_exstop] = "exstop",
		[ppt_mwait] = "mwait", [ppt_pwre] = "pwre", [ppt_pwrx] = "pwrx", [ppt_ptw] = "ptw",
		/* libipt's for a packet an erratum made unreliable (skz84), as ptdump prints it */
		[ppt_invalid] = "<invalid>", [ppt_unknown] = "<unknown>",
	};
	unsigned int t = (unsigned int)p->pkt.type;

	if (p->kind == PTPKT_CFE)
		return "cfe";
	if (p->kind == PTPKT_EVD)
		return "evd";
	if (p->kind == PTPKT_TRIG)
		return "trig";
	if (p->pkt.type == ppt_mode)
		return p->pkt.payload.mode.leaf == pt_mol_exec ? "mode.exec" :
		       p->pkt.payload.mode.leaf == pt_mol_tsx ? "mode.tsx" : "mode";
	return t < sizeof(names) / sizeof(names[0]) && names[t] ? names[t] : "unknown";
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
			       ip->ipc == pt_ipc_sext_48 ? sext48(ip->ip) : ip->ip, NULL);
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

/* ---- the walk: ptdump's dump_sync() and dump_packets() ------------------------ */

struct lastip {
	uint64_t ip;
	bool have, suppressed;
};

struct walk {
	const struct ptdump_opts *o;
	ptdump_line_fn *fn;
	void *ctx;
	struct ptdump_stats *st;
	int stop;		/* the callback's non-zero return */
	struct lastip lastip;
	/* --time, --tcal: ptdump's time tracking */
	const struct pt_config *cfg;
	struct ptime time;
	struct ptime_cal tcal;
	uint64_t last_tsc, last_fcr;
	bool in_header;
	bool sb_due;		/* a timing update: sideband up to sb_tsc is due */
	uint64_t sb_tsc;
	struct ptpkt cur;	/* the packet being read (the unknown-packet callback fills it) */
	const uint8_t *buf;	/* the trace, len bytes */
	size_t len;
	bool mapped;		/* a file's private mapping: pages behind are dropped */
	int fd;			/* that file, for its holes, or -1 */
	size_t dropped;		/* up to here */
};

/* A search for the next PSB in steps of this many bytes, each dropped after it. */
#define PSB_STEP (1u << 20)

static const uint8_t psb_bytes[16] = {
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
};

/*
 * Before libipt's PSB search from @from: a stretch without a PSB (1 GiB of garbage) is
 * searched here in bounded steps, its pages dropped behind; libipt would keep every
 * page it read. When the PSB is far, the decoder is set just before it, and libipt's
 * search that follows reads a few bytes only (it finds the same PSB: the first after
 * the position it starts from).
 */
static void skip_to_psb(struct walk *w, struct pt_packet_decoder *d, uint64_t from)
{
	size_t at = (size_t)from, found = w->len;

	if (!w->mapped || from >= w->len)
		return;
	while (at < w->len) {
		size_t n = w->len - at < PSB_STEP + 15 ? w->len - at : PSB_STEP + 15;
		uint64_t data = file_next_data(w->fd, at);
		const uint8_t *p;

		/* A hole of a sparse file is zeroes, no PSB: passed without a read. */
		if (data > (uint64_t)at + PSB_STEP) {
			at = data < w->len ? (size_t)data : w->len;
			continue;
		}
		p = memmem(w->buf + at, n, psb_bytes, sizeof(psb_bytes));

		if (p) {
			found = (size_t)(p - w->buf);
			break;
		}
		if (n < PSB_STEP + 15)
			break;
		at += PSB_STEP;
		map_drop_behind(w->buf, at, &w->dropped);
	}
	if (found - (size_t)from > 2 * PSB_STEP && found > 0)
		pt_pkt_sync_set(d, found - 1);
}

static void emit(struct walk *w, const struct ptdump_line *l)
{
	if (!w->stop)
		w->stop = w->fn(l, w->ctx);
}

/* "[offset: what: why]" (ptdump's diag()); returns @code. */
static int diag(struct walk *w, const char *what, uint64_t off, int code)
{
	char text[PTDUMP_LINE_MAX];
	struct ptdump_line l = {
		.kind = PTDUMP_ERROR, .offset = off, .text = text, .context = what, .code = code,
	};

	if (code)
		snprintf(text, sizeof(text), "[%" PRIx64 ": %s: %s]", off, what,
			 pt_errstr(pt_errcode(code)));
	else
		snprintf(text, sizeof(text), "[%" PRIx64 ": %s]", off, what);
	w->st->errors++;
	emit(w, &l);
	return code;
}

/* ptdump's line for a configuration error: printed as an error, not counted as one. */
static void config_line(struct walk *w, const char *what, int code)
{
	char text[PTDUMP_LINE_MAX];
	struct ptdump_line l = {
		.kind = PTDUMP_ERROR, .offset = 0, .text = text, .context = what, .code = code,
	};

	snprintf(text, sizeof(text), "[0: %s: %s]", what, pt_errstr(pt_errcode(code)));
	emit(w, &l);
}

/* libipt's last-IP rules (pt_last_ip_update_ip()). */
static void lastip_update(struct lastip *l, const struct pt_packet_ip *ip)
{
	static const uint64_t keep[] = {
		[pt_ipc_update_16] = ~0xffffull, [pt_ipc_update_32] = ~0xffffffffull,
		[pt_ipc_update_48] = ~0xffffffffffffull,
	};

	switch (ip->ipc) {
	case pt_ipc_suppressed:
		l->suppressed = true;
		return;
	case pt_ipc_sext_48:
		l->ip = sext48(ip->ip);
		break;
	case pt_ipc_update_16:
	case pt_ipc_update_32:
	case pt_ipc_update_48:
		l->ip = (l->ip & keep[ip->ipc]) | (ip->ip & ~keep[ip->ipc]);
		break;
	case pt_ipc_full:
		l->ip = ip->ip;
		break;
	}
	l->have = true;
	l->suppressed = false;
}

/* The --lastip column after @p; a diagnostic first when there is no IP yet. */
static const char *lastip_column(struct walk *w, const struct ptpkt *p, char *buf, size_t len)
{
	lastip_update(&w->lastip, &p->pkt.payload.ip);
	if (!w->lastip.have) {
		diag(w, "error tracking last-ip", p->offset, -pte_noip);
		return "<unavailable>";
	}
	if (w->lastip.suppressed)
		return "<suppressed>";
	snprintf(buf, len, "%016" PRIx64, w->lastip.ip);
	return buf;
}

static bool hidden(const struct ptpkt *p, const struct ptdump_opts *o)
{
	if (o->quiet)
		return true;
	if (p->kind != PTPKT_LIBIPT)
		return false;
	switch (p->pkt.type) {
	case ppt_pad:
		return o->no_pad;
	case ppt_cyc:
		return o->no_timing || o->no_cyc;
	case ppt_tsc:
	case ppt_cbr:
	case ppt_tma:
	case ppt_mtc:
		return o->no_timing;
	default:
		return false;
	}
}

/* ---- --time and --tcal: ptdump's track_*() ---- */

static void tracking_reset(struct walk *w)
{
	ptime_init(&w->time);
	ptcal_init(&w->tcal);
	w->last_tsc = 0;
	w->last_fcr = 0;
	w->in_header = false;
}

/* ptdump's print_time(): the TSC estimate, or its change. */
static const char *time_column(struct walk *w, char *buf, size_t len)
{
	uint64_t tsc = 0;
	int ret = ptime_query_tsc(&tsc, NULL, NULL, &w->time);

	if (ret < 0 && !(ret == -pte_no_time && w->o->no_wall_clock)) {
		diag(w, "error printing time", w->cur.offset, ret);
		snprintf(buf, len, "<unavailable>");
		return "tsc";
	}
	if (w->o->time_delta) {
		if (w->last_tsc <= tsc)
			snprintf(buf, len, "+%" PRIx64, tsc - w->last_tsc);
		else
			snprintf(buf, len, "-%" PRIx64, w->last_tsc - tsc);
		w->last_tsc = tsc;
	} else {
		snprintf(buf, len, "%016" PRIx64, tsc);
	}
	return "tsc";
}

/* ptdump's print_tcal(): the fast-counter:cycles ratio, or its change. */
static const char *tcal_column(struct walk *w, char *buf, size_t len)
{
	uint64_t fcr = 0;
	int ret = ptcal_fcr(&fcr, &w->tcal);
	double d = (double)fcr / (double)(1ull << ptcal_fcr_shr);

	if (ret < 0) {
		diag(w, "error printing time", w->cur.offset, ret);
		snprintf(buf, len, "<unavailable>");
		return "fcr";
	}
	if (w->o->time_delta) {
		snprintf(buf, len, "%+.3f", d - (double)w->last_fcr / (double)(1ull << ptcal_fcr_shr));
		w->last_fcr = fcr;
	} else {
		snprintf(buf, len, "%.3f", d);
	}
	return "fcr";
}

static void tcal_diag(struct walk *w, const char *what, int ret)
{
	if (ret < 0)
		diag(w, what, w->cur.offset, ret);
}

/*
 * The time tracking of a timing packet (ptdump's track_tsc() ... track_cyc(), and its
 * PSB, PSBEND and OVF cases): the column's name and text in @buf, or NULL for none.
 */
static const char *track_time(struct walk *w, struct ptpkt *p, char *buf, size_t len)
{
	const struct pt_config *cfg = w->cfg;
	bool skip_time = false, skip_tcal = false;
	uint64_t fcr = 0;
	int ret;

	switch (p->pkt.type) {
	case ppt_psb:
		tcal_diag(w, "error calibrating time", ptcal_update_psb(&w->tcal, cfg));
		w->in_header = true;
		return NULL;
	case ppt_psbend:
		w->in_header = false;
		return NULL;
	case ppt_ovf:
		if (w->o->keep_tcal_on_ovf)
			tcal_diag(w, "error calibrating time", ptcal_update_ovf(&w->tcal, cfg));
		else
			ptcal_init(&w->tcal);
		return NULL;
	case ppt_tsc:
		if (!w->o->no_tcal)
			tcal_diag(w, "error calibrating time", w->in_header ?
				  ptcal_header_tsc(&w->tcal, &p->pkt.payload.tsc, cfg) :
				  ptcal_update_tsc(&w->tcal, &p->pkt.payload.tsc, cfg));
		tcal_diag(w, "error updating time",
			  ptime_update_tsc(&w->time, &p->pkt.payload.tsc, cfg));
		break;
	case ppt_cbr:
		if (!w->o->no_tcal)
			tcal_diag(w, "error calibrating time", w->in_header ?
				  ptcal_header_cbr(&w->tcal, &p->pkt.payload.cbr, cfg) :
				  ptcal_update_cbr(&w->tcal, &p->pkt.payload.cbr, cfg));
		tcal_diag(w, "error updating time",
			  ptime_update_cbr(&w->time, &p->pkt.payload.cbr, cfg));
		skip_time = true;	/* no timing update at this packet */
		break;
	case ppt_tma:
		if (!w->o->no_tcal)
			tcal_diag(w, "error calibrating time",
				  ptcal_update_tma(&w->tcal, &p->pkt.payload.tma, cfg));
		tcal_diag(w, "error updating time",
			  ptime_update_tma(&w->time, &p->pkt.payload.tma, cfg));
		skip_tcal = true;	/* no calibration update at this packet */
		break;
	case ppt_mtc:
		if (!w->o->no_tcal)
			tcal_diag(w, "error calibrating time",
				  ptcal_update_mtc(&w->tcal, &p->pkt.payload.mtc, cfg));
		tcal_diag(w, "error updating time",
			  ptime_update_mtc(&w->time, &p->pkt.payload.mtc, cfg));
		break;
	case ppt_cyc:
		if (w->o->no_cyc)
			return NULL;
		if (!w->o->no_tcal) {
			tcal_diag(w, "calibration error", ptcal_fcr(&fcr, &w->tcal));
			tcal_diag(w, "error calibrating time",
				  ptcal_update_cyc(&w->tcal, &p->pkt.payload.cyc, cfg));
		}
		ret = ptime_update_cyc(&w->time, &p->pkt.payload.cyc, cfg, fcr);
		if (ret < 0)
			diag(w, "error updating time", p->offset, ret);
		else if (!fcr)
			diag(w, "error updating time: no calibration", p->offset, 0);
		skip_tcal = true;
		break;
	default:
		return NULL;
	}
	/* ptdump's sb_track_time(): the estimate, also while there is no TSC yet (0) */
	w->sb_tsc = 0;
	ptime_query_tsc(&w->sb_tsc, NULL, NULL, &w->time);
	w->sb_due = w->o->track_sb;
	if (w->o->tcal && !skip_tcal)
		return tcal_column(w, buf, len);
	if (w->o->time && !skip_time)
		return time_column(w, buf, len);
	return NULL;
}

static void one_packet(struct walk *w, struct ptpkt *p)
{
	char text[PTDUMP_LINE_MAX], ipbuf[20];
	const char *lastip = NULL;
	struct ptdump_line l = { .kind = PTDUMP_PACKET, .offset = p->offset, .pkt = p };

	if (p->kind == PTPKT_LIBIPT && p->pkt.type == ppt_mode &&
	    p->pkt.payload.mode.leaf == pt_mol_exec)
		p->exec_if = p->raw[1] & MODE_EXEC_IF;
	char timebuf[24];
	const char *time_id = NULL;

	if (w->o->lastip && is_ip_packet(p))
		lastip = lastip_column(w, p, ipbuf, sizeof(ipbuf));
	w->sb_due = false;
	if ((w->o->time || w->o->tcal || w->o->track_sb) && p->kind == PTPKT_LIBIPT)
		time_id = track_time(w, p, timebuf, sizeof(timebuf));
	l.sb_due = w->sb_due;
	l.tsc = w->sb_tsc;
	if (hidden(p, w->o)) {
		if (l.sb_due) {
			l.kind = PTDUMP_TIME;
			emit(w, &l);
		}
		return;
	}
	ptpacket_line(p, w->o, lastip, time_id, timebuf, text, sizeof(text));
	l.text = text;
	w->st->packets++;
	emit(w, &l);
}

/*
 * libipt 2.1 and later decode CFE and EVD, 2.2 and later TRIG, themselves:
 * their fields go where this module's own decoding puts them, and the same
 * code prints them.
 */
static void adopt_newer(struct ptpkt *p)
{
#if PTC_LIBIPT >= 0x201
	const __typeof__(p->pkt.payload) *q = &p->pkt.payload;

	switch (p->pkt.type) {
	case ppt_cfe:
		p->kind = PTPKT_CFE;
		p->x.cfe.type = (uint8_t)q->cfe.type;
		p->x.cfe.vector = q->cfe.vector;
		p->x.cfe.ip = q->cfe.ip;
		break;
	case ppt_evd:
		p->kind = PTPKT_EVD;
		p->x.evd.type = (uint8_t)q->evd.type;
		p->x.evd.payload = q->evd.payload;
		break;
#if PTC_LIBIPT >= 0x202
	case ppt_trig:
		p->kind = PTPKT_TRIG;
		p->x.trig.trbv = q->trig.trbv;
		p->x.trig.icnt = q->trig.icnt;
		p->x.trig.ip = q->trig.ip;
		p->x.trig.icntv = q->trig.icntv;
		p->x.trig.mult = q->trig.mult;
		break;
#endif
	default:
		break;
	}
#else
	(void)p;
#endif
}

/* Packets until the end (0) or an error (negative, reported). */
static int walk_packets(struct walk *w, struct pt_packet_decoder *d, const uint8_t *begin)
{
	while (!w->stop) {
		struct ptpkt *p = &w->cur;
		uint64_t off = 0;
		int ret = pt_pkt_get_offset(d, &off);

		if (ret < 0)
			return diag(w, "error getting offset", off, ret);
		memset(p, 0, sizeof(*p));
		ret = pt_pkt_next(d, &p->pkt, sizeof(p->pkt));
		if (ret == -pte_eos)
			return 0;
		if (ret < 0)
			return diag(w, "error decoding packet", off, ret);
		/*
		 * libipt 2.1 and later (SKZ84) make a TMA with reserved bits set an 8-byte
		 * <invalid> packet even where the trace ends before its 8th byte: its bytes
		 * are not there to print (ptdump's line for it), its line is.
		 */
		if (off + (uint64_t)ret > w->len && w->o->raw)
			return diag(w, "bad packet size", off, -pte_bad_packet);
		p->offset = off;
		p->raw = begin + off;
		p->size = (uint8_t)ret;
		if (p->kind == PTPKT_LIBIPT)
			adopt_newer(p);
		one_packet(w, p);
		if (w->mapped)
			map_drop_behind(begin, off, &w->dropped);
	}
	return 0;
}

static int sync_error(struct walk *w, int ret)
{
	return ret == -pte_eos ? 0 : diag(w, "sync error", 0, ret);
}

/* Synchronize, dump, and after each error resynchronize at the next PSB. */
static int walk_sync(struct walk *w, struct pt_packet_decoder *d, const uint8_t *begin)
{
	int ret;

	if (!w->o->no_sync)
		skip_to_psb(w, d, 0);
	ret = w->o->no_sync ? pt_pkt_sync_set(d, 0) : pt_pkt_sync_forward(d);
	if (ret < 0)
		return w->o->no_sync ? diag(w, "sync error", 0, ret) : sync_error(w, ret);
	w->st->synced = true;
	for (;;) {
		uint64_t off = 0;

		ret = walk_packets(w, d, begin);
		if (!ret || w->stop)
			return ret;
		/* libipt searches from 15 bytes back (a PSB the bad packet began in) */
		if (pt_pkt_get_offset(d, &off) >= 0)
			skip_to_psb(w, d, off >= 15 ? off - 15 : 0);
		ret = pt_pkt_sync_forward(d);
		if (ret < 0)
			return sync_error(w, ret);
		w->st->resyncs++;
		memset(&w->lastip, 0, sizeof(w->lastip));
		tracking_reset(w);
	}
}

/*
 * libipt 2.0.5's PSB search reads the byte after the buffer when the buffer
 * ends on an 8-byte-aligned word of PSB pattern (libipt 2.1 fixed it:
 * commit 037a46c0). Such a buffer is copied with a zero byte after it.
 */
static bool psb_search_overreads(const uint8_t *buf, size_t len)
{
	uint64_t w;

	if (len < 8 || ((uintptr_t)(buf + len) & 7))
		return false;
	memcpy(&w, buf + len - 8, 8);
	return w == 0x8202820282028202ull || w == 0x0282028202820282ull;
}

int ptdump_walk(const uint8_t *buf, size_t len, const struct ptdump_opts *o,
		ptdump_line_fn *fn, void *ctx, struct ptdump_stats *st, struct error *e)
{
	struct walk w = { .o = o, .fn = fn, .ctx = ctx, .st = st };
	struct pt_packet_decoder *d;
	struct pt_config cfg;
	uint8_t *copy = NULL;
	int ret;

	memset(st, 0, sizeof(*st));
	if (!len)
		return 0;
	if (psb_search_overreads(buf, len)) {
		copy = calloc(1, len + 8);
		if (!copy)
			return err_runtime(e, -ENOMEM, "no memory for a copy of the %zu-byte trace",
					   len);
		memcpy(copy, buf, len);
		buf = copy;
	}
	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)buf;
	cfg.end = (uint8_t *)buf + len;
	cfg.decode.callback = decode_unknown;
	cfg.decode.context = &w.cur;
	w.buf = buf;
	w.len = len;
	w.mapped = o->mapped && !copy;
	w.fd = w.mapped ? o->fd : -1;
	cfg.mtc_freq = o->mtc_freq;
	cfg.nom_freq = o->nom_freq;
	cfg.cpuid_0x15_eax = o->cpuid_0x15_eax;
	cfg.cpuid_0x15_ebx = o->cpuid_0x15_ebx;
	w.cfg = &cfg;
	tracking_reset(&w);
	if (o->has_cpu) {
		cfg.cpu = o->cpu;
		/* ptdump's line for a CPU libipt cannot tell the errata of; it goes on. */
		ret = pt_cpu_errata(&cfg.errata, &cfg.cpu);
		if (ret < 0)
			config_line(&w, "failed to determine errata", ret);
	}
	d = pt_pkt_alloc_decoder(&cfg);
	if (!d) {
		free(copy);
		return err_runtime(e, -ENOMEM, "libipt could not make a packet decoder");
	}
	ret = walk_sync(&w, d, buf);
	st->status = ret < 0 ? -ret : 0;
	pt_pkt_free_decoder(d);
	free(copy);
	return w.stop;
}

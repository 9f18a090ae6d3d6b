// SPDX-License-Identifier: MIT
/* Intel PT packets read: what libipt 2.0.5 lacks, decoded here; a newer libipt's adopted; names */
#include <stdint.h>

#include "iptcaps.h"
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
int ptpacket_decode_unknown(struct pt_packet_unknown *unknown, const struct pt_config *config,
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

/* ---- adopting what a newer libipt decodes ----------------------------------- */

/*
 * libipt 2.1 and later decode CFE and EVD, 2.2 and later TRIG, themselves:
 * their fields go where this module's own decoding puts them, and the same
 * code prints them.
 */
void ptpacket_adopt_newer(struct ptpkt *p)
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

/* ---- what the printers and the walk share ------------------------------------ */

uint64_t ptpacket_sext48(uint64_t v)
{
	return v & (1ull << 47) ? v | ~0ull << 48 : v & ~(~0ull << 48);
}

bool ptpacket_is_ip(const struct ptpkt *p)
{
	return p->kind == PTPKT_LIBIPT &&
	       (p->pkt.type == ppt_fup || p->pkt.type == ppt_tip || p->pkt.type == ppt_tip_pge ||
		p->pkt.type == ppt_tip_pgd);
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

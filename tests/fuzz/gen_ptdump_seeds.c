// SPDX-License-Identifier: MIT
/*
 * The seeds of fuzz_ptdump (tests/fuzz/corpus/ptdump/), written by libipt's
 * encoder and by hand for what it cannot encode. Regenerate with:
 *
 *	cc -Iinclude -o /tmp/gen tests/fuzz/gen_ptdump_seeds.c -lipt &&
 *	/tmp/gen tests/fuzz/corpus/ptdump
 */
#include <intel-pt.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint8_t buf[4096];

static void save(const char *dir, const char *name, const void *p, size_t n)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n || fclose(f)) {
		perror(path);
		exit(1);
	}
}

static void put(struct pt_encoder *e, struct pt_packet p)
{
	if (pt_enc_next(e, &p) < 0) {
		fprintf(stderr, "pt_enc_next(%d) failed\n", p.type);
		exit(1);
	}
}

/* One packet of each type libipt encodes, IPs in each compression. */
static size_t every_packet(void)
{
	static const enum pt_ip_compression ipcs[] = {
		pt_ipc_full, pt_ipc_update_16, pt_ipc_update_32, pt_ipc_update_48, pt_ipc_sext_48,
		pt_ipc_suppressed,
	};
	struct pt_config cfg;
	struct pt_encoder *e;
	struct pt_packet m = { .type = ppt_mode };
	uint64_t len;

	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + sizeof(buf);
	e = pt_alloc_encoder(&cfg);
	put(e, (struct pt_packet){ .type = ppt_psb });
	put(e, (struct pt_packet){ .type = ppt_tsc, .payload.tsc.tsc = 0x123456789abcull });
	put(e, (struct pt_packet){ .type = ppt_cbr, .payload.cbr.ratio = 0x20 });
	put(e, (struct pt_packet){ .type = ppt_tma, .payload.tma = { .ctc = 0x1234, .fc = 0x4c } });
	put(e, (struct pt_packet){ .type = ppt_psbend });
	for (size_t i = 0; i < sizeof(ipcs) / sizeof(ipcs[0]); i++)
		put(e, (struct pt_packet){ .type = i % 2 ? ppt_tip : ppt_tip_pge,
			.payload.ip = { ipcs[i], 0x00007fff00401000ull } });
	put(e, (struct pt_packet){ .type = ppt_tnt_8,
		.payload.tnt = { .bit_size = 5, .payload = 0x15 } });
	put(e, (struct pt_packet){ .type = ppt_tnt_64,
		.payload.tnt = { .bit_size = 40, .payload = 0x5a5a5a5a5aull } });
	m.payload.mode.leaf = pt_mol_exec;
	m.payload.mode.bits.exec.csl = 1;
	put(e, m);
	m.payload.mode.leaf = pt_mol_tsx;
	m.payload.mode.bits.tsx.intx = 1;
	put(e, m);
	put(e, (struct pt_packet){ .type = ppt_pip, .payload.pip = { .cr3 = 0x1234000, .nr = 1 } });
	put(e, (struct pt_packet){ .type = ppt_vmcs, .payload.vmcs.base = 0x5678000 });
	put(e, (struct pt_packet){ .type = ppt_mtc, .payload.mtc.ctc = 0x29 });
	put(e, (struct pt_packet){ .type = ppt_cyc, .payload.cyc.value = 0x190 });
	put(e, (struct pt_packet){ .type = ppt_mnt, .payload.mnt.payload = 0x1122334455667788ull });
	put(e, (struct pt_packet){ .type = ppt_exstop, .payload.exstop.ip = 1 });
	put(e, (struct pt_packet){ .type = ppt_mwait,
		.payload.mwait = { .hints = 0x20, .ext = 1 } });
	put(e, (struct pt_packet){ .type = ppt_pwre, .payload.pwre = { .state = 1, .hw = 1 } });
	put(e, (struct pt_packet){ .type = ppt_pwrx,
		.payload.pwrx = { .last = 1, .deepest = 2, .interrupt = 1 } });
	put(e, (struct pt_packet){ .type = ppt_ptw,
		.payload.ptw = { .plc = 1, .payload = 42, .ip = 1 } });
	put(e, (struct pt_packet){ .type = ppt_fup, .payload.ip = { pt_ipc_update_16, 0x1234 } });
	put(e, (struct pt_packet){ .type = ppt_tip_pgd, .payload.ip = { pt_ipc_suppressed, 0 } });
	put(e, (struct pt_packet){ .type = ppt_ovf });
	put(e, (struct pt_packet){ .type = ppt_stop });
	put(e, (struct pt_packet){ .type = ppt_pad });
	pt_enc_get_offset(e, &len);
	pt_free_encoder(e);
	return (size_t)len;
}

/* CFE, EVD, TRIG and MODE.Exec with IF: what libipt 2.0.5 does not know, by their bytes. */
static const uint8_t newer[] = {
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x02, 0x82, 0x02, 0x23,
	0x02, 0x13, 0x81, 0x0e,			/* cfe intr, ip, vector 14 */
	0x02, 0x13, 0x05, 0x9a,			/* cfe sipi */
	0x02, 0x53, 0x00, 1, 2, 3, 4, 5, 6, 7, 8,	/* evd cr2 */
	0xd9, 0xe0, 0x01, 0x10, 0x00,		/* trig ip, icnt, mult */
	0xd9, 0x00, 0x02,			/* trig */
	0x99, 0x05,				/* mode.exec cs.l, if */
	0xd9, 0x40,				/* cut */
};

static size_t record(uint8_t *b, uint32_t type, uint16_t misc, size_t body, const char *name)
{
	struct perf_event_header h = { .type = type, .misc = misc };
	size_t n = 8 + body;

	memset(b + 8, 0x11, body);
	if (name) {
		size_t l = strlen(name) + 1;

		memset(b + n, 0, (l + 7) & ~(size_t)7);
		memcpy(b + n, name, l);
		n += (l + 7) & ~(size_t)7;
	}
	if (type < 64) {
		memset(b + n, 0x22, 32);	/* sample_type 0x10086: tid, time, cpu, id */
		n += 32;
	}
	h.size = (uint16_t)n;
	memcpy(b, &h, 8);
	return n;
}

static size_t every_record(void)
{
	size_t n = 0;

	n += record(buf + n, 79 /* TIME_CONV */, 0, 48, NULL);
	n += record(buf + n, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, 8, "prog");
	n += record(buf + n, PERF_RECORD_MMAP2, 0, 64, "/bin/prog");
	/* with attr.build_id: build_id_size 0x11 (the body's filler), then the id's bytes */
	n += record(buf + n, PERF_RECORD_MMAP2, PERF_RECORD_MISC_MMAP_BUILD_ID, 64, "/bin/lib.so");
	n += record(buf + n, PERF_RECORD_MMAP, 0, 32, "[vdso]");
	n += record(buf + n, PERF_RECORD_ITRACE_START, 0, 8, NULL);
	n += record(buf + n, PERF_RECORD_AUX, 0, 24, NULL);
	n += record(buf + n, PERF_RECORD_SWITCH_CPU_WIDE, PERF_RECORD_MISC_SWITCH_OUT, 8, NULL);
	n += record(buf + n, PERF_RECORD_FORK, 0, 24, NULL);
	n += record(buf + n, PERF_RECORD_EXIT, 0, 24, NULL);
	n += record(buf + n, PERF_RECORD_LOST, 0, 16, NULL);
	return n;
}

int main(int argc, char **argv)
{
	size_t n;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	n = every_packet();
	save(argv[1], "every-packet.pt", buf, n);
	save(argv[1], "newer-packets.pt", newer, sizeof(newer));
	n = every_record();
	save(argv[1], "every-record.pevent", buf, n);
	return 0;
}

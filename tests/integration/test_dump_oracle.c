// SPDX-License-Identifier: MIT
/*
 * `ptcollect dump` against libipt's own ptdump (../shared/oracle/ptdump,
 * libipt 2.3): the same lines and the same exit status for real Intel traces
 * (../shared/traces), for every packet libipt's encoder writes, for the
 * packets newer than the libipt we link, for corrupted streams, and for
 * .pevent sideband (ptdump --sb:compact --sb:offset).
 */
#include <criterion/criterion.h>
#include <glob.h>
#include <intel-pt.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run.h"
#include "suitewatch.h"
#include "tempfile.h"
#include "sideband.h"

#define MAX_OPTS 8

/* The reference data (run_shared: ../shared or $PTCOLLECT_SHARED), or a skip that says why. */
static char *shared(const char *rel)
{
	return run_shared(rel);
}

static char *oracle(void)
{
	char *o = shared("oracle/ptdump");

	cr_assert_eq(access(o, X_OK), 0, "%s is not runnable", o);
	return o;
}

/* Compare line by line; returns the number of lines. */
static size_t same_lines(const char *what, const char *want, const char *got)
{
	const char *a = want, *b = got;
	size_t line = 0;

	while (*a || *b) {
		const char *ea = strchrnul(a, '\n'), *eb = strchrnul(b, '\n');

		line++;
		if (ea - a != eb - b || memcmp(a, b, (size_t)(ea - a)))
			cr_assert_fail("%s: line %zu differs\n  ptdump:    %.*s\n  ptcollect: %.*s",
				       what, line, (int)(ea - a), a, (int)(eb - b), b);
		a = *ea ? ea + 1 : ea;
		b = *eb ? eb + 1 : eb;
	}
	return line;
}

struct totals {
	size_t streams, lines;
};

static struct totals pt_totals;

/* ptdump OPTS FILE and ptcollect dump --format pt OPTS FILE: same lines, same status. */
static size_t compare_pt(const char *file, const char *const *opts)
{
	char *o = oracle(), *argv[MAX_OPTS + 8], what[512];
	struct run_result want, got;
	int n = 0, m;
	size_t lines;

	argv[n++] = o;
	for (int i = 0; opts && opts[i]; i++)
		argv[n++] = (char *)opts[i];
	argv[n++] = (char *)file;
	argv[n] = NULL;
	cr_assert_eq(run_argv(argv, NULL, &want), 0);
	m = 0;
	argv[m++] = (char *)run_bin();
	argv[m++] = "dump";
	argv[m++] = "--format";
	argv[m++] = "pt";
	for (int i = 0; opts && opts[i]; i++)
		argv[m++] = (char *)opts[i];
	argv[m++] = (char *)file;
	argv[m] = NULL;
	cr_assert_eq(run_argv(argv, NULL, &got), 0);
	snprintf(what, sizeof(what), "%s %s%s", file, opts && opts[0] ? opts[0] : "",
		 opts && opts[0] && opts[1] ? " ..." : "");
	lines = same_lines(what, want.out, got.out);
	cr_assert_eq(got.status, want.status, "%s: ptdump exits %d, ptcollect %d: %s", what,
		     want.status, got.status, got.err);
	pt_totals.streams++;
	pt_totals.lines += lines;
	run_free(&want);
	run_free(&got);
	free(o);
	return lines;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b;
	long n;

	cr_assert(f, "%s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	b = malloc((size_t)n + 1);
	cr_assert_eq(fread(b, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return b;
}

/* The real traces: the DynamoRIO pt.bin files and HASE's aux.*.pt. */
static glob_t traces(void)
{
	char *a = shared("traces/*/test_simple.raw/pt.bin"), *b = shared("traces/*/aux*.pt");
	glob_t g;

	cr_assert_eq(glob(a, 0, NULL, &g), 0, "%s", a);
	cr_assert_eq(glob(b, GLOB_APPEND, NULL, &g), 0, "%s", b);
	cr_assert_geq(g.gl_pathc, 3, "expected the three shared trace sets");
	free(a);
	free(b);
	return g;
}

static const char *const option_sets[][MAX_OPTS] = {
	{ NULL }, { "--no-offset" }, { "--raw" }, { "--lastip" }, { "--exec-mode" },
	{ "--no-pad" }, { "--no-timing" }, { "--no-cyc" }, { "--no-sync" }, { "--quiet" },
	{ "--raw", "--no-offset", "--lastip", "--exec-mode", "--no-pad" },
};

#define NR_OPTION_SETS (sizeof(option_sets) / sizeof(option_sets[0]))

static void report(const char *what)
{
	cr_log_info("%s: %zu streams, %zu lines equal to ptdump's", what, pt_totals.streams,
		    pt_totals.lines);
}

Test(dump_oracle, real_traces_equal_ptdump_with_each_option)
{
	glob_t g = traces();

	for (size_t i = 0; i < g.gl_pathc; i++) {
		cr_expect_gt(compare_pt(g.gl_pathv[i], NULL), 500, "%s: a real trace",
			     g.gl_pathv[i]);
		for (size_t k = 1; k < NR_OPTION_SETS; k++)
			compare_pt(g.gl_pathv[i], option_sets[k]);
	}
	globfree(&g);
	report("real traces");
}

/* ---- streams from libipt's encoder ------------------------------------------- */

struct enc {
	struct pt_encoder *e;
	uint8_t buf[8192];
};

static void put(struct enc *x, struct pt_packet p)
{
	int ret = pt_enc_next(x->e, &p);

	cr_assert_geq(ret, 0, "pt_enc_next(type %d): %s", p.type, pt_errstr(pt_errcode(ret)));
}

static void put_ip_packets(struct enc *x)
{
	static const enum pt_packet_type types[] = { ppt_tip_pge, ppt_fup, ppt_tip, ppt_tip_pgd };
	static const struct pt_packet_ip ips[] = {
		{ pt_ipc_full, 0xffffffff81234567ull }, { pt_ipc_update_16, 0xbeef },
		{ pt_ipc_update_32, 0x12345678 }, { pt_ipc_update_48, 0x7fff12345678ull },
		{ pt_ipc_sext_48, 0x00007fffffff1000ull },
		{ pt_ipc_sext_48, 0x0000800000002000ull },
		{ pt_ipc_suppressed, 0 }, { pt_ipc_full, 0x401000 }, { pt_ipc_suppressed, 0 },
		{ pt_ipc_update_16, 0x1234 },
	};

	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
		for (size_t i = 0; i < sizeof(ips) / sizeof(ips[0]); i++)
			put(x, (struct pt_packet){ .type = types[t], .payload.ip = ips[i] });
}

static void put_tnt_packets(struct enc *x)
{
	for (uint8_t bits = 1; bits <= 6; bits++) {
		uint64_t ones = (1u << bits) - 1;

		put(x, (struct pt_packet){ .type = ppt_tnt_8,
			.payload.tnt = { .bit_size = bits, .payload = 0x2a & ones } });
		put(x, (struct pt_packet){ .type = ppt_tnt_8,
			.payload.tnt = { .bit_size = bits, .payload = ones } });
	}
	for (uint8_t bits = 1; bits <= 47; bits++)
		put(x, (struct pt_packet){ .type = ppt_tnt_64, .payload.tnt = { .bit_size = bits,
			.payload = 0x5a5a5a5a5a5aull & ((1ull << bits) - 1) } });
}

static void put_mode_packets(struct enc *x)
{
	for (int b = 0; b < 4; b++) {
		struct pt_packet p = { .type = ppt_mode };

		p.payload.mode.leaf = pt_mol_exec;
		p.payload.mode.bits.exec.csl = b & 1;
		p.payload.mode.bits.exec.csd = b >> 1;
		put(x, p);
		p.payload.mode.leaf = pt_mol_tsx;
		p.payload.mode.bits.tsx.intx = b & 1;
		p.payload.mode.bits.tsx.abrt = b >> 1;
		put(x, p);
	}
}

static void put_timing_packets(struct enc *x)
{
	static const uint64_t cycs[] = { 0, 1, 0x1f, 0x20, 0xfff, 0x1000, 1ull << 40,
					 0xffffffffffffull, 0x7fffffffffffffffull };

	put(x, (struct pt_packet){ .type = ppt_tsc, .payload.tsc.tsc = 0 });
	put(x, (struct pt_packet){ .type = ppt_tsc, .payload.tsc.tsc = 0xffffffffffffffull });
	put(x, (struct pt_packet){ .type = ppt_cbr, .payload.cbr.ratio = 0xff });
	put(x, (struct pt_packet){ .type = ppt_tma,
		.payload.tma = { .ctc = 0xffff, .fc = 0x1ff } });
	put(x, (struct pt_packet){ .type = ppt_mtc, .payload.mtc.ctc = 0xff });
	for (size_t i = 0; i < sizeof(cycs) / sizeof(cycs[0]); i++)
		put(x, (struct pt_packet){ .type = ppt_cyc, .payload.cyc.value = cycs[i] });
}

static void put_other_packets(struct enc *x)
{
	put(x, (struct pt_packet){ .type = ppt_pip, .payload.pip = { .cr3 = 0x12345000 } });
	put(x, (struct pt_packet){ .type = ppt_pip,
		.payload.pip = { .cr3 = 0xffffffffffe0ull, .nr = 1 } });
	put(x, (struct pt_packet){ .type = ppt_vmcs, .payload.vmcs.base = 0xfffffffff000ull });
	put(x, (struct pt_packet){ .type = ppt_mnt, .payload.mnt.payload = ~0ull });
	put(x, (struct pt_packet){ .type = ppt_exstop, .payload.exstop.ip = 0 });
	put(x, (struct pt_packet){ .type = ppt_exstop, .payload.exstop.ip = 1 });
	put(x, (struct pt_packet){ .type = ppt_mwait,
		.payload.mwait = { .hints = 0xffffffff, .ext = 0x3 } });
	for (uint8_t s = 0; s < 16; s += 5)
		put(x, (struct pt_packet){ .type = ppt_pwre,
			.payload.pwre = { .state = s, .sub_state = (uint8_t)(15 - s),
					  .hw = s & 1 } });
	for (int wr = 0; wr < 8; wr++)
		put(x, (struct pt_packet){ .type = ppt_pwrx, .payload.pwrx = {
			.last = (uint8_t)wr, .deepest = (uint8_t)(15 - wr), .interrupt = wr & 1,
			.store = wr >> 1 & 1, .autonomous = wr >> 2 & 1 } });
	put(x, (struct pt_packet){ .type = ppt_ptw,
		.payload.ptw = { .plc = 0, .payload = 0xdeadbeef, .ip = 1 } });
	put(x, (struct pt_packet){ .type = ppt_ptw,
		.payload.ptw = { .plc = 1, .payload = ~0ull, .ip = 0 } });
	put(x, (struct pt_packet){ .type = ppt_stop });
	put(x, (struct pt_packet){ .type = ppt_ovf });
}

/* Every packet type libipt 2.0.5 encodes, with each IP compression and TNT length. */
static size_t encode_every_packet(uint8_t *out, size_t cap)
{
	struct enc x;
	struct pt_config cfg;
	uint64_t len;

	pt_config_init(&cfg);
	cfg.begin = x.buf;
	cfg.end = x.buf + sizeof(x.buf);
	x.e = pt_alloc_encoder(&cfg);
	cr_assert(x.e);
	put(&x, (struct pt_packet){ .type = ppt_psb });
	put(&x, (struct pt_packet){ .type = ppt_pad });
	put_timing_packets(&x);
	put(&x, (struct pt_packet){ .type = ppt_psbend });
	put_ip_packets(&x);
	put_tnt_packets(&x);
	put_mode_packets(&x);
	put_other_packets(&x);
	put(&x, (struct pt_packet){ .type = ppt_psb });
	put(&x, (struct pt_packet){ .type = ppt_psbend });
	put_ip_packets(&x);
	cr_assert_eq(pt_enc_get_offset(x.e, &len), 0);
	pt_free_encoder(x.e);
	cr_assert_leq(len, cap);
	memcpy(out, x.buf, len);
	return len;
}

Test(dump_oracle, every_encodable_packet_equals_ptdump)
{
	uint8_t buf[8192];
	size_t len = encode_every_packet(buf, sizeof(buf));
	char *path = temp_file(".pt", buf, len);

	for (size_t k = 0; k < NR_OPTION_SETS; k++)
		compare_pt(path, option_sets[k]);
	unlink(path);
	free(path);
	report("encoded");
}

/*
 * Packets libipt 2.0.5 cannot decode, by their bytes (Intel SDM; libipt 2.1
 * and 2.2): CFE of each type with and without IP, EVD of each type, TRIG
 * with each flag and an instruction count, MODE.Exec with IF, and a cut TRIG
 * and CFE at the end.
 */
static size_t newer_packets(uint8_t *b)
{
	static const uint8_t psb[16] = { 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82,
					 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82 };
	size_t n = 0;

	memcpy(b + n, psb, 16);
	n += 16;
	b[n++] = 2;
	b[n++] = 0x23;	/* psbend */
	for (int t = 0; t < 32; t++)
		for (int ip = 0; ip < 2; ip++) {
			b[n++] = 2;
			b[n++] = 0x13;
			b[n++] = (uint8_t)(t | ip << 7);
			b[n++] = (uint8_t)(t * 37);
		}
	for (int t = 0; t < 32; t++) {
		b[n++] = 2;
		b[n++] = 0x53;
		b[n++] = (uint8_t)(t | 0xe0);
		for (int i = 0; i < 8; i++)
			b[n++] = (uint8_t)(t * 8 + i);
	}
	for (int f = 0; f < 8; f++) {
		b[n++] = 0xd9;
		b[n++] = (uint8_t)(f << 5 | 0x1f);
		b[n++] = (uint8_t)(0xa5 + f);
		if (f & 2) {
			b[n++] = 0x34;
			b[n++] = 0x12;
		}
	}
	for (int bits = 0; bits < 8; bits++) {
		b[n++] = 0x99;
		b[n++] = (uint8_t)bits;		/* mode.exec: csl, csd, if */
	}
	memcpy(b + n, psb, 16);
	n += 16;
	b[n++] = 0xd9;
	b[n++] = 0x40;		/* a TRIG that says an icnt follows, cut */
	b[n++] = 0x01;
	return n;
}

Test(dump_oracle, packets_newer_than_our_libipt_equal_ptdump)
{
	uint8_t buf[1024];
	size_t len = newer_packets(buf);
	char *path = temp_file(".pt", buf, len), *cut;

	for (size_t k = 0; k < NR_OPTION_SETS; k++)
		compare_pt(path, option_sets[k]);
	cut = temp_file(".pt", buf, len - 3);	/* ... ending in the middle of a PSB */
	compare_pt(cut, NULL);
	unlink(path);
	unlink(cut);
	free(path);
	free(cut);
	report("newer packets");
}

/* ---- corrupted streams --------------------------------------------------------- */

static uint32_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(*s >> 33);
}

/* One corruption of @in into @out: flipped bytes, a cut, garbage in front, a hole. */
static size_t corrupt(const uint8_t *in, size_t len, uint8_t *out, uint64_t *seed)
{
	size_t n = 0, a;
	int k = (int)(rnd(seed) % 4);

	switch (k) {
	case 0:
		memcpy(out, in, len);
		for (uint32_t i = 0, m = 1 + rnd(seed) % 20; i < m; i++)
			out[rnd(seed) % len] = (uint8_t)rnd(seed);
		return len;
	case 1:
		n = 1 + rnd(seed) % (len - 1);
		memcpy(out, in, n);
		return n;
	case 2:
		n = 1 + rnd(seed) % 100;
		for (size_t i = 0; i < n; i++)	/* bytes, some of them PSB halves */
			out[i] = rnd(seed) % 3 ? (uint8_t)rnd(seed) : (i & 1 ? 0x82 : 0x02);
		memcpy(out + n, in, len);
		return n + len;
	default:
		a = rnd(seed) % len;
		n = 1 + rnd(seed) % 50;
		n = a + n > len ? len - a : n;
		memcpy(out, in, a);
		memcpy(out + a, in + a + n, len - a - n);
		return len - n;
	}
}

static void compare_corruptions(const uint8_t *in, size_t len, int count, uint64_t seed)
{
	uint8_t *out = malloc(len + 128);

	for (int i = 0; i < count; i++) {
		uint64_t before = seed;
		size_t n = corrupt(in, len, out, &seed);
		char *path = temp_file(".pt", out, n);
		size_t k = rnd(&seed) % NR_OPTION_SETS;

		cr_log_info("corruption seed %#llx -> %s", (unsigned long long)before, path);
		compare_pt(path, option_sets[k]);
		unlink(path);	/* kept when the comparison failed: the test stops first */
		free(path);
	}
	free(out);
}

SUITEWATCH(watch_60s, 60)
SUITEWATCH(watch_120s, 120)

Test(dump_oracle, corrupted_real_traces_equal_ptdump, .init = watch_120s)
{
	glob_t g = traces();

	for (size_t i = 0; i < g.gl_pathc; i++) {
		size_t len;
		uint8_t *b = slurp(g.gl_pathv[i], &len);

		compare_corruptions(b, len, 120, 0x9e3779b97f4a7c15ull * (i + 1));
		free(b);
	}
	globfree(&g);
	report("corrupted real traces");
}

Test(dump_oracle, encoded_stream_cut_anywhere_equals_ptdump, .init = watch_120s)
{
	uint8_t buf[8192];
	size_t len = encode_every_packet(buf, sizeof(buf));

	/* Cut after every byte of the first 64 (PSB+ and the first IPs), then sparser. */
	for (size_t n = 1; n < len; n += 1 + n / 64) {
		char *path = temp_file(".pt", buf, n);

		compare_pt(path, NULL);
		unlink(path);
		free(path);
	}
	compare_corruptions(buf, len, 100, 42);
	report("cut and corrupted encoded streams");
}

Test(dump_oracle, garbage_before_the_first_psb_equals_ptdump)
{
	uint8_t buf[8192], in[64] = { 0 };
	size_t len = encode_every_packet(buf, sizeof(buf));
	char *path;

	/* No PSB at all: ptdump prints nothing and exits 0. */
	path = temp_file(".pt", in, sizeof(in));
	compare_pt(path, NULL);
	compare_pt(path, option_sets[8]);	/* --no-sync: decodes the zeroes as PADs */
	unlink(path);
	free(path);
	for (size_t skew = 1; skew <= 17; skew++) {
		uint8_t *b = malloc(len + skew);

		for (size_t i = 0; i < skew; i++)
			b[i] = i % 2 ? 0x82 : 0x02;	/* part of a PSB pattern, off by one */
		memcpy(b + skew, buf, len);
		path = temp_file(".pt", b, len + skew);
		compare_pt(path, NULL);
		compare_pt(path, option_sets[8]);
		unlink(path);
		free(path);
		free(b);
	}
	report("garbage first");
}

/*
 * A trace that ends on a page with an 8-byte word of PSB pattern, where
 * libipt 2.0.5's PSB search reads the byte after the buffer (libipt 2.1
 * fixed that; test_ptpacket.c checks that the dump never lets it).
 */
/*
 * SKZ84 (--cpu 6/85): libipt 2.1 and later make a TMA with reserved bits an 8-byte <invalid>
 * packet, also where the trace ends before its 8th byte (a fuzz finding: --raw read past the
 * end). ptdump prints its line, or with --raw "bad packet size" and stops; so does dump.
 */
Test(dump_oracle, an_invalid_tma_at_the_end_equals_ptdump)
{
	static const uint8_t psb[16] = {
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	};
	uint8_t t[16 + 2 + 7];
	struct pt_version v = pt_library_version();
	char *path;

	if (v.major == 2 && v.minor < 1)
		cr_skip_test("libipt %u.%u.%u's packet decoder applies no errata (2.1 does)", v.major,
			     v.minor, v.patch);
	memcpy(t, psb, 16);
	t[16] = 0x02;	/* PSBEND */
	t[17] = 0x23;
	/* TMA: 02 73, CTC 2 bytes, a reserved byte set, FC 2 bytes, cut one byte short */
	memcpy(t + 18, (const uint8_t[]){ 0x02, 0x73, 0x34, 0x02, 0x12, 0x00, 0x4c }, 7);
	path = temp_file(".pt", t, sizeof(t));
	compare_pt(path, (const char *[]){ "--cpu", "6/85", NULL });
	compare_pt(path, (const char *[]){ "--cpu", "6/85", "--raw", NULL });
	unlink(path);
	free(path);
}

Test(dump_oracle, a_trace_ending_in_psb_pattern_at_a_page_end_equals_ptdump)
{
	static uint8_t page[4096];
	uint8_t enc[8192];
	size_t len = encode_every_packet(enc, sizeof(enc));
	char *path;

	cr_assert_lt(len, sizeof(page) - 8);
	memcpy(page, enc, len);
	for (size_t i = sizeof(page) - 8; i < sizeof(page); i++)
		page[i] = i % 2 ? 0x82 : 0x02;
	path = temp_file(".pt", page, sizeof(page));
	compare_pt(path, NULL);
	unlink(path);
	free(path);
	memset(page, 0, len);	/* no PSB before: the search reaches the last word */
	path = temp_file(".pt", page, sizeof(page));
	compare_pt(path, NULL);
	unlink(path);
	free(path);
}

/* ---- .pevent ------------------------------------------------------------------------ */

/* ptdump --sb:compact [--sb:offset] --pevent:sample-type ST --pevent:primary FILE one.pt */
static void oracle_pevent(const char *file, uint64_t st, bool offset, struct run_result *r)
{
	char *o = oracle(), stbuf[32], *pt;
	char *argv[] = { o, "--sb:compact", "--pevent:sample-type", stbuf, "--pevent:primary",
			 (char *)file, NULL, NULL, NULL };
	uint8_t pad = 0;
	int n = 6;

	snprintf(stbuf, sizeof(stbuf), "%#llx", (unsigned long long)st);
	pt = temp_file(".pt", &pad, 1);	/* ptdump needs a trace; a PAD has no PSB */
	if (offset)
		argv[n++] = "--sb:offset";
	argv[n] = pt;
	cr_assert_eq(run_argv(argv, NULL, r), 0);
	unlink(pt);
	free(pt);
	free(o);
}

/* ptcollect's lines with perf's user-type names put back to ptdump's "UNKNOWN (". */
static char *as_ptdump(const char *out)
{
	char *s = malloc(strlen(out) + 1), *d = s;
	const char *p = out;

	while (*p) {
		const char *e = strchrnul(p, '\n'), *rec = p, *sp;

		if (e - p > 18 && !strncmp(p + 16, "  ", 2))
			rec = p + 18;
		sp = strchr(rec, ' ');
		if (!strncmp(rec, "PERF_RECORD_", 12) && sp && sp < e && sp[1] == '(') {
			memcpy(d, p, (size_t)(rec - p));
			d += rec - p;
			d += sprintf(d, "UNKNOWN");
			p = sp;
		}
		memcpy(d, p, (size_t)(e - p));
		d += e - p;
		if (*e)
			*d++ = '\n';
		p = *e ? e + 1 : e;
	}
	*d = '\0';
	return s;
}

/*
 * ptdump's lines and ptcollect's for @file. Where ptdump stops with
 * "[FILE:OFFSET sideband error: ...]", ptcollect stops at the same offset and
 * says so on stderr (exit 2); where libipt's reader quietly stops (a record
 * cut short, a type 0), ptcollect stops there too, and says so.
 */
static size_t compare_pevent(const char *file, uint64_t st, bool offset, int *status)
{
	char stbuf[32], *mapped, *err, at[64];
	char *argv[] = { (char *)run_bin(), "dump", "--format", "pevent", "--sample-type", stbuf,
			 offset ? (char *)file : "--no-offset", offset ? NULL : (char *)file,
			 NULL };
	struct run_result want, got;
	unsigned long long off;
	size_t lines;

	snprintf(stbuf, sizeof(stbuf), "%#llx", (unsigned long long)st);
	oracle_pevent(file, st, offset, &want);
	cr_assert_eq(run_argv(argv, NULL, &got), 0);
	mapped = as_ptdump(got.out);
	err = strstr(want.out, "sideband error");
	if (err) {
		err = strrchr(want.out, '[');
		cr_assert_eq(sscanf(strstr(err, " sideband error") - 16, "%16llx", &off), 1, "%s",
			     err);
		snprintf(at, sizeof(at), "at offset %llu:", off);
		cr_expect_eq(got.status, 2, "%s: ptdump: %s", file, err);
		cr_expect(strstr(got.err, at), "%s: ptdump: %s; ptcollect: %s", file, err, got.err);
		*err = '\0';
	}
	lines = same_lines(file, want.out, mapped);
	*status = got.status;
	free(mapped);
	run_free(&want);
	run_free(&got);
	return lines;
}

Test(dump_oracle, shared_pevent_files_dump_to_the_end_as_ptdump)
{
	char *pat = shared("traces/*/test_simple.raw/*.pevent");
	size_t lines = 0;
	glob_t g;

	cr_assert_eq(glob(pat, 0, NULL, &g), 0, "%s", pat);
	cr_assert_geq(g.gl_pathc, 4);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		struct run_result r;
		int status;
		size_t len;
		uint8_t *b = slurp(g.gl_pathv[i], &len);
		char *last;
		unsigned long long off;
		struct perf_event_header h;

		lines += compare_pevent(g.gl_pathv[i], 0x10086, true, &status);
		cr_expect_eq(status, 0);
		lines += compare_pevent(g.gl_pathv[i], 0x10086, false, &status);
		/* To the end: the last line is the record that ends the file. */
		cr_assert_eq(run_ptcollect(NULL, &r, "dump", g.gl_pathv[i], NULL), 0);
		cr_expect_eq(r.status, 0, "%s", r.err);
		r.out[strlen(r.out) - 1] = '\0';
		last = strrchr(r.out, '\n');
		cr_assert_eq(sscanf(last ? last + 1 : r.out, "%llx", &off), 1);
		memcpy(&h, b + off, sizeof(h));
		cr_expect_eq(off + h.size, len, "%s: the dump ends at %llu, the file at %zu",
			     g.gl_pathv[i], off + h.size, len);
		run_free(&r);
		free(b);
	}
	cr_log_info("shared .pevent: %zu files, %zu lines equal to ptdump's", g.gl_pathc, lines);
	globfree(&g);
	free(pat);
}

/* A record: header, body, name padded to 8, and the trailer @st asks for (values from @v). */
static size_t record(uint8_t *b, uint32_t type, uint16_t misc, const void *body, size_t blen,
		     const char *name, uint64_t st, uint64_t v)
{
	struct perf_event_header h = { .type = type, .misc = misc };
	size_t n = 8;

	memcpy(b + n, body, blen);
	n += blen;
	if (name) {
		size_t l = strlen(name) + 1, pad = (l + 7) & ~(size_t)7;

		memset(b + n, 0, pad);
		memcpy(b + n, name, l);
		n += pad;
	}
	st &= PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |
	      PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;
	for (int bit = 0; bit < 17; bit++) {
		uint64_t x = v + (uint64_t)bit * 0x1111;

		if (!(st & (1ull << bit)))
			continue;
		memcpy(b + n, &x, 8);
		n += 8;
	}
	h.size = (uint16_t)n;
	memcpy(b, &h, 8);
	return n;
}

/* One record of every type libipt reads, the ones it steps over, and perf's user types. */
static size_t every_record(uint8_t *b, uint64_t st)
{
	uint64_t body[16];
	size_t n = 0;

	for (int i = 0; i < 16; i++)
		body[i] = 0x0001000200030004ull * (uint64_t)(i + 1);
	n += record(b + n, PERF_RECORD_MMAP, 0, body, 32, "/usr/lib/libc.so.6", st, 1);
	n += record(b + n, PERF_RECORD_LOST, 0, body, 16, NULL, st, 2);
	n += record(b + n, PERF_RECORD_COMM, 0, body, 8, "prog", st, 3);
	n += record(b + n, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, body, 8, "exec'd", st, 4);
	n += record(b + n, PERF_RECORD_EXIT, 0, body, 24, NULL, st, 5);
	n += record(b + n, PERF_RECORD_THROTTLE, 0, body, 24, NULL, st, 6);
	n += record(b + n, PERF_RECORD_UNTHROTTLE, 0, body, 24, NULL, st, 7);
	n += record(b + n, PERF_RECORD_FORK, 0, body, 24, NULL, st, 8);
	n += record(b + n, PERF_RECORD_MMAP2, 0, body, 64, "[vdso]", st, 9);
	n += record(b + n, PERF_RECORD_MMAP2, PERF_RECORD_MISC_MMAP_BUILD_ID, body, 64, "/bin/x",
		    st, 10);
	n += record(b + n, PERF_RECORD_AUX, 0, body, 24, NULL, st, 11);
	body[2] = PERF_AUX_FLAG_TRUNCATED | PERF_AUX_FLAG_PARTIAL;
	n += record(b + n, PERF_RECORD_AUX, 0, body, 24, NULL, st, 12);
	n += record(b + n, PERF_RECORD_ITRACE_START, 0, body, 8, NULL, st, 13);
	n += record(b + n, PERF_RECORD_LOST_SAMPLES, 0, body, 8, NULL, st, 14);
	n += record(b + n, PERF_RECORD_SWITCH, 0, body, 0, NULL, st, 15);
	n += record(b + n, PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT, body, 0, NULL, st, 16);
	n += record(b + n, PERF_RECORD_SWITCH_CPU_WIDE, 0, body, 8, NULL, st, 17);
	n += record(b + n, PERF_RECORD_SWITCH_CPU_WIDE, PERF_RECORD_MISC_SWITCH_OUT, body, 8, NULL,
		    st, 18);
	n += record(b + n, 17 /* KSYMBOL */, 0, body, 40, NULL, st, 19);
	n += record(b + n, 30 /* no name */, 3, body, 16, NULL, 0, 20);
	for (uint32_t t = 64; t <= 90; t += 3)	/* TIME_CONV, THREAD_MAP, ... and beyond */
		n += record(b + n, t, (uint16_t)t, body, 24, NULL, 0, 21);
	n += record(b + n, PERF_RECORD_SAMPLE, 0, body, 32, NULL, 0, 22);
	return n;
}

Test(dump_oracle, every_record_type_equals_ptdump_compact)
{
	static const uint64_t sample_types[] = { 0x10086, 0, 0x2, 0x100c6 | PERF_SAMPLE_STREAM_ID,
						 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU };
	uint8_t buf[8192];
	size_t lines = 0;

	for (size_t i = 0; i < sizeof(sample_types) / sizeof(sample_types[0]); i++) {
		size_t len = every_record(buf, sample_types[i]);
		char *path = temp_file(".pevent", buf, len);
		int status;

		lines += compare_pevent(path, sample_types[i], true, &status);
		cr_expect_eq(status, 0, "sample_type %#llx", (unsigned long long)sample_types[i]);
		lines += compare_pevent(path, sample_types[i], false, &status);
		unlink(path);
		free(path);
	}
	cr_log_info("every record type: %zu lines equal to ptdump's", lines);
}

Test(dump_oracle, ptcollects_own_proc_records_equal_ptdump)
{
	char path[] = "/tmp/ptc-dumporacle-XXXXXX.pevent";
	int fd = mkstemps(path, 7), status;
	struct error e = { 0 };

	cr_assert_geq(fd, 0);
	cr_assert_gt(sideband_synthesize_proc(getpid(), fd, &e), 1, "%s", e.why);
	close(fd);
	cr_expect_gt(compare_pevent(path, SIDEBAND_SAMPLE_TYPE, true, &status), 1);
	cr_expect_eq(status, 0);
	unlink(path);
}

Test(dump_oracle, corrupted_pevent_stops_where_ptdump_stops, .init = watch_60s)
{
	uint8_t buf[8192], out[8192 + 64];
	size_t len = every_record(buf, 0x10086), lines = 0;
	uint64_t seed = 7;

	for (int i = 0; i < 150; i++) {
		size_t n = len;
		char *path;
		int status;

		memcpy(out, buf, len);
		if (i % 3 == 0) {
			n = 1 + rnd(&seed) % (len - 1);	/* cut */
		} else {
			for (uint32_t k = 0, m = 1 + rnd(&seed) % 4; k < m; k++) {
				size_t at = rnd(&seed) % len;	/* often a header field */

				out[at & (i % 3 == 1 ? ~(size_t)7 : ~(size_t)0)] ^=
					(uint8_t)(1 + rnd(&seed) % 255);
			}
		}
		path = temp_file(".pevent", out, n);
		lines += compare_pevent(path, 0x10086, true, &status);
		unlink(path);
		free(path);
	}
	cr_log_info("corrupted .pevent: 150 files, %zu lines equal to ptdump's", lines);
}

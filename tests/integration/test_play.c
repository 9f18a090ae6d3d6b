// SPDX-License-Identifier: MIT
/*
 * The played stream (tests/kernel/README.md, "Played streams"): ptplay derives, by
 * single-stepping playprog, the PT stream a CPU writes for its run; libipt's ptxed (the
 * oracle in ../shared/oracle) decodes that stream to exactly the single-stepped sequence,
 * and the counts follow the program's control flow as read from its source.
 */
#include <criterion/criterion.h>
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run.h"

struct play {
	char dir[64];
	char stream[96], insns[96];
	char *prog;
	char counts[512];	/* ptplay's line of counts */
};

static char *need_oracle(const char *tool)
{
	return run_oracle(tool);
}

/* Runs ptplay on playprog into a fresh directory; skips where ptrace is not permitted. */
static void play_setup(struct play *p)
{
	struct run_result r;
	char *gen = run_testprog("ptplay");
	char *argv[] = { gen, NULL, p->stream, p->insns, NULL };

	strcpy(p->dir, "/tmp/ptc-play-XXXXXX");
	cr_assert_not_null(mkdtemp(p->dir));
	snprintf(p->stream, sizeof(p->stream), "%s/playprog.pt", p->dir);
	snprintf(p->insns, sizeof(p->insns), "%s/playprog.insns", p->dir);
	p->prog = run_testprog("playprog");
	argv[1] = p->prog;
	cr_assert_eq(run_argv(argv, NULL, &r), 0);
	if (r.status == 3)
		cr_skip_test("ptrace is not permitted here: %s", r.err);
	cr_assert_eq(r.status, 0, "ptplay: %s", r.err);
	snprintf(p->counts, sizeof(p->counts), "%s", r.out);
	run_free(&r);
	free(gen);
}

static void play_teardown(struct play *p)
{
	unlink(p->stream);
	unlink(p->insns);
	rmdir(p->dir);
	free(p->prog);
}

static char *slurp_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n;

	cr_assert_not_null(f, "%s", path);
	n = getdelim(&buf, &cap, '\0', f);
	fclose(f);
	cr_assert_geq(n, 0, "%s", path);
	return buf;
}

/* The instruction addresses in ptxed's output, one per line; counts its error lines. */
static char *ptxed_addresses(const char *out, int *errors)
{
	size_t len = 0, cap = strlen(out) + 1;
	char *addrs = calloc(1, cap);
	const char *l = out;

	*errors = 0;
	for (; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
		size_t n = strspn(l, "0123456789abcdef");

		if (n == 16 && l[16] == ' ') {
			memcpy(addrs + len, l, 16);
			addrs[len + 16] = '\n';
			len += 17;
		} else if (strstr(l, "error") && strstr(l, "error") < strchrnul(l, '\n')) {
			(*errors)++;
		}
	}
	return addrs;
}

static void ptxed(struct play *p, const char *stream, struct run_result *r)
{
	char *bin = need_oracle("ptxed");
	char *argv[] = { bin, "--cpu", "none", "--elf", p->prog, "--pt", (char *)stream, NULL };

	cr_assert_eq(run_argv(argv, NULL, r), 0);
	free(bin);
}

Test(play, stream_decodes_to_the_single_stepped_run)
{
	struct play p;
	struct run_result r;
	char *want, *got;
	int errors;

	free(need_oracle("ptxed"));
	play_setup(&p);
	ptxed(&p, p.stream, &r);
	want = slurp_text(p.insns);
	got = ptxed_addresses(r.out, &errors);
	cr_assert_eq(r.status, 0, "ptxed: %s%s", r.out, r.err);
	cr_assert_eq(errors, 0, "ptxed reported errors:\n%s", r.out);
	cr_assert_gt(strlen(want), 0);
	cr_assert_str_eq(got, want, "ptxed decoded another sequence than the run:\n%s", r.out);
	free(want);
	free(got);
	run_free(&r);
	play_teardown(&p);
}

/*
 * Read off prog.S: three rounds of sum(4), each 1 + 1 + (1 + 4 * 5 + 1) + 1 + 1 = 26
 * instructions; 1 before them, then 3 (indirect call) + 2 (twice) + 3 (table jump) +
 * 3 (push, ret) + 5 (write) + 3 (exit). Each round has four compressed RETs of leaf, one of
 * sum, four inner and one outer conditional branch; twice's RET is compressed too.
 */
Test(play, counts_follow_the_programs_control_flow)
{
	struct play p;

	play_setup(&p);
	cr_assert(strstr(p.counts, "insns 98 "), "%s", p.counts);
	cr_assert(strstr(p.counts, " tnt_bits 31 compressed_rets 16 tip 3 tip_pge 2 tip_pgd 2 "),
		  "%s", p.counts);
	play_teardown(&p);
}

static uint8_t *slurp_bin(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	uint8_t *buf;
	long n;

	cr_assert_not_null(f, "%s", path);
	cr_assert_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/*
 * The packets of @buf as libipt's packet decoder reads them: "TYPE[:payload] " each, into
 * @out; the offset of the first packet of type @find goes to @found (if not NULL).
 */
static void packet_list(const uint8_t *buf, size_t len, char *out, size_t size,
			enum pt_packet_type find, uint64_t *found)
{
	struct pt_packet_decoder *d;
	struct pt_config cfg;
	struct pt_packet pkt;
	uint64_t off;
	size_t n;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)buf;
	cfg.end = (uint8_t *)buf + len;
	d = pt_pkt_alloc_decoder(&cfg);
	cr_assert_not_null(d);
	cr_assert_geq(pt_pkt_sync_forward(d), 0);
	out[0] = 0;
	while (pt_pkt_get_offset(d, &off) >= 0 && pt_pkt_next(d, &pkt, sizeof(pkt)) > 0) {
		if (found && pkt.type == find) {
			*found = off;
			found = NULL;
		}
		n = strlen(out);
		if (pkt.type == ppt_tsc)
			snprintf(out + n, size - n, "%d:%llx ", pkt.type,
				 (unsigned long long)pkt.payload.tsc.tsc);
		else if (pkt.type == ppt_tip_pge || pkt.type == ppt_tip_pgd)
			snprintf(out + n, size - n, "%d:%d:%llx ", pkt.type, pkt.payload.ip.ipc,
				 (unsigned long long)pkt.payload.ip.ip);
		else
			snprintf(out + n, size - n, "%d ", pkt.type);
	}
	pt_pkt_free_decoder(d);
	cr_assert_null(found, "no packet of type %d", find);
}

Test(play, stream_starts_and_ends_as_the_cpu_writes_it)
{
	struct play p;
	char got[2048], want[256];
	uint8_t *buf;
	size_t len;

	play_setup(&p);
	buf = slurp_bin(p.stream, &len);
	packet_list(buf, len, got, sizeof(got), ppt_tip_pgd, NULL);
	/* PSB, TSC = the stamp marker, PSBEND, MODE.exec, TIP.PGE (sext-48) at _start */
	snprintf(want, sizeof(want), "%d %d:ffffffffffffff %d %d %d:3:401000 ", ppt_psb, ppt_tsc,
		 ppt_psbend, ppt_mode, ppt_tip_pge);
	cr_assert(!strncmp(got, want, strlen(want)), "stream: %s", got);
	/* ... and the exit syscall: TIP.PGD, IP suppressed */
	snprintf(want, sizeof(want), " %d:0:0 ", ppt_tip_pgd);
	cr_assert(strlen(got) > strlen(want) && !strcmp(got + strlen(got) - strlen(want), want),
		  "stream: %s", got);
	free(buf);
	play_teardown(&p);
}

/* The comparison can fail: one branch outcome flipped in the stream is caught. */
Test(play, control_a_flipped_branch_is_caught)
{
	struct play p;
	struct run_result r;
	char bad[128], list[2048], *want, *got;
	uint64_t tnt;
	uint8_t *buf;
	size_t len;
	FILE *f;
	int errors;

	free(need_oracle("ptxed"));
	play_setup(&p);
	buf = slurp_bin(p.stream, &len);
	packet_list(buf, len, list, sizeof(list), ppt_tnt_8, &tnt);
	/* the oldest bit of the first TNT.8 sits just under its stop bit */
	buf[tnt] ^= (uint8_t)(1u << (30 - __builtin_clz(buf[tnt])));
	snprintf(bad, sizeof(bad), "%s/flipped.pt", p.dir);
	f = fopen(bad, "w");
	cr_assert_eq(fwrite(buf, 1, len, f), len);
	fclose(f);
	ptxed(&p, bad, &r);
	want = slurp_text(p.insns);
	got = ptxed_addresses(r.out, &errors);
	cr_assert(errors > 0 || strcmp(got, want), "a flipped branch went unnoticed");
	unlink(bad);
	free(buf);
	free(want);
	free(got);
	run_free(&r);
	play_teardown(&p);
}

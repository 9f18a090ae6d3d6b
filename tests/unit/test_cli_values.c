// SPDX-License-Identifier: MIT
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "evconfig.h"
#include "pmu.h"

static struct error err;

Test(cli_values, sizes_take_binary_units)
{
	uint64_t b;

	cr_assert_eq(cli_parse_size("4096", &b, &err), 0);
	cr_expect_eq(b, 4096);
	cr_assert_eq(cli_parse_size("64K", &b, &err), 0);
	cr_expect_eq(b, 65536);
	cr_assert_eq(cli_parse_size("2MiB", &b, &err), 0);
	cr_expect_eq(b, 2 << 20);
	cr_expect_neq(cli_parse_size("-1", &b, &err), 0);
	cr_expect_neq(cli_parse_size("4T", &b, &err), 0);
	cr_expect_neq(cli_parse_size("99999999999999999999G", &b, &err), 0);
}

Test(cli_values, mmap_counts_pages_and_allows_empty_parts)
{
	uint64_t d, a, page = (uint64_t)sysconf(_SC_PAGESIZE);

	cr_assert_eq(cli_parse_mmap("16,4M", &d, &a, &err), 0, "%s", err.why);
	cr_expect_eq(d, 16 * page);
	cr_expect_eq(a, 4 << 20);
	cr_assert_eq(cli_parse_mmap(",64K", &d, &a, &err), 0, "%s", err.why);
	cr_expect_eq(d, 0);
	cr_expect_eq(a, 65536);
	cr_assert_eq(cli_parse_mmap("128K", &d, &a, &err), 0, "%s", err.why);
	cr_expect_eq(d, 128 << 10);
	cr_expect_eq(a, 0);
	cr_expect_neq(cli_parse_mmap("3", &d, &a, &err), 0);
	cr_expect_neq(cli_parse_mmap(",100K", &d, &a, &err), 0);
	cr_expect_neq(cli_parse_mmap("1,2,4", &d, &a, &err), 0);
	cr_expect_neq(cli_parse_mmap(",0", &d, &a, &err), 0);
}

Test(cli_values, cpulists_are_sorted_without_duplicates)
{
	int cpus[CLI_MAX_CPUS], n;

	cr_assert_eq(cli_parse_cpulist("3,0-2,2", cpus, &n, &err), 0);
	cr_assert_eq(n, 4);
	for (int i = 0; i < 4; i++)
		cr_expect_eq(cpus[i], i);
	cr_expect_neq(cli_parse_cpulist("", cpus, &n, &err), 0);
	cr_expect_neq(cli_parse_cpulist("1,", cpus, &n, &err), 0);
	cr_expect_neq(cli_parse_cpulist("5000", cpus, &n, &err), 0);
}

Test(cli_values, durations_accept_units)
{
	double s;

	cr_assert_eq(cli_parse_duration("2.5", &s, &err), 0);
	cr_expect_float_eq(s, 2.5, 1e-9);
	cr_assert_eq(cli_parse_duration("500ms", &s, &err), 0);
	cr_expect_float_eq(s, 0.5, 1e-9);
	cr_assert_eq(cli_parse_duration("2m", &s, &err), 0);
	cr_expect_float_eq(s, 120, 1e-9);
	cr_expect_neq(cli_parse_duration("0", &s, &err), 0);
	cr_expect_neq(cli_parse_duration("nan", &s, &err), 0);
	cr_expect_neq(cli_parse_duration("5x", &s, &err), 0);
}

/* strtod reads hex and exponents; a duration is decimal seconds and nothing else. */
Test(cli_values, durations_are_decimal_only)
{
	double s;

	cr_expect_neq(cli_parse_duration("0x10", &s, &err), 0);
	cr_expect_neq(cli_parse_duration("0X1p4", &s, &err), 0);
	cr_expect_neq(cli_parse_duration("1e3", &s, &err), 0);
	cr_expect_neq(cli_parse_duration(".", &s, &err), 0);
	cr_expect_neq(cli_parse_duration("inf", &s, &err), 0);
	cr_assert_eq(cli_parse_duration(".5", &s, &err), 0);
	cr_expect_float_eq(s, 0.5, 1e-9);
	cr_assert_eq(cli_parse_duration("5.", &s, &err), 0);
	cr_expect_float_eq(s, 5, 1e-9);
	cr_assert_eq(cli_parse_duration("010", &s, &err), 0);
	cr_expect_float_eq(s, 10, 1e-9, "leading zeros are decimal, not octal");
}

Test(cli_values, bad_values_are_usage_errors_that_quote_the_value)
{
	struct error e = { 0 };
	uint64_t d, a;
	pid_t pids[CLI_MAX_PIDS];
	int n;

	cr_assert_eq(cli_parse_mmap("16,3", &d, &a, &e), -EINVAL);
	cr_expect(e.usage && e.code == -EINVAL, "usage %d code %d", e.usage, e.code);
	cr_expect(strstr(e.why, "AUX size '3'") && strstr(e.why, "power of two"), "%s", e.why);
	cr_expect_str_empty(e.what, "the caller names the option: %s", e.what);
	err_clear(&e);
	cr_assert_eq(cli_parse_pidlist("0", pids, &n, &e), -EINVAL);
	cr_expect(e.usage && strstr(e.why, "'0' is not a list of process ids"), "%s", e.why);
}

Test(pmu_terms, split_bit_ranges_take_value_bits_in_order)
{
	struct pmu_term t = { .name = "x", .field = PMU_FIELD_CONFIG,
			      .mask = (0xfULL << 14) | (1ULL << 30) };
	uint64_t cfg = ~0ULL;

	cr_expect_eq(pmu_term_max(&t), 31);
	pmu_term_apply(&t, 0x13, &cfg);	/* low 4 bits -> 14..17, bit 4 -> 30 */
	cr_expect_eq(cfg & t.mask, (3ULL << 14) | (1ULL << 30));
	cr_expect_eq(cfg & ~t.mask, ~t.mask, "bits outside the term are kept");
	cr_expect_eq(pmu_term_extract(&t, cfg), 0x13);
}

Test(evconfig_values, valid_value_lists_fold_runs)
{
	char s[64];

	evconfig_valid_values(0x249, s, sizeof(s));
	cr_expect_str_eq(s, "0,3,6,9");
	evconfig_valid_values(0x3f, s, sizeof(s));
	cr_expect_str_eq(s, "0-5");
	evconfig_valid_values(0x3, s, sizeof(s));
	cr_expect_str_eq(s, "0,1");
	evconfig_valid_values(0x1 | 0x30, s, sizeof(s));
	cr_expect_str_eq(s, "0,4,5");
}

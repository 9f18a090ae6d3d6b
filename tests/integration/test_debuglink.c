// SPDX-License-Identifier: MIT
/*
 * A debug file of another build, found through .gnu_debuglink, is not used:
 * its symbols would give filter offsets of that other build. The CRC the link
 * stores and the build-ids tell it apart, as gdb and libdw check; the
 * symbols then come from .dynsym, or there are none, and a warning names the
 * file and why.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "run.h"

/* The "offset": 0x... of @name in `symbols --json FILE` (its JSON), or NULL. */
static char *json_offset(const char *json, const char *name)
{
	char key[96], *hit, *off, *end;

	snprintf(key, sizeof(key), "\"name\": \"%s\"", name);
	hit = strstr(json, key);
	off = hit ? strstr(hit, "\"offset\": \"") : NULL;
	if (!off)
		return NULL;
	off += strlen("\"offset\": \"");
	end = strchr(off, '"');
	return end ? strndup(off, (size_t)(end - off)) : NULL;
}

Test(debuglink, a_debug_file_with_another_crc_is_passed_over_for_the_dynsym)
{
	char *prog = run_testprog("filtertarget-staledebug");
	struct run_result r;

	cr_assert_eq(run_ptcollect(NULL, &r, "symbols", "--json", prog, NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "\"table\": \".dynsym\""), "%s", r.out);
	cr_expect(!strstr(r.out, "debug_file"), "the stale file was used: %s", r.out);
	cr_expect(strstr(r.err, "filtertarget-staledebug.debug: not used as the debug file of") &&
		  strstr(r.err, "CRC mismatch: it belongs to another build"), "%s", r.err);
	run_free(&r);
	free(prog);
}

Test(debuglink, a_debug_file_with_another_build_id_is_passed_over)
{
	char *prog = run_testprog("filtertarget-staleid");
	struct run_result r;

	cr_assert_eq(run_ptcollect(NULL, &r, "symbols", prog, NULL), 0);
	cr_expect_eq(r.status, 2, "no .symtab and no .dynsym are left: %s", r.err);
	cr_expect(strstr(r.err, "filtertarget-staleid.debug: not used as the debug file of") &&
		  strstr(r.err, "build-id mismatch: it belongs to another build"), "%s", r.err);
	cr_expect(strstr(r.err, "no function symbols"), "%s", r.err);
	run_free(&r);
	free(prog);
}

Test(debuglink, a_filter_resolves_through_the_dynsym_and_says_why)
{
	struct oracle_env oe;
	char **env = oracle_fixture_env(&oe, "skylake");
	char *prog = run_testprog("filtertarget-staledebug"), *spec, *want, *off;
	struct run_result r;

	cr_assert_eq(run_ptcollect(NULL, &r, "symbols", "--json", prog, "work", NULL), 0);
	off = json_offset(r.out, "work");
	cr_assert(off, "no offset for work: %s", r.out);
	run_free(&r);
	cr_assert(asprintf(&spec, "filter work @ %s", prog) > 0);
	cr_assert(asprintf(&want, "\"filter\": \"filter %s/", off) > 0);
	cr_assert_eq(run_ptcollect(env, &r, "record", "--dry-run", "--json", "-o", "/tmp/ptc-dry-run-never-created",
				   "--filter", spec, "--", "true", NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, want), "want %s (the .dynsym's offset) in:\n%s", want, r.out);
	cr_expect(strstr(r.err, "warning: record: --filter: ") && strstr(r.err, "CRC mismatch"), "%s",
		  r.err);
	run_free(&r);
	free(want);
	free(spec);
	free(off);
	free(prog);
}

Test(debuglink, the_debug_file_of_the_same_build_is_used_without_a_warning)
{
	char *prog = run_testprog("filtertarget-debug");
	struct run_result r;

	cr_assert_eq(run_ptcollect(NULL, &r, "symbols", "--json", prog, NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "\"table\": \".symtab\"") && strstr(r.out, "\"debug_file\": "),
		  "%s", r.out);
	cr_expect_str_empty(r.err);
	run_free(&r);
	free(prog);
}

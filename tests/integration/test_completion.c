// SPDX-License-Identifier: MIT
/* The bash and zsh completions offer the commands and each command's options. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

static char *zsh_complete(const char *words);

/* Complete the words of @line (the cursor at its end) with the bash completion. */
static char *bash_complete(const char *line)
{
	char *comp = run_srcpath("completions/ptcollect.bash"), *script;
	char *argv[] = { "bash", "-c", NULL, NULL };
	struct run_result r;

	cr_assert(asprintf(&script,
		"source /usr/share/bash-completion/bash_completion || exit 90\n"
		"source '%s' || exit 91\n"
		"COMP_LINE='%s'; COMP_POINT=${#COMP_LINE}\n"
		"read -ra COMP_WORDS <<< \"$COMP_LINE\"\n"
		"[[ $COMP_LINE == *' ' ]] && COMP_WORDS+=('')\n"
		"COMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n"
		"_ptcollect ptcollect \"${COMP_WORDS[COMP_CWORD]}\" \"${COMP_WORDS[COMP_CWORD-1]}\"\n"
		"printf '%%s\\n' \"${COMPREPLY[@]}\"\n", comp, line) > 0);
	argv[2] = script;
	cr_assert_eq(run_argv(argv, NULL, &r), 0);
	cr_assert_eq(r.status, 0, "bash completion failed (%d): %s", r.status, r.err);
	free(script);
	free(comp);
	free(r.err);
	return r.out;
}

Test(completion, bash_completes_commands_and_record_options)
{
	char *s = bash_complete("ptcollect ");

	cr_expect(strstr(s, "record\n") && strstr(s, "caps\n") && strstr(s, "symbols\n") &&
		  strstr(s, "help\n"), "%s", s);
	free(s);
	s = bash_complete("ptcollect rec");
	cr_expect_str_eq(s, "record\n");
	free(s);
	s = bash_complete("ptcollect record --");
	cr_expect(strstr(s, "--event\n") && strstr(s, "--filter\n") && strstr(s, "--dry-run\n") &&
		  strstr(s, "--mmap-pages\n") && strstr(s, "--per-thread\n"), "%s", s);
	free(s);
	s = bash_complete("ptcollect dump --");
	cr_expect(strstr(s, "--format\n") && strstr(s, "--sample-type\n") &&
		  strstr(s, "--no-offset\n") && strstr(s, "--lastip\n") && strstr(s, "--quiet\n"),
		  "%s", s);
	free(s);
	s = bash_complete("ptcollect in");
	cr_expect_str_eq(s, "info\n");
	free(s);
	s = bash_complete("ptcollect im");
	cr_expect_str_eq(s, "import\n");
	free(s);
	s = bash_complete("ptcollect import --");
	cr_expect(strstr(s, "--vdso\n") && strstr(s, "--json\n"), "%s", s);
	free(s);
	s = bash_complete("ptcollect caps --");
	cr_expect(strstr(s, "--json\n"), "%s", s);
	free(s);
	s = bash_complete("ptcollect record -e intel_pt//");
	cr_expect(strstr(s, "intel_pt//u\n"), "%s", s);
	free(s);
	s = bash_complete("ptcollect record --");
	cr_expect(strstr(s, "--snapshot\n") && strstr(s, "--no-final-snapshot\n") &&
		  strstr(s, "--trigger\n") && strstr(s, "--trigger-count\n") &&
		  strstr(s, "--control\n") && strstr(s, "--ready\n") && strstr(s, "--no-trace\n"),
		  "%s", s);
	free(s);
	s = bash_complete("ptcollect record --trigger ");
	cr_expect(strstr(s, "uprobe:\n") && strstr(s, "breakpoint:\n"), "%s", s);
	free(s);
	s = bash_complete("ptcollect record --control ");
	cr_expect(strstr(s, "fifo:\n") && strstr(s, "fd:\n"), "%s", s);
	free(s);
}

/* --trigger KIND:FILE: offers FILE's functions, as --filter does. */
Test(completion, bash_trigger_offers_the_functions_of_the_file)
{
	char *prog = run_testprog("trigtarget"), line[4400], *s;

	snprintf(line, sizeof(line), "%s record --trigger uprobe:%s:trig_", run_bin(), prog);
	s = bash_complete(line);
	cr_expect(strstr(s, "trig_hit\n") && strstr(s, "trig_other\n"), "%s", s);
	free(s);
	free(prog);
}

Test(completion, bash_and_zsh_know_archive_and_info_script)
{
	char *s = bash_complete("ptcollect ar");

	cr_expect_str_eq(s, "archive\n");
	free(s);
	s = bash_complete("ptcollect archive --");
	cr_expect(strstr(s, "--json\n"), "%s", s);
	free(s);
	s = bash_complete("ptcollect info --");
	cr_expect(strstr(s, "--script\n"), "%s", s);
	free(s);
	s = bash_complete("ptcollect record --ar");
	cr_expect_str_eq(s, "--archive\n");
	free(s);
	s = zsh_complete("ptcollect");
	cr_expect(strstr(s, "archive:copy the files"), "%s", s);
	free(s);
	setenv("PTC_STATE", "args", 1);
	s = zsh_complete("record");
	cr_expect(strstr(s, "--archive["), "%s", s);
	free(s);
	s = zsh_complete("info");
	cr_expect(strstr(s, "--script}[") || strstr(s, "--script["), "%s", s);
	free(s);
	unsetenv("PTC_STATE");
}

/*
 * zsh: load the completion function with _arguments/_describe replaced by
 * printers, and check what it offers for a command line.
 */
static char *zsh_complete(const char *words)
{
	char *comp = run_srcpath("completions/_ptcollect"), *script;
	char *argv[] = { "zsh", "-f", "-c", NULL, NULL };
	struct run_result r;

	cr_assert(asprintf(&script,
		"_arguments() { printf '%%s\\n' \"$@\"; state=${PTC_STATE}; }\n"
		"_describe() { printf '%%s\\n' \"${(@P)${@[-1]}}\"; }\n"
		"_pids() { :; }; _files() { :; }; _normal() { :; }\n"
		"words=(%s); PTC_STATE=${PTC_STATE:-cmd}\n"
		"source '%s'\n", words, comp) > 0);
	argv[3] = script;
	cr_assert_eq(run_argv(argv, NULL, &r), 0);
	cr_assert_eq(r.status, 0, "zsh completion failed (%d): %s", r.status, r.err);
	free(script);
	free(comp);
	free(r.err);
	return r.out;
}

Test(completion, zsh_offers_commands_and_record_options)
{
	char *s = zsh_complete("ptcollect");

	cr_expect(strstr(s, "record:record Intel PT") && strstr(s, "caps:") && strstr(s, "info:") &&
		  strstr(s, "dump:") && strstr(s, "symbols:") && strstr(s, "import:"), "%s", s);
	free(s);
	setenv("PTC_STATE", "args", 1);
	s = zsh_complete("record");
	cr_expect(strstr(s, "--filter[") && strstr(s, "--dry-run[") && strstr(s, "--per-thread["),
		  "%s", s);
	cr_expect(strstr(s, "--snapshot=-[") && strstr(s, "--no-final-snapshot[") &&
		  strstr(s, "*--trigger[") && strstr(s, "--trigger-count[") &&
		  strstr(s, "--control[") && strstr(s, "--ready[") && strstr(s, "--no-trace["),
		  "%s", s);
	free(s);
	s = zsh_complete("dump");
	cr_expect(strstr(s, "--no-offset[") && strstr(s, "--lastip[") && strstr(s, "--no-sync["),
		  "%s", s);
	free(s);
	s = zsh_complete("import");
	cr_expect(strstr(s, "--vdso[") && strstr(s, "perf.data"), "%s", s);
	free(s);
	unsetenv("PTC_STATE");
}

Test(completion, bash_filter_offers_the_functions_of_the_program)
{
	char *comp = run_srcpath("completions/ptcollect.bash"), *prog = run_testprog("filtertarget");
	char *script, *argv[] = { "bash", "-c", NULL, NULL };
	struct run_result r;

	cr_assert(asprintf(&script,
		"source /usr/share/bash-completion/bash_completion || exit 90\n"
		"source '%s' || exit 91\n"
		"COMP_WORDS=('%s' record --filter '' -- '%s'); COMP_CWORD=3\n"
		"COMP_LINE='%s record --filter '; COMP_POINT=${#COMP_LINE}\n"
		"_ptcollect ptcollect '' --filter\n"
		"printf '[%%s]\\n' \"${COMPREPLY[@]}\"\n", comp, run_bin(), prog, run_bin()) > 0);
	argv[2] = script;
	cr_assert_eq(run_argv(argv, NULL, &r), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "[tracestop ]"), "%s", r.out);
	{
		char want[4200];

		snprintf(want, sizeof(want), "[filter work @ %s]", prog);
		cr_expect(strstr(r.out, want), "no '%s' in:\n%s", want, r.out);
	}
	run_free(&r);
	free(script);
	free(prog);
	free(comp);
}

Test(completion, both_offer_decode_and_its_options)
{
	char *s = bash_complete("ptcollect de");

	cr_expect_str_eq(s, "decode\n");
	free(s);
	s = bash_complete("ptcollect decode --pev");
	cr_expect(strstr(s, "--pevent:primary\n") && strstr(s, "--pevent:sysroot\n"), "%s", s);
	free(s);
	s = bash_complete("ptcollect decode --pevent:pri");
	cr_expect(strstr(s, "primary") && !strstr(s, "secondary"), "%s", s);
	free(s);
	s = bash_complete("ptcollect decode --b");
	cr_expect_str_eq(s, "--branches\n");
	free(s);
	s = zsh_complete("ptcollect");
	cr_expect(strstr(s, "decode:decode a trace"), "%s", s);
	free(s);
	setenv("PTC_STATE", "args", 1);
	s = zsh_complete("decode");
	cr_expect(strstr(s, "--timeline[") && strstr(s, "--pevent\\:primary[") &&
		  strstr(s, "--jobs"), "%s", s);
	free(s);
	unsetenv("PTC_STATE");
}

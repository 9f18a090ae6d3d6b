// SPDX-License-Identifier: MIT
/*
 * Every long option of every command's table ('ptcollect __options', made
 * from the table the parser and --help use) is in the command's man page
 * (a .TP item) and in the bash and zsh completions; and nothing is there
 * that the table lacks.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

struct names {
	char *v[128];
	int n;
};

static void names_add(struct names *s, const char *name, size_t len)
{
	for (int i = 0; i < s->n; i++)
		if (strlen(s->v[i]) == len && !strncmp(s->v[i], name, len))
			return;
	cr_assert_lt(s->n, 128);
	s->v[s->n++] = strndup(name, len);
}

static bool names_has(const struct names *s, const char *name)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], name))
			return true;
	return false;
}

static void names_free(struct names *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->v[i]);
	s->n = 0;
}

/* The table of @cmd ("ptcollect": the options before COMMAND), "name" without "--". */
static void table_options(const char *all, const char *cmd, struct names *s)
{
	size_t len = strlen(cmd);

	for (const char *l = all; *l; l = strchr(l, '\n') + 1) {
		if (!strncmp(l, cmd, len) && !strncmp(l + len, " --", 3))
			names_add(s, l + len + 3, strcspn(l + len + 3, " \n"));
		if (!strchr(l, '\n'))
			break;
	}
}

/* The options of @page's option list: "\-\-name" in the tag of each .TP item. */
static bool man_options(const char *page, struct names *s)
{
	char *path = run_srcpath(page), line[1024], name[128];
	bool tag = false;
	FILE *f = fopen(path, "r");

	free(path);
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (!tag) {
			tag = !strncmp(line, ".TP", 3);
			continue;
		}
		tag = false;
		for (const char *p = line; (p = strstr(p, "\\-\\-"));) {
			size_t n = 0;

			p += 4;
			/* A name is letters, digits, '.', ':', '_' and "\-". */
			while (n < sizeof(name) - 1) {
				if (!strncmp(p, "\\-", 2)) {
					name[n++] = '-';
					p += 2;
				} else if (strchr("abcdefghijklmnopqrstuvwxyz0123456789.:_", *p) &&
					   *p) {
					name[n++] = *p++;
				} else {
					break;
				}
			}
			if (n)
				names_add(s, name, n);
		}
	}
	fclose(f);
	return true;
}

/* What the bash completion offers for "ptcollect [CMD] --". */
static void bash_options(const char *cmd, struct names *s)
{
	char *comp = run_srcpath("completions/ptcollect.bash"), *script;
	char *argv[] = { "bash", "-c", NULL, NULL };
	struct run_result r;

	cr_assert(asprintf(&script,
		"source /usr/share/bash-completion/bash_completion || exit 90\n"
		"source '%s' || exit 91\n"
		"COMP_WORDS=(ptcollect %s --); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n"
		"COMP_LINE=\"${COMP_WORDS[*]}\"; COMP_POINT=${#COMP_LINE}\n"
		"_ptcollect ptcollect -- \"${COMP_WORDS[COMP_CWORD-1]}\"\n"
		"printf '%%s\\n' \"${COMPREPLY[@]}\"\n", comp, cmd ? cmd : "") > 0);
	argv[2] = script;
	cr_assert_eq(run_argv(argv, NULL, &r), 0);
	cr_assert_eq(r.status, 0, "bash completion failed (%d): %s", r.status, r.err);
	for (const char *l = r.out; *l; l = strchr(l, '\n') + 1) {
		size_t n = strcspn(l, "\n");

		if (n > 2 && !strncmp(l, "--", 2))
			names_add(s, l + 2, n - 2);
		if (!l[n])
			break;
	}
	run_free(&r);
	free(script);
	free(comp);
}

/*
 * What the zsh completion gives _arguments for CMD (or before a command):
 * the specs of its last _arguments call (the first one: the global options),
 * "(-j --json)--json[...]", "*--pevent\:primary[...]", "--snapshot=-[...]".
 */
static void zsh_options(const char *cmd, struct names *s)
{
	char *comp = run_srcpath("completions/_ptcollect"), *script;
	char *argv[] = { "zsh", "-f", "-c", NULL, NULL };
	const char *block = NULL;
	struct run_result r;

	cr_assert(asprintf(&script,
		"_arguments() { print -r -- '@@'; printf '%%s\\n' \"$@\"; state=$PTC_STATE; }\n"
		"_describe() { :; }; _pids() { :; }; _files() { :; }; _normal() { :; }\n"
		"words=(%s); PTC_STATE=%s\n"
		"source '%s'\n", cmd ? cmd : "ptcollect", cmd ? "args" : "cmd", comp) > 0);
	argv[3] = script;
	cr_assert_eq(run_argv(argv, NULL, &r), 0);
	cr_assert_eq(r.status, 0, "zsh completion failed (%d): %s", r.status, r.err);
	for (const char *p = r.out; (p = strstr(p, "@@\n")); p += 3) {
		block = p + 3;
		if (!cmd)
			break;
	}
	cr_assert(block, "zsh: no _arguments call for %s", cmd ? cmd : "ptcollect");
	for (const char *l = block; *l && strncmp(l, "@@\n", 3); l = strchr(l, '\n') + 1) {
		char name[128];
		size_t n = 0;

		if (*l == '(')
			l += strcspn(l, ")") + 1;
		if (*l == '*')
			l++;
		if (!strncmp(l, "--", 2)) {
			for (l += 2; *l && !strchr("[=:\n", *l) && n < sizeof(name) - 1; l++) {
				if (*l == '\\' && l[1] == ':')
					l++;
				name[n++] = *l;
			}
			if (n)
				names_add(s, name, n);
		}
		if (!strchr(l, '\n'))
			break;
	}
	run_free(&r);
	free(script);
	free(comp);
}

/* Each name of @want is in @have, else say which and where; and the other way round. */
static void same(const char *cmd, const char *where, const struct names *table,
		 const struct names *have)
{
	for (int i = 0; i < table->n; i++)
		cr_expect(names_has(have, table->v[i]), "%s: --%s is an option but not in %s", cmd,
			  table->v[i], where);
	for (int i = 0; i < have->n; i++)
		cr_expect(names_has(table, have->v[i]), "%s: %s lists --%s, which is not an option",
			  cmd, where, have->v[i]);
}

static const char *const commands[] = {
	"ptcollect", "record", "caps", "info", "archive", "dump", "symbols", "import", "decode",
	"report",
};

Test(options, every_option_is_in_the_man_page_and_both_completions)
{
	struct run_result r;
	struct names table = { .n = 0 }, have = { .n = 0 };
	size_t nr = sizeof(commands) / sizeof(commands[0]), seen = 0;

	cr_assert_eq(run_ptcollect(NULL, &r, "__options", NULL), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	/* Every command of the table is checked here: a new one must be added above. */
	for (const char *l = r.out; *l; l = strchr(l, '\n') + 1) {
		size_t n = strcspn(l, " ");
		bool known = false;

		for (size_t i = 0; i < nr; i++)
			known |= strlen(commands[i]) == n && !strncmp(commands[i], l, n);
		cr_expect(known, "__options has a command this test does not check: %.*s",
			  (int)n, l);
	}
	for (size_t i = 0; i < nr; i++) {
		const char *cmd = commands[i], *sub = i ? cmd : NULL;
		char page[64];

		table_options(r.out, cmd, &table);
		cr_expect_gt(table.n, 0, "%s: no options in __options", cmd);
		snprintf(page, sizeof(page), "man/%s%s.1", i ? "ptcollect-" : "ptcollect",
			 i ? cmd : "");
		cr_expect(man_options(page, &have), "%s: no man page %s", cmd, page);
		same(cmd, page, &table, &have);
		names_free(&have);
		bash_options(sub, &have);
		same(cmd, "the bash completion", &table, &have);
		names_free(&have);
		zsh_options(sub, &have);
		same(cmd, "the zsh completion", &table, &have);
		names_free(&have);
		names_free(&table);
		seen++;
	}
	cr_expect_eq(seen, nr);
	run_free(&r);
}

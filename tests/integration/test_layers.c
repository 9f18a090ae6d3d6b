// SPDX-License-Identifier: MIT
/*
 * The code's shape, checked: the layers drawn in README.md's layout section
 * are the rule. Each layer is a folder of src/ named as the layer; a module
 * includes only modules of its own layer or below, the modules form no
 * circle, only the commands print, only the kernel layer talks to the
 * kernel's perf, ptrace and BPF interfaces, and the binary links only
 * libraries whose functions it calls.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run.h"

#define MAX_MODULES 256

struct module {
	char name[64];
	int layer;		/* 0 = top (commands) */
	bool seen;		/* a file of src/ or include/ belongs to it */
	bool dep[MAX_MODULES];	/* includes that module */
};

static struct module mods[MAX_MODULES];
static int nr_mods;
static char layer_names[8][64];
static int nr_layers;

static struct module *find(const char *name)
{
	for (int i = 0; i < nr_mods; i++)
		if (!strcmp(mods[i].name, name))
			return &mods[i];
	return NULL;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	cr_assert(f, "%s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/*
 * README.md: the lines between <!-- layers --> and <!-- /layers -->,
 * "    LAYER  module ..."; a line indented deeper goes on with the layer above.
 */
static void read_layers(void)
{
	char *path = run_srcpath("README.md"), *text = slurp(path), *p, *end;

	p = strstr(text, "<!-- layers -->");
	end = p ? strstr(p, "<!-- /layers -->") : NULL;
	cr_assert(p && end, "README.md has no <!-- layers --> block");
	*end = '\0';
	p = strchr(p, '\n');
	nr_mods = nr_layers = 0;
	for (char *line = strtok(p, "\n"); line; line = strtok(NULL, "\n")) {
		char word[64];
		int off = 0, n;

		bool more = strspn(line, " ") > 4;

		if (sscanf(line, " %63s%n", word, &n) != 1 || word[0] == '`')
			continue;
		if (more && nr_layers) {
			nr_layers--;	/* the same layer, its list goes on */
			off = 0;
		} else {
			cr_assert_lt(nr_layers, 8);
			snprintf(layer_names[nr_layers], sizeof(layer_names[0]), "%s", word);
			off = n;
		}
		while (sscanf(line + off, " %63s%n", word, &n) == 1) {
			cr_assert_lt(nr_mods, MAX_MODULES);
			cr_assert_null(find(word), "module %s is in two layers", word);
			snprintf(mods[nr_mods].name, sizeof(mods[0].name), "%s", word);
			mods[nr_mods++].layer = nr_layers;
			off += n;
		}
		nr_layers++;
	}
	cr_assert_geq(nr_layers, 3, "README's layers block lists %d layers", nr_layers);
	free(text);
	free(path);
}

/* Blank out comments and string and character literals, so only code is read. */
static void strip(char *s)
{
	for (char *p = s; *p; p++) {
		if (p[0] == '/' && p[1] == '*') {
			char *e = strstr(p + 2, "*/");

			e = e ? e + 2 : p + strlen(p);
			memset(p, ' ', (size_t)(e - p));
			p = e - 1;
		} else if (p[0] == '/' && p[1] == '/') {
			while (*p && *p != '\n')
				*p++ = ' ';
			p--;
		} else if (*p == '"' || *p == '\'') {
			char q = *p++;

			while (*p && *p != q) {
				if (*p == '\\' && p[1])
					*p++ = ' ';
				*p++ = ' ';
			}
			if (!*p)
				break;
		}
	}
}

/* The module of a file: "cmd_record.c" -> cmd_record. */
static void module_name(const char *file, char *out, size_t len)
{
	size_t n = strcspn(file, ".");

	if (n >= len)
		n = len - 1;
	memcpy(out, file, n);
	out[n] = '\0';
}

/* What only the kernel layer may write: the perf, ptrace and BPF interfaces, ring mappings. */
static const char *const kernel_words[] = {
	"perf_event_open", "PERF_EVENT_IOC_", "ptrace(", "bpf_object", "bpf_link",
	"ring_buffer__", "SYS_bpf",
};

/* A shared mapping (a ring), not a private one of a file: mmap( ... MAP_SHARED ... ); */
static bool maps_shared(const char *text)
{
	for (const char *p = text; (p = strstr(p, "mmap(")); p++) {
		const char *end = strchr(p, ';');
		const char *hit = strstr(p, "MAP_SHARED");

		if (hit && (!end || hit < end))
			return true;
	}
	return false;
}

static void scan_file(const char *dir, const char *folder, const char *file, const char *mod,
		      bool check_print)
{
	char path[4096], *text, *p;
	struct module *m = find(mod), *dep;

	cr_assert(m, "%s/%s belongs to module '%s', which README.md's layers block does not "
		  "list: add it to the layer it belongs to", dir, file, mod);
	cr_expect(!folder || !strcmp(folder, layer_names[m->layer]), "%s/%s is in src/%s/, but "
		  "module %s is of layer %s: move it to src/%s/", dir, file, folder, mod,
		  layer_names[m->layer], layer_names[m->layer]);
	m->seen = true;
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	text = slurp(path);
	for (p = text; (p = strstr(p, "#include \"")); p++) {
		char inc[64];

		char hdr[128], *hp;

		if (sscanf(p, "#include \"%63[^\".]", inc) != 1)
			continue;
		/* Only a module's header in include/ makes a dependency (not src/bpf's, say). */
		snprintf(hdr, sizeof(hdr), "include/%s.h", inc);
		hp = run_srcpath(hdr);
		if (access(hp, F_OK)) {
			free(hp);
			continue;
		}
		free(hp);
		dep = find(inc);
		cr_assert(dep, "%s includes \"%s.h\", a module README.md's layers block does not "
			  "list", path, inc);
		if (dep == m)
			continue;
		cr_expect_geq(dep->layer, m->layer, "%s (layer %s) includes %s.h of the layer above "
			      "it (%s): layers only call downward", path, layer_names[m->layer], inc,
			      layer_names[dep->layer]);
		m->dep[dep - mods] = true;
	}
	strip(text);
	if (folder && strcmp(folder, "kernel")) {
		for (size_t i = 0; i < sizeof(kernel_words) / sizeof(kernel_words[0]); i++)
			cr_expect_null(strstr(text, kernel_words[i]), "%s uses %s: only the kernel "
				       "layer (src/kernel/) talks to the kernel's perf, ptrace and BPF "
				       "interfaces", path, kernel_words[i]);
		cr_expect(!maps_shared(text), "%s maps a ring (mmap with MAP_SHARED): only the "
			  "kernel layer (src/kernel/) does", path);
	}
	if (check_print) {
		static const char *const words[] = {
			"printf(", "fprintf(", "puts(", "fputs(", "perror(", "stderr", "stdout",
			"putchar(", "vfprintf(",
		};

		for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
			char *hit = strstr(text, words[i]);

			/* snprintf( and vsnprintf( end with "printf(" but write to memory. */
			while (hit && hit > text && (hit[-1] == 'n' || hit[-1] == 's' ||
						     hit[-1] == '_' || hit[-1] == 'f'))
				hit = strstr(hit + 1, words[i]);
			cr_expect_null(hit, "%s prints (%s): only the commands print; return a "
				       "struct error instead", path, words[i]);
		}
	}
	free(text);
}

static void scan_dir(const char *rel, const char *folder, const char *ext)
{
	char *dir = run_srcpath(rel), mod[64];
	struct dirent *de;
	DIR *d = opendir(dir);

	cr_assert(d, "%s", dir);
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (n < 3 || strcmp(de->d_name + n - 2, ext))
			continue;
		module_name(de->d_name, mod, sizeof(mod));
		scan_file(dir, folder, de->d_name, mod, !strcmp(ext, ".c") && find(mod) &&
			  find(mod)->layer > 0);
	}
	closedir(d);
	free(dir);
}

/* src/ holds one folder per layer and nothing else with code in it. */
static void scan_tree(void)
{
	char *src = run_srcpath("src"), rel[sizeof(((struct dirent *)0)->d_name) + 8];
	struct dirent *de;
	DIR *d = opendir(src);

	cr_assert(d, "%s", src);
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		bool layer = false;

		if (de->d_name[0] == '.')
			continue;
		cr_expect(n < 2 || strcmp(de->d_name + n - 2, ".c"), "src/%s: a module's file "
			  "goes in the folder of its layer", de->d_name);
		for (int i = 0; i < nr_layers; i++)
			layer |= !strcmp(de->d_name, layer_names[i]);
		if (n >= 2 && !strcmp(de->d_name + n - 2, ".c"))
			continue;
		cr_expect(layer, "src/%s/ is no layer of README.md's layers block", de->d_name);
		if (!layer)
			continue;
		snprintf(rel, sizeof(rel), "src/%s", de->d_name);
		scan_dir(rel, de->d_name, ".c");
	}
	closedir(d);
	free(src);
	scan_dir("include", NULL, ".h");
}

static bool reaches(int from, int to, bool *seen)
{
	if (from == to)
		return true;
	if (seen[from])
		return false;
	seen[from] = true;
	for (int i = 0; i < nr_mods; i++)
		if (mods[from].dep[i] && reaches(i, to, seen))
			return true;
	return false;
}

Test(layers, modules_call_only_their_layer_or_below_and_only_commands_print)
{
	read_layers();
	scan_tree();
	for (int i = 0; i < nr_mods; i++)
		cr_expect(mods[i].seen, "README.md lists module %s, but src/ and include/ have no "
			  "file of it", mods[i].name);
}

Test(layers, no_circle_between_modules)
{
	read_layers();
	scan_tree();
	for (int a = 0; a < nr_mods; a++) {
		for (int b = 0; b < nr_mods; b++) {
			bool seen[MAX_MODULES] = { false };

			if (a == b || !mods[a].dep[b])
				continue;
			cr_expect(!reaches(b, a, seen), "a circle: %s includes %s, and %s reaches "
				  "back to %s", mods[a].name, mods[b].name, mods[b].name,
				  mods[a].name);
		}
	}
}

/*
 * Every shared library the binary needs provides at least one function it
 * calls: a library that is only linked is dropped.
 */
Test(layers, the_binary_links_only_libraries_it_calls)
{
	char script[2048];
	char *argv[] = { "sh", "-c", script, NULL };
	struct run_result r;

	snprintf(script, sizeof(script),
		 "set -e; bin='%s'; fail=0\n"
		 "undef=$(nm -D --undefined-only \"$bin\" | awk '{print $NF}' | sed 's/@.*//' | "
		 "sort -u)\n"
		 "for lib in $(readelf -d \"$bin\" | sed -n 's/.*Shared library: \\[\\(.*\\)\\]/\\1/p');"
		 " do\n"
		 "  case $lib in libc.so.*|ld-linux*) continue;; esac\n"
		 "  path=$(ldd \"$bin\" | awk -v l=\"$lib\" '$1 == l {print $3}')\n"
		 "  [ -n \"$path\" ] || { echo \"$lib: not found by ldd\"; fail=1; continue; }\n"
		 "  defs=$(nm -D --defined-only \"$path\" | awk '{print $NF}' | sed 's/@.*//' | "
		 "sort -u)\n"
		 "  used=$(printf '%%s\\n' \"$undef\" | grep -Fxf - <(printf '%%s\\n' \"$defs\") | "
		 "wc -l)\n"
		 "  echo \"$lib: $used functions called\"\n"
		 "  [ \"$used\" -gt 0 ] || fail=1\n"
		 "done\n"
		 "exit $fail\n", run_bin());
	argv[0] = "bash";
	cr_assert_eq(run_argv(argv, NULL, &r), 0);
	cr_expect_eq(r.status, 0, "a library is linked but none of its functions is called:\n%s%s",
		     r.out, r.err);
	run_free(&r);
}

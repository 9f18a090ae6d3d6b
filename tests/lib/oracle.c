// SPDX-License-Identifier: MIT
/* perf and ptcollect, each asked what attr and filter they compute for a fixture PMU. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "oracle.h"
#include "run.h"

/*
 * Inside `unshare -m`: replace the PMU directory with a tmpfs holding links to
 * the real PMUs plus the fixture's intel_pt (bind-mounted), then exec perf.
 */
static const char ns_script[] =
	"fx=$1; shift\n"
	"d=/sys/bus/event_source/devices\n"
	"links=$(for e in $d/*; do printf '%s %s\\n' \"${e##*/}\" \"$(readlink -f \"$e\")\"; done)\n"
	"mount -t tmpfs ptc-oracle $d || exit 97\n"
	"printf '%s\\n' \"$links\" | while read -r n t; do\n"
	"  [ \"$n\" = intel_pt ] || ln -s \"$t\" \"$d/$n\"; done\n"
	"mkdir $d/intel_pt && mount --bind \"$fx\" $d/intel_pt || exit 98\n"
	"exec \"$@\"\n";

char *oracle_fixture(const char *name)
{
	char *rel, *p;

	if (asprintf(&rel, "tests/fixtures/pmu/%s", name) < 0)
		abort();
	p = run_srcpath(rel);
	free(rel);
	return p;
}

char **oracle_sysfs_env(struct oracle_env *e, const char *root)
{
	snprintf(e->var, sizeof(e->var), "PTCOLLECT_SYSFS=%s", root);
	e->env[0] = e->var;
	e->env[1] = NULL;
	return e->env;
}

char **oracle_fixture_env(struct oracle_env *e, const char *name)
{
	char *root = oracle_fixture(name);

	oracle_sysfs_env(e, root);
	free(root);
	return e->env;
}

static int fixture_type(const char *sysfs_root)
{
	char path[4096];
	FILE *f;
	int t = -1;

	snprintf(path, sizeof(path), "%s/bus/event_source/devices/intel_pt/type", sysfs_root);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%d", &t) != 1)
			t = -1;
		fclose(f);
	}
	return t;
}

/* perf -vv prints "perf_event_attr:" blocks of "  name   value" lines, non-zero fields only. */
static void parse_perf(const char *log, int type, struct oracle_attr *a)
{
	const char *p = log, *af;

	af = strstr(log, "Address filter: ");
	if (af) {
		const char *e = strchr(af, '\n');
		size_t n;

		af += strlen("Address filter: ");
		n = e ? (size_t)(e - af) : strlen(af);
		if (n >= sizeof(a->filter))
			n = sizeof(a->filter) - 1;
		memcpy(a->filter, af, n);
		a->filter[n] = '\0';
		a->has_filter = true;
	}
	while ((p = strstr(p, "perf_event_attr:\n"))) {
		const char *end = strstr(p, "------");
		struct oracle_attr b = { 0 };
		int t = -1;

		if (!end)
			end = p + strlen(p);
		for (const char *l = p; l && l < end; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
			char name[64];
			char val[64];

			if (sscanf(l, " %63s %63s", name, val) != 2)
				continue;
			if (!strcmp(name, "type"))
				t = atoi(val);
			else if (!strcmp(name, "config"))
				b.config = strtoull(val, NULL, 0);
			else if (!strcmp(name, "exclude_user"))
				b.exclude_user = atoi(val);
			else if (!strcmp(name, "exclude_kernel"))
				b.exclude_kernel = atoi(val);
		}
		if (t == type) {
			a->found = true;
			a->config = b.config;
			a->exclude_user = b.exclude_user;
			a->exclude_kernel = b.exclude_kernel;
			return;
		}
		p = end;
	}
}

int oracle_perf(const char *sysfs_root, const char *event, const char *filter,
		struct oracle_attr *a)
{
	char dir[] = "/tmp/ptc-oracle-XXXXXX", data[64], fx[4200];
	char *argv[24];
	struct run_result r;
	int n = 0, ret;

	memset(a, 0, sizeof(*a));
	if (!mkdtemp(dir))
		return -1;
	snprintf(data, sizeof(data), "%s/perf.data", dir);
	snprintf(fx, sizeof(fx), "%s/bus/event_source/devices/intel_pt", sysfs_root);
	argv[n++] = "unshare";
	argv[n++] = "-m";
	argv[n++] = "--propagation";
	argv[n++] = "private";
	argv[n++] = "sh";
	argv[n++] = "-c";
	argv[n++] = (char *)ns_script;
	argv[n++] = "oracle";
	argv[n++] = fx;
	argv[n++] = "perf";
	argv[n++] = "record";
	argv[n++] = "-vv";
	argv[n++] = "-e";
	argv[n++] = (char *)event;
	if (filter) {
		argv[n++] = "--filter";
		argv[n++] = (char *)filter;
	}
	argv[n++] = "-o";
	argv[n++] = data;
	argv[n++] = "--";
	argv[n++] = "true";
	argv[n] = NULL;
	ret = run_argv(argv, NULL, &r);
	if (!ret) {
		a->status = r.status;
		snprintf(a->log, sizeof(a->log), "%s", r.err);
		parse_perf(r.err, fixture_type(sysfs_root), a);
		run_free(&r);
	}
	unlink(data);
	snprintf(data, sizeof(data), "%s/perf.data.old", dir);
	unlink(data);
	rmdir(dir);
	return ret ? -1 : 0;
}

/* Value of "key": in the JSON text after @from; NULL when absent. */
static const char *json_val(const char *from, const char *key)
{
	char pat[128];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	p = strstr(from, pat);
	return p ? p + strlen(pat) : NULL;
}

int oracle_ptcollect(const char *sysfs_root, const char *event, const char *filter,
		     struct oracle_attr *a)
{
	char env_sysfs[4200];
	char *env[] = { env_sysfs, NULL };
	struct run_result r;
	const char *attr, *v;
	int ret;

	memset(a, 0, sizeof(*a));
	snprintf(env_sysfs, sizeof(env_sysfs), "PTCOLLECT_SYSFS=%s", sysfs_root);
	if (filter)
		ret = run_ptcollect(env, &r, "record", "--dry-run", "--json", "-e", event,
				    "--filter", filter, "-o", "/tmp/ptc-dry-run-never-created", "--", "true",
				    NULL);
	else
		ret = run_ptcollect(env, &r, "record", "--dry-run", "--json", "-e", event,
				    "-o", "/tmp/ptc-dry-run-never-created", "--", "true", NULL);
	if (ret)
		return -1;
	a->status = r.status;
	snprintf(a->log, sizeof(a->log), "%s", r.err);
	attr = strstr(r.out, "\"attr\": {");
	if (!r.status && attr && (v = json_val(attr, "config"))) {
		a->found = true;
		a->config = strtoull(v + 1, NULL, 16);
		v = json_val(attr, "exclude_user");
		a->exclude_user = v && !strncmp(v, "true", 4);
		v = json_val(attr, "exclude_kernel");
		a->exclude_kernel = v && !strncmp(v, "true", 4);
		v = json_val(r.out, "filter");
		if (v && *v == '"') {
			size_t n = 0;

			for (v++; *v && *v != '"' && n + 1 < sizeof(a->filter); v++) {
				if (*v == '\\' && v[1])
					v++;
				a->filter[n++] = *v;
			}
			a->filter[n] = '\0';
			a->has_filter = true;
		}
	}
	run_free(&r);
	return 0;
}

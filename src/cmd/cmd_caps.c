// SPDX-License-Identifier: MIT
/* ptcollect caps: is Intel PT usable here, and what can it do. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "cli.h"
#include "cpu.h"
#include "cpuset.h"
#include "evconfig.h"
#include "iptcaps.h"
#include "msg.h"
#include "out.h"
#include "pmu.h"
#include "privs.h"

#define MAX_REASONS 8

void usage_caps(FILE *f)
{
	fprintf(f,
		"usage: %s caps [--json]\n\n"
		"Show whether Intel PT can be used here and why not, the PMU's capabilities,\n"
		"the valid period values, address filter ranges and the default config.\n"
		"Exit status 0 when Intel PT is usable, 1 when it is not.\n\n", PTC_PROG);
	cmd_print_options(f, caps_spec.options);
}

static const struct cmd_option caps_options[] = {
	CMD_OPT_JSON("the same as JSON"),
	CMD_OPT_HELP,
	CMD_OPT_END,
};

const struct cmd_spec caps_spec = { "caps", caps_options, usage_caps, false };

struct caps_report {
	const char *reason[MAX_REASONS];
	char buf[MAX_REASONS][512];
	int nr;
};

__attribute__((format(printf, 2, 3)))
static void add_reason(struct caps_report *r, const char *fmt, ...)
{
	va_list ap;

	if (r->nr == MAX_REASONS)
		return;
	va_start(ap, fmt);
	vsnprintf(r->buf[r->nr], sizeof(r->buf[0]), fmt, ap);
	va_end(ap);
	r->reason[r->nr] = r->buf[r->nr];
	r->nr++;
}

/* Why there is no intel_pt PMU: the CPU decides the explanation, not the verdict. */
static void explain_missing_pmu(struct caps_report *r, const struct cpu_id *cpu,
				const char *pmu_err)
{
	add_reason(r, "%s", pmu_err);
	if (!cpu_is_intel(cpu) && cpu->vendor[0])
		add_reason(r, "the CPU vendor is %s: Intel PT exists only on Intel CPUs "
			   "(an AMD CPU has no Intel PT)", cpu->vendor);
	else if (!cpu->has_pt)
		add_reason(r, "the CPU does not report Intel PT (CPUID.(EAX=7,ECX=0):EBX[25] is 0)%s",
			   cpu->hypervisor ? "; this is a virtual machine: its hypervisor must "
			   "pass Intel PT through" : "");
	else
		add_reason(r, "the CPU has Intel PT but the kernel registered no intel_pt PMU "
			   "(kernel built without CONFIG_PERF_EVENTS_INTEL_PT?)");
}

static void print_periods(const struct pmu *pmu)
{
	static const char *const terms[] = { "mtc_period", "psb_period", "cyc_thresh" };
	char vals[256];

	out_obj_begin("valid_values", "valid values");
	for (size_t i = 0; i < sizeof(terms) / sizeof(terms[0]); i++) {
		if (!pmu_term_find(pmu, terms[i]))
			continue;
		evconfig_valid_values(evconfig_period_valid(pmu, terms[i]), vals, sizeof(vals));
		out_str(terms[i], NULL, vals);
	}
	out_obj_end();
}

/* The libipt decode links: its version and what it decodes. */
static void print_libipt(void)
{
	struct iptcaps ipt;
	uint8_t models[256];
	size_t n = iptcaps_cpus(models, sizeof(models));
	char name[16];

	iptcaps_get(&ipt);
	out_obj_begin("libipt", "libipt (decode, dump)");
	out_str("version", NULL, ipt.loaded);
	out_str("built_with", "built with", ipt.built);
	out_bool("event_trace", "decodes Event Trace (CFE, EVD)", ipt.event_trace);
	out_bool("trig", "decodes TRIG", ipt.trig);
	if (out_json) {
		out_arr_begin("errata", NULL);
		for (const char *const *e = iptcaps_errata; *e; e++)
			out_str(NULL, NULL, *e);
		out_arr_end();
		out_arr_begin("cpus", NULL);
		for (size_t i = 0; i < n && i < sizeof(models); i++) {
			snprintf(name, sizeof(name), "6/%u", models[i]);
			out_str(NULL, NULL, name);
		}
		out_arr_end();
	} else {
		char line[1024] = "";
		size_t len = 0;

		for (const char *const *e = iptcaps_errata; *e; e++)
			len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%s",
						len ? " " : "", *e);
		out_str(NULL, "errata it knows", line);
		len = 0;
		for (size_t i = 0; i < n && i < sizeof(models) && len < sizeof(line); i++)
			len += (size_t)snprintf(line + len, sizeof(line) - len, "%s6/%u",
						len ? " " : "", models[i]);
		out_str(NULL, "CPUs whose errata it knows", line);
	}
	out_obj_end();
}

static void print_perms(const struct privs *pv)
{
	int cpus[CLI_MAX_CPUS], nr = 1;
	uint64_t budget;

	/* The kernel's rule counts the online CPUs; if sysfs does not say, count one. */
	if (cpuset_online(cpus, &nr, NULL))
		nr = 1;
	budget = privs_mlock_budget(pv, (unsigned int)nr);

	out_obj_begin("permissions", "permissions");
	out_i64("perf_event_paranoid", NULL, pv->paranoid);
	out_u64("euid", NULL, pv->euid);
	out_bool("cap_perfmon", NULL, pv->cap_perfmon);
	out_bool("cap_sys_admin", NULL, pv->cap_sys_admin);
	out_bool("cap_ipc_lock", NULL, pv->cap_ipc_lock);
	out_bool("trace_user", "may trace user space", privs_may_trace_user(pv));
	out_bool("trace_kernel", "may trace the kernel", privs_may_trace_kernel(pv));
	out_bool("trace_cpu", "may trace whole CPUs (-a, -C)", privs_may_trace_cpu(pv));
	out_obj_end();
	out_obj_begin("memory", "locked memory for ring buffers");
	out_i64("perf_event_mlock_kb", NULL, pv->mlock_kb);
	if (pv->rlimit_memlock == UINT64_MAX)
		out_str("rlimit_memlock", "RLIMIT_MEMLOCK", "unlimited");
	else
		out_u64("rlimit_memlock", "RLIMIT_MEMLOCK", pv->rlimit_memlock);
	if (budget == UINT64_MAX)
		out_str("ring_budget", "ring buffer budget", "unlimited");
	else
		out_u64("ring_budget", "ring buffer budget (bytes)", budget);
	out_obj_end();
}

int do_caps(int argc, char **argv)
{
	struct caps_report rep = { .nr = 0 };
	struct error e = { 0 };
	char terms[256];
	struct cpu_id cpu;
	struct privs pv;
	struct pmu pmu;
	bool avail;
	int ret;

	ret = cmd_parse_options(&caps_spec, argc, argv, NULL, NULL);
	if (ret != CMD_GO_ON)
		return ret;
	if (optind < argc)
		return cmd_bad_usage("caps", "unexpected argument '%s'", argv[optind]);

	cpu_identify(&cpu);
	privs_read(&pv);
	ret = pmu_load(&pmu, "intel_pt", &e);
	if (ret == -ENOENT)
		explain_missing_pmu(&rep, &cpu, e.why);
	else if (ret)
		add_reason(&rep, "cannot read the intel_pt PMU: %s", e.why);
	if (pmu.present && !privs_may_trace_user(&pv))
		add_reason(&rep, "perf_event_paranoid is %d and this process has neither "
			   "CAP_PERFMON nor CAP_SYS_ADMIN: run as root, grant CAP_PERFMON, or "
			   "set kernel.perf_event_paranoid=2", pv.paranoid);
	avail = rep.nr == 0;

	out_obj_begin(NULL, NULL);
	out_bool("available", "Intel PT usable", avail);
	out_arr_begin("reasons", avail ? "notes" : "why not");
	for (int i = 0; i < rep.nr; i++)
		out_str(NULL, NULL, rep.reason[i]);
	out_arr_end();
	out_obj_begin("cpu", "cpu");
	out_str("vendor", NULL, cpu.vendor);
	out_u64("family", NULL, cpu.family);
	out_u64("model", NULL, cpu.model);
	out_u64("stepping", NULL, cpu.stepping);
	out_bool("pt_cpuid", "CPUID reports Intel PT", cpu.has_pt);
	out_bool("hypervisor", NULL, cpu.hypervisor);
	out_obj_end();
	out_str("sysfs", NULL, pmu_sysfs_root());
	if (pmu.present) {
		out_obj_begin("pmu", "pmu");
		out_str("name", NULL, pmu.name);
		out_u64("type", NULL, pmu.type);
		out_obj_end();
		out_obj_begin("caps", "capabilities");
		for (int i = 0; i < pmu.nr_caps; i++)
			out_u64(pmu.caps[i].name, NULL, pmu.caps[i].value);
		out_obj_end();
		print_periods(&pmu);
		out_i64("nr_addr_filters", "address filter ranges", pmu.nr_addr_filters);
		out_obj_begin("default_config", "default config (intel_pt//)");
		out_hex("config", NULL, evconfig_default_config(&pmu, terms, sizeof(terms)));
		out_str("terms", NULL, terms);
		out_obj_end();
	} else {
		out_str("pmu", NULL, NULL);
		out_obj_begin("caps", "capabilities");
		out_obj_end();
		out_i64("nr_addr_filters", "address filter ranges", 0);
	}
	print_perms(&pv);
	print_libipt();
	out_obj_end();
	out_finish();
	if (!avail) {
		msg_err("caps: Intel PT is not usable here: %s", rep.reason[0]);
		if (rep.nr > 1)
			msg_hint("%s", rep.reason[1]);
	}
	return avail ? EXIT_OK : EXIT_RUNTIME;
}

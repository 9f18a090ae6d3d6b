/* SPDX-License-Identifier: MIT */
/* What CPUID says about this CPU, for caps and for the decoder (--cpu, CPUID 0x15). */
#ifndef PTC_CPU_H
#define PTC_CPU_H

#include <stdbool.h>
#include <stdint.h>

struct cpu_id {
	char vendor[13];	/* "GenuineIntel", "AuthenticAMD", ... */
	unsigned int family, model, stepping;	/* with the extended fields folded in */
	bool has_pt;		/* CPUID.(EAX=7,ECX=0):EBX[25] */
	bool hypervisor;	/* CPUID.1:ECX[31] */
	bool has_leaf_0x15;
	uint32_t cpuid_0x15_eax, cpuid_0x15_ebx;	/* TSC/core crystal clock ratio */
};

void cpu_identify(struct cpu_id *c);
bool cpu_is_intel(const struct cpu_id *c);

#endif

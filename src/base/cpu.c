// SPDX-License-Identifier: MIT
/* CPU identification through CPUID (x86 only; elsewhere the fields stay empty). */
#include <string.h>

#include "cpu.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

void cpu_identify(struct cpu_id *c)
{
	unsigned int a, b, cx, d, max;

	memset(c, 0, sizeof(*c));
	if (!__get_cpuid(0, &max, &b, &cx, &d))
		return;
	memcpy(c->vendor, &b, 4);
	memcpy(c->vendor + 4, &d, 4);
	memcpy(c->vendor + 8, &cx, 4);
	if (max >= 1 && __get_cpuid(1, &a, &b, &cx, &d)) {
		unsigned int fam = (a >> 8) & 0xf, mod = (a >> 4) & 0xf;

		/* The SDM's rule for display family and model. */
		if (fam == 0xf)
			fam += (a >> 20) & 0xff;
		if (fam == 0x6 || fam >= 0xf)
			mod += ((a >> 16) & 0xf) << 4;
		c->family = fam;
		c->model = mod;
		c->stepping = a & 0xf;
		c->hypervisor = cx & (1u << 31);
	}
	if (max >= 7) {
		__cpuid_count(7, 0, a, b, cx, d);
		c->has_pt = b & (1u << 25);
	}
	if (max >= 0x15) {
		__cpuid(0x15, a, b, cx, d);
		c->has_leaf_0x15 = true;
		c->cpuid_0x15_eax = a;
		c->cpuid_0x15_ebx = b;
	}
}
#else
void cpu_identify(struct cpu_id *c)
{
	memset(c, 0, sizeof(*c));
}
#endif

bool cpu_is_intel(const struct cpu_id *c)
{
	return !strcmp(c->vendor, "GenuineIntel");
}

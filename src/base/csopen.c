// SPDX-License-Identifier: MIT
/* capstone handles opened after its lazily sorted tables are (csopen.h) */
#include <pthread.h>
#include <stdint.h>

#include "csopen.h"

static void sort_tables(void)
{
	static const uint8_t nop = 0x90;
	cs_insn *in;
	csh h;

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK)
		return;
	if (cs_disasm(h, &nop, 1, 0, 1, &in) == 1)
		cs_free(in, 1);
	cs_close(&h);
}

cs_err csopen(cs_mode mode, csh *h)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, sort_tables);
	return cs_open(CS_ARCH_X86, mode, h);
}

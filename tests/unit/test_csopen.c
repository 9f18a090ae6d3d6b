// SPDX-License-Identifier: MIT
/*
 * csopen(): capstone's lazily sorted table is sorted by the first open, before a handle is
 * returned, and never again by threads disassembling at once (csopen.h). The sorts are
 * seen by qsort() defined here: capstone calls libc's through its PLT, so this one comes
 * first; it counts the calls made from libcapstone and hands every call on.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "csopen.h"

typedef int cmp_fn(const void *, const void *);

static unsigned cs_sorts;

void qsort(void *base, size_t n, size_t size, cmp_fn *cmp)
{
	static void (*real)(void *, size_t, size_t, cmp_fn *);
	Dl_info di;

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "qsort");
	if (dladdr(__builtin_return_address(0), &di) && di.dli_fname &&
	    strstr(di.dli_fname, "libcapstone"))
		__atomic_fetch_add(&cs_sorts, 1, __ATOMIC_RELAXED);
	real(base, n, size, cmp);
}

/* Two instructions in Intel syntax, on a handle of the thread's own. */
static void *print_some(void *arg)
{
	static const uint8_t code[] = { 0x48, 0x89, 0xe5, 0xc3 };	/* mov rbp, rsp; ret */
	cs_insn *in;
	csh h;
	size_t n = 0;

	(void)arg;
	if (csopen(CS_MODE_64, &h) == CS_ERR_OK) {
		n = cs_disasm(h, code, sizeof(code), 0x1000, 0, &in);
		if (n)
			cs_free(in, n);
		cs_close(&h);
	}
	return (void *)n;
}

Test(csopen, the_first_open_sorts_capstones_table_and_threads_never_again)
{
	pthread_t t[4];
	void *n;
	csh h;

	cr_assert_eq(csopen(CS_MODE_64, &h), CS_ERR_OK);
	cs_close(&h);
	if (!__atomic_load_n(&cs_sorts, __ATOMIC_RELAXED)) {
		/* Nothing sorted yet: this capstone sorts no table, or the open did not. */
		print_some(NULL);
		cr_assert_eq(cs_sorts, 0, "capstone sorted a table at its first instruction, "
			     "after csopen() returned: threads could sort it together");
		cr_skip_test("this capstone sorts no table at its first instruction (libcapstone "
			     "calls no qsort()): nothing to order");
	}
	cr_assert_eq(cs_sorts, 1, "capstone sorted %u times in one open", cs_sorts);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, print_some, NULL), 0);
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(pthread_join(t[i], &n), 0);
		cr_expect_eq((size_t)n, 2, "a thread printed %zu instructions", (size_t)n);
	}
	cr_expect_eq(cs_sorts, 1, "threads sorted capstone's table %u more times", cs_sorts - 1);
}

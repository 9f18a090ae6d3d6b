// SPDX-License-Identifier: MIT
/*
 * A target for address-filter tests: global and static functions with known
 * names, a static name that also exists in filtertarget2 (built with it when
 * a test needs "#N" selectors), and a main that calls them all.
 */
#include <stdio.h>
#include <stdlib.h>

int ft_global(int x);

__attribute__((noinline)) static int ft_static(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) static int ft_dup(int x)
{
	return x + 7;
}

__attribute__((noinline)) int ft_global(int x)
{
	return ft_static(x) + ft_dup(x);
}

__attribute__((noinline)) int ft_last(int x)
{
	return x - 1;
}

#ifdef FT_TWO_UNITS
int ft_other_unit(int x);
#endif

int main(int argc, char **argv)
{
	int v = argc > 1 ? atoi(argv[1]) : 1;

	v = ft_global(v) + ft_last(v);
#ifdef FT_TWO_UNITS
	v += ft_other_unit(v);
#endif
	printf("%d\n", v);
	return 0;
}

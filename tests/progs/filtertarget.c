// SPDX-License-Identifier: MIT
/* A program with known functions for address-filter tests: global, static, in order. */
#include <stdio.h>
#include <stdlib.h>

static int helper(int x)
{
	return x * 7 + 1;
}

int work(int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += helper(i);
	return s;
}

int compute(int n)
{
	return work(n) ^ n;
}

int main(int argc, char **argv)
{
	printf("%d\n", compute(argc > 1 ? atoi(argv[1]) : 10));
	return 0;
}

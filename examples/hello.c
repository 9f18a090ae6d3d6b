// SPDX-License-Identifier: MIT
/* The small program the demo records: a few calls and a loop, so a trace has branches. */
#include <stdio.h>
#include <stdlib.h>

static unsigned long collatz_steps(unsigned long n)
{
	unsigned long steps = 0;

	while (n != 1) {
		n = (n & 1) ? 3 * n + 1 : n / 2;
		steps++;
	}
	return steps;
}

int main(int argc, char **argv)
{
	unsigned long limit = argc > 1 ? strtoul(argv[1], NULL, 0) : 20000, best = 1, most = 0;

	for (unsigned long i = 1; i < limit; i++) {
		unsigned long s = collatz_steps(i);

		if (s > most) {
			most = s;
			best = i;
		}
	}
	printf("hello: below %lu, %lu takes the most steps (%lu)\n", limit, best, most);
	return 0;
}

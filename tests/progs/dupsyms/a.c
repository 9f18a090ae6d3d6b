// SPDX-License-Identifier: MIT
/* Two translation units, each with a static dup(): a name a filter must disambiguate. */
static int dup(int x)
{
	return x + 1;
}

int call_a(int x)
{
	return dup(x);
}

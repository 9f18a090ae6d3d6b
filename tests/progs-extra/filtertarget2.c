// SPDX-License-Identifier: MIT
/* Second unit of filtertarget: a static ft_dup of its own, so the name has two symbols. */
__attribute__((noinline)) static int ft_dup(int x)
{
	return x * 5;
}

__attribute__((noinline)) int ft_other_unit(int x)
{
	return ft_dup(x) + 2;
}

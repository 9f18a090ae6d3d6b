// SPDX-License-Identifier: MIT
/* A C++ target: perf names its functions demangled ("ft::scale(int)"), so must --filter. */
namespace ft {
__attribute__((noinline)) int scale(int x)
{
	return x * 2;
}
__attribute__((noinline)) int scale(long x)
{
	return (int)x * 3;
}
}

int main(int argc, char **)
{
	return ft::scale(argc) + ft::scale(2L) > 100;
}

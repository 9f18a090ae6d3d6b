// SPDX-License-Identifier: MIT
int call_a(int x);

static int dup(int x)
{
	return x * 2;
}

int main(int argc, char **argv)
{
	(void)argv;
	return call_a(dup(argc)) & 0;
}

// SPDX-License-Identifier: MIT
void zerofn(void);

int main(void)
{
	zerofn();
	return 0;
}

// SPDX-License-Identifier: MIT
/* runas UID CMD [ARGS]: drop to UID (and GID UID) with no capabilities, then exec. */
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	uid_t uid;

	if (argc < 3) {
		fprintf(stderr, "usage: runas UID CMD [ARGS]\n");
		return 2;
	}
	uid = (uid_t)atoi(argv[1]);
	if (setgroups(0, NULL) || setgid(uid) || setuid(uid)) {
		perror("runas");
		return 2;
	}
	execv(argv[2], argv + 2);
	perror(argv[2]);
	return 127;
}

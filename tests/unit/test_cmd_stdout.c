// SPDX-License-Identifier: MIT
/*
 * cmd_flush_stdout() says the error of the write that failed, not a stale errno: stdio
 * drops a buffer it could not write, so the flush after a large failed write succeeds,
 * with errno whatever the command did since.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "msg.h"

/*
 * In a child whose stdout is @out (a descriptor) and stderr a pipe: cmd_stdout_init(),
 * @len bytes to stdout, errno set to ENOENT (what an unrelated call leaves), then
 * cmd_flush_stdout(). Its stderr into @err; returns its exit status.
 */
static int flush_after(int out, size_t len, char *err, size_t size)
{
	int p[2], st;
	size_t got = 0;
	ssize_t n;
	pid_t pid;

	cr_assert_eq(pipe(p), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid) {
		char *buf = malloc(len + 1);

		signal(SIGPIPE, SIG_IGN);
		dup2(out, STDOUT_FILENO);
		dup2(p[1], STDERR_FILENO);
		if (!buf)
			_exit(99);
		memset(buf, 'x', len);
		buf[len] = '\0';
		cmd_stdout_init();
		fputs(buf, stdout);
		errno = ENOENT;
		_exit(cmd_flush_stdout());
	}
	close(p[1]);
	while (got + 1 < size && (n = read(p[0], err + got, size - 1 - got)) > 0)
		got += (size_t)n;
	err[got] = '\0';
	close(p[0]);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st), "%#x", st);
	return WEXITSTATUS(st);
}

Test(cmd_stdout, a_full_stdout_is_said_with_the_writes_own_error_however_much_was_written)
{
	static const size_t lens[] = { 10, 4096, 100000 };
	int full = open("/dev/full", O_WRONLY);

	cr_assert_geq(full, 0);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		char err[1024];

		cr_expect_eq(flush_after(full, lens[i], err, sizeof(err)), EXIT_RUNTIME,
			     "%zu bytes: %s", lens[i], err);
		cr_expect(strstr(err, "cannot write the results to standard output: "
				 "No space left on device"), "%zu bytes: %s", lens[i], err);
		cr_expect(!strstr(err, "No such file"), "%zu bytes: %s", lens[i], err);
	}
	close(full);
}

Test(cmd_stdout, a_stdout_whose_reader_has_gone_is_said_as_a_broken_pipe)
{
	char err[1024];
	int p[2];

	cr_assert_eq(pipe(p), 0);
	close(p[0]);
	cr_expect_eq(flush_after(p[1], 100000, err, sizeof(err)), EXIT_RUNTIME, "%s", err);
	cr_expect(strstr(err, "cannot write the results to standard output: Broken pipe"), "%s",
		  err);
	close(p[1]);
}

Test(cmd_stdout, a_stdout_that_takes_it_all_is_exit_0_and_says_nothing)
{
	int null = open("/dev/null", O_WRONLY);
	char err[1024];

	cr_assert_geq(null, 0);
	cr_expect_eq(flush_after(null, 100000, err, sizeof(err)), EXIT_OK, "%s", err);
	cr_expect_str_eq(err, "");
	close(null);
}

// SPDX-License-Identifier: MIT
/*
 * The control channel over real FIFOs, pipes and sockets: answers, refusals,
 * partial and overlong lines, writers that leave and come back, EOF, a
 * closed ACK (SIGPIPE left at its default action, so a delivered one would
 * kill the test), unread replies, and specs that must be refused.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "control.h"
#include "suitewatch.h"

SUITEWATCH(watchdog, 60)

TestSuite(control, .init = watchdog);

struct chan {
	char dir[64], ctl[96], ack[96];
	struct control *c;
	int w;			/* our writer on CTL */
	int r;			/* our reader on ACK */
};

static void fifo_setup(struct chan *ch)
{
	struct error e = { 0 };
	char spec[256];

	signal(SIGPIPE, SIG_DFL);
	snprintf(ch->dir, sizeof(ch->dir), "/tmp/ptc-ctl-XXXXXX");
	cr_assert(mkdtemp(ch->dir));
	snprintf(ch->ctl, sizeof(ch->ctl), "%s/ctl", ch->dir);
	snprintf(ch->ack, sizeof(ch->ack), "%s/ack", ch->dir);
	cr_assert_eq(mkfifo(ch->ctl, 0600), 0);
	cr_assert_eq(mkfifo(ch->ack, 0600), 0);
	snprintf(spec, sizeof(spec), "fifo:%s,%s", ch->ctl, ch->ack);
	cr_assert_eq(control_open(&ch->c, spec, &e), 0, "%s", e.why);
	/* ptcollect holds both ends open, so neither open waits. */
	ch->w = open(ch->ctl, O_WRONLY | O_CLOEXEC);
	ch->r = open(ch->ack, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	cr_assert_geq(ch->w, 0);
	cr_assert_geq(ch->r, 0);
}

static void fifo_teardown(struct chan *ch)
{
	control_close(ch->c);
	if (ch->w >= 0)
		close(ch->w);
	close(ch->r);
	unlink(ch->ctl);
	unlink(ch->ack);
	rmdir(ch->dir);
}

static void say(int fd, const char *s)
{
	cr_assert_eq(write(fd, s, strlen(s)), (ssize_t)strlen(s));
}

/* What ACK holds now. */
static char *replies(struct chan *ch)
{
	static char buf[8192];
	ssize_t n = read(ch->r, buf, sizeof(buf) - 1);

	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* Wait until CTL is readable, as a session's poll would. */
static void wait_readable(struct control *c)
{
	struct pollfd p = { .fd = control_fd(c), .events = POLLIN };

	cr_assert_eq(poll(&p, 1, 2000), 1, "CTL never became readable");
	cr_expect(!(p.revents & (POLLHUP | POLLERR)), "revents %#x", p.revents);
}

/* The next command, after waiting for it. */
static enum control_word next(struct chan *ch, struct control_cmd *cmd)
{
	wait_readable(ch->c);
	cr_assert_eq(control_next(ch->c, cmd), 1);
	return cmd->word;
}

Test(control, ping_is_acked)
{
	struct control_cmd cmd;
	struct chan ch;

	fifo_setup(&ch);
	say(ch.w, "ping\n");
	cr_assert_eq(next(&ch, &cmd), CONTROL_PING);
	control_ack(ch.c);
	cr_expect_str_eq(replies(&ch), "ack\n");
	cr_expect_eq(control_next(ch.c, &cmd), 0, "nothing more");
	fifo_teardown(&ch);
}

Test(control, status_is_answered_with_the_sessions_json_line)
{
	struct control_cmd cmd;
	struct chan ch;

	fifo_setup(&ch);
	say(ch.w, "status\n");
	cr_assert_eq(next(&ch, &cmd), CONTROL_STATUS);
	control_reply(ch.c, "{\"state\":\"tracing\",\n\"snapshots\":2}");
	cr_expect_str_eq(replies(&ch), "{\"state\":\"tracing\", \"snapshots\":2}\n");
	fifo_teardown(&ch);
}

Test(control, garbage_is_refused_and_the_reader_goes_on)
{
	struct control_stats st;
	struct control_cmd cmd;
	struct chan ch;

	fifo_setup(&ch);
	say(ch.w, "bogus\n\x01\x02\n\nenable now\nmark slow request\n");
	cr_assert_eq(next(&ch, &cmd), CONTROL_MARK);
	cr_expect_str_eq(cmd.text, "slow request");
	control_ack(ch.c);
	cr_expect_str_eq(replies(&ch),
			 "error unknown command 'bogus' (known: enable, disable, snapshot, stop, "
			 "ping, status, mark TEXT)\n"
			 "error unknown command '?\?' (known: enable, disable, snapshot, stop, "
			 "ping, status, mark TEXT)\n"
			 "error 'enable' takes no argument (got 'now')\n"
			 "ack\n");
	control_get_stats(ch.c, &st);
	cr_expect_eq(st.refused, 3);
	cr_expect_eq(st.commands, 1);
	fifo_teardown(&ch);
}

Test(control, a_line_in_pieces_is_one_command)
{
	struct control_cmd cmd;
	struct chan ch;

	fifo_setup(&ch);
	say(ch.w, "sna");
	wait_readable(ch.c);
	cr_expect_eq(control_next(ch.c, &cmd), 0, "half a line is not a command yet");
	say(ch.w, "psh");
	cr_expect_eq(control_next(ch.c, &cmd), 0);
	say(ch.w, "ot\nst");
	cr_assert_eq(next(&ch, &cmd), CONTROL_SNAPSHOT);
	cr_expect_eq(control_next(ch.c, &cmd), 0);
	say(ch.w, "op\n");
	cr_assert_eq(next(&ch, &cmd), CONTROL_STOP);
	fifo_teardown(&ch);
}

Test(control, a_very_long_line_is_refused_once_and_the_next_is_read)
{
	static char big[20000];
	struct control_cmd cmd;
	struct chan ch;

	fifo_setup(&ch);
	memset(big, 'm', sizeof(big));
	cr_assert_eq(write(ch.w, big, sizeof(big)), (ssize_t)sizeof(big));
	say(ch.w, "\nping\n");
	cr_assert_eq(next(&ch, &cmd), CONTROL_PING);
	control_ack(ch.c);
	cr_expect_str_eq(replies(&ch), "error line longer than 4095 bytes: refused\nack\n");
	fifo_teardown(&ch);
}

/* perf's O_RDWR: a writer leaving is no hangup, and the next writer is heard. */
Test(control, a_writer_that_closes_and_reopens_the_fifo_is_heard)
{
	struct control_cmd cmd;
	struct pollfd p;
	struct chan ch;

	fifo_setup(&ch);
	say(ch.w, "ping\n");
	close(ch.w);
	ch.w = -1;
	cr_assert_eq(next(&ch, &cmd), CONTROL_PING);
	control_ack(ch.c);
	p = (struct pollfd){ .fd = control_fd(ch.c), .events = POLLIN };
	cr_expect_eq(poll(&p, 1, 50), 0, "no POLLHUP once the writer left: revents %#x",
		     p.revents);
	cr_expect_eq(control_next(ch.c, &cmd), 0);
	ch.w = open(ch.ctl, O_WRONLY | O_CLOEXEC);
	cr_assert_geq(ch.w, 0);
	say(ch.w, "disable\n");
	cr_assert_eq(next(&ch, &cmd), CONTROL_DISABLE);
	control_ack(ch.c);
	cr_expect_str_eq(replies(&ch), "ack\nack\n");
	fifo_teardown(&ch);
}

/* fd mode: EOF ends the channel; a last line without its newline still counts. */
Test(control, fd_mode_reads_to_eof_then_reports_the_end)
{
	struct control_stats st;
	struct control_cmd cmd;
	struct error e = { 0 };
	struct control *c;
	char spec[32];
	int p[2];

	cr_assert_eq(pipe(p), 0);
	snprintf(spec, sizeof(spec), "fd:%d", p[0]);
	cr_assert_eq(control_open(&c, spec, &e), 0, "%s", e.why);
	cr_expect(fcntl(p[0], F_GETFL) & O_NONBLOCK, "CTL made non-blocking");
	say(p[1], "enable\nstop");
	close(p[1]);
	cr_assert_eq(control_next(c, &cmd), 1);
	cr_expect_eq(cmd.word, CONTROL_ENABLE);
	control_ack(c);		/* no ACK: nothing to write, nothing lost */
	cr_assert_eq(control_next(c, &cmd), 1);
	cr_expect_eq(cmd.word, CONTROL_STOP);
	cr_expect_eq(control_next(c, &cmd), -ENODATA);
	cr_expect_eq(control_fd(c), -1, "the session stops polling it");
	control_get_stats(c, &st);
	cr_expect(st.ctl_closed);
	cr_expect_eq(st.replies_lost, 0);
	control_close(c);
	cr_expect_eq(fcntl(p[0], F_GETFD), 0, "fd mode leaves the caller's descriptor open");
	close(p[0]);
}

static void closed_ack(int ack_w, int ack_r, int ctl_r, int ctl_w)
{
	struct control_stats st;
	struct control_cmd cmd;
	struct error e = { 0 };
	struct control *c;
	char spec[32];

	signal(SIGPIPE, SIG_DFL);
	snprintf(spec, sizeof(spec), "fd:%d,%d", ctl_r, ack_w);
	cr_assert_eq(control_open(&c, spec, &e), 0, "%s", e.why);
	close(ack_r);
	say(ctl_w, "ping\nstatus\nbogus\nstop\n");
	cr_assert_eq(control_next(c, &cmd), 1);
	control_ack(c);		/* EPIPE: with SIGPIPE delivered, the test would die here */
	cr_assert_eq(control_next(c, &cmd), 1);
	cr_expect_eq(cmd.word, CONTROL_STATUS);
	control_reply(c, "{}");
	cr_assert_eq(control_next(c, &cmd), 1);
	cr_expect_eq(cmd.word, CONTROL_STOP, "the session goes on after the garbage line");
	control_get_stats(c, &st);
	cr_expect(st.ack_closed);
	cr_expect_eq(st.replies_lost, 3);
	cr_expect_eq(control_ack_fd(c), -1);
	control_close(c);
	close(ctl_r);
	close(ctl_w);
	close(ack_w);
}

Test(control, a_closed_ack_pipe_never_kills_and_commands_go_on)
{
	int ctl[2], ack[2];
	sigset_t pend;

	cr_assert_eq(pipe(ctl), 0);
	cr_assert_eq(pipe(ack), 0);
	closed_ack(ack[1], ack[0], ctl[0], ctl[1]);
	sigpending(&pend);
	cr_expect(!sigismember(&pend, SIGPIPE), "no SIGPIPE left pending");
}

Test(control, a_closed_ack_socket_never_kills_and_commands_go_on)
{
	int ctl[2], ack[2];

	cr_assert_eq(pipe(ctl), 0);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, ack), 0);
	closed_ack(ack[1], ack[0], ctl[0], ctl[1]);
}

/* Replies nobody reads yet wait, in order, and all arrive once the script reads. */
Test(control, unread_replies_wait_and_arrive_in_order)
{
	struct control_stats st;
	struct control_cmd cmd;
	struct error e = { 0 };
	struct control *c;
	int ctl[2], ack[2], got = 0, n;
	char spec[32], buf[4096], tail[8] = "";

	cr_assert_eq(pipe(ctl), 0);
	cr_assert_eq(pipe(ack), 0);
	cr_assert_eq(fcntl(ack[1], F_SETPIPE_SZ, 4096), 4096);
	snprintf(spec, sizeof(spec), "fd:%d,%d", ctl[0], ack[1]);
	cr_assert_eq(control_open(&c, spec, &e), 0, "%s", e.why);
	fcntl(ctl[1], F_SETFL, O_NONBLOCK);
	for (int i = 0; i < 3000; i++) {
		say(ctl[1], "ping\n");
		cr_assert_eq(control_next(c, &cmd), 1);
		control_ack(c);
	}
	cr_expect(control_out_pending(c), "more replies than the pipe holds");
	fcntl(ack[0], F_SETFL, O_NONBLOCK);
	while (got < 3000 * 4) {
		n = (int)read(ack[0], buf, sizeof(buf));
		if (n <= 0) {
			cr_assert(control_out_pending(c), "replies lost: %d bytes came", got);
			control_flush(c);
			continue;
		}
		for (int i = 0; i < n; i++)
			cr_assert_eq(buf[i], "ack\n"[(got + i) % 4], "byte %d", got + i);
		got += n;
		memcpy(tail, buf + n - 4, 4);
	}
	cr_expect(!control_out_pending(c));
	control_get_stats(c, &st);
	cr_expect_eq(st.replies_lost, 0);
	control_close(c);
	for (int i = 0; i < 2; i++) {
		close(ctl[i]);
		close(ack[i]);
	}
}

struct bad_open {
	char spec[128];
	int code;
	char says[64];
	char hint[48];
};

Test(control, specs_that_cannot_be_a_channel_are_usage_errors_naming_the_input)
{
	char dir[] = "/tmp/ptc-ctlbad-XXXXXX", file[64], fifo[64];
	int wr = open("/dev/null", O_WRONLY | O_CLOEXEC), rd = open("/etc/hostname", O_RDONLY);
	int p[2];

	cr_assert(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/plain", dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	close(open(file, O_CREAT | O_WRONLY, 0600));
	cr_assert_eq(pipe(p), 0);
	{
		struct bad_open cases[] = {
			{ "", -ENOENT, "CTL FIFO ", "mkfifo" },
			{ "", -EINVAL, "not a FIFO (a regular file)", "mkfifo" },
			{ "", -EINVAL, "not a FIFO (a directory)", "" },
			{ "", -ENOENT, "ACK FIFO ", "mkfifo" },
			{ "fd:987", -EBADF, "CTL descriptor 987 is not open", "987<>" },
			{ "", -EINVAL, "is a regular file", "a pipe, a FIFO or a socket" },
			{ "", -EBADF, "is open for writing only", "" },
			{ "", -EBADF, "ACK descriptor", "" },
		};

		snprintf(cases[0].spec, sizeof(cases[0].spec), "fifo:%s/missing", dir);
		snprintf(cases[1].spec, sizeof(cases[1].spec), "fifo:%s", file);
		snprintf(cases[2].spec, sizeof(cases[2].spec), "fifo:%s", dir);
		snprintf(cases[3].spec, sizeof(cases[3].spec), "fifo:%s,%s/noack", fifo, dir);
		snprintf(cases[5].spec, sizeof(cases[5].spec), "fd:%d", rd);
		snprintf(cases[6].spec, sizeof(cases[6].spec), "fd:%d", wr);
		snprintf(cases[7].spec, sizeof(cases[7].spec), "fd:%d,%d", p[0], p[0]);
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			struct error e = { 0 };
			struct control *c = NULL;

			cr_expect_eq(control_open(&c, cases[i].spec, &e), cases[i].code, "%s: %s",
				     cases[i].spec, e.why);
			cr_expect(e.usage, "%s", cases[i].spec);
			cr_expect(strstr(e.why, cases[i].says), "%s: '%s' not in '%s'",
				  cases[i].spec, cases[i].says, e.why);
			cr_expect(strstr(e.hint, cases[i].hint), "%s: hint '%s'", cases[i].spec,
				  e.hint);
			if (strncmp(cases[i].spec, "fd:", 3))
				cr_expect(strstr(e.why, cases[i].spec + 5) ||
					  strstr(e.why, "/noack"), "the path is named: %s", e.why);
		}
	}
	/* The FIFO ptcollect could not open stays unopened by a failed spec: no fd leaks. */
	cr_expect_eq(fcntl(p[0], F_GETFD), 0);
	close(p[0]);
	close(p[1]);
	close(wr);
	close(rd);
	unlink(fifo);
	unlink(file);
	rmdir(dir);
}

/* As user nobody, an ACK FIFO only root may write is refused before anything starts. */
Test(control, an_unwritable_ack_fifo_is_a_usage_error)
{
	char dir[] = "/tmp/ptc-ctlperm-XXXXXX", ctl[64], ack[64], spec[160];
	struct passwd *pw = getpwnam("nobody");
	struct error e = { 0 };
	int p[2], st;
	pid_t pid;

	if (getuid() != 0 || !pw)
		cr_skip_test("needs root to drop to user nobody");
	cr_assert(mkdtemp(dir));
	chmod(dir, 0755);
	snprintf(ctl, sizeof(ctl), "%s/ctl", dir);
	snprintf(ack, sizeof(ack), "%s/ack", dir);
	cr_assert_eq(mkfifo(ctl, 0666), 0);
	chmod(ctl, 0666);
	cr_assert_eq(mkfifo(ack, 0644), 0);
	snprintf(spec, sizeof(spec), "fifo:%s,%s", ctl, ack);
	cr_assert_eq(pipe(p), 0);
	pid = fork();
	if (!pid) {
		struct control *c;
		int ret;

		if (setgid(pw->pw_gid) || setuid(pw->pw_uid))
			_exit(1);
		ret = control_open(&c, spec, &e);
		e.code = ret;
		_exit(write(p[1], &e, sizeof(e)) == (ssize_t)sizeof(e) ? 0 : 1);
	}
	close(p[1]);
	cr_assert_eq(read(p[0], &e, sizeof(e)), (ssize_t)sizeof(e));
	waitpid(pid, &st, 0);
	cr_expect_eq(e.code, -EACCES, "%s", e.why);
	cr_expect(e.usage);
	cr_expect(strstr(e.why, "ACK FIFO"), "%s", e.why);
	cr_expect(strstr(e.why, ack), "%s", e.why);
	cr_expect(strstr(e.why, "Permission denied"), "%s", e.why);
	unlink(ctl);
	unlink(ack);
	rmdir(dir);
}

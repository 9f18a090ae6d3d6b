// SPDX-License-Identifier: MIT
/* The control channel: a line reader that never blocks and replies that never kill us. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "control.h"

#define OUT_MAX (64 * 1024)
#define SPEC_HINT "write --control fifo:CTL[,ACK] (paths of FIFOs made with mkfifo) or " \
		  "--control fd:CTL[,ACK] (open descriptor numbers)"

struct control {
	int ctl, ack;
	bool owned;		/* FIFOs we opened (fd mode's descriptors are the caller's) */
	bool ack_socket;
	char in[CONTROL_LINE_MAX];
	size_t in_len;
	bool discarding;	/* inside a line too long to keep: drop to its end */
	char *out;		/* replies waiting for room on ACK */
	size_t out_len;
	struct control_stats st;
};

static const char *const words[] = {
	[CONTROL_ENABLE] = "enable",
	[CONTROL_DISABLE] = "disable",
	[CONTROL_SNAPSHOT] = "snapshot",
	[CONTROL_STOP] = "stop",
	[CONTROL_PING] = "ping",
	[CONTROL_STATUS] = "status",
	[CONTROL_MARK] = "mark",
};

#define NR_WORDS (sizeof(words) / sizeof(words[0]))

/* ---- one line to a command ---------------------------------------------------- */

/* @s (@len bytes) quoted for an error line: printable, at most 48 bytes. */
static void quote(char *dst, size_t cap, const char *s, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len && n + 4 < cap && i < 48; i++)
		dst[n++] = isprint((unsigned char)s[i]) ? s[i] : '?';
	if (len > 48 && n + 4 < cap) {
		memcpy(dst + n, "...", 3);
		n += 3;
	}
	dst[n] = '\0';
}

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static int refuse_word(const char *w, size_t wl, const char *arg, size_t al, char *why,
		       size_t whylen)
{
	char q[64], qa[64];

	quote(q, sizeof(q), w, wl);
	quote(qa, sizeof(qa), arg, al);
	if (wl == 6 && !strncmp(w, "evlist", 6))
		snprintf(why, whylen, "'evlist' is perf's; ptcollect's words are enable, disable, "
			 "snapshot, stop, ping, status, mark TEXT");
	else if (al)
		snprintf(why, whylen, "'%s' takes no argument (got '%s')", q, qa);
	else
		snprintf(why, whylen, "unknown command '%s' (known: enable, disable, snapshot, "
			 "stop, ping, status, mark TEXT)", q);
	return -EINVAL;
}

static int mark_text(const char *arg, size_t al, struct control_cmd *cmd, char *why,
		     size_t whylen)
{
	if (!al) {
		snprintf(why, whylen, "'mark' needs a text: mark TEXT");
		return -EINVAL;
	}
	for (size_t i = 0; i < al; i++) {
		if ((unsigned char)arg[i] < 0x20 && arg[i] != '\t') {
			snprintf(why, whylen, "the text of 'mark' has a control character at byte "
				 "%zu", i + 1);
			return -EINVAL;
		}
	}
	memcpy(cmd->text, arg, al);
	cmd->text[al] = '\0';
	return 1;
}

int control_parse_line(const char *line, size_t len, struct control_cmd *cmd, char *why,
		       size_t whylen)
{
	size_t b = 0, e = len, we, a;

	while (b < e && blank(line[b]))
		b++;
	while (e > b && blank(line[e - 1]))
		e--;
	if (b == e)
		return 0;
	if (e - b >= CONTROL_LINE_MAX) {
		snprintf(why, whylen, "line longer than %d bytes", CONTROL_LINE_MAX - 1);
		return -EINVAL;
	}
	for (we = b; we < e && !blank(line[we]); we++)
		;
	for (a = we; a < e && blank(line[a]); a++)
		;
	cmd->text[0] = '\0';
	for (unsigned i = 0; i < NR_WORDS; i++) {
		if (strlen(words[i]) != we - b || strncmp(line + b, words[i], we - b))
			continue;
		cmd->word = i;
		if (i == CONTROL_MARK)
			return mark_text(line + a, e - a, cmd, why, whylen);
		if (a < e)
			return refuse_word(line + b, we - b, line + a, e - a, why, whylen);
		return 1;
	}
	return refuse_word(line + b, we - b, "", 0, why, whylen);
}

/* ---- the spec ---------------------------------------------------------------------- */

static int parse_fd(const char *s, size_t len, int *fd)
{
	char buf[16], *end;
	long v;

	if (!len || len >= sizeof(buf) || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	v = strtol(buf, &end, 10);
	if (*end || errno || v > INT_MAX)
		return -EINVAL;
	*fd = (int)v;
	return 0;
}

static int bad_spec(struct error *e, const char *spec, const char *why)
{
	err_usage(e, "'%s': %s", spec, why);
	err_hint(e, "%s", SPEC_HINT);
	return -EINVAL;
}

int control_spec_parse(const char *spec, struct control_spec *s, struct error *e)
{
	const char *rest, *comma;
	size_t cl;

	memset(s, 0, sizeof(*s));
	s->ctl_fd = s->ack_fd = -1;
	if (!strncmp(spec, "fifo:", 5))
		s->fifo = true;
	else if (strncmp(spec, "fd:", 3))
		return bad_spec(e, spec, "unknown kind: it starts with 'fifo:' or 'fd:'");
	rest = spec + (s->fifo ? 5 : 3);
	comma = strchr(rest, ',');
	cl = comma ? (size_t)(comma - rest) : strlen(rest);
	if (!cl)
		return bad_spec(e, spec, s->fifo ? "no CTL path" : "no CTL descriptor");
	if (comma && !comma[1])
		return bad_spec(e, spec, "nothing after ','");
	if (comma && strchr(comma + 1, ','))
		return bad_spec(e, spec, "more than two parts: CTL,ACK");
	if (s->fifo) {
		if (cl >= sizeof(s->ctl_path) ||
		    (comma && strlen(comma + 1) >= sizeof(s->ack_path)))
			return bad_spec(e, spec, "path too long");
		memcpy(s->ctl_path, rest, cl);
		if (comma)
			strcpy(s->ack_path, comma + 1);
		return 0;
	}
	if (parse_fd(rest, cl, &s->ctl_fd))
		return bad_spec(e, spec, "CTL is not a descriptor number");
	if (comma && parse_fd(comma + 1, strlen(comma + 1), &s->ack_fd))
		return bad_spec(e, spec, "ACK is not a descriptor number");
	return 0;
}

/* ---- opening -------------------------------------------------------------------- */

static const char *file_type(mode_t m)
{
	return S_ISREG(m) ? "a regular file" : S_ISDIR(m) ? "a directory" :
	       S_ISCHR(m) ? "a character device" : S_ISSOCK(m) ? "a socket" :
	       S_ISBLK(m) ? "a block device" : "a special file";
}

/* perf opens both FIFOs O_RDWR: no POLLHUP when a writer leaves, no wait for a reader. */
static int open_fifo(const char *path, const char *role, struct error *e)
{
	struct stat st;
	int fd, ret;

	if (stat(path, &st)) {
		ret = -errno;
		err_usage_code(e, ret, "%s FIFO %s: %s", role, path, strerror(-ret));
		err_hint(e, "create it first: mkfifo %s", path);
		return ret;
	}
	if (!S_ISFIFO(st.st_mode)) {
		err_usage(e, "%s FIFO %s: not a FIFO (%s)", role, path, file_type(st.st_mode));
		err_hint(e, "give a FIFO made with mkfifo, or use fd:CTL[,ACK]");
		return -EINVAL;
	}
	fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		err_usage_code(e, ret, "%s FIFO %s: %s", role, path, strerror(-ret));
		err_hint(e, "ptcollect needs to read and write it (perf opens it the same way)");
		return ret;
	}
	return fd;
}

/* An inherited descriptor: open, the right direction, not a plain file; made non-blocking. */
static int check_fd(int fd, bool reads, struct error *e)
{
	const char *role = reads ? "CTL" : "ACK";
	int fl = fcntl(fd, F_GETFL), acc;
	struct stat st;

	if (fl < 0 || fstat(fd, &st)) {
		err_usage_code(e, -EBADF, "%s descriptor %d is not open", role, fd);
		err_hint(e, "open it in the shell that starts ptcollect, e.g. '%d<>ctl.fifo'", fd);
		return -EBADF;
	}
	acc = fl & O_ACCMODE;
	if ((reads && acc == O_WRONLY) || (!reads && acc == O_RDONLY))
		return err_usage_code(e, -EBADF, "%s descriptor %d is open for %s only", role, fd,
				      reads ? "writing" : "reading");
	if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
		err_usage(e, "%s descriptor %d is %s", role, fd, file_type(st.st_mode));
		err_hint(e, "give a pipe, a FIFO or a socket");
		return -EINVAL;
	}
	if (!(fl & O_NONBLOCK) && fcntl(fd, F_SETFL, fl | O_NONBLOCK))
		return err_runtime(e, -errno, "%s descriptor %d: %s", role, fd, strerror(errno));
	return fd;
}

/* One FIFO for both ends reads back its own replies as commands, without end. */
static int same_fifo(const struct control *c, const struct control_spec *s, struct error *e)
{
	struct stat a, b;

	if (fstat(c->ctl, &a) || fstat(c->ack, &b) || !S_ISFIFO(a.st_mode) ||
	    a.st_dev != b.st_dev || a.st_ino != b.st_ino)
		return 0;
	if (s->fifo)
		err_usage(e, "'fifo:%s,%s': CTL and ACK are the same FIFO: ptcollect would read "
			  "its own replies as commands", s->ctl_path, s->ack_path);
	else
		err_usage(e, "'fd:%d,%d': CTL and ACK are the same FIFO: ptcollect would read its "
			  "own replies as commands", s->ctl_fd, s->ack_fd);
	err_hint(e, "make two FIFOs (mkfifo ctl ack) and give --control fifo:ctl,ack");
	return -EINVAL;
}

static int open_ends(struct control *c, const struct control_spec *s, struct error *e)
{
	int fd;

	c->owned = s->fifo;
	fd = s->fifo ? open_fifo(s->ctl_path, "CTL", e) : check_fd(s->ctl_fd, true, e);
	if (fd < 0)
		return fd;
	c->ctl = fd;
	if (s->fifo ? !s->ack_path[0] : s->ack_fd < 0)
		return 0;
	fd = s->fifo ? open_fifo(s->ack_path, "ACK", e) : check_fd(s->ack_fd, false, e);
	if (fd < 0)
		return fd;
	c->ack = fd;
	return same_fifo(c, s, e);
}

int control_open(struct control **out, const char *spec, struct error *e)
{
	struct control_spec s;
	struct control *c;
	struct stat st;
	int ret = control_spec_parse(spec, &s, e);

	if (ret)
		return ret;
	c = calloc(1, sizeof(*c));
	if (!c)
		return err_runtime(e, -ENOMEM, "out of memory");
	c->ctl = c->ack = -1;
	ret = open_ends(c, &s, e);
	if (ret) {
		control_close(c);
		return ret;
	}
	c->ack_socket = c->ack >= 0 && !fstat(c->ack, &st) && S_ISSOCK(st.st_mode);
	*out = c;
	return 0;
}

int control_fd(const struct control *c)
{
	return c->st.ctl_closed ? -1 : c->ctl;
}

int control_ack_fd(const struct control *c)
{
	return c->st.ack_closed ? -1 : c->ack;
}

bool control_out_pending(const struct control *c)
{
	return c->out_len > 0;
}

void control_get_stats(const struct control *c, struct control_stats *st)
{
	*st = c->st;
}

void control_close(struct control *c)
{
	if (!c)
		return;
	/* fd mode's descriptors are the caller's, as perf leaves them. */
	if (c->owned && c->ctl >= 0)
		close(c->ctl);
	if (c->owned && c->ack >= 0)
		close(c->ack);
	free(c->out);
	free(c);
}

/* ---- replies ------------------------------------------------------------------------------ */

/*
 * write() to a pipe whose reader left raises SIGPIPE, whose default action
 * ends the process. Block it in this thread for the write and take back one
 * it raised, so the caller's signal handling is left as it was.
 */
static ssize_t write_nosig(struct control *c, const void *buf, size_t len)
{
	struct timespec zero = { 0, 0 };
	sigset_t pipe_set, old, pend;
	bool was_pending;
	ssize_t n;

	if (c->ack_socket)
		return send(c->ack, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	sigpending(&pend);
	was_pending = sigismember(&pend, SIGPIPE);
	n = write(c->ack, buf, len);
	if (n < 0 && errno == EPIPE && !was_pending) {
		int err = errno;

		while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR)
			;
		errno = err;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return n;
}

void control_flush(struct control *c)
{
	while (c->out_len && !c->st.ack_closed) {
		ssize_t n = write_nosig(c, c->out, c->out_len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			/* EPIPE and the like: nobody will read replies again. */
			c->st.ack_closed = true;
			c->st.replies_lost++;
			c->out_len = 0;
			return;
		}
		memmove(c->out, c->out + n, c->out_len - (size_t)n);
		c->out_len -= (size_t)n;
	}
}

/* Queue one line (@len bytes, without its newline) and write what fits now. */
static void send_line(struct control *c, const char *line, size_t len)
{
	if (c->ack < 0)
		return;
	if (c->st.ack_closed || c->out_len + len + 1 > OUT_MAX) {
		c->st.replies_lost++;
		return;
	}
	if (!c->out) {
		c->out = malloc(OUT_MAX);
		if (!c->out) {
			c->st.replies_lost++;
			return;
		}
	}
	for (size_t i = 0; i < len; i++)
		c->out[c->out_len++] = line[i] == '\n' ? ' ' : line[i];
	c->out[c->out_len++] = '\n';
	control_flush(c);
}

void control_ack(struct control *c)
{
	send_line(c, "ack", 3);
}

void control_reply(struct control *c, const char *line)
{
	send_line(c, line, strlen(line));
}

void control_refuse(struct control *c, const char *why)
{
	char buf[1024];
	int n = snprintf(buf, sizeof(buf), "error %s", why);

	send_line(c, buf, n < 0 ? 0 : (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

/* ---- reading ---------------------------------------------------------------------------- */

/* Length of the first line in the buffer (to '\n' or NUL), or -1 when none is complete. */
static ssize_t line_end(const struct control *c)
{
	for (size_t i = 0; i < c->in_len; i++)
		if (c->in[i] == '\n' || c->in[i] == '\0')
			return (ssize_t)i;
	return -1;
}

static void consume(struct control *c, size_t n)
{
	memmove(c->in, c->in + n, c->in_len - n);
	c->in_len -= n;
}

/* Parse the buffer's first @len bytes as a line: 1 with @cmd, 0 when it was not one. */
static int take_line(struct control *c, size_t len, struct control_cmd *cmd)
{
	char why[512];
	int ret = control_parse_line(c->in, len, cmd, why, sizeof(why));

	if (ret < 0) {
		c->st.refused++;
		control_refuse(c, why);
		return 0;
	}
	if (ret > 0)
		c->st.commands++;
	return ret;
}

/* Read what CTL has: 1 read something, 0 nothing now, -ENODATA at EOF. */
static int fill(struct control *c)
{
	ssize_t n;

	if (c->in_len == sizeof(c->in)) {
		/* A line that does not fit: drop it to its end, then refuse it once. */
		c->discarding = true;
		c->in_len = 0;
	}
	do
		n = read(c->ctl, c->in + c->in_len, sizeof(c->in) - c->in_len);
	while (n < 0 && errno == EINTR);
	if (n > 0) {
		c->in_len += (size_t)n;
		return 1;
	}
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	c->st.ctl_closed = true;	/* EOF (fd mode) or a read error */
	return -ENODATA;
}

int control_next(struct control *c, struct control_cmd *cmd)
{
	int lines = 0;

	control_flush(c);
	for (;;) {
		ssize_t end = line_end(c);
		int ret;

		/* A bounded pass: a flood of lines leaves the caller's loop its turn (signals). */
		if (end >= 0 && lines++ == CONTROL_BATCH)
			return 0;
		if (end >= 0) {
			bool was_discarding = c->discarding;

			c->discarding = false;
			if (was_discarding) {
				consume(c, (size_t)end + 1);
				c->st.refused++;
				control_refuse(c, "line longer than 4095 bytes: refused");
				continue;
			}
			ret = take_line(c, (size_t)end, cmd);
			consume(c, (size_t)end + 1);
			if (ret)
				return 1;
			continue;
		}
		if (c->st.ctl_closed) {
			/* A last line without its newline still counts. */
			if (c->in_len && !c->discarding) {
				ret = take_line(c, c->in_len, cmd);
				c->in_len = 0;
				if (ret)
					return 1;
			}
			return -ENODATA;
		}
		ret = fill(c);
		if (ret == 0)
			return 0;
	}
}

bool control_pending(const struct control *c)
{
	/* After CTL's end, a last line without its newline (not the rest of an overlong one). */
	return line_end(c) >= 0 || (c->st.ctl_closed && c->in_len && !c->discarding);
}

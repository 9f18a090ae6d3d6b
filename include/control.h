/* SPDX-License-Identifier: MIT */
/*
 * The control channel: --control fifo:CTL[,ACK] or --control fd:CTL[,ACK],
 * perf record's words plus two of ours, one command per line:
 *
 *	enable | disable | snapshot | stop | ping	perf's
 *	status					answered with one JSON line
 *	mark TEXT				a timestamped note
 *
 * Every non-empty line gets exactly one line back on ACK, so a script can
 * read one line per command: "ack" (perf's acknowledgement) once the session
 * did it, the status JSON for status, or "error WHY" for a line that is not a
 * command (the session goes on). Lines end at '\n' (or NUL, as perf reads
 * them); surrounding blanks and a '\r' are ignored, empty lines are skipped.
 *
 * The channel never blocks and never ends the process: CTL is read without
 * blocking; a FIFO is opened read-write as perf opens it, so writers may come
 * and go (fd mode: EOF ends the channel, control_fd() turns -1); replies go out
 * without blocking, an unread ACK keeps up to 64 KiB, and a closed ACK pipe
 * (EPIPE) only ends the replies: its SIGPIPE is never delivered.
 */
#ifndef PTC_CONTROL_H
#define PTC_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define CONTROL_LINE_MAX 4096	/* longer lines are refused whole */

enum control_word {
	CONTROL_ENABLE,
	CONTROL_DISABLE,
	CONTROL_SNAPSHOT,
	CONTROL_STOP,
	CONTROL_PING,
	CONTROL_STATUS,
	CONTROL_MARK,
};

struct control_cmd {
	enum control_word word;
	char text[CONTROL_LINE_MAX];	/* mark's TEXT; "" for the others */
};

struct control_spec {
	bool fifo;			/* fifo:PATHS, else fd:NUMBERS */
	char ctl_path[4096], ack_path[4096];	/* fifo mode; ack_path "" when absent */
	int ctl_fd, ack_fd;		/* fd mode; ack_fd -1 when absent */
};

struct control_stats {
	uint64_t commands;	/* returned by control_next() */
	uint64_t refused;	/* lines answered "error ..." */
	uint64_t replies_lost;	/* not written: ACK closed, or 64 KiB unread */
	bool ack_closed;	/* the reader of ACK went away (EPIPE) */
	bool ctl_closed;	/* fd mode: EOF on CTL */
};

struct control;

/* The spec's syntax only (no file is touched). 0 or -EINVAL with @e. */
int control_spec_parse(const char *spec, struct control_spec *s, struct error *e);
/*
 * Parse and open: FIFOs must exist and be FIFOs (a regular file or a missing
 * path is a usage error naming it), opened without blocking; fd numbers must
 * be open, CTL readable and ACK writable; both are made non-blocking.
 */
int control_open(struct control **c, const char *spec, struct error *e);
/* Poll for POLLIN; -1 once CTL has ended (fd mode). */
int control_fd(const struct control *c);
/*
 * The next command, without blocking: 1 with @cmd, 0 when none is complete
 * yet, -ENODATA when CTL has ended. Lines that are not commands are answered
 * "error ..." here and skipped. Pending replies are flushed first.
 */
int control_next(struct control *c, struct control_cmd *cmd);
/* Lines read that control_next() has not taken yet (it takes CONTROL_BATCH at a time). */
#define CONTROL_BATCH 64
bool control_pending(const struct control *c);
/* Answer the last command: "ack". */
void control_ack(struct control *c);
/* Answer with one line (status's JSON; a newline inside becomes a space). */
void control_reply(struct control *c, const char *line);
/* Answer "error WHY" (the session could not do it). */
void control_refuse(struct control *c, const char *why);
/* ACK and whether replies are waiting for room: poll it for POLLOUT then, and flush. */
int control_ack_fd(const struct control *c);
bool control_out_pending(const struct control *c);
void control_flush(struct control *c);
void control_get_stats(const struct control *c, struct control_stats *st);
void control_close(struct control *c);

/*
 * One line (without its '\n') to a command: 1 with @cmd, 0 for a blank line,
 * -EINVAL with @why (one line, printable) for anything else.
 */
int control_parse_line(const char *line, size_t len, struct control_cmd *cmd, char *why,
		       size_t whylen);

#endif

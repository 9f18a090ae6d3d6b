// SPDX-License-Identifier: MIT
/*
 * The control channel's reader: the input is cut into chunks (sizes from its
 * first bytes) and written into a pipe between reads, so lines arrive in
 * pieces; then the writer closes (EOF). Replies go to a pipe that is drained.
 * Never crash, leak or hang; each non-empty line gets exactly one reply line.
 * The same bytes also go to --control's spec parser.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control.h"

static size_t drain(int fd)
{
	char buf[4096];
	size_t lines = 0;
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++)
			lines += buf[i] == '\n';
	return lines;
}

static void spec(const uint8_t *data, size_t size)
{
	struct control_spec s;
	struct error e = { 0 };
	char text[256];

	if (size >= sizeof(text))
		size = sizeof(text) - 1;
	memcpy(text, data, size);
	text[size] = '\0';
	if (control_spec_parse(text, &s, &e) && (!e.usage || !e.why[0]))
		abort();
}

/* Every line read so far (control_next() takes CONTROL_BATCH at a time), each answered. */
static void take_all(struct control *c)
{
	struct control_cmd cmd;

	do {
		while (control_next(c, &cmd) == 1) {
			control_ack(c);
			if ((unsigned)cmd.word > CONTROL_MARK ||
			    strlen(cmd.text) >= CONTROL_LINE_MAX)
				abort();
		}
	} while (control_pending(c));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct control_stats st;
	struct error e = { 0 };
	struct control *c;
	int ctl[2], ack[2];
	size_t pos = 2, replies = 0, chunk;
	char name[32];

	spec(data, size);
	if (size < 2 || size > 60000)
		return 0;
	if (pipe(ctl) || pipe(ack))
		abort();
	fcntl(ack[0], F_SETFL, O_NONBLOCK);
	snprintf(name, sizeof(name), "fd:%d,%d", ctl[0], ack[1]);
	if (control_open(&c, name, &e))
		abort();
	chunk = 1 + (data[0] | data[1] << 8) % 512;
	while (pos < size) {
		size_t n = size - pos < chunk ? size - pos : chunk;

		if (write(ctl[1], data + pos, n) != (ssize_t)n)
			abort();
		pos += n;
		take_all(c);
		replies += drain(ack[0]);
	}
	close(ctl[1]);
	take_all(c);
	replies += drain(ack[0]);
	control_get_stats(c, &st);
	if (st.commands + st.refused != replies || st.replies_lost || !st.ctl_closed) {
		fprintf(stderr, "fuzz_control: %llu commands + %llu refused, %zu replies read, "
			"%llu lost, ctl %s, %s replies waiting\n",
			(unsigned long long)st.commands, (unsigned long long)st.refused, replies,
			(unsigned long long)st.replies_lost, st.ctl_closed ? "closed" : "open",
			control_out_pending(c) ? "some" : "no");
		abort();
	}
	control_close(c);
	close(ctl[0]);
	close(ack[0]);
	close(ack[1]);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * The one rule for text from outside that ptcollect prints: names (ELF
 * symbols, file names, COMMs, stream names) and the paths and values quoted
 * in messages. A terminal must never get a byte from them that it obeys:
 *
 * - C0 controls and DEL become \xNN, newline \n and tab \t;
 * - C1 controls (U+0080 to U+009F, which some terminals obey) become \uNNNN;
 * - bytes that start no valid UTF-8 sequence become \xNN (a Latin-1
 *   terminal reads 0x9b as CSI).
 *
 * Everything else, backslashes included, is kept: the result is its own
 * escape (printing it again changes nothing). JSON output needs none of
 * this: jansson escapes controls, utf8_json_string() (utf8.h) the rest.
 */
#ifndef PTC_PRINTABLE_H
#define PTC_PRINTABLE_H

#include <stdbool.h>
#include <stddef.h>

/* @s escaped; malloc'd, NULL when out of memory. */
char *printable(const char *s);

/*
 * @s escaped into @buf (@size > 0), NUL-terminated; an escape is never cut:
 * what does not fit is left out. Returns the length written.
 */
size_t printable_to(char *buf, size_t size, const char *s);

/*
 * A message (msg.h) with what it quotes: as printable(), except that a
 * newline followed by two blanks is kept (a message's own indented
 * continuation line, such as a filter's caret). No name can start a line of
 * its own: every line it could start is indented under the message.
 */
char *printable_msg(const char *s);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * "[depth N] ", what a --calls line says past its indentation's last level, kept for the
 * depth of the line before: the next is one level deeper or shallower, and its digits
 * change in place. Made by dividing by ten each line, the digits were two thirds of
 * put_indent()'s samples, and put_indent() the merge's largest cost on the bench's walk
 * (nearly all of its lines are past the last level).
 */
#ifndef PTC_DEPTH_TEXT_H
#define PTC_DEPTH_TEXT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define DEPTH_TEXT_OPEN "[depth "
#define DEPTH_TEXT_OPEN_LEN (sizeof(DEPTH_TEXT_OPEN) - 1)

struct depth_text {
	uint64_t depth;		/* the depth @s says */
	uint32_t len;		/* of "[depth N] " in @s; 0: nothing kept yet */
	/* 7 + 20 digits + 2: a copy of 32 bytes moves it whole (depth_text_at()). */
	char s[32];
};

/* @t made anew for @depth. */
static inline void depth_text_make(struct depth_text *t, uint64_t depth)
{
	uint64_t v = depth;
	size_t n = 1;
	char *p;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	memcpy(t->s, DEPTH_TEXT_OPEN, DEPTH_TEXT_OPEN_LEN);
	p = t->s + DEPTH_TEXT_OPEN_LEN + n;
	v = depth;
	for (char *q = p; q > t->s + DEPTH_TEXT_OPEN_LEN; v /= 10)
		*--q = (char)('0' + v % 10);
	memcpy(p, "] ", 2);
	memset(p + 2, 0, sizeof(t->s) - DEPTH_TEXT_OPEN_LEN - n - 2);
	t->len = (uint32_t)(DEPTH_TEXT_OPEN_LEN + n + 2);
	t->depth = depth;
}

/* One more, in place; false where it needs a digit more (the digits are then spoiled). */
static inline bool depth_text_up(struct depth_text *t)
{
	for (char *d = t->s + t->len - 3; d >= t->s + DEPTH_TEXT_OPEN_LEN; d--) {
		if (*d != '9') {
			(*d)++;
			return true;
		}
		*d = '0';
	}
	return false;
}

/* One less, in place; false where it needs a digit less (the digits are then spoiled). */
static inline bool depth_text_down(struct depth_text *t)
{
	char *first = t->s + DEPTH_TEXT_OPEN_LEN;
	char *d = t->s + t->len - 3;

	for (; d > first; d--) {
		if (*d != '0') {
			(*d)--;
			return true;
		}
		*d = '9';
	}
	/* The first digit: a 1 followed by what were zeros loses it, but a lone 1 is 0. */
	if (*d == '0' || (*d == '1' && t->len > DEPTH_TEXT_OPEN_LEN + 3))
		return false;
	(*d)--;
	return true;
}

/* @t made to say @depth: kept, moved by one, or made anew. */
static inline void depth_text_at(struct depth_text *t, uint64_t depth)
{
	if (t->len) {
		if (depth == t->depth)
			return;
		if (depth - 1 == t->depth && depth != 0 && depth_text_up(t)) {
			t->depth = depth;
			return;
		}
		if (depth + 1 == t->depth && t->depth != 0 && depth_text_down(t)) {
			t->depth = depth;
			return;
		}
	}
	depth_text_make(t, depth);
}

#endif

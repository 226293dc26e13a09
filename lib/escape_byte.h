/*
 * lib/escape_byte.h - how one byte looks in the TSV form of perc(1):
 * the bottom of the base, below error.c, which quotes bytes in its
 * messages with it, and escape.c, which escapes fields into buffers.
 */
#ifndef ESCAPE_BYTE_H
#define ESCAPE_BYTE_H

#include <stddef.h>

/* Does byte c stand for itself in the TSV form? */
static inline int
escape_plain(unsigned char c, int spaces)
{
	return c >= 0x20 && c <= 0x7e && c != '\\' && !(spaces && c == ' ');
}

/*
 * The TSV form of byte c into out, without a NUL, and its length (1, 2
 * or 4): c itself when plain, else \t, \n, \\ or \xhh.  The one place
 * that decides how a byte looks.
 */
static inline size_t
escape_byte(char out[4], unsigned char c, int spaces)
{
	static const char hex[] = "0123456789abcdef";

	if (escape_plain(c, spaces)) {
		out[0] = (char)c;
		return 1;
	}
	out[0] = '\\';
	out[1] = c == '\t' ? 't' : c == '\n' ? 'n' : c == '\\' ? '\\' : 'x';
	if (out[1] != 'x')
		return 2;
	out[2] = hex[c >> 4];
	out[3] = hex[c & 15];
	return 4;
}
#endif

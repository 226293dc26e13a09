/* lib/escape.c - TSV fields escaped a byte at a time (escape_byte.h) */
#include <string.h>

#include "buf.h"
#include "error.h"
#include "escape.h"
#include "escape_byte.h"

static int
escape(perc_buf *out, perc_bytes field, int spaces)
{
	const unsigned char *p = field.data;
	char enc[4];
	size_t i, run;
	int rc;

	/* out->data is never NULL afterwards, even for an empty field. */
	if ((rc = buf_grow(out, field.len)) < 0)
		return rc;
	for (i = 0; i < field.len && rc == 0; i++) {
		for (run = i; run < field.len && escape_plain(p[run], spaces);
		    run++)
			;
		if (run > i) {
			rc = buf_add(out, p + i, run - i);
			i = run - 1;
		} else
			rc = buf_add(out, enc, escape_byte(enc, p[i], spaces));
	}
	return rc;
}

/*
 * Append field to out in the TSV form that perc(1) promises: tab,
 * newline and backslash become \t, \n and \\, and every other byte
 * outside 0x20..0x7e becomes \xhh.  field may hold NUL bytes.
 */
int
escape_field(perc_buf *out, perc_bytes field)
{
	return escape(out, field, 0);
}

/* As escape_field, and a space becomes \x20: for key=value details. */
int
escape_field_spaces(perc_buf *out, perc_bytes field)
{
	return escape(out, field, 1);
}

int
escape_hex_value(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Append to out the bytes that text (len bytes, the escaped form)
 * stands for.  A backslash not followed by t, n, \ or xhh is a usage
 * error (PERC_EUSAGE), so a typo never turns into a different key.
 */
int
unescape_field(perc_buf *out, const char *text, size_t len)
{
	const char *esc;
	size_t i, run;
	int rc, hi, lo;
	char c;

	/* out->data is never NULL afterwards, even for an empty field. */
	if ((rc = buf_grow(out, len)) < 0)
		return rc;
	for (i = 0; i < len && rc == 0; i++) {
		if (text[i] != '\\') {
			/* The run up to the next backslash, in one go. */
			esc = memchr(text + i, '\\', len - i);
			run = esc != NULL ? (size_t)(esc - (text + i)) : len - i;
			rc = buf_add(out, &text[i], run);
			i += run - 1;
			continue;
		}
		if (++i == len)
			return error_set(PERC_EUSAGE, "escaped argument ends "
			    "in a lone backslash; write \\\\ for a backslash");
		switch (text[i]) {
		case 't':
			rc = buf_add(out, "\t", 1);
			break;
		case 'n':
			rc = buf_add(out, "\n", 1);
			break;
		case '\\':
			rc = buf_add(out, "\\", 1);
			break;
		case 'x':
			hi = i + 1 < len ? escape_hex_value((unsigned char)text[i + 1]) : -1;
			lo = i + 2 < len ? escape_hex_value((unsigned char)text[i + 2]) : -1;
			if (hi < 0 || lo < 0)
				return error_set(PERC_EUSAGE, "escaped "
				    "argument has a bad \\x; write \\xhh with "
				    "two hex digits");
			c = (char)(hi << 4 | lo);
			rc = buf_add(out, &c, 1);
			i += 2;
			break;
		default:
			return error_set(PERC_EUSAGE, "escaped argument has "
			    "an unknown escape '\\%c'; use \\t, \\n, \\\\ or "
			    "\\xhh", text[i]);
		}
	}
	return rc;
}

int
perc_escape(perc_buf *out, perc_bytes field)
{
	return escape_field(out, field);
}

int
perc_unescape(perc_buf *out, const char *text, size_t len)
{
	return unescape_field(out, text, len);
}

/* lib/error.c - the per-thread message behind every PERC_E* code */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "escape_byte.h"

static _Thread_local char errmsg[512] = "no error";
static _Thread_local char quoted[4][128];
static _Thread_local unsigned nquoted;

const char *
perc_errmsg(void)
{
	return errmsg;
}

int
error_set(int code, const char *fmt, ...)
{
	char msg[sizeof(errmsg)], *nl;
	va_list ap;

	/* Through a copy: the arguments may quote the last message. */
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	memcpy(errmsg, msg, sizeof(errmsg));
	/* The message is one line, whatever a strerror() or path held. */
	while ((nl = strchr(errmsg, '\n')) != NULL)
		*nl = ' ';
	return code;
}

/*
 * Rows and columns are arbitrary bytes; a message shows them in the
 * escaped TSV form, cut short when long.  Four slots rotate so one
 * message can quote a row and a column.
 */
const char *
error_quote(perc_bytes bytes)
{
	char *out = quoted[nquoted++ % 4];
	const unsigned char *p = bytes.data;
	size_t i, n = 0;

	/* Past 60 characters it is cut short: no need to escape the rest. */
	for (i = 0; i < bytes.len && n <= 60; i++)
		n += escape_byte(out + n, p[i], 0);
	if (n > 60)
		memcpy(out + 57, "...", 4);
	else
		out[n] = '\0';
	return out;
}

int
error_conflict(perc_bytes row, perc_bytes col, const char *why)
{
	return error_set(PERC_ECONFLICT, "write conflict on row '%s' column "
	    "'%s': %s; retry with a new transaction", error_quote(row),
	    error_quote(col), why);
}

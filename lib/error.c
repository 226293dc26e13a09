/* lib/error.c - the per-thread message behind every PERC_E* code */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "error.h"
#include "escape.h"

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
	perc_buf esc = PERC_BUF_INIT;
	size_t n;

	if (escape_field(&esc, bytes) < 0) {
		perc_buf_dispose(&esc);
		return "?";
	}
	n = esc.len;
	if (n > 60) {
		memcpy(out, esc.data, 57);
		memcpy(out + 57, "...", 4);
	} else {
		memcpy(out, esc.data, n);
		out[n] = '\0';
	}
	perc_buf_dispose(&esc);
	return out;
}

int
error_conflict(perc_bytes row, perc_bytes col, const char *why)
{
	return error_set(PERC_ECONFLICT, "write conflict on row '%s' column "
	    "'%s': %s; retry with a new transaction", error_quote(row),
	    error_quote(col), why);
}

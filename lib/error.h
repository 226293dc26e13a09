/* lib/error.h - setting the one-line message behind a PERC_E* code */
#ifndef ERROR_H
#define ERROR_H

#include "perc.h"

/*
 * Record a one-line message for perc_errmsg() and return code, so a
 * failure reads "return error_set(PERC_ENOTXN, ...);".
 */
int error_set(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A write-write conflict on (row, col), why as the reason: ECONFLICT. */
int error_conflict(perc_bytes row, perc_bytes col, const char *why);

/* Quote bytes for a message: escaped as in TSV output, at most 60. */
const char *error_quote(perc_bytes bytes);
#endif

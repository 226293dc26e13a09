/* lib/escape.h - the TSV byte escaping of perc(1) and its inverse */
#ifndef ESCAPE_H
#define ESCAPE_H

#include "perc.h"

int escape_field(perc_buf *out, perc_bytes field);
int escape_field_spaces(perc_buf *out, perc_bytes field);
int unescape_field(perc_buf *out, const char *text, size_t len);
/* The value of hex digit c (either case), or -1. */
int escape_hex_value(int c);
#endif

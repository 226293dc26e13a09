/* lib/buf.h - growable byte buffers (perc_buf) used across the library */
#ifndef BUF_H
#define BUF_H

#include <stdarg.h>
#include <string.h>

#include "perc.h"

int  buf_grow(perc_buf *buf, size_t extra);
int  buf_add(perc_buf *buf, const void *data, size_t len);
int  buf_addb(perc_buf *buf, perc_bytes bytes);
int  buf_addf(perc_buf *buf, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int  buf_set(perc_buf *buf, const void *data, size_t len);
void buf_reset(perc_buf *buf);

static inline perc_bytes
buf_bytes(const perc_buf *buf)
{
	perc_bytes b = { buf->data, buf->len };

	return b;
}

static inline perc_bytes
bytes_of(const void *data, size_t len)
{
	perc_bytes b = { data, len };

	return b;
}

/* A C string's bytes, without its NUL. */
static inline perc_bytes
bytes_str(const char *s)
{
	return bytes_of(s, strlen(s));
}

int bytes_cmp(perc_bytes a, perc_bytes b);
int bytes_eq(perc_bytes a, perc_bytes b);
#endif

/* lib/buf.c - growable byte buffers: the one allocator of byte strings */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "error.h"

void
perc_buf_dispose(perc_buf *buf)
{
	if (buf == NULL)
		return;
	free(buf->data);
	buf->data = NULL;
	buf->len = buf->cap = 0;
}

/*
 * Make room for extra more bytes plus the trailing NUL that keeps data
 * printable in a debugger.  Returns 0, or PERC_EIO when memory runs out
 * (the caller cannot go on, and nothing in the store was touched).
 */
int
buf_grow(perc_buf *buf, size_t extra)
{
	size_t want, cap;
	char *p;

	if (extra > SIZE_MAX - buf->len - 1)
		return error_set(PERC_EIO, "value too large for memory");
	want = buf->len + extra + 1;
	if (want <= buf->cap)
		return 0;
	cap = buf->cap ? buf->cap : 64;
	while (cap < want)
		cap = cap > SIZE_MAX / 2 ? want : cap * 2;
	if ((p = realloc(buf->data, cap)) == NULL)
		return error_set(PERC_EIO, "out of memory growing a buffer "
		    "to %zu bytes", want);
	buf->data = p;
	buf->cap = cap;
	buf->data[buf->len] = '\0';
	return 0;
}

int
buf_add(perc_buf *buf, const void *data, size_t len)
{
	int rc;

	if ((rc = buf_grow(buf, len)) < 0)
		return rc;
	if (len > 0)
		memcpy(buf->data + buf->len, data, len);
	buf->len += len;
	buf->data[buf->len] = '\0';
	return 0;
}

int
buf_addb(perc_buf *buf, perc_bytes bytes)
{
	return buf_add(buf, bytes.data, bytes.len);
}

int
buf_addf(perc_buf *buf, const char *fmt, ...)
{
	va_list ap;
	int n, rc;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return error_set(PERC_EIO, "cannot format a message");
	if ((rc = buf_grow(buf, (size_t)n)) < 0)
		return rc;
	va_start(ap, fmt);
	vsnprintf(buf->data + buf->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	buf->len += (size_t)n;
	return 0;
}

int
buf_set(perc_buf *buf, const void *data, size_t len)
{
	buf_reset(buf);
	return buf_add(buf, data, len);
}

/* Empty buf but keep its memory for the next use. */
void
buf_reset(perc_buf *buf)
{
	buf->len = 0;
	if (buf->data != NULL)
		buf->data[0] = '\0';
}

/* memcmp order, a shorter prefix first: the order of rows in a scan. */
int
bytes_cmp(perc_bytes a, perc_bytes b)
{
	size_t n = a.len < b.len ? a.len : b.len;
	int c = n ? memcmp(a.data, b.data, n) : 0;

	if (c != 0)
		return c;
	return a.len < b.len ? -1 : a.len > b.len;
}

int
bytes_eq(perc_bytes a, perc_bytes b)
{
	return a.len == b.len && (a.len == 0 ||
	    memcmp(a.data, b.data, a.len) == 0);
}

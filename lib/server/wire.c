/*
 * lib/server/wire.c - frames, and the fields in them, packed and
 * unpacked from a verb's layout (wire.h's letters).
 */
#include <string.h>

#include "buf.h"
#include "codec.h"
#include "error.h"
#include "store.h"
#include "wire.h"
#include "writeset.h"

int
wire_begin(perc_buf *out)
{
	uint32_t len = 0;

	return buf_add(out, &len, sizeof(len));
}

void
wire_end(perc_buf *out, size_t start)
{
	uint32_t len = (uint32_t)(out->len - start - sizeof(len));

	memcpy(out->data + start, &len, sizeof(len));
}

static int
put_bytes(perc_buf *out, perc_bytes b)
{
	uint64_t len = b.len;
	int rc;

	if ((rc = buf_add(out, &len, sizeof(len))) < 0)
		return rc;
	return b.len > 0 ? buf_add(out, b.data, b.len) : 0;
}

/* A lock, or none: a lock of no transaction (start_ts 0) goes as none. */
static int
put_lock(perc_buf *out, const struct lock_rec *lock)
{
	perc_buf enc = PERC_BUF_INIT;
	int rc;

	if (lock == NULL || lock->start_ts == 0)
		return put_bytes(out, bytes_of(NULL, 0));
	if ((rc = codec_lock_encode(&enc, lock)) == 0)
		rc = put_bytes(out, buf_bytes(&enc));
	perc_buf_dispose(&enc);
	return rc;
}

static int
put_write(perc_buf *out, const struct write *w)
{
	int rc;

	if ((rc = put_bytes(out, buf_bytes(&w->row))) < 0 ||
	    (rc = put_bytes(out, buf_bytes(&w->col))) < 0 ||
	    (rc = put_bytes(out, buf_bytes(&w->value))) < 0)
		return rc;
	return wire_pack(out, "ii", w->op, w->ack);
}

int
wire_vpack(perc_buf *out, const char *layout, va_list ap)
{
	const perc_bytes *ob;
	const struct lock_fate *f;
	perc_ts t;
	unsigned u;
	size_t z;
	int i, rc = 0;

	for (; *layout != '\0' && rc == 0; layout++) {
		switch (*layout) {
		case 'b':
			rc = put_bytes(out, va_arg(ap, perc_bytes));
			break;
		case 'o':
			ob = va_arg(ap, const perc_bytes *);
			i = ob != NULL;
			if ((rc = buf_add(out, &i, sizeof(i))) == 0 && ob)
				rc = put_bytes(out, *ob);
			break;
		case 't':
			t = va_arg(ap, perc_ts);
			rc = buf_add(out, &t, sizeof(t));
			break;
		case 'u':
			u = va_arg(ap, unsigned);
			rc = buf_add(out, &u, sizeof(u));
			break;
		case 'i':
			i = va_arg(ap, int);
			rc = buf_add(out, &i, sizeof(i));
			break;
		case 'z':
			z = va_arg(ap, size_t);
			rc = buf_add(out, &z, sizeof(z));
			break;
		case 'l':
			rc = put_lock(out, va_arg(ap, const struct lock_rec *));
			break;
		case 'f':
			f = va_arg(ap, const struct lock_fate *);
			i = f != NULL;
			if ((rc = buf_add(out, &i, sizeof(i))) == 0 && f)
				rc = buf_add(out, f, sizeof(*f));
			break;
		case 'w':
			rc = put_write(out, va_arg(ap, const struct write *));
			break;
		default:
			return error_set(PERC_EIO, "bad layout '%c'", *layout);
		}
	}
	return rc;
}

int
wire_pack(perc_buf *out, const char *layout, ...)
{
	va_list ap;
	int rc;

	va_start(ap, layout);
	rc = wire_vpack(out, layout, ap);
	va_end(ap);
	return rc;
}

static int
take(struct wire_in *in, void *to, size_t n)
{
	if (in->bad || (size_t)(in->end - in->p) < n) {
		in->bad = 1;
		return -1;
	}
	memcpy(to, in->p, n);
	in->p += n;
	return 0;
}

static int
take_bytes(struct wire_in *in, perc_bytes *b)
{
	uint64_t len;

	if (take(in, &len, sizeof(len)) < 0 ||
	    len > (uint64_t)(in->end - in->p)) {
		in->bad = 1;
		return -1;
	}
	*b = bytes_of(in->p, (size_t)len);
	in->p += len;
	return 0;
}

/* A buffer that lends the message's bytes: never grown nor disposed. */
static perc_buf
lent(perc_bytes b)
{
	perc_buf buf = { (char *)b.data, b.len, 0 };

	return buf;
}

static int
take_write(struct wire_in *in, struct write *w)
{
	perc_bytes row, col, value;

	memset(w, 0, sizeof(*w));
	if (take_bytes(in, &row) < 0 || take_bytes(in, &col) < 0 ||
	    take_bytes(in, &value) < 0 || take(in, &w->op, sizeof(int)) < 0 ||
	    take(in, &w->ack, sizeof(int)) < 0)
		return -1;
	w->row = lent(row);
	w->col = lent(col);
	w->value = lent(value);
	return 0;
}

int
wire_vunpack(struct wire_in *in, const char *layout, va_list ap)
{
	perc_bytes *b, lock;
	const perc_bytes **ob;
	struct lock_fate *f;
	const struct lock_fate **of;
	struct lock_rec *l;
	int present;

	for (; *layout != '\0'; layout++) {
		switch (*layout) {
		case 'b':
			if (take_bytes(in, va_arg(ap, perc_bytes *)) < 0)
				return -1;
			break;
		case 'o':
			b = va_arg(ap, perc_bytes *);
			ob = va_arg(ap, const perc_bytes **);
			if (take(in, &present, sizeof(present)) < 0 ||
			    (present && take_bytes(in, b) < 0))
				return -1;
			*ob = present ? b : NULL;
			break;
		case 't':
			if (take(in, va_arg(ap, perc_ts *),
			    sizeof(perc_ts)) < 0)
				return -1;
			break;
		case 'u':
			if (take(in, va_arg(ap, unsigned *),
			    sizeof(unsigned)) < 0)
				return -1;
			break;
		case 'i':
			if (take(in, va_arg(ap, int *), sizeof(int)) < 0)
				return -1;
			break;
		case 'z':
			if (take(in, va_arg(ap, size_t *), sizeof(size_t)) < 0)
				return -1;
			break;
		case 'l':
			l = va_arg(ap, struct lock_rec *);
			if (take_bytes(in, &lock) < 0)
				return -1;
			if (lock.len > 0 &&
			    codec_lock_decode(l, lock.data, lock.len) < 0) {
				in->bad = 1;
				return -1;
			}
			break;
		case 'f':
			f = va_arg(ap, struct lock_fate *);
			of = va_arg(ap, const struct lock_fate **);
			if (take(in, &present, sizeof(present)) < 0 ||
			    (present && take(in, f, sizeof(*f)) < 0))
				return -1;
			*of = present ? f : NULL;
			break;
		case 'w':
			if (take_write(in, va_arg(ap, struct write *)) < 0)
				return -1;
			break;
		default:
			in->bad = 1;
			return -1;
		}
	}
	return 0;
}

int
wire_unpack(struct wire_in *in, const char *layout, ...)
{
	va_list ap;
	int rc;

	va_start(ap, layout);
	rc = wire_vunpack(in, layout, ap);
	va_end(ap);
	return rc;
}

int
wire_u8(struct wire_in *in, int *out)
{
	unsigned char c;

	if (take(in, &c, 1) < 0)
		return -1;
	*out = c;
	return 0;
}

int
wire_frame(const char *p, size_t len, struct wire_in *frame, size_t *used)
{
	uint32_t n;

	if (len < sizeof(n))
		return 1;
	memcpy(&n, p, sizeof(n));
	if (n > WIRE_MAX_FRAME)
		return -1;
	if (len - sizeof(n) < n)
		return 1;
	frame->p = p + sizeof(n);
	frame->end = frame->p + n;
	frame->bad = 0;
	*used = sizeof(n) + n;
	return 0;
}

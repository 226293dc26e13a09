/* lib/codec.c - byte layouts of keys and records in the store */
#include <pthread.h>
#include <string.h>

#include "buf.h"
#include "codec.h"
#include "error.h"

/*
 * A byte string is written so that memcmp order of the encodings is
 * the order of the strings and every encoding ends unambiguously:
 * 0x00 becomes 0x00 0xff and the string ends with 0x00 0x01.  A prefix
 * of a string therefore encodes to a prefix of its encoding, once the
 * terminator is left off.
 */
static int
put_string(perc_buf *out, perc_bytes s, int terminate)
{
	const unsigned char *p = s.data, *end = p + s.len, *nul;
	unsigned char *o;
	int rc;

	/* Every byte doubled at most, and the terminator: one grow. */
	if (s.len > SIZE_MAX / 2 - 2)
		return error_set(PERC_EIO, "value too large for memory");
	if ((rc = buf_grow(out, 2 * s.len + 2)) < 0)
		return rc;
	o = (unsigned char *)out->data + out->len;
	for (; p < end && (nul = memchr(p, 0, (size_t)(end - p))) != NULL;
	    p = nul + 1) {
		memcpy(o, p, (size_t)(nul - p) + 1);
		o += nul - p + 1;
		*o++ = 0xff;
	}
	if (p < end) {
		memcpy(o, p, (size_t)(end - p));
		o += end - p;
	}
	if (terminate) {
		*o++ = 0;
		*o++ = 1;
	}
	out->len = (size_t)(o - (unsigned char *)out->data);
	out->data[out->len] = '\0';
	return 0;
}

/* Read one string from *pp (before end) into out; -1 if malformed. */
static int
get_string(perc_buf *out, const unsigned char **pp, const unsigned char *end)
{
	const unsigned char *p = *pp, *start = p;

	buf_reset(out);
	for (; p < end; p++) {
		if (*p != 0)
			continue;
		if (p + 1 >= end)
			return -1;
		if (buf_add(out, start, (size_t)(p - start)) < 0)
			return -1;
		if (p[1] == 0x01) {
			*pp = p + 2;
			return 0;
		}
		if (p[1] != 0xff || buf_add(out, "", 1) < 0)
			return -1;
		start = ++p + 1;
	}
	return -1;
}

void
codec_put_u32(unsigned char *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

void
codec_put_u64(unsigned char *p, uint64_t v)
{
	codec_put_u32(p, v >> 32);
	codec_put_u32(p + 4, (uint32_t)v);
}

uint32_t
codec_get_u32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

uint64_t
codec_get_u64(const unsigned char *p)
{
	return (uint64_t)codec_get_u32(p) << 32 | codec_get_u32(p + 4);
}

/*
 * The key of one Percolator cell: region, row, column, kind, then the
 * timestamp inverted so that the newest version sorts first.
 */
int
codec_key(perc_buf *out, int region, perc_bytes row, perc_bytes col,
    int kind, perc_ts ts)
{
	unsigned char *tail;
	int rc;

	if ((rc = codec_cell_prefix(out, region, row, col)) < 0 ||
	    (rc = buf_grow(out, 9)) < 0)
		return rc;
	tail = (unsigned char *)out->data + out->len;
	tail[0] = (unsigned char)kind;
	codec_put_u64(tail + 1, ~ts);
	out->len += 9;
	out->data[out->len] = '\0';
	return 0;
}

/* Every key of the cell (row, col) in region starts with this. */
int
codec_cell_prefix(perc_buf *out, int region, perc_bytes row, perc_bytes col)
{
	int rc;

	buf_reset(out);
	if ((rc = buf_grow(out, 1)) < 0)
		return rc;
	out->data[out->len++] = (char)region;
	if ((rc = put_string(out, row, 1)) == 0)
		rc = put_string(out, col, 1);
	return rc;
}

/* Every key of a row that starts with row_prefix starts with this. */
int
codec_row_prefix(perc_buf *out, int region, perc_bytes row_prefix)
{
	unsigned char r = (unsigned char)region;
	int rc;

	buf_reset(out);
	if ((rc = buf_add(out, &r, 1)) == 0)
		rc = put_string(out, row_prefix, 0);
	return rc;
}

/*
 * Split a store key into out (whose buffers are reused across calls:
 * start it zeroed, end it with codec_key_dispose).  A key that does not
 * parse is corruption: PERC_EIO.
 */
int
codec_parse_key(struct key *out, const void *k, size_t len)
{
	const unsigned char *p = k, *end = p + len;

	if (len < 1 + 2 + 2 + 9 ||
	    (p[0] != REGION_CELL && p[0] != REGION_NOTIFY))
		goto bad;
	out->region = *p++;
	if (get_string(&out->row, &p, end) < 0 ||
	    get_string(&out->col, &p, end) < 0 || end - p != 9)
		goto bad;
	out->kind = p[0];
	if (out->kind < KIND_LOCK || out->kind > KIND_PENDING)
		goto bad;
	out->ts = ~codec_get_u64(p + 1);
	return 0;
bad:
	return error_set(PERC_EIO, "the store holds a malformed key; the "
	    "data directory is damaged");
}

/* The change log's key of a put or delete of (row, col) at commit_ts. */
int
codec_log_key(perc_buf *out, perc_ts commit_ts, perc_bytes row,
    perc_bytes col)
{
	unsigned char head[9];
	int rc;

	if ((rc = codec_cell_prefix(out, REGION_CELL, row, col)) < 0)
		return rc;
	head[0] = REGION_LOG;
	codec_put_u64(head + 1, commit_ts);
	if ((rc = buf_grow(out, sizeof(head))) < 0)
		return rc;
	memmove(out->data + sizeof(head), out->data, out->len);
	memcpy(out->data, head, sizeof(head));
	out->len += sizeof(head);
	out->data[out->len] = '\0';
	return 0;
}

/* Split a change log key: its row and column, and out->ts its commit_ts
   (out->kind KIND_WRITE, out->region REGION_LOG). */
int
codec_parse_log_key(struct key *out, const void *k, size_t len)
{
	const unsigned char *p = k, *end = p + len;

	if (len < 1 + 8 + 1 + 2 + 2 || p[0] != REGION_LOG || p[9] !=
	    REGION_CELL)
		goto bad;
	out->ts = codec_get_u64(p + 1);
	p += 10;
	if (get_string(&out->row, &p, end) < 0 ||
	    get_string(&out->col, &p, end) < 0 || p != end)
		goto bad;
	out->region = REGION_LOG;
	out->kind = KIND_WRITE;
	return 0;
bad:
	return error_set(PERC_EIO, "the store holds a malformed change log "
	    "key; the data directory is damaged");
}

void
codec_key_dispose(struct key *k)
{
	perc_buf_dispose(&k->row);
	perc_buf_dispose(&k->col);
}

/*
 * Lock record: version, op, start_ts, wall_ms, ttl_ms, pid, then host,
 * primary row and primary column, each with a 32-bit length, then, in
 * a large transaction's, readers' mark, min_commit_ts (see push in
 * store.h), 0 until a reader pushes.
 */
#define LOCK_VERSION 1
#define LOCK_FIXED   (1 + 1 + 8 + 8 + 4 + 4)

/*
 * Head record: version 2, flags, then the newest write (op, start_ts,
 * commit_ts) with HEAD_NEWEST, and after it written_at with
 * HEAD_WRITTEN, its value (a 32-bit length, the bytes) with
 * HEAD_NEWEST_VALUE, the lock's value likewise with HEAD_LOCK_VALUE,
 * and last, with HEAD_LOCKED, a whole lock record.
 */
#define HEAD_VERSION       2
#define HEAD_LOCKED        0x1
#define HEAD_NEWEST        0x2
#define HEAD_NEWEST_VALUE  0x4
#define HEAD_LOCK_VALUE    0x8
#define HEAD_WRITTEN       0x10

int
codec_lock_encode(perc_buf *out, const struct lock_rec *lock)
{
	unsigned char fixed[LOCK_FIXED], len[4];
	const perc_buf *var[3];
	int i, rc;

	var[0] = &lock->host;
	var[1] = &lock->primary_row;
	var[2] = &lock->primary_col;
	fixed[0] = LOCK_VERSION;
	fixed[1] = (unsigned char)lock->op;
	codec_put_u64(fixed + 2, lock->start_ts);
	codec_put_u64(fixed + 10, lock->wall_ms);
	codec_put_u32(fixed + 18, lock->ttl_ms);
	codec_put_u32(fixed + 22, lock->pid);
	buf_reset(out);
	if ((rc = buf_add(out, fixed, sizeof(fixed))) < 0)
		return rc;
	for (i = 0; i < 3; i++) {
		codec_put_u32(len, (uint32_t)var[i]->len);
		if ((rc = buf_add(out, len, 4)) < 0 ||
		    (rc = buf_add(out, var[i]->data, var[i]->len)) < 0)
			return rc;
	}
	/* A large transaction's locks end in the mark. */
	if (lock->large) {
		codec_put_u64(fixed, lock->min_commit_ts);
		return buf_add(out, fixed, 8);
	}
	return 0;
}

static int lock_decode(struct lock_rec *out, const void *v, size_t len);
static int head_parse(struct cell_head *h, const unsigned char **lock,
    const unsigned char *p, size_t len);

/* The lock in a lock record or a head: 0, or PERC_ENOTFOUND when a
   head holds none. */
int
codec_lock_decode(struct lock_rec *out, const void *v, size_t len)
{
	const unsigned char *p = v, *lock;
	int rc;

	if (len == 0 || p[0] != HEAD_VERSION)
		return lock_decode(out, v, len);
	if ((rc = head_parse(NULL, &lock, p, len)) < 0)
		return rc;
	if (lock == NULL)
		return PERC_ENOTFOUND;
	return lock_decode(out, lock, len - (size_t)(lock - p));
}

static int
lock_decode(struct lock_rec *out, const void *v, size_t len)
{
	const unsigned char *p = v, *end = p + len;
	perc_buf *var[3];
	uint32_t n;
	int i;

	var[0] = &out->host;
	var[1] = &out->primary_row;
	var[2] = &out->primary_col;
	if (len < LOCK_FIXED || p[0] != LOCK_VERSION)
		goto bad;
	out->op = p[1];
	if (out->op != OP_PUT && out->op != OP_DELETE && out->op != OP_LOCK &&
	    out->op != OP_ACK)
		goto bad;
	out->start_ts = codec_get_u64(p + 2);
	out->wall_ms = codec_get_u64(p + 10);
	out->ttl_ms = codec_get_u32(p + 18);
	out->pid = codec_get_u32(p + 22);
	p += LOCK_FIXED;
	for (i = 0; i < 3; i++) {
		if (end - p < 4)
			goto bad;
		n = codec_get_u32(p);
		p += 4;
		if ((size_t)(end - p) < n || buf_set(var[i], p, n) < 0)
			goto bad;
		p += n;
	}
	out->large = end - p == 8;
	out->min_commit_ts = out->large ? codec_get_u64(p) : 0;
	if (out->large)
		p += 8;
	if (p != end)
		goto bad;
	return 0;
bad:
	return error_set(PERC_EIO, "the store holds a malformed lock record; "
	    "the data directory is damaged");
}

void
codec_lock_dispose(struct lock_rec *lock)
{
	perc_buf_dispose(&lock->host);
	perc_buf_dispose(&lock->primary_row);
	perc_buf_dispose(&lock->primary_col);
}


static int
add_value(perc_buf *out, const perc_bytes *v)
{
	unsigned char len[4];
	int rc;

	codec_put_u32(len, (uint32_t)v->len);
	if ((rc = buf_add(out, len, 4)) < 0)
		return rc;
	return buf_add(out, v->data, v->len);
}

/*
 * The head whose lock is lock (NULL: none), with head's newest write
 * and lock value.  A head that holds a lock alone is a lock record.
 */
int
codec_head_encode(perc_buf *out, const struct cell_head *head,
    const struct lock_rec *lock)
{
	unsigned char fixed[2 + 25], flags = 0;
	perc_buf enc = PERC_BUF_INIT;
	size_t n = 2;
	int rc;

	if (lock != NULL && head->newest_op == 0 && !head->lock_has_value)
		return codec_lock_encode(out, lock);
	if (head->newest_op != 0) {
		flags |= HEAD_NEWEST;
		fixed[n] = (unsigned char)head->newest_op;
		codec_put_u64(fixed + n + 1, head->newest_start);
		codec_put_u64(fixed + n + 9, head->newest_commit);
		n += 17;
		if (head->newest_has_value)
			flags |= HEAD_NEWEST_VALUE;
		if (head->written_at != 0) {
			flags |= HEAD_WRITTEN;
			codec_put_u64(fixed + n, head->written_at);
			n += 8;
		}
	}
	if (lock != NULL)
		flags |= HEAD_LOCKED;
	if (lock != NULL && head->lock_has_value)
		flags |= HEAD_LOCK_VALUE;
	fixed[0] = HEAD_VERSION;
	fixed[1] = flags;
	if ((rc = buf_set(out, fixed, n)) < 0 ||
	    ((flags & HEAD_NEWEST_VALUE) &&
	    (rc = add_value(out, &head->newest_value)) < 0) ||
	    ((flags & HEAD_LOCK_VALUE) &&
	    (rc = add_value(out, &head->lock_value)) < 0))
		return rc;
	if (lock != NULL && (rc = codec_lock_encode(&enc, lock)) == 0)
		rc = buf_add(out, enc.data, enc.len);
	perc_buf_dispose(&enc);
	return rc;
}

static int
get_value(perc_bytes *out, const unsigned char **p, const unsigned char *end)
{
	uint32_t n;

	if (end - *p < 4)
		return -1;
	n = codec_get_u32(*p);
	*p += 4;
	if ((size_t)(end - *p) < n || n > HEAD_VALUE_MAX)
		return -1;
	*out = bytes_of(*p, n);
	*p += n;
	return 0;
}

/* Parse a head into h (unless NULL); *lock: where its lock record
   starts, or NULL. */
static int
head_parse(struct cell_head *h, const unsigned char **lock,
    const unsigned char *p, size_t len)
{
	const unsigned char *end = p + len;
	struct cell_head skip;
	unsigned flags;

	if (h == NULL)
		h = &skip;
	if (len < 2 || p[0] != HEAD_VERSION || (p[1] & ~0x1fu) != 0)
		goto bad;
	flags = p[1];
	/* Never written: a head with nothing goes, a lock alone is a lock
	   record. */
	if (flags == 0 || flags == HEAD_LOCKED)
		goto bad;
	p += 2;
	h->newest_op = 0;
	if (flags & HEAD_NEWEST) {
		if (end - p < 17 || (p[0] != OP_PUT && p[0] != OP_DELETE))
			goto bad;
		h->newest_op = p[0];
		h->newest_start = codec_get_u64(p + 1);
		h->newest_commit = codec_get_u64(p + 9);
		p += 17;
	}
	h->written_at = 0;
	if (flags & HEAD_WRITTEN) {
		if (!(flags & HEAD_NEWEST) || end - p < 8)
			goto bad;
		h->written_at = codec_get_u64(p);
		p += 8;
		/* Never below the newest write it covers, never 0. */
		if (h->written_at < h->newest_commit || h->written_at == 0)
			goto bad;
	}
	h->newest_has_value = (flags & HEAD_NEWEST_VALUE) != 0;
	h->lock_has_value = (flags & HEAD_LOCK_VALUE) != 0;
	h->locked = (flags & HEAD_LOCKED) != 0;
	if ((h->newest_has_value && (h->newest_op != OP_PUT ||
	    get_value(&h->newest_value, &p, end) < 0)) ||
	    (h->lock_has_value && (!h->locked ||
	    get_value(&h->lock_value, &p, end) < 0)))
		goto bad;
	if (h->locked ? p == end : p != end)
		goto bad;
	*lock = h->locked ? p : NULL;
	return 0;
bad:
	return error_set(PERC_EIO, "the store holds a malformed cell head; "
	    "the data directory is damaged");
}

/*
 * A head, or a lock record (which is a head holding the lock alone):
 * its lock into *lock, when locked.
 */
int
codec_head_decode(struct cell_head *out, struct lock_rec *lock,
    const void *v, size_t len)
{
	const unsigned char *p = v, *at;
	int rc;

	if (len > 0 && p[0] != HEAD_VERSION) {
		out->newest_op = 0;
		out->written_at = 0;
		out->newest_has_value = out->lock_has_value = 0;
		out->locked = 1;
		return lock_decode(lock, v, len);
	}
	if ((rc = head_parse(out, &at, p, len)) < 0 || at == NULL)
		return rc;
	return lock_decode(lock, at, len - (size_t)(at - p));
}

/* Write record: op, then the start_ts of the transaction it commits. */
int
codec_write_encode(perc_buf *out, const struct write_rec *w)
{
	unsigned char v[9];

	v[0] = (unsigned char)w->op;
	codec_put_u64(v + 1, w->start_ts);
	return buf_set(out, v, sizeof(v));
}

int
codec_write_decode(struct write_rec *out, const void *v, size_t len)
{
	const unsigned char *p = v;

	if (len != 9 || (p[0] != OP_PUT && p[0] != OP_DELETE &&
	    p[0] != OP_ROLLBACK && p[0] != OP_LOCK && p[0] != OP_ACK))
		return error_set(PERC_EIO, "the store holds a malformed "
		    "write record; the data directory is damaged");
	out->op = p[0];
	out->start_ts = codec_get_u64(p + 1);
	return 0;
}

/* The word show(1) prints for an op. */
const char *
codec_op_name(int op)
{
	switch (op) {
	case OP_PUT:
		return "put";
	case OP_DELETE:
		return "delete";
	case OP_ROLLBACK:
		return "rollback";
	case OP_LOCK:
		return "lock";
	case OP_ACK:
		return "ack";
	}
	return "?";
}

static uint32_t crc_table[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void
crc_init(void)
{
	uint32_t c;
	int i, j;

	for (i = 0; i < 256; i++) {
		c = (uint32_t)i;
		for (j = 0; j < 8; j++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
}

/* CRC-32 (IEEE), for the journal and the oracle files. */
uint32_t
codec_crc32(uint32_t crc, const void *data, size_t len)
{
	const uint32_t *table = crc_table;
	const unsigned char *p = data;

	pthread_once(&crc_once, crc_init);
	crc = ~crc;
	while (len--)
		crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

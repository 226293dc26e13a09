/* tests/unit/test_codec.c - keys round-trip and sort like their parts */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "codec.h"
#include "escape.h"
#include "unit.h"

static const struct { const char *s; size_t len; } strings[] = {
	{ "", 0 }, { "\0", 1 }, { "\0\0", 2 }, { "\0\1", 2 }, { "\0\xff", 2 },
	{ "\1", 1 }, { "a", 1 }, { "a\0", 2 }, { "a\0b", 3 }, { "a\1", 2 },
	{ "ab", 2 }, { "b", 1 }, { "\xff", 1 }, { "\xff\0", 2 },
	{ "\xff\xff", 2 },
};
#define NSTRINGS (sizeof(strings) / sizeof(strings[0]))

static perc_bytes
str(size_t i)
{
	return bytes_of(strings[i].s, strings[i].len);
}

static int
key_cmp(const perc_buf *a, const perc_buf *b)
{
	return bytes_cmp(buf_bytes(a), buf_bytes(b));
}

static int
sign(int v)
{
	return (v > 0) - (v < 0);
}

static void
test_roundtrip(const char *tmp)
{
	perc_buf enc = PERC_BUF_INIT;
	struct key k;
	size_t r, c;

	(void)tmp;
	memset(&k, 0, sizeof(k));
	for (r = 0; r < NSTRINGS; r++)
		for (c = 0; c < NSTRINGS; c++) {
			CHECK(codec_key(&enc, REGION_CELL, str(r), str(c),
			    KIND_DATA, 0x0123456789abcdefULL) == 0);
			CHECK(codec_parse_key(&k, enc.data, enc.len) == 0);
			CHECK(bytes_eq(buf_bytes(&k.row), str(r)));
			CHECK(bytes_eq(buf_bytes(&k.col), str(c)));
			CHECK(k.kind == KIND_DATA && k.region == REGION_CELL);
			CHECK(k.ts == 0x0123456789abcdefULL);
		}
	codec_key_dispose(&k);
	perc_buf_dispose(&enc);
}

/* (row, col) order is byte order of row, then column; ts newest first. */
static void
test_order(const char *tmp)
{
	perc_buf a = PERC_BUF_INIT, b = PERC_BUF_INIT;
	size_t r1, r2, c1, c2;
	int want;

	(void)tmp;
	for (r1 = 0; r1 < NSTRINGS; r1++)
	for (r2 = 0; r2 < NSTRINGS; r2++)
	for (c1 = 0; c1 < NSTRINGS; c1 += 3)
	for (c2 = 0; c2 < NSTRINGS; c2 += 2) {
		want = bytes_cmp(str(r1), str(r2));
		if (want == 0)
			want = bytes_cmp(str(c1), str(c2));
		codec_key(&a, REGION_CELL, str(r1), str(c1), KIND_WRITE, 7);
		codec_key(&b, REGION_CELL, str(r2), str(c2), KIND_WRITE, 7);
		CHECK(sign(key_cmp(&a, &b)) == sign(want));
	}
	codec_key(&a, REGION_CELL, str(6), str(6), KIND_WRITE, 100);
	codec_key(&b, REGION_CELL, str(6), str(6), KIND_WRITE, 99);
	CHECK(key_cmp(&a, &b) < 0);
	codec_key(&b, REGION_CELL, str(6), str(6), KIND_LOCK, 1);
	CHECK(key_cmp(&b, &a) < 0);     /* the lock comes before writes */
	codec_key(&b, REGION_NOTIFY, str(0), str(0), KIND_NOTIFY, 1);
	CHECK(key_cmp(&a, &b) < 0);     /* notify cells after all cells */
	perc_buf_dispose(&a);
	perc_buf_dispose(&b);
}

/* A row prefix encodes to a prefix of the keys of every such row. */
static void
test_row_prefix(const char *tmp)
{
	perc_buf p = PERC_BUF_INIT, k = PERC_BUF_INIT;
	size_t r, q;
	int is_prefix, want;

	(void)tmp;
	for (q = 0; q < NSTRINGS; q++)
		for (r = 0; r < NSTRINGS; r++) {
			codec_row_prefix(&p, REGION_CELL, str(q));
			codec_key(&k, REGION_CELL, str(r), str(0), KIND_LOCK, 1);
			is_prefix = k.len >= p.len &&
			    memcmp(k.data, p.data, p.len) == 0;
			want = strings[r].len >= strings[q].len &&
			    memcmp(strings[r].s, strings[q].s,
			    strings[q].len) == 0;
			CHECK(is_prefix == want);
		}
	perc_buf_dispose(&p);
	perc_buf_dispose(&k);
}

static void
test_records(const char *tmp)
{
	struct lock_rec l, m;
	struct write_rec w = { OP_ROLLBACK, 42 }, x;
	perc_buf enc = PERC_BUF_INIT;

	(void)tmp;
	memset(&l, 0, sizeof(l));
	memset(&m, 0, sizeof(m));
	l.op = OP_DELETE;
	l.start_ts = 9;
	l.wall_ms = 123456789;
	l.ttl_ms = 30000;
	l.pid = 4242;
	buf_set(&l.host, "host", 4);
	buf_set(&l.primary_row, "r\0w", 3);
	buf_set(&l.primary_col, "", 0);
	CHECK(codec_lock_encode(&enc, &l) == 0);
	CHECK(codec_lock_decode(&m, enc.data, enc.len) == 0);
	CHECK(m.op == OP_DELETE && m.start_ts == 9 && m.pid == 4242);
	CHECK(m.wall_ms == 123456789 && m.ttl_ms == 30000);
	CHECK(bytes_eq(buf_bytes(&m.primary_row), bytes_of("r\0w", 3)));
	CHECK(m.primary_col.len == 0 && m.host.len == 4);
	CHECK(!m.large && m.min_commit_ts == 0);
	CHECK(codec_lock_decode(&m, enc.data, enc.len - 1) == PERC_EIO);
	/* A large transaction's lock carries readers' mark, 0 at first. */
	l.large = 1;
	CHECK(codec_lock_encode(&enc, &l) == 0);
	CHECK(codec_lock_decode(&m, enc.data, enc.len) == 0);
	CHECK(m.large && m.min_commit_ts == 0 && m.start_ts == 9);
	l.min_commit_ts = 77;
	CHECK(codec_lock_encode(&enc, &l) == 0);
	CHECK(codec_lock_decode(&m, enc.data, enc.len) == 0);
	CHECK(m.large && m.min_commit_ts == 77);
	CHECK(bytes_eq(buf_bytes(&m.primary_row), bytes_of("r\0w", 3)));
	CHECK(codec_lock_decode(&m, enc.data, enc.len - 1) == PERC_EIO);
	enc.data[0] = 9;
	CHECK(codec_lock_decode(&m, enc.data, enc.len) == PERC_EIO);
	CHECK(codec_write_encode(&enc, &w) == 0);
	CHECK(codec_write_decode(&x, enc.data, enc.len) == 0);
	CHECK(x.op == OP_ROLLBACK && x.start_ts == 42);
	CHECK(codec_write_decode(&x, enc.data, 3) == PERC_EIO);
	codec_lock_dispose(&l);
	codec_lock_dispose(&m);
	perc_buf_dispose(&enc);
}

static void
test_heads(const char *tmp)
{
	struct cell_head h, g;
	struct lock_rec l, m;
	perc_buf enc = PERC_BUF_INIT;
	size_t i;

	(void)tmp;
	memset(&h, 0, sizeof(h));
	memset(&g, 0, sizeof(g));
	memset(&l, 0, sizeof(l));
	memset(&m, 0, sizeof(m));
	l.op = OP_PUT;
	l.start_ts = 30;
	buf_set(&l.host, "h", 1);
	buf_set(&l.primary_row, "p", 1);
	/* A lock alone is written as the lock record it always was. */
	CHECK(codec_head_encode(&enc, &h, &l) == 0);
	CHECK(enc.data[0] == 1);
	CHECK(codec_head_decode(&g, &m, enc.data, enc.len) == 0);
	CHECK(g.locked && g.newest_op == 0 && m.start_ts == 30);
	/* The newest write and its value, and the lock's value. */
	h.newest_op = OP_PUT;
	h.newest_start = 10;
	h.newest_commit = 20;
	h.newest_has_value = 1;
	h.newest_value = bytes_of("old\0", 4);
	h.lock_has_value = 1;
	h.lock_value = bytes_of("new", 3);
	CHECK(codec_head_encode(&enc, &h, &l) == 0);
	m.start_ts = 0;
	CHECK(codec_head_decode(&g, &m, enc.data, enc.len) == 0);
	CHECK(g.locked && m.start_ts == 30 && m.op == OP_PUT);
	CHECK(g.newest_op == OP_PUT && g.newest_start == 10 &&
	    g.newest_commit == 20 && g.newest_has_value);
	CHECK(bytes_eq(g.newest_value, bytes_of("old\0", 4)));
	CHECK(g.lock_has_value &&
	    bytes_eq(g.lock_value, bytes_of("new", 3)));
	CHECK(codec_lock_decode(&m, enc.data, enc.len) == 0);
	CHECK(m.start_ts == 30);
	CHECK(g.written_at == 0);
	/* Every cut of it is damage. */
	for (i = 0; i < enc.len; i++)
		CHECK(codec_head_decode(&g, &m, enc.data, i) == PERC_EIO);
	/* The newest write record of any op, never below the newest write. */
	h.written_at = 25;
	CHECK(codec_head_encode(&enc, &h, &l) == 0);
	CHECK(codec_head_decode(&g, &m, enc.data, enc.len) == 0);
	CHECK(g.written_at == 25 && g.newest_commit == 20 && g.locked);
	CHECK(bytes_eq(g.newest_value, bytes_of("old\0", 4)));
	h.written_at = 19;
	CHECK(codec_head_encode(&enc, &h, &l) == 0);
	CHECK(codec_head_decode(&g, &m, enc.data, enc.len) == PERC_EIO);
	h.written_at = 0;
	/* Without a lock: the newest write alone, and no lock in it. */
	h.newest_op = OP_DELETE;
	h.newest_has_value = 0;
	CHECK(codec_head_encode(&enc, &h, NULL) == 0);
	CHECK(codec_head_decode(&g, &m, enc.data, enc.len) == 0);
	CHECK(!g.locked && !g.lock_has_value && g.newest_op == OP_DELETE &&
	    g.newest_commit == 20 && !g.newest_has_value);
	CHECK(codec_lock_decode(&m, enc.data, enc.len) == PERC_ENOTFOUND);
	/* A delete with a value, or flags unknown, are damage. */
	enc.data[1] |= 0x4;
	CHECK(codec_head_decode(&g, &m, enc.data, enc.len) == PERC_EIO);
	enc.data[1] = 0x40;
	CHECK(codec_head_decode(&g, &m, enc.data, enc.len) == PERC_EIO);
	/* Nor are a head of nothing, or of a lock alone, ever written. */
	enc.data[1] = 0;
	CHECK(codec_head_decode(&g, &m, enc.data, 2) == PERC_EIO);
	enc.data[1] = 0x1;
	CHECK(codec_head_decode(&g, &m, enc.data, enc.len) == PERC_EIO);
	codec_lock_dispose(&l);
	codec_lock_dispose(&m);
	perc_buf_dispose(&enc);
}

static void
test_escape(const char *tmp)
{
	perc_buf e = PERC_BUF_INIT, u = PERC_BUF_INIT;
	unsigned char all[256];
	int i;

	(void)tmp;
	for (i = 0; i < 256; i++)
		all[i] = (unsigned char)i;
	CHECK(escape_field(&e, bytes_of(all, 256)) == 0);
	CHECK(memchr(e.data, '\t', e.len) == NULL);
	CHECK(memchr(e.data, '\n', e.len) == NULL);
	CHECK(unescape_field(&u, e.data, e.len) == 0);
	CHECK(bytes_eq(buf_bytes(&u), bytes_of(all, 256)));
	buf_reset(&e);
	escape_field(&e, bytes_of("a\tb\\\n\x80", 6));
	CHECK(strcmp(e.data, "a\\tb\\\\\\n\\x80") == 0);
	CHECK(unescape_field(&u, "\\q", 2) == PERC_EUSAGE);
	CHECK(unescape_field(&u, "\\x4", 3) == PERC_EUSAGE);
	CHECK(unescape_field(&u, "\\", 1) == PERC_EUSAGE);
	perc_buf_dispose(&e);
	perc_buf_dispose(&u);
}

static void
test_bad_keys(const char *tmp)
{
	struct key k;
	perc_buf enc = PERC_BUF_INIT;

	(void)tmp;
	memset(&k, 0, sizeof(k));
	CHECK(codec_parse_key(&k, "", 0) == PERC_EIO);
	CHECK(codec_parse_key(&k, "c\0\1\0\1\1", 6) == PERC_EIO);
	codec_key(&enc, REGION_CELL, str(8), str(8), KIND_LOCK, 5);
	CHECK(codec_parse_key(&k, enc.data, enc.len - 1) == PERC_EIO);
	enc.data[0] = 'x';
	CHECK(codec_parse_key(&k, enc.data, enc.len) == PERC_EIO);
	codec_key_dispose(&k);
	perc_buf_dispose(&enc);
}

const struct unit_test codec_tests[] = {
	{ "codec: keys round-trip, empty and NUL/0xff bytes too",
	    test_roundtrip },
	{ "codec: keys sort by row, column, kind, newest first", test_order },
	{ "codec: a row prefix is a prefix of its rows' keys", test_row_prefix },
	{ "codec: lock and write records round-trip, damage is caught",
	    test_records },
	{ "codec: cell heads round-trip with and without a lock",
	    test_heads },
	{ "codec: TSV escaping round-trips all 256 bytes", test_escape },
	{ "codec: malformed keys are corruption", test_bad_keys },
	{ NULL, NULL }
};

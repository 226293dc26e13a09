/*
 * lib/leveldb/log.c - the change log of the LevelDB store (perc log),
 * read in commit order and dropped below gc's safe point.  Its entries
 * are made as commits write their cells (log_entry.c).
 */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "codec.h"
#include "error.h"
#include "leveldb.h"

/* The cells of the transaction being read, each with its row and
   column in the arena. */
struct log_cell {
	size_t      off;        /* of its row, then its column */
	const char *p;          /* the same, once the arena is whole */
	uint32_t    rlen, clen;
	int         op;
	perc_ts     start_ts;
};

struct log_txn {
	perc_ts          commit_ts;
	struct log_cell *cell;
	size_t           n, cap;
	perc_buf         arena;
};

static int
log_malformed(void)
{
	return error_set(PERC_EIO, "the store holds a malformed change "
	    "log entry; the data directory is damaged");
}

static int
log_wanted(const struct store_log *lg, perc_bytes row, perc_bytes col)
{
	if (row.len < lg->prefix.len || (lg->prefix.len > 0 &&
	    memcmp(row.data, lg->prefix.data, lg->prefix.len) != 0))
		return 0;
	return lg->column == NULL || bytes_eq(col, *lg->column);
}

/* One cell of an entry: into t if the reader wants it. */
static int
txn_add(struct log_txn *t, const struct store_log *lg, perc_bytes row,
    perc_bytes col, int op, perc_ts start_ts)
{
	struct log_cell *c;
	size_t cap;
	int rc;

	if (!ldb_log_changes(op))
		return log_malformed();
	if (!log_wanted(lg, row, col))
		return 0;
	if (t->n == t->cap) {
		cap = t->cap ? t->cap * 2 : 64;
		if ((c = realloc(t->cell, cap * sizeof(*c))) == NULL)
			return error_set(PERC_EIO, "out of memory");
		t->cell = c;
		t->cap = cap;
	}
	c = &t->cell[t->n];
	c->off = t->arena.len;
	c->rlen = (uint32_t)row.len;
	c->clen = (uint32_t)col.len;
	c->op = op;
	c->start_ts = start_ts;
	if ((rc = buf_addb(&t->arena, row)) < 0 ||
	    (rc = buf_addb(&t->arena, col)) < 0)
		return rc;
	t->n++;
	return 0;
}

/*
 * Does the entry written apart (LOG_OP_APART) whose first cell is k's
 * stand for a commit: is that cell's write record at k's commit_ts
 * there, of start_ts?  One that is not never will be: its writer died
 * before its commit's batch went in (it held the store from the one
 * to the other, so no reader came between), and a commit tried again
 * takes another commit_ts.  1, 0, or a failure.
 */
static int
apart_committed(struct ldb_store *s, const struct key *k, perc_ts start_ts)
{
	perc_buf key = PERC_BUF_INIT, value = PERC_BUF_INIT;
	struct write_rec wr;
	int rc;

	if ((rc = codec_key(&key, REGION_CELL, buf_bytes(&k->row),
	    buf_bytes(&k->col), KIND_WRITE, k->ts)) == 0 &&
	    (rc = ldb_get(&value, s, buf_bytes(&key))) == 0 &&
	    (rc = codec_write_decode(&wr, value.data, value.len)) == 0)
		rc = wr.start_ts == start_ts;
	perc_buf_dispose(&key);
	perc_buf_dispose(&value);
	return rc == PERC_ENOTFOUND ? 0 : rc;
}

/* The cells of the entry k, v into t; *cells counts them all. */
static int
txn_gather(struct ldb_store *s, struct log_txn *t,
    const struct store_log *lg, const struct key *k, const unsigned char *v,
    size_t vlen, size_t *cells)
{
	const unsigned char *end = v + vlen;
	perc_ts start_ts;
	uint32_t rlen, clen;
	int rc, op;

	if (vlen < LOG_HEAD_LEN)
		return log_malformed();
	start_ts = codec_get_u64(v + 1);
	if ((v[0] & LOG_OP_APART) &&
	    (rc = apart_committed(s, k, start_ts)) <= 0)
		return rc;
	if ((rc = txn_add(t, lg, buf_bytes(&k->row), buf_bytes(&k->col),
	    v[0] & ~LOG_OP_APART, start_ts)) < 0)
		return rc;
	(*cells)++;
	for (v += LOG_HEAD_LEN; v < end; v += LOG_CELL_LEN + rlen + clen) {
		if ((size_t)(end - v) < LOG_CELL_LEN)
			return log_malformed();
		op = v[0];
		rlen = codec_get_u32(v + 1);
		clen = codec_get_u32(v + 5);
		if ((size_t)(end - v) - LOG_CELL_LEN < (size_t)rlen + clen)
			return log_malformed();
		if ((rc = txn_add(t, lg, bytes_of(v + LOG_CELL_LEN, rlen),
		    bytes_of(v + LOG_CELL_LEN + rlen, clen), op,
		    start_ts)) < 0)
			return rc;
		(*cells)++;
	}
	return 0;
}

static int
cell_cmp(const void *a, const void *b)
{
	const struct log_cell *x = a, *y = b;
	int c = bytes_cmp(bytes_of(x->p, x->rlen), bytes_of(y->p, y->rlen));

	return c ? c : bytes_cmp(bytes_of(x->p + x->rlen, x->clen),
	    bytes_of(y->p + y->rlen, y->clen));
}

/* Put t's cells in order of row, then column, as SPEC gives them: the
   entries of a transaction, each in its batch's order, may interleave
   (its primary is committed alone, before the others). */
static void
txn_sort(struct log_txn *t)
{
	size_t i;
	int sorted = 1;

	for (i = 0; i < t->n; i++) {
		t->cell[i].p = t->arena.data + t->cell[i].off;
		if (i > 0 && cell_cmp(&t->cell[i - 1], &t->cell[i]) > 0)
			sorted = 0;
	}
	if (!sorted)
		qsort(t->cell, t->n, sizeof(*t->cell), cell_cmp);
}

/* Give one cell of the log, reading a put's data at its start_ts. */
static int
log_give(struct ldb_store *s, struct store_log *lg, perc_ts commit_ts,
    const struct log_cell *c, perc_buf *key, perc_buf *value)
{
	perc_bytes row = bytes_of(c->p, c->rlen);
	perc_bytes col = bytes_of(c->p + c->rlen, c->clen);
	int rc;

	buf_reset(value);
	if (c->op == OP_PUT) {
		if ((rc = codec_key(key, REGION_CELL, row, col, KIND_DATA,
		    c->start_ts)) < 0)
			return rc;
		if ((rc = ldb_get(value, s, buf_bytes(key))) == PERC_ENOTFOUND)
			return error_set(PERC_EIO, "a change log entry names "
			    "data the store does not hold; the data "
			    "directory is damaged");
		if (rc < 0)
			return rc;
	}
	return lg->change(lg->arg, commit_ts, row, col, c->op,
	    buf_bytes(value));
}

/* Give the transaction gathered in t, and empty t. */
static int
txn_give(struct ldb_store *s, struct store_log *lg, struct log_txn *t)
{
	perc_buf key = PERC_BUF_INIT, value = PERC_BUF_INIT;
	size_t i;
	int rc = 0;

	txn_sort(t);
	for (i = 0; i < t->n && rc == 0; i++)
		rc = log_give(s, lg, t->commit_ts, &t->cell[i], &key, &value);
	t->n = 0;
	buf_reset(&t->arena);
	perc_buf_dispose(&key);
	perc_buf_dispose(&value);
	return rc;
}

/*
 * store_ops.log_read.  The entries of a transaction (one or more per
 * batch that committed some of its cells) are gathered, then given in
 * order; a read stops only between two transactions.
 */
int
ldb_log_read(struct store *base, struct store_log *lg)
{
	struct ldb_store *s = (struct ldb_store *)base;
	struct kv_iter *it = ldb_iter(s);
	struct log_txn t;
	unsigned char start[9];
	const char *k, *v;
	size_t klen, vlen, n = 0;
	struct key pk;
	int rc = 0;

	memset(&pk, 0, sizeof(pk));
	memset(&t, 0, sizeof(t));
	start[0] = REGION_LOG;
	codec_put_u64(start + 1, lg->from + 1);
	lg->upto = lg->to;
	for (kv_iter_seek(it, (const char *)start, sizeof(start));
	    kv_iter_valid(it); kv_iter_next(it)) {
		k = kv_iter_key(it, &klen);
		if (k[0] != REGION_LOG)
			break;
		if ((rc = codec_parse_log_key(&pk, k, klen)) < 0 ||
		    pk.ts > lg->to)
			break;
		if (pk.ts != t.commit_ts) {
			/* The one gathered is whole. */
			if ((rc = txn_give(s, lg, &t)) != 0)
				break;
			if (n >= lg->max) {
				lg->upto = pk.ts - 1;
				goto out;
			}
			t.commit_ts = pk.ts;
		}
		v = kv_iter_value(it, &vlen);
		if ((rc = txn_gather(s, &t, lg, &pk,
		    (const unsigned char *)v, vlen, &n)) < 0)
			break;
	}
	if (rc == 0 && (rc = ldb_iter_error(it)) == 0)
		rc = txn_give(s, lg, &t);
	lg->upto = lg->to;
	lg->done = 1;
out:
	kv_iter_free(it);
	codec_key_dispose(&pk);
	free(t.cell);
	perc_buf_dispose(&t.arena);
	return rc;
}

/*
 * Drop the change log's entries at or below sp, in the batch that
 * raises the safe point: history below it is gone anyway.
 */
int
ldb_log_trim(struct ldb_store *s, struct kv_batch *b, perc_ts sp)
{
	struct kv_iter *it = ldb_iter(s);
	unsigned char first = REGION_LOG;
	const char *k;
	size_t klen;
	int rc;

	for (kv_iter_seek(it, (const char *)&first, 1); kv_iter_valid(it);
	    kv_iter_next(it)) {
		k = kv_iter_key(it, &klen);
		if (klen < 9 || k[0] != REGION_LOG ||
		    codec_get_u64((const unsigned char *)k + 1) > sp)
			break;
		kv_batch_delete(b, k, klen);
	}
	rc = ldb_iter_error(it);
	kv_iter_free(it);
	return rc;
}

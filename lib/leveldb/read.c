/*
 * lib/leveldb/read.c - reads of one cell of the held LevelDB store:
 * what a snapshot sees of it, decided on a walk over its keys for a
 * read and a scan alike; the point read, its lock, and the commit
 * record of a transaction.
 */
#include <string.h>

#include "buf.h"
#include "cell.h"
#include "codec.h"
#include "error.h"
#include "leveldb.h"

/* Keys a walk steps over before it seeks instead. */
#define WALK_STEPS 16

/*
 * Is the walk on a key of its cell?  Sets the key's kind, timestamp and
 * value (valid until the iterator moves).
 */
static int
walk_on(const struct cell_walk *w, int *kind, perc_ts *ts, perc_bytes *value)
{
	const char *k;
	size_t klen, vlen;

	if (!kv_iter_valid(w->it))
		return 0;
	k = kv_iter_key(w->it, &klen);
	if (klen != w->prefix.len + 9 ||
	    memcmp(k, w->prefix.data, w->prefix.len) != 0)
		return 0;
	*kind = (unsigned char)k[w->prefix.len];
	*ts = ~codec_get_u64((const unsigned char *)k + w->prefix.len + 1);
	value->data = kv_iter_value(w->it, &vlen);
	value->len = vlen;
	return 1;
}

/* Seek to (kind, ts) in the walk's cell, or where it would be. */
int
ldb_walk_seek(struct cell_walk *w, int kind, perc_ts ts)
{
	unsigned char tail[9];
	int rc;

	tail[0] = (unsigned char)kind;
	codec_put_u64(tail + 1, ~ts);
	if ((rc = buf_set(&w->key, w->prefix.data, w->prefix.len)) < 0 ||
	    (rc = buf_add(&w->key, tail, sizeof(tail))) < 0)
		return rc;
	kv_iter_seek(w->it, w->key.data, w->key.len);
	return 0;
}

/*
 * Move the walk to the first key of its cell at or after (kind, ts) in
 * key order: by stepping, from a key of the cell before it, for up to
 * WALK_STEPS keys; else by a seek.  1 when it then stands on a key of
 * kind (its timestamp in *at, its value in *value), 0 when the cell has
 * none there, or a failure.
 */
static int
walk_to(struct cell_walk *w, int kind, perc_ts ts, perc_ts *at,
    perc_bytes *value)
{
	int k, n, rc;

	for (n = 0; walk_on(w, &k, at, value); n++) {
		if (k > kind || (k == kind && *at <= ts))
			return k == kind;
		if (n == WALK_STEPS)
			break;
		kv_iter_next(w->it);
		if (!walk_on(w, &k, at, value))
			return 0;       /* stepped out of the cell */
	}
	if ((rc = ldb_walk_seek(w, kind, ts)) < 0)
		return rc;
	return walk_on(w, &k, at, value) && k == kind;
}

/* Step to the next key of kind in the cell: 1, or 0 past them. */
static int
walk_next(struct cell_walk *w, int kind, perc_ts *at, perc_bytes *value)
{
	int k;

	kv_iter_next(w->it);
	return walk_on(w, &k, at, value) && k == kind;
}

/*
 * Leave the cell: step to the first key after it, or after WALK_STEPS
 * keys seek there (past its prefix, then the last kind).
 */
int
ldb_walk_past(struct cell_walk *w)
{
	perc_bytes v;
	perc_ts ts;
	int k, n;

	for (n = 0; n < WALK_STEPS; n++) {
		if (!walk_on(w, &k, &ts, &v))
			return 0;
		kv_iter_next(w->it);
	}
	if (!walk_on(w, &k, &ts, &v))
		return 0;
	return ldb_walk_seek(w, KIND_FAILURES, 0);
}

/*
 * Decide what snapshot ts sees of the walk's cell: the newest put or
 * delete committed at or before ts, read from the cell's keys as they
 * come, write records newest first, then data newest first.  lock is
 * the cell's lock, or NULL.  A lock with a start below ts may yet
 * commit below ts, so it stops the read with PERC_ELOCKED, unless it
 * is lock-only, which never changes a value, or its transaction's fate
 * is known: then it is read as committed at known->commit_ts, or as
 * absent when that is 0 (see lock_wait_or_clean).  0 with the value in
 * *value, which stays valid until the walk moves; PERC_ENOTFOUND; or
 * PERC_EIO.  Both the point read and the scan decide here.
 */
int
ldb_visible(struct cell_walk *w, perc_bytes *value, perc_ts ts,
    const struct lock_rec *lock, const struct lock_fate *known)
{
	struct write_rec wr;
	perc_ts at, want = 0, dts;
	perc_bytes v;
	int rc;

	if (lock != NULL && lock->start_ts <= ts &&
	    !OP_KEEPS_VALUE(lock->op)) {
		if (known == NULL || known->start_ts != lock->start_ts)
			return PERC_ELOCKED;
		/* No commit can come between a lock and its own. */
		if (known->commit_ts != 0 && known->commit_ts <= ts) {
			if (lock->op != OP_PUT)
				return PERC_ENOTFOUND;
			want = lock->start_ts;
			at = known->commit_ts;
			goto data;
		}
	}
	for (rc = walk_to(w, KIND_WRITE, ts, &at, &v); rc > 0;
	    rc = walk_next(w, KIND_WRITE, &at, &v)) {
		if ((rc = codec_write_decode(&wr, v.data, v.len)) < 0)
			return rc;
		if (wr.op == OP_PUT) {
			want = wr.start_ts;
			goto data;
		}
		if (wr.op == OP_DELETE)
			break;
	}
	if (rc < 0)
		return rc;
	/* A damaged block is stepped over: its error says the read is wrong. */
	return ldb_iter_error(w->it) < 0 ? PERC_EIO : PERC_ENOTFOUND;
data:
	rc = walk_to(w, KIND_DATA, want, &dts, value);
	if (rc < 0)
		return rc;
	if (rc > 0 && dts == want)
		return ldb_iter_error(w->it) < 0 ? PERC_EIO : 0;
	if (ldb_iter_error(w->it) < 0)
		return PERC_EIO;
	return error_set(PERC_EIO, "the value of row '%s' column '%s' "
	    "committed at %llu is missing; the data directory is damaged",
	    error_quote(w->row), error_quote(w->col), (unsigned long long)at);
}

void
ldb_walk_dispose(struct cell_walk *w)
{
	perc_buf_dispose(&w->key);
}

/*
 * Read at ts from the cell's head, when it decides: it knows the
 * newest write, that write is at or below ts, and no lock (lock, or
 * NULL) may commit below ts.  0 or PERC_ENOTFOUND, the read's answer;
 * 1 when the write records must decide.
 */
static int
read_head(perc_buf *out, struct ldb_store *s, struct cell_head *head,
    const struct lock_rec *lock, perc_ts ts, perc_bytes row, perc_bytes col)
{
	int rc;

	if (head->newest_op == 0 || head->newest_commit > ts ||
	    (lock != NULL && lock->start_ts <= ts && !OP_KEEPS_VALUE(lock->op)))
		return 1;
	if (head->newest_op == OP_DELETE)
		return PERC_ENOTFOUND;
	if (head->newest_has_value)
		return buf_set(out, head->newest_value.data,
		    head->newest_value.len);
	/* The head's key is spent: its record lives in s->head_val. */
	if ((rc = codec_key(&s->head_key, REGION_CELL, row, col, KIND_DATA,
	    head->newest_start)) == 0)
		rc = ldb_get(out, s, buf_bytes(&s->head_key));
	return rc == PERC_ENOTFOUND ? 1 : rc;   /* the walk says what is lost */
}

/*
 * Read the value of (row, col) visible at snapshot ts into out: from
 * the cell's head (a point lookup, see ldb_get_head) when it can, else as
 * ldb_visible decides in a walk from the write records at ts.
 */
int
ldb_read(struct store *base, perc_buf *out, perc_bytes row, perc_bytes col,
    perc_ts ts, struct lock_rec *blocker, const struct lock_fate *known)
{
	struct ldb_store *s = (struct ldb_store *)base;
	perc_buf prefix = PERC_BUF_INIT;
	struct cell_head head;
	struct cell_walk w;
	perc_bytes v;
	int rc, locked;

	if (ts < s->safe_point)
		return cell_too_old(s->safe_point);
	memset(&head, 0, sizeof(head));
	rc = ldb_get_head(s, &head, blocker, row, col);
	if (rc < 0 && rc != PERC_ENOTFOUND)
		goto done;
	locked = rc == 0 && head.locked;
	if ((rc = read_head(out, s, &head, locked ? blocker : NULL, ts, row,
	    col)) <= 0)
		goto done;
	if ((rc = codec_cell_prefix(&prefix, REGION_CELL, row, col)) < 0)
		goto done;
	memset(&w, 0, sizeof(w));
	w.row = row;
	w.col = col;
	w.prefix = buf_bytes(&prefix);
	w.it = ldb_reader(s);
	/* Where the reader's last user left it is no place to walk from. */
	if ((rc = ldb_walk_seek(&w, KIND_WRITE, ts)) == 0)
		rc = ldb_visible(&w, &v, ts, locked ? blocker : NULL, known);
	if (rc == 0)
		rc = buf_set(out, v.data, v.len);
	ldb_walk_dispose(&w);
done:
	perc_buf_dispose(&prefix);
	return rc;
}

/* The lock on (row, col), whoever holds it: 0 or PERC_ENOTFOUND. */
int
ldb_get_lock(struct store *base, struct lock_rec *out, perc_bytes row,
    perc_bytes col)
{
	struct cell_head head;
	int rc;

	memset(&head, 0, sizeof(head));
	rc = ldb_get_head((struct ldb_store *)base, &head, out, row, col);
	if (rc == 0 && !head.locked)
		rc = PERC_ENOTFOUND;
	return rc;
}

/*
 * Find the write record of transaction start_ts in (row, col), looking
 * only at records at or above start_ts, since it cannot have committed
 * earlier; newer writes by others may sit above it.  0 with its commit
 * timestamp and op (OP_ROLLBACK for a rollback), or PERC_ENOTFOUND.
 */
int
ldb_find_commit(struct store *base, perc_ts *commit_ts, int *op,
    perc_bytes row, perc_bytes col, perc_ts start_ts)
{
	struct ldb_store *s = (struct ldb_store *)base;
	struct write_rec w;
	struct cell c;
	perc_bytes v;
	perc_ts at;
	int rc;

	if ((rc = ldb_cell_open(&c, s, row, col)) < 0 ||
	    (rc = ldb_cell_seek(&c, KIND_WRITE, UINT64_MAX)) < 0)
		goto done;
	for (rc = PERC_ENOTFOUND; ldb_cell_at(&c, KIND_WRITE, &at, &v) &&
	    at >= start_ts; kv_iter_next(c.it)) {
		if ((rc = codec_write_decode(&w, v.data, v.len)) < 0)
			goto done;
		rc = PERC_ENOTFOUND;
		if (w.start_ts == start_ts) {
			*commit_ts = at;
			*op = w.op;
			rc = 0;
			break;
		}
	}
	if (rc == PERC_ENOTFOUND && ldb_iter_error(c.it) < 0)
		rc = PERC_EIO;
done:
	ldb_cell_close(&c);
	return rc;
}

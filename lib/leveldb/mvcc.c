/*
 * lib/leveldb/mvcc.c - Percolator's operations on one cell of the held
 * LevelDB store.
 *
 * Each function reads and writes the lock, write and data columns of a
 * single cell, and each write is one LevelDB batch: the single-row
 * atomicity the protocol is built on.  The caller holds the store.
 */
#include <string.h>

#include "buf.h"
#include "clock.h"
#include "codec.h"
#include "error.h"
#include "journal.h"
#include "leveldb.h"

/* A cursor over the versions of one kind within one cell. */
struct cell {
	perc_buf            prefix;  /* codec_cell_prefix(row, col) */
	perc_buf            key;     /* scratch */
	struct kv_iter     *it;      /* the store's reader */
	perc_bytes          row, col;
};

static int
cell_open(struct cell *c, struct ldb_store *s, perc_bytes row,
    perc_bytes col)
{
	memset(c, 0, sizeof(*c));
	c->row = row;
	c->col = col;
	c->it = ldb_reader(s);
	return codec_cell_prefix(&c->prefix, REGION_CELL, row, col);
}

static void
cell_close(struct cell *c)
{
	perc_buf_dispose(&c->prefix);
	perc_buf_dispose(&c->key);
}

/* Position on the newest version of kind at or below ts. */
static int
cell_seek(struct cell *c, int kind, perc_ts ts)
{
	int rc;

	if ((rc = codec_key(&c->key, REGION_CELL, c->row, c->col, kind,
	    ts)) < 0)
		return rc;
	kv_iter_seek(c->it, c->key.data, c->key.len);
	return 0;
}

/*
 * Is the cursor on a version of kind in this cell?  Sets *ts and the
 * value; 0 at the end of them, -1 on a valid version.
 */
static int
cell_at(struct cell *c, int kind, perc_ts *ts, perc_bytes *value)
{
	const char *k;
	size_t klen, vlen;

	if (!kv_iter_valid(c->it))
		return 0;
	k = kv_iter_key(c->it, &klen);
	if (klen != c->prefix.len + 9 ||
	    memcmp(k, c->prefix.data, c->prefix.len) != 0 ||
	    (unsigned char)k[c->prefix.len] != kind)
		return 0;
	*ts = ~codec_get_u64((const unsigned char *)k + c->prefix.len + 1);
	value->data = kv_iter_value(c->it, &vlen);
	value->len = vlen;
	return -1;
}

/*
 * The head of (row, col) (codec.h) into *head, and its lock, if it
 * holds one (head->locked), into *lock: 0, or PERC_ENOTFOUND when the
 * cell has no head.  A point lookup: an iterator would have to step
 * over every older version of the one head key that LevelDB still
 * keeps, one for each commit since the last compaction.
 */
static int
get_head(struct ldb_store *s, struct cell_head *head, struct lock_rec *lock,
    perc_bytes row, perc_bytes col)
{
	int rc;

	head->locked = head->newest_op = 0;
	head->lock_has_value = head->newest_has_value = 0;
	head->written_at = 0;
	if ((rc = codec_key(&s->head_key, REGION_CELL, row, col, KIND_LOCK,
	    LOCK_TS)) == 0 &&
	    (rc = ldb_get(&s->head_val, s, buf_bytes(&s->head_key))) == 0)
		rc = codec_head_decode(head, lock, s->head_val.data,
		    s->head_val.len);
	return rc;
}

/*
 * The lock on (row, col) if transaction start_ts holds it, with the
 * head it is in: 0, or PERC_ENOTFOUND when the lock is someone else's
 * or there is none.
 */
static int
get_own_lock(struct ldb_store *s, struct cell_head *head,
    struct lock_rec *lock, perc_bytes row, perc_bytes col, perc_ts start_ts)
{
	int rc;

	rc = get_head(s, head, lock, row, col);
	if (rc == 0 && (!head->locked || lock->start_ts != start_ts))
		rc = PERC_ENOTFOUND;
	return rc;
}

/*
 * Add to b the head of (row, col) with lock (NULL: none) and head's
 * newest write; a head with neither goes.  A bulk load's step
 * (STORE_BULK in flags) starts no head where the cell had none: it
 * would add a key to each cell loaded, and the cell is read by its
 * write records as before.
 */
static int
put_head(struct kv_batch *b, perc_buf *key, perc_bytes row,
    perc_bytes col, struct cell_head *head, const struct lock_rec *lock,
    int had_newest, unsigned flags)
{
	perc_buf enc = PERC_BUF_INIT;
	int rc;

	if ((flags & STORE_BULK) && !had_newest) {
		head->newest_op = 0;
		head->lock_has_value = 0;
	}
	if ((rc = codec_key(key, REGION_CELL, row, col, KIND_LOCK,
	    LOCK_TS)) < 0)
		return rc;
	if (lock == NULL && head->newest_op == 0) {
		kv_batch_delete(b, key->data, key->len);
		return 0;
	}
	if ((rc = codec_head_encode(&enc, head, lock)) == 0)
		kv_batch_put(b, key->data, key->len, enc.data,
		    enc.len);
	perc_buf_dispose(&enc);
	return rc;
}

/*
 * Note in head a write record of op, committed at commit_ts, that the
 * batch being made adds: as its newest write when it changes the
 * cell's value, with its value when short (value; NULL: not known);
 * and in written_at.  A commit's commit_ts is above every record the
 * cell holds (its lock kept others out since its prewrite, or, in one
 * step, the store), so it bounds them all.
 */
static void
head_newest(struct cell_head *head, int op, perc_ts start_ts,
    perc_ts commit_ts, const perc_bytes *value)
{
	if (head->written_at < commit_ts)
		head->written_at = commit_ts;
	if (op != OP_PUT && op != OP_DELETE)
		return;
	head->newest_op = op;
	head->newest_start = start_ts;
	head->newest_commit = commit_ts;
	head->newest_has_value = op == OP_PUT && value != NULL &&
	    value->len <= HEAD_VALUE_MAX;
	if (head->newest_has_value)
		head->newest_value = *value;
}

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
 * the cell's head (a point lookup, see get_head) when it can, else as
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
		return gc_too_old(s->safe_point);
	memset(&head, 0, sizeof(head));
	rc = get_head(s, &head, blocker, row, col);
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
	rc = get_head((struct ldb_store *)base, &head, out, row, col);
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

	if ((rc = cell_open(&c, s, row, col)) < 0 ||
	    (rc = cell_seek(&c, KIND_WRITE, UINT64_MAX)) < 0)
		goto done;
	for (rc = PERC_ENOTFOUND; cell_at(&c, KIND_WRITE, &at, &v) &&
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
	cell_close(&c);
	return rc;
}

/*
 * Does write record wr, committed after our start, conflict with w?
 * Acks and users' writes pass each other: an ack conflicts with later
 * acks only, so two observers never both commit one notification while
 * users write on; an observer's own write to the cell is a write.
 */
static int
write_conflicts(const struct write *w, const struct write_rec *wr)
{
	if (wr->op == OP_ROLLBACK)
		return 0;
	if (w->op == OP_ACK)
		return wr->op == OP_ACK;
	if (wr->op == OP_ACK)
		return w->ack;
	return 1;
}

/* prewrite_check: the cell holds this transaction's own lock already. */
#define OWN_LOCK 1

/*
 * Check w's cell, c, for transaction start_ts as a prewrite must: that
 * nobody committed it since our start and that no lock is in the way.
 * Our own write record decides first: after a crash past the commit
 * point, newer writes and even a newer lock of others may sit on the
 * cell.  Then a lock, then newer writes, conflict.  0 when the cell is
 * free, OWN_LOCK, PERC_ECONFLICT, PERC_ELOCKED with the other lock in
 * *blocker, or PERC_ECOMMITTED with *committed_at when this very
 * transaction already committed here.  The cell's head is left in
 * *head.
 *
 * first_try: the transaction never wrote a lock (a one-step commit), so
 * no record of its own is here, nor another's rollback of it.  Then,
 * when the head says that no write record but rollbacks is newer than
 * its start, the write records need no look: a seek over every level
 * of LevelDB, half of such a commit's time.
 */
static int
prewrite_check(struct cell *c, struct ldb_store *s, const struct write *w,
    perc_ts start_ts, perc_ts *committed_at, struct lock_rec *blocker,
    struct cell_head *head, int first_try)
{
	perc_bytes row = buf_bytes(&w->row), col = buf_bytes(&w->col), v;
	struct write_rec wr;
	perc_ts at;
	int rc, newer = 0, found = PERC_ENOTFOUND;

	/* A first try looks at the head first; the seek leaves it alone. */
	if (first_try) {
		found = get_head(s, head, blocker, row, col);
		if (found < 0 && found != PERC_ENOTFOUND)
			return found;
		if (found == 0 && !head->locked && head->written_at != 0 &&
		    head->written_at < start_ts)
			return 0;
	}
	if ((rc = cell_seek(c, KIND_WRITE, UINT64_MAX)) < 0)
		return rc;
	for (; cell_at(c, KIND_WRITE, &at, &v) && at >= start_ts;
	    kv_iter_next(c->it)) {
		if ((rc = codec_write_decode(&wr, v.data, v.len)) < 0)
			return rc;
		if (wr.start_ts == start_ts && wr.op == OP_ROLLBACK)
			return error_conflict(row, col, "this transaction was "
			    "rolled back by another process");
		if (wr.start_ts == start_ts) {
			*committed_at = at;
			return PERC_ECOMMITTED;
		}
		newer |= write_conflicts(w, &wr);
	}
	if ((rc = ldb_iter_error(c->it)) < 0)
		return rc;
	if (!first_try &&
	    (found = get_head(s, head, blocker, row, col)) < 0 &&
	    found != PERC_ENOTFOUND)
		return found;
	if (found == 0 && head->locked)
		return blocker->start_ts == start_ts ? OWN_LOCK : PERC_ELOCKED;
	if (newer)
		return error_conflict(row, col, w->ack ? "another observer or "
		    "writer got there after this one began" : "another "
		    "transaction committed it after this one began");
	return 0;
}

/* Add w's data, at start_ts, to b; and its notify cell (STORE_NOTIFY). */
static int
data_put(struct kv_batch *b, perc_buf *key, const struct write *w,
    perc_ts start_ts, unsigned flags)
{
	perc_bytes row = buf_bytes(&w->row), col = buf_bytes(&w->col);
	int rc;

	if (w->op == OP_PUT) {
		if ((rc = codec_key(key, REGION_CELL, row, col, KIND_DATA,
		    start_ts)) < 0)
			return rc;
		kv_batch_put(b, key->data, key->len, w->value.data,
		    w->value.len);
	}
	if (!OP_KEEPS_VALUE(w->op) && (flags & STORE_NOTIFY)) {
		if ((rc = codec_key(key, REGION_NOTIFY, row, col, KIND_NOTIFY,
		    start_ts)) < 0)
			return rc;
		kv_batch_put(b, key->data, key->len, "", 0);
	}
	return 0;
}

/*
 * Prewrite w for the transaction whose lock record is lock: check the
 * cell (prewrite_check), then write the lock and the data in one
 * batch, and the notify cell of an observed column (STORE_NOTIFY) with
 * them, so that a roll-forward after a crash notifies too.
 *
 * Returns 0 (also when our own lock is already there, for a retried
 * commit), PERC_ECONFLICT, PERC_ELOCKED with the other lock in
 * *blocker, or PERC_ECOMMITTED with *committed_at when this very
 * transaction already committed here.
 */
int
ldb_prewrite(struct store *base, perc_ts *committed_at,
    const struct write *w, const struct lock_rec *lock, unsigned flags,
    struct lock_rec *blocker)
{
	struct ldb_store *s = (struct ldb_store *)base;
	perc_bytes row = buf_bytes(&w->row), col = buf_bytes(&w->col);
	struct kv_batch *b = NULL;
	struct cell_head head;
	struct cell c;
	int rc;

	if (lock->start_ts < s->safe_point)
		return gc_too_old(s->safe_point);
	memset(&head, 0, sizeof(head));
	if ((rc = cell_open(&c, s, row, col)) < 0 ||
	    (rc = prewrite_check(&c, s, w, lock->start_ts, committed_at,
	    blocker, &head, 0)) != 0)
		goto done;
	/* A short value rides in the lock to the head's newest write. */
	head.lock_has_value = w->op == OP_PUT &&
	    w->value.len <= HEAD_VALUE_MAX;
	head.lock_value = buf_bytes(&w->value);
	b = kv_batch_new();
	if ((rc = put_head(b, &c.key, row, col, &head, lock,
	    head.newest_op != 0, flags)) == 0 &&
	    (rc = data_put(b, &c.key, w, lock->start_ts, flags)) == 0)
		rc = ldb_write(s, b, 0);
done:
	if (b != NULL)
		kv_batch_free(b);
	cell_close(&c);
	return rc == OWN_LOCK ? 0 : rc;
}

/*
 * store_ops.commit_at_once: the whole transaction start_ts in one
 * synced batch, which the store's lock and LevelDB's atomic batch make
 * one step: each cell checked as a prewrite checks it, then its data
 * and its write record at commit_ts, with no lock ever written (TiKV's
 * one-phase commit).  Taking commit_ts before the checks is sound here:
 * no one reads or writes the store between the two.  0, PERC_ECONFLICT,
 * PERC_ETOOOLD; PERC_ELOCKED when a lock or an earlier try of this
 * transaction is in the way, which the two-phase commit knows how to
 * go through; or a failure.  Nothing is written unless it is 0.
 */
int
ldb_commit_at_once(struct store *base, const struct writeset *ws,
    const unsigned *flags, perc_ts start_ts, perc_ts commit_ts)
{
	struct ldb_store *s = (struct ldb_store *)base;
	struct kv_batch *b = kv_batch_new();
	perc_buf enc = PERC_BUF_INIT;
	struct cell_head head;
	struct lock_rec blocker;
	struct write_rec wr;
	struct cell c;
	perc_ts at;
	size_t i;
	int rc = 0, had;

	if (start_ts < s->safe_point)
		rc = gc_too_old(s->safe_point);
	memset(&blocker, 0, sizeof(blocker));
	memset(&head, 0, sizeof(head));
	wr.start_ts = start_ts;
	for (i = 0; i < ws->n && rc == 0; i++) {
		const struct write *w = &ws->w[i];
		perc_bytes row = buf_bytes(&w->row), col = buf_bytes(&w->col);
		perc_bytes value = buf_bytes(&w->value);

		if ((rc = cell_open(&c, s, row, col)) == 0 &&
		    (rc = prewrite_check(&c, s, w, start_ts, &at,
		    &blocker, &head, 1)) == 0 &&
		    (rc = data_put(b, &c.key, w, start_ts, flags[i])) == 0 &&
		    (rc = codec_key(&c.key, REGION_CELL, row, col, KIND_WRITE,
		    commit_ts)) == 0) {
			wr.op = w->op;
			if ((rc = codec_write_encode(&enc, &wr)) == 0)
				kv_batch_put(b, c.key.data,
				    c.key.len, enc.data, enc.len);
			/* No lock here.  A lock-only write changes a
			   head's written_at alone; and a load starts no
			   head, so a cell without one may have nothing
			   to write. */
			had = head.newest_op != 0;
			head_newest(&head, w->op, start_ts, commit_ts, &value);
			if (rc == 0 && (had || (!OP_KEEPS_VALUE(w->op) &&
			    !(flags[i] & STORE_BULK))))
				rc = put_head(b, &c.key, row, col, &head,
				    NULL, had, flags[i]);
		}
		if (rc == OWN_LOCK || rc == PERC_ECOMMITTED)
			rc = PERC_ELOCKED;
		cell_close(&c);
	}
	if (rc == 0)
		rc = ldb_write(s, b, 1);
	kv_batch_free(b);
	codec_lock_dispose(&blocker);
	perc_buf_dispose(&enc);
	return rc;
}

/*
 * Commit transaction start_ts on (row, col) at commit_ts: if our lock
 * is there, replace it by a write record in one batch, and in the
 * cell's head by the newest write, with the value the lock carried.  If it is gone,
 * the answer is in the write records: already committed is success,
 * anything else means we were rolled back (PERC_ECONFLICT).  With
 * STORE_CLEAR_NOTIFY the notifications the observer's snapshot saw are
 * cleared in the same atomic batch.
 */
int
ldb_commit(struct store *base, perc_bytes row, perc_bytes col,
    perc_ts start_ts, perc_ts commit_ts, unsigned flags)
{
	struct ldb_store *s = (struct ldb_store *)base;
	perc_buf enc = PERC_BUF_INIT, lockkey = PERC_BUF_INIT;
	struct kv_batch *b = NULL;
	struct cell_head head;
	struct lock_rec lock;
	struct write_rec w;
	perc_bytes value;
	perc_ts at;
	int rc, op, had;

	memset(&lock, 0, sizeof(lock));
	memset(&head, 0, sizeof(head));
	rc = get_own_lock(s, &head, &lock, row, col, start_ts);
	if (rc == PERC_ENOTFOUND) {
		rc = ldb_find_commit(base, &at, &op, row, col, start_ts);
		if (rc == 0 && op != OP_ROLLBACK)
			goto done;      /* committed before: nothing to do */
		if (rc == 0 || rc == PERC_ENOTFOUND)
			rc = error_conflict(row, col, "this transaction was rolled "
			    "back by another process");
		goto done;
	}
	if (rc < 0)
		goto done;
	if ((flags & STORE_PRIMARY) && lock.min_commit_ts >= commit_ts) {
		rc = PERC_EPUSHED;
		goto done;
	}
	w.op = lock.op;
	w.start_ts = start_ts;
	had = head.newest_op != 0;
	value = head.lock_value;
	b = kv_batch_new();
	head_newest(&head, lock.op, start_ts, commit_ts,
	    head.lock_has_value ? &value : NULL);
	if ((rc = put_head(b, &lockkey, row, col, &head, NULL, had,
	    flags)) < 0)
		goto done;
	if ((rc = codec_key(&lockkey, REGION_CELL, row, col, KIND_WRITE,
	    commit_ts)) < 0 || (rc = codec_write_encode(&enc, &w)) < 0)
		goto done;
	kv_batch_put(b, lockkey.data, lockkey.len, enc.data,
	    enc.len);
	if ((flags & STORE_CLEAR_NOTIFY) &&
	    (rc = ldb_notify_clear(b, s, row, col, start_ts)) < 0)
		goto done;
	rc = ldb_write(s, b, (flags & STORE_SYNC) != 0);
done:
	if (b != NULL)
		kv_batch_free(b);
	codec_lock_dispose(&lock);
	perc_buf_dispose(&enc);
	perc_buf_dispose(&lockkey);
	return rc;
}

/*
 * Add to b the drop of the lock on (row, col) if transaction start_ts
 * holds it: its head keeps the newest write.  Someone else's lock, or
 * none, is left.
 */
static int
drop_own_lock(struct kv_batch *b, struct ldb_store *s, perc_buf *key,
    perc_bytes row, perc_bytes col, perc_ts start_ts)
{
	struct cell_head head;
	struct lock_rec lock;
	int rc;

	memset(&lock, 0, sizeof(lock));
	memset(&head, 0, sizeof(head));
	if ((rc = get_own_lock(s, &head, &lock, row, col, start_ts)) == 0)
		rc = put_head(b, key, row, col, &head, NULL, 1, 0);
	codec_lock_dispose(&lock);
	return rc == PERC_ENOTFOUND ? 0 : rc;
}

/*
 * Roll transaction start_ts back on (row, col): drop its lock and data
 * and leave a rollback record at start_ts, so that a delayed or retried
 * prewrite of it can never succeed here.  Other transactions' locks are
 * untouched.  PERC_ECONFLICT if it already committed here.  No flag
 * matters: STORE_PRIMARY's lease is not kept here, where owners are
 * seen through their journal tokens.
 */
int
ldb_rollback(struct store *base, perc_bytes row, perc_bytes col,
    perc_ts start_ts, unsigned flags)
{
	perc_buf key = PERC_BUF_INIT, enc = PERC_BUF_INIT;
	struct kv_batch *b = NULL;
	struct write_rec w;
	perc_ts at;
	int rc, op;

	(void)flags;
	rc = ldb_find_commit(base, &at, &op, row, col, start_ts);
	if (rc == 0 && op != OP_ROLLBACK) {
		rc = error_set(PERC_ECONFLICT, "transaction %llu already "
		    "committed at %llu; it cannot be rolled back",
		    (unsigned long long)start_ts, (unsigned long long)at);
		goto done;
	}
	if (rc < 0 && rc != PERC_ENOTFOUND)
		goto done;
	b = kv_batch_new();
	if ((rc = drop_own_lock(b, (struct ldb_store *)base, &key, row, col,
	    start_ts)) < 0)
		goto done;
	if ((rc = codec_key(&key, REGION_CELL, row, col, KIND_DATA,
	    start_ts)) < 0)
		goto done;
	kv_batch_delete(b, key.data, key.len);
	w.op = OP_ROLLBACK;
	w.start_ts = start_ts;
	if ((rc = codec_key(&key, REGION_CELL, row, col, KIND_WRITE,
	    start_ts)) < 0 || (rc = codec_write_encode(&enc, &w)) < 0)
		goto done;
	kv_batch_put(b, key.data, key.len, enc.data, enc.len);
	/*
	 * Not synced.  A rollback a power cut takes leaves a lock whose
	 * owner died with the machine: the next reader rolls it back again.
	 * And a late commit of it would need a synced commit point, which
	 * makes this batch durable first (the same log, or the old log
	 * synced at a switch: durable_env.cc) and finds the rollback.
	 */
	rc = ldb_write((struct ldb_store *)base, b, 0);
done:
	if (b != NULL)
		kv_batch_free(b);
	perc_buf_dispose(&key);
	perc_buf_dispose(&enc);
	return rc;
}

/* Rewrite the lock on (row, col) in the head it was read with. */
static int
lock_rewrite(struct ldb_store *s, perc_bytes row, perc_bytes col,
    struct cell_head *head, const struct lock_rec *lock)
{
	perc_buf key = PERC_BUF_INIT;
	struct kv_batch *b = kv_batch_new();
	int rc;

	if ((rc = put_head(b, &key, row, col, head, lock, 1, 0)) == 0)
		rc = ldb_write(s, b, 0);
	kv_batch_free(b);
	perc_buf_dispose(&key);
	return rc;
}

/*
 * store_ops.push: the mark on the primary's lock.  Unsynced: a power
 * cut that loses it takes the unsynced commit it would hold up too,
 * since the commit point's synced write makes everything before it
 * durable.
 */
int
ldb_push(struct store *base, perc_bytes row, perc_bytes col,
    perc_ts start_ts, perc_ts ts)
{
	struct ldb_store *s = (struct ldb_store *)base;
	struct cell_head head;
	struct lock_rec lock;
	int rc;

	memset(&lock, 0, sizeof(lock));
	memset(&head, 0, sizeof(head));
	rc = get_own_lock(s, &head, &lock, row, col, start_ts);
	if (rc == 0 && lock.min_commit_ts < ts) {
		lock.min_commit_ts = ts;
		rc = lock_rewrite(s, row, col, &head, &lock);
	}
	codec_lock_dispose(&lock);
	return rc;
}

/* store_ops.lease_keep: the journal's token is the lease here; the
   primary lock's wall time is refreshed. */
int
ldb_lease_keep(struct store *base, perc_bytes row, perc_bytes col,
    perc_ts start_ts, uint32_t ttl_ms)
{
	struct ldb_store *s = (struct ldb_store *)base;
	struct cell_head head;
	struct lock_rec lock;
	int rc;

	(void)ttl_ms;
	memset(&lock, 0, sizeof(lock));
	memset(&head, 0, sizeof(head));
	rc = get_own_lock(s, &head, &lock, row, col, start_ts);
	if (rc == PERC_ENOTFOUND)
		rc = 0;
	else if (rc == 0) {
		lock.wall_ms = (uint64_t)clock_wall_ms();
		rc = lock_rewrite(s, row, col, &head, &lock);
	}
	codec_lock_dispose(&lock);
	return rc;
}

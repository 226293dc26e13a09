/*
 * lib/leveldb/mvcc.c - Percolator's steps that write one cell of the
 * held LevelDB store: prewrite, commit (in two phases or one),
 * rollback, and the primary lock's push and lease.
 *
 * Each reads and writes the lock, write and data columns of a single
 * cell, and each write is one LevelDB batch: the single-row atomicity
 * the protocol is built on.  The caller holds the store.
 */
#include <string.h>

#include "buf.h"
#include "cell.h"
#include "clock.h"
#include "codec.h"
#include "error.h"
#include "writeset.h"
#include "leveldb.h"

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
		found = ldb_get_head(s, head, blocker, row, col);
		if (found < 0 && found != PERC_ENOTFOUND)
			return found;
		if (found == 0 && !head->locked && head->written_at != 0 &&
		    head->written_at < start_ts)
			return 0;
	}
	if ((rc = ldb_cell_seek(c, KIND_WRITE, UINT64_MAX)) < 0)
		return rc;
	for (; ldb_cell_at(c, KIND_WRITE, &at, &v) && at >= start_ts;
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
	    (found = ldb_get_head(s, head, blocker, row, col)) < 0 &&
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
 * Add to b the write record of transaction start_ts on (row, col) at
 * ts, of kind op.  key and enc are the caller's scratch buffers.
 */
static int
write_put(struct kv_batch *b, perc_buf *key, perc_buf *enc, perc_bytes row,
    perc_bytes col, int op, perc_ts start_ts, perc_ts ts)
{
	struct write_rec w;
	int rc;

	w.op = op;
	w.start_ts = start_ts;
	if ((rc = codec_key(key, REGION_CELL, row, col, KIND_WRITE, ts)) == 0 &&
	    (rc = codec_write_encode(enc, &w)) == 0)
		kv_batch_put(b, key->data, key->len, enc->data, enc->len);
	return rc;
}

/*
 * Add to b, with a bulk commit's primary lock, its transaction's marker
 * in the lock index (codec.h's REGION_LOCKS): before any of its
 * secondaries' locks, which have no entry of their own.
 */
static int
marker_put(struct kv_batch *b, perc_buf *key, const struct lock_rec *lock,
    unsigned flags)
{
	perc_buf enc = PERC_BUF_INIT;
	int rc;

	if (!(flags & STORE_BULK) || !(flags & STORE_PRIMARY))
		return 0;
	if ((rc = ldb_marker_key(key, lock->start_ts)) == 0 &&
	    (rc = codec_lock_encode(&enc, lock)) == 0)
		kv_batch_put(b, key->data, key->len, enc.data, enc.len);
	perc_buf_dispose(&enc);
	return rc;
}

/*
 * store_ops.bulk_done: the marker goes, unsynced (a power cut that
 * keeps it leaves a dead owner's marker, which a walk removes).
 */
int
ldb_bulk_done(struct store *base, perc_ts start_ts)
{
	struct ldb_store *s = (struct ldb_store *)base;
	perc_buf key = PERC_BUF_INIT;
	struct kv_batch *b = kv_batch_new();
	int rc;

	if ((rc = ldb_marker_key(&key, start_ts)) == 0) {
		kv_batch_delete(b, key.data, key.len);
		rc = ldb_write(s, b, 0);
	}
	kv_batch_free(b);
	perc_buf_dispose(&key);
	return rc;
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
		return cell_too_old(s->safe_point);
	memset(&head, 0, sizeof(head));
	if ((rc = ldb_cell_open(&c, s, row, col)) < 0 ||
	    (rc = prewrite_check(&c, s, w, lock->start_ts, committed_at,
	    blocker, &head, 0)) != 0)
		goto done;
	/* A short value rides in the lock to the head's newest write. */
	head.lock_has_value = w->op == OP_PUT &&
	    w->value.len <= HEAD_VALUE_MAX;
	head.lock_value = buf_bytes(&w->value);
	b = kv_batch_new();
	if ((rc = ldb_put_head(b, &c.key, row, col, &head, lock,
	    head.newest_op != 0, flags)) == 0 &&
	    (rc = data_put(b, &c.key, w, lock->start_ts, flags)) == 0 &&
	    (rc = marker_put(b, &c.key, lock, flags)) == 0)
		rc = ldb_write(s, b, 0);
done:
	if (b != NULL)
		kv_batch_free(b);
	ldb_cell_close(&c);
	return rc == OWN_LOCK ? 0 : rc;
}

/*
 * Does a one-step commit of ws write its change log entries apart
 * (LOG_OP_APART): from LOG_APART_BYTES of cells, whose load takes some
 * 25 ms here, a few of which the table of the entries' memtable takes.
 */
#define LOG_APART_BYTES ((size_t)1 << 20)

static int
log_apart(const struct writeset *ws)
{
	size_t i, bytes = 0;

	for (i = 0; i < ws->n && bytes < LOG_APART_BYTES; i++)
		bytes += ws->w[i].row.len + ws->w[i].col.len +
		    ws->w[i].value.len;
	return bytes >= LOG_APART_BYTES;
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
    const unsigned *flags, perc_ts start_ts, perc_ts *commit_ts_out)
{
	struct ldb_store *s = (struct ldb_store *)base;
	struct kv_batch *b = kv_batch_new(), *lb = b;
	perc_buf enc = PERC_BUF_INIT;
	struct ldb_log_entry log;
	struct ldb_log_cell lc;
	struct cell_head head;
	struct lock_rec blocker;
	struct cell c;
	perc_ts at;
	size_t i;
	perc_ts commit_ts;
	int rc = 0, had;

	if (start_ts < s->safe_point)
		rc = cell_too_old(s->safe_point);
	else if ((rc = oracle_next(commit_ts_out, &s->oracle, 1,
	    clock_deadline(s->timeout_ms))) < 0)
		rc = error_set(PERC_ECONFLICT, "%s", perc_errmsg());
	commit_ts = *commit_ts_out;
	memset(&blocker, 0, sizeof(blocker));
	memset(&head, 0, sizeof(head));
	memset(&log, 0, sizeof(log));
	if ((log.apart = log_apart(ws)))
		lb = kv_batch_new();
	lc.start_ts = start_ts;
	lc.commit_ts = commit_ts;
	for (i = 0; i < ws->n && rc == 0; i++) {
		const struct write *w = &ws->w[i];
		perc_bytes row = buf_bytes(&w->row), col = buf_bytes(&w->col);
		perc_bytes value = buf_bytes(&w->value);

		if ((rc = ldb_cell_open(&c, s, row, col)) == 0 &&
		    (rc = prewrite_check(&c, s, w, start_ts, &at,
		    &blocker, &head, 1)) == 0 &&
		    (rc = data_put(b, &c.key, w, start_ts, flags[i])) == 0 &&
		    (rc = write_put(b, &c.key, &enc, row, col, w->op, start_ts,
		    commit_ts)) == 0) {
			lc.row = row;
			lc.col = col;
			lc.op = w->op;
			rc = ldb_log_add(&log, lb, &lc);
			/* No lock here.  A lock-only write changes a
			   head's written_at alone; and a load starts no
			   head, so a cell without one may have nothing
			   to write. */
			had = head.newest_op != 0;
			ldb_head_newest(&head, w->op, start_ts, commit_ts, &value);
			if (rc == 0 && (had || (!OP_KEEPS_VALUE(w->op) &&
			    !(flags[i] & STORE_BULK))))
				rc = ldb_put_head(b, &c.key, row, col, &head,
				    NULL, had, flags[i]);
		}
		if (rc == OWN_LOCK || rc == PERC_ECOMMITTED)
			rc = PERC_ELOCKED;
		ldb_cell_close(&c);
	}
	if (rc == 0) {
		ldb_log_flush(&log, lb);
		if (lb != b)
			rc = ldb_write_apart(s, lb);
	}
	if (rc == 0)
		rc = ldb_write(s, b, 1);
	if (lb != b)
		kv_batch_free(lb);
	kv_batch_free(b);
	ldb_log_dispose(&log);
	codec_lock_dispose(&blocker);
	perc_buf_dispose(&enc);
	return rc;
}

/*
 * ldb_commit when the lock is gone: the write records say.  0 when the
 * transaction committed here before, PERC_ECONFLICT when it was rolled
 * back.
 */
static int
commit_without_lock(struct store *base, perc_bytes row, perc_bytes col,
    perc_ts start_ts)
{
	perc_ts at;
	int rc, op;

	rc = ldb_find_commit(base, &at, &op, row, col, start_ts);
	if (rc == 0 && op != OP_ROLLBACK)
		return 0;       /* committed before: nothing to do */
	if (rc == 0 || rc == PERC_ENOTFOUND)
		rc = error_conflict(row, col, "this transaction was rolled "
		    "back by another process");
	return rc;
}

/*
 * Add to b the commit of lock, read from head, at commit_ts: its write
 * record, and the head with the newest write for the lock, carrying
 * the value the lock carried.  Its change log entry goes in as b is
 * written (ldb_write_logged).
 */
static int
commit_put(struct kv_batch *b, perc_bytes row, perc_bytes col,
    struct cell_head *head, const struct lock_rec *lock, perc_ts start_ts,
    perc_ts commit_ts, unsigned flags)
{
	perc_buf key = PERC_BUF_INIT, enc = PERC_BUF_INIT;
	perc_bytes value = head->lock_value;
	int rc, had = head->newest_op != 0;

	ldb_head_newest(head, lock->op, start_ts, commit_ts,
	    head->lock_has_value ? &value : NULL);
	if ((rc = ldb_put_head(b, &key, row, col, head, NULL, had,
	    flags)) == 0)
		rc = write_put(b, &key, &enc, row, col, lock->op, start_ts,
		    commit_ts);
	perc_buf_dispose(&key);
	perc_buf_dispose(&enc);
	return rc;
}

/*
 * Commit transaction start_ts on (row, col) at commit_ts: if our lock
 * is there, replace it by a write record in one batch, and in the
 * cell's head by the newest write, with the value the lock carried.
 * If it is gone, the answer is in the write records (see
 * commit_without_lock).  With STORE_CLEAR_NOTIFY the notifications
 * the observer's snapshot saw are cleared in the same atomic batch.
 */
int
ldb_commit(struct store *base, perc_bytes row, perc_bytes col,
    perc_ts start_ts, perc_ts commit_ts, unsigned flags)
{
	struct ldb_store *s = (struct ldb_store *)base;
	struct kv_batch *b;
	struct cell_head head;
	struct lock_rec lock;
	int rc;

	memset(&lock, 0, sizeof(lock));
	memset(&head, 0, sizeof(head));
	rc = ldb_get_own_lock(s, &head, &lock, row, col, start_ts);
	if (rc == PERC_ENOTFOUND)
		rc = commit_without_lock(base, row, col, start_ts);
	else if (rc == 0 && (flags & STORE_PRIMARY) &&
	    lock.min_commit_ts >= commit_ts)
		rc = PERC_EPUSHED;
	else if (rc == 0) {
		b = kv_batch_new();
		rc = commit_put(b, row, col, &head, &lock, start_ts, commit_ts,
		    flags);
		if (rc == 0 && (flags & STORE_CLEAR_NOTIFY))
			rc = ldb_notify_clear(b, s, row, col, start_ts);
		if (rc >= 0)
			rc = ldb_write_logged(s, b, (flags & STORE_SYNC) != 0,
			    &(struct ldb_log_cell){ row, col, lock.op,
			    start_ts, commit_ts });
		kv_batch_free(b);
	}
	codec_lock_dispose(&lock);
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
	if ((rc = ldb_get_own_lock(s, &head, &lock, row, col, start_ts)) == 0)
		rc = ldb_put_head(b, key, row, col, &head, NULL, 1, 0);
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
	if ((rc = write_put(b, &key, &enc, row, col, OP_ROLLBACK, start_ts,
	    start_ts)) < 0)
		goto done;
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

	if ((rc = ldb_put_head(b, &key, row, col, head, lock, 1, 0)) == 0)
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
	rc = ldb_get_own_lock(s, &head, &lock, row, col, start_ts);
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
	rc = ldb_get_own_lock(s, &head, &lock, row, col, start_ts);
	if (rc == PERC_ENOTFOUND)
		rc = 0;
	else if (rc == 0) {
		lock.wall_ms = (uint64_t)clock_wall_ms();
		rc = lock_rewrite(s, row, col, &head, &lock);
	}
	codec_lock_dispose(&lock);
	return rc;
}

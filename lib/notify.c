/*
 * lib/notify.c - notifications of observed cells, and what observers
 * do with them.
 *
 * A put or delete of an observed column writes a notify cell, in its
 * own key range, at the writer's start_ts and in the same batch as the
 * writer's lock, so a transaction rolled forward after a crash has
 * notified too.  An observer's transaction carries an ack on the cell
 * as its primary: of two observer transactions on one notification,
 * the later commit meets the earlier ack and conflicts.  The commit
 * that carries the ack clears, in the same batch, the notifications
 * whose writes its snapshot saw, and keeps newer ones for the next run.
 */
#include <string.h>

#include "buf.h"
#include "clock.h"
#include "codec.h"
#include "error.h"
#include "mvcc.h"
#include "notify.h"
#include "txn.h"

/* Did the write behind a notification at ts land in snapshot s? */
static int
seen_by(int *seen, perc_db *db, perc_bytes row, perc_bytes col, perc_ts ts,
    perc_ts s)
{
	struct lock_rec lock;
	perc_ts at;
	int rc, op;

	*seen = 0;
	if (ts >= s)
		return 0;       /* began after us: a later run's business */
	memset(&lock, 0, sizeof(lock));
	rc = mvcc_get_lock(&lock, db, row, col);
	if (rc == 0 && lock.start_ts == ts)
		goto done;      /* still locked: its fate is open */
	if (rc < 0 && rc != PERC_ENOTFOUND)
		goto done;
	rc = mvcc_find_commit(&at, &op, db, row, col, ts);
	if (rc == 0)
		*seen = op == OP_ROLLBACK || at <= s;
	else if (rc == PERC_ENOTFOUND)
		rc = 0;
done:
	codec_lock_dispose(&lock);
	return rc;
}

static int
failures_key(perc_buf *out, perc_bytes row, perc_bytes col)
{
	return codec_key(out, REGION_NOTIFY, row, col, KIND_FAILURES, 0);
}

/*
 * Add to batch the deletion of every notification of (row, col) whose
 * write the observer transaction start_ts saw, and of its failures.
 */
int
notify_clear(leveldb_writebatch_t *batch, perc_db *db, perc_bytes row,
    perc_bytes col, perc_ts start_ts)
{
	perc_buf prefix = PERC_BUF_INIT;
	leveldb_iterator_t *it;
	const char *k;
	size_t klen;
	perc_ts ts;
	int rc, seen;

	if ((rc = codec_cell_prefix(&prefix, REGION_NOTIFY, row, col)) < 0)
		goto out;
	it = store_iter(&db->store);
	for (leveldb_iter_seek(it, prefix.data, prefix.len);
	    leveldb_iter_valid(it); leveldb_iter_next(it)) {
		k = leveldb_iter_key(it, &klen);
		if (klen != prefix.len + 9 ||
		    memcmp(k, prefix.data, prefix.len) != 0)
			break;
		if (k[prefix.len] != KIND_NOTIFY)
			continue;
		ts = ~codec_get_u64((const unsigned char *)k + prefix.len + 1);
		if ((rc = seen_by(&seen, db, row, col, ts, start_ts)) < 0)
			break;
		if (seen)
			leveldb_writebatch_delete(batch, k, klen);
	}
	if (rc == 0)
		rc = store_iter_error(it);
	leveldb_iter_destroy(it);
	if (rc == 0 && (rc = failures_key(&prefix, row, col)) == 0)
		leveldb_writebatch_delete(batch, prefix.data, prefix.len);
out:
	perc_buf_dispose(&prefix);
	return rc;
}

/* The failure record of a cell: count, and when it may run again. */
static void
read_failures(perc_notify *n, perc_bytes v)
{
	const unsigned char *p = v.data;

	n->failures = v.len == 12 ? codec_get_u32(p) : 0;
	n->retry_at_ms = v.len == 12 ? (int64_t)codec_get_u64(p + 4) : 0;
}

/* Report one dirty cell found at the iterator, if it is wanted. */
static int
report(perc_db *db, struct key *k, const perc_bytes *column,
    int (*fn)(const perc_notify *, void *), void *arg)
{
	perc_buf key = PERC_BUF_INIT, val = PERC_BUF_INIT;
	perc_notify n;
	int rc;

	if (column != NULL && !bytes_eq(buf_bytes(&k->col), *column))
		return 0;
	memset(&n, 0, sizeof(n));
	n.row = buf_bytes(&k->row);
	n.column = buf_bytes(&k->col);
	if ((rc = failures_key(&key, n.row, n.column)) == 0 &&
	    (rc = store_get(&val, &db->store, buf_bytes(&key))) == 0)
		read_failures(&n, buf_bytes(&val));
	if (rc == 0 || rc == PERC_ENOTFOUND)
		rc = fn(&n, arg);
	perc_buf_dispose(&key);
	perc_buf_dispose(&val);
	return rc;
}

/*
 * Call fn for every dirty cell (of column only, when not NULL), in
 * byte order.  Only the notify range is read, so the cost follows the
 * number of dirty cells, not the size of the table.
 */
int
perc_notify_scan(perc_db *db, const perc_bytes *column,
    int (*fn)(const perc_notify *, void *), void *arg)
{
	leveldb_iterator_t *it;
	const char *k;
	struct key key;
	perc_buf last = PERC_BUF_INIT;
	unsigned char region = REGION_NOTIFY;
	size_t klen;
	int rc;

	memset(&key, 0, sizeof(key));
	if ((rc = db_acquire(db, clock_deadline(db->timeout_ms))) < 0)
		return rc;
	it = store_iter(&db->store);
	for (leveldb_iter_seek(it, (const char *)&region, 1);
	    leveldb_iter_valid(it); leveldb_iter_next(it)) {
		k = leveldb_iter_key(it, &klen);
		if (k[0] != REGION_NOTIFY)
			break;
		/* One report a cell: skip its other notify keys. */
		if (k[klen - 9] != KIND_NOTIFY || (last.len == klen - 9 &&
		    memcmp(last.data, k, klen - 9) == 0))
			continue;
		if ((rc = buf_set(&last, k, klen - 9)) < 0 ||
		    (rc = codec_parse_key(&key, k, klen)) < 0 ||
		    (rc = report(db, &key, column, fn, arg)) != 0)
			break;
	}
	if (rc == 0)
		rc = store_iter_error(it);
	leveldb_iter_destroy(it);
	db_release(db);
	codec_key_dispose(&key);
	perc_buf_dispose(&last);
	return rc;
}

/*
 * Is (row, col) still dirty?  0 if so, PERC_ENOTFOUND if not, or a
 * failure.  Takes the store for the look, unless the caller has it.
 */
int
notify_pending(perc_db *db, perc_bytes row, perc_bytes col)
{
	perc_buf prefix = PERC_BUF_INIT;
	leveldb_iterator_t *it;
	const char *k;
	size_t klen;
	int rc;

	if ((rc = codec_cell_prefix(&prefix, REGION_NOTIFY, row, col)) < 0 ||
	    (rc = db_acquire(db, clock_deadline(db->timeout_ms))) < 0)
		goto out;
	it = store_iter(&db->store);
	leveldb_iter_seek(it, prefix.data, prefix.len);
	rc = PERC_ENOTFOUND;
	if (leveldb_iter_valid(it)) {
		k = leveldb_iter_key(it, &klen);
		if (klen == prefix.len + 9 &&
		    memcmp(k, prefix.data, prefix.len) == 0 &&
		    k[prefix.len] == KIND_NOTIFY)
			rc = 0;
	}
	if (rc == PERC_ENOTFOUND && store_iter_error(it) < 0)
		rc = PERC_EIO;
	leveldb_iter_destroy(it);
	db_release(db);
out:
	perc_buf_dispose(&prefix);
	return rc;
}

/*
 * Begin the observer transaction for dirty cell (row, col): a
 * transaction whose journal already holds the ack.  PERC_ENOTFOUND
 * (and no transaction) when the cell is no longer dirty, because
 * another runner handled it before our start.
 */
int
perc_observer_begin(perc_txn **out, perc_db *db, perc_bytes row,
    perc_bytes col)
{
	static const perc_bytes none = { "", 0 };
	int rc;

	if ((rc = perc_txn_begin(out, db)) < 0)
		return rc;
	if ((rc = notify_pending(db, row, col)) == 0)
		rc = journal_append(&(*out)->journal, OP_ACK, row, col, none,
		    clock_deadline(db->timeout_ms));
	if (rc < 0) {
		perc_txn_abort(*out);
		perc_txn_free(*out);
		*out = NULL;
	}
	return rc;
}

/*
 * Count a failed run of the observer on (row, col) and hold the cell
 * back for a backoff that doubles with each failure, up to a minute.
 * *count is the number of failures so far.
 */
int
perc_observer_failed(uint32_t *count, perc_db *db, perc_bytes row,
    perc_bytes col)
{
	perc_buf key = PERC_BUF_INIT, val = PERC_BUF_INIT;
	leveldb_writebatch_t *b;
	unsigned char rec[12];
	perc_notify n;
	int64_t backoff;
	int rc;

	memset(&n, 0, sizeof(n));
	if ((rc = db_acquire(db, clock_deadline(db->timeout_ms))) < 0)
		return rc;
	if ((rc = failures_key(&key, row, col)) == 0 &&
	    (rc = store_get(&val, &db->store, buf_bytes(&key))) == 0)
		read_failures(&n, buf_bytes(&val));
	if (rc == 0 || rc == PERC_ENOTFOUND) {
		*count = ++n.failures;
		backoff = 100LL << (n.failures < 10 ? n.failures : 10);
		if (backoff > 60000)
			backoff = 60000;
		codec_put_u32(rec, n.failures);
		codec_put_u64(rec + 4, (uint64_t)(clock_wall_ms() + backoff));
		b = leveldb_writebatch_create();
		leveldb_writebatch_put(b, key.data, key.len, (char *)rec, 12);
		rc = store_write(&db->store, b, 0);
		leveldb_writebatch_destroy(b);
	}
	db_release(db);
	perc_buf_dispose(&key);
	perc_buf_dispose(&val);
	return rc;
}

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
#include "notify.h"
#include "seen.h"
#include "store.h"
#include "txn.h"

/* The failure record of a cell: count, and when it may run again. */
static void
read_failures(perc_notify *n, perc_bytes v)
{
	const unsigned char *p = v.data;

	n->failures = v.len == 12 ? codec_get_u32(p) : 0;
	n->retry_at_ms = v.len == 12 ? (int64_t)codec_get_u64(p + 4) : 0;
}

struct notify_walk {
	int (*fn)(const perc_notify *, void *);
	void *arg;
};

static int
report(void *arg, perc_bytes row, perc_bytes col, perc_bytes failures)
{
	struct notify_walk *walk = arg;
	perc_notify n;

	memset(&n, 0, sizeof(n));
	n.row = row;
	n.column = col;
	read_failures(&n, failures);
	return walk->fn(&n, walk->arg);
}

/*
 * Call fn for every dirty cell (of column only, when not NULL), in
 * byte order.  Only the notify cells are read, so the cost follows the
 * number of dirty cells, not the size of the table.
 */
int
perc_notify_scan(perc_db *db, const perc_bytes *column,
    int (*fn)(const perc_notify *, void *), void *arg)
{
	struct notify_walk walk = { fn, arg };
	int rc;

	if ((rc = db_acquire(db, clock_deadline(db->timeout_ms))) < 0)
		return rc;
	rc = db->store->ops->notify_scan(db->store, column, report, &walk);
	db_release(db);
	return rc;
}

/*
 * Is (row, col) still dirty?  0 if so, PERC_ENOTFOUND if not, or a
 * failure.  Takes the store for the look, unless the caller has it.
 */
int
notify_pending(perc_db *db, perc_bytes row, perc_bytes col)
{
	size_t n;
	int rc;

	if ((rc = db_acquire(db, clock_deadline(db->timeout_ms))) < 0)
		return rc;
	rc = db->store->ops->notify_pending(db->store, row, col, NULL, 0, &n);
	db_release(db);
	return rc;
}

/* The notifications of a cell that notify_seen looks at, newest first. */
#define SEEN_MAX 64

/*
 * Is (row, col) dirty for snapshot snap: does snap see the write behind
 * one of its notifications (write_seen)?  One it does not see, a
 * run at snap would neither read nor clear, and the write would run
 * again later: two runs for one write.  0, PERC_ENOTFOUND, or a
 * failure.  When the cell has more than SEEN_MAX notifications, the
 * newest SEEN_MAX decide, and if none of them is seen it is dirty all
 * the same: a run too many at worst, never a write missed.
 */
static int
notify_seen(perc_db *db, perc_bytes row, perc_bytes col, perc_ts snap)
{
	struct store *s = db->store;
	perc_ts ts[SEEN_MAX];
	size_t n = 0, i;
	int rc, seen = 0;

	if ((rc = db_acquire(db, clock_deadline(db->timeout_ms))) < 0)
		return rc;
	rc = s->ops->notify_pending(s, row, col, ts, SEEN_MAX, &n);
	for (i = 0; rc == 0 && i < n && !seen; i++)
		rc = write_seen(&seen, s, row, col, ts[i], snap);
	db_release(db);
	if (rc == 0 && !seen && n < SEEN_MAX)
		rc = PERC_ENOTFOUND;
	return rc;
}

/*
 * Begin the observer transaction for dirty cell (row, col): a
 * transaction whose journal already holds the ack.  PERC_ENOTFOUND
 * (and no transaction) when the cell is no longer dirty, because
 * another runner handled it before our start, or not yet ready: the
 * write behind its notification is still being committed.
 */
int
perc_observer_begin(perc_txn **out, perc_db *db, perc_bytes row,
    perc_bytes col)
{
	*out = NULL;
	if (db_is_weak(db, col))
		return error_set(PERC_EUSAGE, "column '%s' is weakly "
		    "observed, whose runs carry no ack: run them with "
		    "perc_observer_pass", error_quote(col));
	return notify_observer_begin(out, db, row, col, 0);
}

/* As perc_observer_begin; local: a local transaction (txn.c). */
int
notify_observer_begin(perc_txn **out, perc_db *db, perc_bytes row,
    perc_bytes col, int local)
{
	static const perc_bytes none = { "", 0 };
	perc_buf val = PERC_BUF_INIT;
	int rc;

	/*
	 * First let the writes behind the cell's notifications finish.
	 * On a Redis store a notify cell is there from the prewrite on,
	 * before the commit point of its write: an observer whose
	 * snapshot began in between would miss that write, clear nothing,
	 * and still commit a run, and the write would run once more: two
	 * runs for one notification.  A read at a fresh snapshot waits
	 * out (or cleans up) every lock below it, so the transaction begun
	 * after it sees every write whose notification was there before.
	 * On the LevelDB store a commit holds the store throughout, and
	 * the read meets no lock of a live writer.  A write may still
	 * commit between that read and our start, above it: notify_seen
	 * then finds no notification whose write our snapshot sees.
	 */
	*out = NULL;
	rc = perc_snapshot_get(&val, db, 0, row, col);
	perc_buf_dispose(&val);
	if (rc == PERC_ETIMEOUT)
		return PERC_ENOTFOUND;  /* a long commit: a later pass */
	if (rc < 0 && rc != PERC_ENOTFOUND)
		return rc;
	if ((rc = local ? perc_txn_begin_local(out, db) :
	    perc_txn_begin(out, db)) < 0)
		return rc;
	if ((rc = notify_seen(db, row, col, (*out)->journal.start_ts)) == 0)
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
	perc_buf val = PERC_BUF_INIT;
	struct store *s = db->store;
	unsigned char rec[12];
	perc_notify n;
	int64_t backoff;
	int rc;

	memset(&n, 0, sizeof(n));
	if ((rc = db_acquire(db, clock_deadline(db->timeout_ms))) < 0)
		return rc;
	if ((rc = s->ops->failures_get(s, &val, row, col)) == 0)
		read_failures(&n, buf_bytes(&val));
	if (rc == 0 || rc == PERC_ENOTFOUND) {
		*count = ++n.failures;
		backoff = 100LL << (n.failures < 10 ? n.failures : 10);
		if (backoff > 60000)
			backoff = 60000;
		codec_put_u32(rec, n.failures);
		codec_put_u64(rec + 4, (uint64_t)(clock_wall_ms() + backoff));
		rc = s->ops->failures_put(s, row, col, bytes_of(rec, 12));
	}
	db_release(db);
	perc_buf_dispose(&val);
	return rc;
}

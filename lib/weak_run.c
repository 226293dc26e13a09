/*
 * lib/weak_run.c - the runs of weakly observed cells (their
 * notifications as they are written: weak.c), and the settling of the
 * pending records a commit leaves before its commit point.
 *
 * Whoever meets a pending record (a runner on the cell, gc) settles it
 * by its primary, as a reader settles a lock: a primary committed at C
 * makes it the notification at C, one rolled back drops it (a
 * rolled-back transaction never makes a run), one still locked by a
 * live owner leaves it for later.  gc settles those below its safe
 * point before it may remove a primary's record, so the primary can
 * always tell.
 *
 * An observer run of a weak cell carries no ack.  Its transaction
 * begins after the cell's pending records are settled; once it has
 * committed (or had nothing to commit), the notifications at or below
 * its start are cleared: every transaction that committed there is in
 * its snapshot.  One that commits later has a later timestamp and
 * stays for the next run, however the two interleave; runs may repeat
 * or overlap, which at least once allows.
 */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "clock.h"
#include "codec.h"
#include "error.h"
#include "lock.h"
#include "notify.h"
#include "store.h"
#include "weak_run.h"

/* A pending record's value (weak.c's primary_encode): its primary. */
static int
primary_decode(struct lock_rec *lock, perc_bytes v)
{
	const unsigned char *p = v.data;
	uint32_t n;
	int rc;

	if (v.len < 4 || (n = codec_get_u32(p)) > v.len - 4)
		return error_set(PERC_EIO, "a pending weak notification's "
		    "record is damaged; restore the data directory from a "
		    "backup");
	if ((rc = buf_set(&lock->primary_row, p + 4, n)) == 0)
		rc = buf_set(&lock->primary_col, p + 4 + n, v.len - 4 - n);
	return rc;
}

/* The pending records of one cell: start_ts and primary of each. */
struct pending {
	perc_ts  *ts;
	perc_buf *primary;
	size_t    n, cap;
};

static void
pending_dispose(struct pending *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		perc_buf_dispose(&p->primary[i]);
	free(p->ts);
	free(p->primary);
	memset(p, 0, sizeof(*p));
}

static int
collect_pending(void *arg, int region, perc_bytes col, int kind, perc_ts ts,
    perc_bytes value)
{
	struct pending *p = arg;
	perc_ts *ts_grown;
	perc_buf *pr_grown;

	(void)col;
	if (region != REGION_NOTIFY || kind != KIND_PENDING)
		return 0;
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 8;
		if ((ts_grown = realloc(p->ts, p->cap * sizeof(*ts_grown))) ==
		    NULL)
			return error_set(PERC_EIO, "out of memory");
		p->ts = ts_grown;
		if ((pr_grown = realloc(p->primary, p->cap *
		    sizeof(*pr_grown))) == NULL)
			return error_set(PERC_EIO, "out of memory");
		p->primary = pr_grown;
	}
	p->ts[p->n] = ts;
	memset(&p->primary[p->n], 0, sizeof(*p->primary));
	return buf_addb(&p->primary[p->n++], value);
}

/*
 * Settle the pending record of transaction start_ts on (row, col) by
 * its primary's fate, as lock_resolve settles a lock (rolling back a
 * gone owner's primary first); a live owner's stays.  The caller holds
 * the store.
 */
static int
settle_one(perc_db *db, perc_bytes row, perc_bytes col, perc_ts start_ts,
    perc_bytes primary, unsigned flags)
{
	struct lock_fate decided = { 0, 0 };
	struct lock_rec lock;
	int rc, action;

	memset(&lock, 0, sizeof(lock));
	lock.start_ts = start_ts;
	if ((rc = primary_decode(&lock, primary)) == 0 &&
	    (rc = lock_resolve(&action, db, buf_bytes(&lock.primary_row),
	    buf_bytes(&lock.primary_col), &lock, flags, &decided)) == 0 &&
	    action != RESOLVE_ALIVE && !(flags & RESOLVE_DRY_RUN))
		rc = db->store->ops->weak_settle(db->store, row, col,
		    start_ts, action == RESOLVE_FORWARD ? decided.commit_ts :
		    0, 0);
	codec_lock_dispose(&lock);
	return rc;
}

/* Settle the pending records of (row, col) that began below bound (0:
   all); the caller holds the store. */
static int
settle_cell(perc_db *db, perc_bytes row, perc_bytes col, perc_ts bound,
    unsigned flags)
{
	struct pending p;
	size_t i;
	int rc;

	memset(&p, 0, sizeof(p));
	rc = db->store->ops->raw(db->store, row, &col, collect_pending, &p);
	for (i = 0; i < p.n && rc == 0; i++)
		if (bound == 0 || p.ts[i] < bound)
			rc = settle_one(db, row, col, p.ts[i],
			    buf_bytes(&p.primary[i]), flags);
	pending_dispose(&p);
	return rc;
}

/*
 * The transaction of a run on weak cell (row, col), begun once the
 * cell's pending records are settled; PERC_ENOTFOUND (and none) when
 * the cell has no notification then, its pending ones not settled yet
 * or settled as rolled back, or cleared by another run.
 */
int
weak_observer_begin(perc_txn **out, perc_db *db, perc_bytes row,
    perc_bytes col, int local)
{
	int rc;

	*out = NULL;
	if ((rc = db_acquire(db, clock_deadline(db->timeout_ms))) < 0)
		return rc;
	rc = settle_cell(db, row, col, 0, 0);
	db_release(db);
	if (rc < 0 || (rc = local ? perc_txn_begin_local(out, db) :
	    perc_txn_begin(out, db)) < 0)
		return rc;
	if ((rc = notify_pending(db, row, col)) < 0) {
		perc_txn_abort(*out);
		perc_txn_free(*out);
		*out = NULL;
	}
	return rc;
}

int
weak_observer_clear(perc_db *db, perc_bytes row, perc_bytes col,
    perc_ts start_ts)
{
	int rc;

	if ((rc = db_acquire(db, clock_deadline(db->timeout_ms))) < 0)
		return rc;
	rc = db->store->ops->weak_clear(db->store, row, col, start_ts);
	db_release(db);
	return rc;
}

/* The dirty cells of the weak columns, gathered before any is settled. */
struct cells {
	struct writeset ws;
	size_t          cap;
	perc_db        *db;
};

static int
collect_weak(void *arg, perc_bytes row, perc_bytes col, perc_bytes failures)
{
	struct cells *c = arg;

	(void)failures;
	if (!db_is_weak(c->db, col))
		return 0;
	return writeset_append(&c->ws, &c->cap, OP_NOTIFY, row, col,
	    bytes_of("", 0));
}

int
weak_gc(perc_db *db, perc_ts bound, int dry_run)
{
	struct store *s = db->store;
	struct cells c;
	size_t i;
	int rc;

	if (db->observed.nweak == 0)
		return 0;
	memset(&c, 0, sizeof(c));
	c.db = db;
	rc = s->ops->notify_scan(s, NULL, collect_weak, &c);
	for (i = 0; i < c.ws.n && rc == 0; i++)
		rc = settle_cell(db, buf_bytes(&c.ws.w[i].row),
		    buf_bytes(&c.ws.w[i].col), bound,
		    dry_run ? RESOLVE_DRY_RUN : 0);
	writeset_dispose(&c.ws);
	return rc;
}

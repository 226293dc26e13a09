/*
 * lib/collect.c - garbage collection's pass: the safe point taken, the
 * locks below it resolved, and what no snapshot at or above it can
 * read removed (the rule, cell by cell, is cell.c's).
 *
 * The safe point is taken in an order that no transaction can slip
 * through:
 *
 *  1. the older of the oldest open transaction (the journals of this
 *     data directory) that began less than PERC_TXN_MAX_AGE ago and
 *     the newest timestamp handed out more than retain_ms ago
 *     (timestamp.h tells a timestamp's age) ...
 *  2. ... goes into DIR/gc.fence; a transaction that begins from now on
 *     and started below it takes a new start timestamp;
 *  3. the journals are looked at again: one that appeared meanwhile
 *     began before its owner could see the fence, and lowers the safe
 *     point to its start; where other data directories share the store
 *     (Redis), the oldest start they may have open lowers it too (see
 *     db_open_publish);
 *  4. locks below the safe point are resolved (a live owner's lock
 *     stays, and the cell with it), and so are the pending weak
 *     notifications of transactions that began below it, whose
 *     primaries' records must still tell their fate (weak_run.c);
 *  5. the store records the safe point, durably, never lower than
 *     before, and from then on refuses to read or prewrite below it
 *     (PERC_ETOOOLD), checking in the same atomic step as the read;
 *  6. the pass removes, cell by cell, what is below it.
 *
 * Below the safe point a cell no longer changes: every commit, rollback
 * or lock to come is above it, but for the leftovers of transactions
 * that started below it, whose locks step 4 cleaned or which keep the
 * cell out of the pass.  So the pass may decide on what it read and
 * remove later, in batches that let other processes in.
 */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "clock.h"
#include "db.h"
#include "error.h"
#include "gc.h"
#include "journal.h"
#include "lock.h"
#include "store.h"
#include "timestamp.h"
#include "weak_run.h"

#define GC_RETAIN_MS    (600 * 1000)

struct below {
	perc_ts           bound;
	struct lock_batch batch;
};

/* Resolve a lock below the safe point; a live owner's stays. */
static int
resolve_below(void *arg, perc_bytes row, perc_bytes col,
    const struct lock_rec *lock)
{
	struct below *b = arg;

	if (lock->start_ts >= b->bound)
		return 0;
	return lock_batch_add(&b->batch, row, col, lock);
}

/* The safe point of steps 1 to 3 above; *bound 0: nothing to do. */
static int
safe_point(perc_ts *bound, perc_db *db, int64_t retain_ms, int dry_run)
{
	perc_ts now, clock, back, oldest, fence, others, held;
	perc_ts floor = gc_open_floor();
	int64_t left;
	int rc;

	if ((rc = perc_ts_next(&now, db, 1)) < 0 ||
	    (rc = journal_oldest(&oldest, db->dir, floor)) < 0)
		return rc;
	fence = now;
	if (retain_ms > 0) {
		/* The oracle may run ahead of the clock: the older. */
		if ((clock = ts_of_wall_ms(clock_wall_ms())) < fence)
			fence = clock;
		back = (perc_ts)retain_ms << TS_LOGICAL_BITS;
		fence = fence > back ? fence - back : 0;
	}
	if (oldest < fence)
		fence = oldest;
	if ((rc = gc_hold_oldest(&held, &left, db->dir)) < 0)
		return rc;
	if (held < fence)
		fence = held;   /* a follower's history (perc log) */
	if (!dry_run && (rc = gc_fence_raise(db->dir, fence)) < 0)
		return rc;
	if ((rc = journal_oldest(&oldest, db->dir, floor)) < 0)
		return rc;
	*bound = oldest < fence ? oldest : fence;
	if (*bound == 0 || !store_shared(db->store) ||
	    db->store->read_only)
		return 0;
	if ((rc = db_open_publish(db, fence, &others)) < 0)
		return rc;
	/* Another directory's start below the floor may hide younger ones
	   of it: it holds gc back to the floor. */
	if (others != 0 && others < floor)
		others = floor;
	if (others != 0 && others < *bound)
		*bound = others;
	return 0;
}

int64_t
perc_gc_retain_ms(void)
{
	return clock_env_ms("PERC_GC_RETAIN", GC_RETAIN_MS);
}

int
perc_gc(perc_ts *safe_point_out, uint64_t *removed, perc_db *db,
    int64_t retain_ms, unsigned flags)
{
	struct store *s = db->store;
	int dry_run = (flags & PERC_GC_DRY_RUN) != 0;
	struct store_gc gc;
	struct below below;
	perc_ts bound, old;
	int rc;

	memset(&below, 0, sizeof(below));
	*safe_point_out = 0;
	*removed = 0;
	if (retain_ms < 0)
		return error_set(PERC_EUSAGE, "a retention must not be "
		    "negative");
	if (s->read_only && !dry_run)
		return error_set(PERC_EIO, "cannot collect garbage in a "
		    "data directory this process may not write");
	if ((rc = safe_point(&bound, db, retain_ms, dry_run)) < 0)
		return rc;
	if (!dry_run)
		gc_count_reset(db->dir);
	memset(&gc, 0, sizeof(gc));
	if ((rc = db_acquire(db, clock_deadline(db->timeout_ms))) < 0)
		return rc;
	if ((rc = s->ops->safe_point(s, &old)) < 0)
		goto done;
	if (bound < old)
		bound = old;            /* it never moves back */
	below.bound = bound;
	below.batch.db = db;
	below.batch.flags = dry_run ? RESOLVE_DRY_RUN : 0;
	if (bound == 0 || (rc = s->ops->locks(s, resolve_below, &below)) < 0 ||
	    (rc = lock_batch_flush(&below.batch)) < 0 ||
	    (rc = weak_gc(db, bound, dry_run)) < 0 ||
	    (!dry_run && (rc = s->ops->safe_point_raise(s, bound)) < 0))
		goto done;
	gc.bound = gc.cell.bound = bound;
	gc.dry_run = dry_run;
	while ((rc = s->ops->gc(s, &gc)) == 0 && !gc.done) {
		db_progress(db, "versions removed", gc.removed);
		/* Between batches, let other processes in. */
		db_release(db);
		if ((rc = db_acquire(db, clock_deadline(db->timeout_ms))) < 0)
			break;
	}
	*safe_point_out = bound;
	*removed = gc.removed;
done:
	db_release(db);
	lock_batch_dispose(&below.batch);
	free(gc.cell.puts);
	perc_buf_dispose(&gc.cell.prefix);
	perc_buf_dispose(&gc.resume);
	return rc;
}

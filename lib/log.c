/*
 * lib/log.c - the change log (perc log): committed puts and deletes in
 * commit order, with a resolved timestamp below which nothing more
 * will ever commit.  perc-log(1) gives the argument; in short:
 *
 * A round takes a fresh timestamp T first, then walks the locks,
 * cleaning those of dead owners as a reader does (committing a
 * secondary whose primary committed, under its commit_ts, which writes
 * its change log entry).  R is the smaller of T and the oldest live
 * lock's start, less one.  A transaction still to commit at or below R
 * took its commit_ts before T, so it had written all its locks before
 * T (a commit timestamp is taken after the prewrites); its primary
 * stays locked until its commit point, and each secondary until its
 * own commit: the walk met one of them, whose start is below its
 * commit_ts, and R is below that start.  So every transaction that
 * commits at or below R has committed every cell, and written every
 * change log entry (the store writes a cell's entry in the atomic step
 * that writes its write record), by the time the walk ended: reading
 * the log after the walk, up to R, finds them all, whole.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "db.h"
#include "error.h"
#include "gc.h"
#include "lock.h"
#include "store.h"
#include "wake.h"

/* A batch holds about this many entries, read under one hold of the
   store, then given out with the store let go. */
#define LOG_BATCH 1000
#define HOLD_MS   (600 * 1000)
/* A follower's fallback poll, for a wakeup lost (a writer killed
   between its commit and its wake, a Redis failover). */
#define POLL_MS   1000
#define STUCK_MS  5000

struct change {
	perc_ts commit_ts;
	size_t  off, rlen, clen, vlen;
	int     op;
};

struct perc_log {
	perc_db       *db;
	perc_ts        from;          /* given so far: everything at or
	                                 below it */
	perc_buf       prefix, column;
	int            has_column;
	char           hold[32];      /* DIR/holds/NAME's name */
	int            held;          /* a round has gone by under it */
	/* a round's walk of the locks */
	perc_ts        oldest;        /* the oldest live lock's start */
	perc_buf       brow, bcol;    /* its cell */
	struct lock_batch batch;
	/* a batch of changes, in the arena */
	perc_buf       arena;
	struct change *ch;
	size_t         n, cap;
};

static int64_t
hold_ms(void)
{
	return clock_env_ms("PERC_LOG_HOLD", HOLD_MS);
}

/* Keep history above ts from gc for PERC_LOG_HOLD seconds. */
static int
hold_at(perc_log *lg, perc_ts ts)
{
	if (hold_ms() <= 0 || lg->db->store->read_only)
		return 0;
	return gc_hold_set(lg->db->dir, lg->hold, ts, hold_ms());
}

/* With the store held: gc has kept everything above lg->from. */
static int
check_safe_point(perc_log *lg)
{
	struct store *s = lg->db->store;
	perc_ts sp;
	int rc;

	rc = s->ops->safe_point(s, &sp);
	if (rc == 0 && lg->from < sp)
		rc = error_set(PERC_ETOOOLD, "gc has removed the history at or "
		    "below its safe point %" PRIu64 ", and %" PRIu64 " is "
		    "below it; start a new copy (perc ts, perc scan --at, "
		    "perc log --since) or follow from --since %" PRIu64,
		    sp, lg->from, sp);
	return rc;
}

int
perc_log_open(perc_log **out, perc_db *db, int has_since, perc_ts since,
    perc_bytes prefix, const perc_bytes *column)
{
	perc_log *lg;
	int rc;

	*out = NULL;
	if ((lg = calloc(1, sizeof(*lg))) == NULL)
		return error_set(PERC_EIO, "out of memory");
	lg->db = db;
	lg->batch.db = db;
	snprintf(lg->hold, sizeof(lg->hold), "log.%ld", (long)getpid());
	if (has_since) {
		lg->from = since;
		rc = db_check_at(db, since);
	} else {
		rc = perc_ts_next(&lg->from, db, 1);
	}
	if (rc == 0)
		rc = buf_addb(&lg->prefix, prefix);
	if (rc == 0 && column != NULL) {
		lg->has_column = 1;
		rc = buf_addb(&lg->column, *column);
	}
	/* The hold now, the check in each round: a gc that starts after
	   the check keeps what the round reads. */
	if (rc == 0)
		rc = hold_at(lg, lg->from);
	if (rc < 0) {
		perc_log_free(lg);
		return rc;
	}
	*out = lg;
	return 0;
}

void
perc_log_free(perc_log *lg)
{
	if (lg == NULL)
		return;
	lock_batch_dispose(&lg->batch);
	perc_buf_dispose(&lg->prefix);
	perc_buf_dispose(&lg->column);
	perc_buf_dispose(&lg->brow);
	perc_buf_dispose(&lg->bcol);
	perc_buf_dispose(&lg->arena);
	free(lg->ch);
	free(lg);
}

/* A lock the walk is done with: a live one may hold the round back. */
static int
lock_done(void *arg, perc_bytes row, perc_bytes col, perc_ts start_ts,
    int action)
{
	perc_log *lg = arg;
	int rc;

	if (action != RESOLVE_ALIVE || start_ts >= lg->oldest)
		return 0;
	lg->oldest = start_ts;
	if ((rc = buf_set(&lg->brow, row.data, row.len)) < 0 ||
	    (rc = buf_set(&lg->bcol, col.data, col.len)) < 0)
		return rc;
	return 0;
}

static int
lock_met(void *arg, perc_bytes row, perc_bytes col,
    const struct lock_rec *lock)
{
	perc_log *lg = arg;

	return lock_batch_add(&lg->batch, row, col, lock);
}

/*
 * The resolved timestamp of the moment, t taken before it (see the top
 * of this file): the walk of the locks, with the store held.
 */
static int
resolve(perc_log *lg, perc_ts t, perc_ts *r)
{
	struct store *s = lg->db->store;
	int rc;

	lg->oldest = UINT64_MAX;
	lg->batch.report = lock_done;
	lg->batch.arg = lg;
	if ((rc = store_locks_by_txn(s, lock_met, lg)) == 0)
		rc = lock_batch_flush(&lg->batch);
	if (rc < 0)
		return rc;
	*r = (lg->oldest < t ? lg->oldest : t) - 1;
	return 0;
}

/* A change the store gives: into the batch. */
static int
add_change(void *arg, perc_ts commit_ts, perc_bytes row, perc_bytes col,
    int op, perc_bytes value)
{
	perc_log *lg = arg;
	struct change *c;
	size_t cap;
	int rc;

	if (lg->n == lg->cap) {
		cap = lg->cap ? lg->cap * 2 : 256;
		if ((c = realloc(lg->ch, cap * sizeof(*c))) == NULL)
			return error_set(PERC_EIO, "out of memory");
		lg->ch = c;
		lg->cap = cap;
	}
	c = &lg->ch[lg->n];
	c->commit_ts = commit_ts;
	c->op = op;
	c->off = lg->arena.len;
	c->rlen = row.len;
	c->clen = col.len;
	c->vlen = value.len;
	if ((rc = buf_addb(&lg->arena, row)) < 0 ||
	    (rc = buf_addb(&lg->arena, col)) < 0 ||
	    (rc = buf_addb(&lg->arena, value)) < 0)
		return rc;
	lg->n++;
	return 0;
}

/* Give out the batch, the store let go. */
static int
give_batch(perc_log *lg, perc_log_fn fn, void *arg)
{
	const struct change *c;
	const char *p;
	size_t i;
	int rc = 0;

	for (i = 0; i < lg->n && rc == 0; i++) {
		c = &lg->ch[i];
		p = lg->arena.data + c->off;
		rc = fn(arg, c->commit_ts, bytes_of(p, c->rlen),
		    bytes_of(p + c->rlen, c->clen), c->op == OP_PUT,
		    bytes_of(p + c->rlen + c->clen, c->vlen));
	}
	lg->n = 0;
	buf_reset(&lg->arena);
	return rc;
}

/* With the store held: a batch of the changes in (lg->from, r], up to
   *upto, into lg's batch. */
static int
read_batch(perc_log *lg, perc_ts r, perc_ts *upto)
{
	struct store_log sl;
	int rc;

	memset(&sl, 0, sizeof(sl));
	sl.from = lg->from;
	sl.to = r;
	sl.prefix = buf_bytes(&lg->prefix);
	sl.column = lg->has_column ? &(perc_bytes){ lg->column.data,
	    lg->column.len } : NULL;
	sl.max = LOG_BATCH;
	sl.change = add_change;
	sl.arg = lg;
	rc = lg->db->store->ops->log_read(lg->db->store, &sl);
	*upto = sl.upto;
	return rc;
}

/*
 * Read and give every change in (lg->from, r]: entered with the store
 * held (the first batch is read under the hold the walk of the locks
 * took, which spares opening the store again), left with it let go.
 * Each batch goes out with the store let go, so that a slow reader of
 * the output keeps no writer waiting, and the next is read under a
 * hold of its own.
 */
static int
read_upto(perc_log *lg, perc_ts r, perc_log_fn fn, void *arg)
{
	perc_ts upto;
	int rc;

	for (;;) {
		rc = read_batch(lg, r, &upto);
		db_release(lg->db);
		if (rc == 0 && (rc = give_batch(lg, fn, arg)) == 0)
			lg->from = upto;
		if (rc != 0 || lg->from >= r || (rc = db_acquire(lg->db,
		    clock_deadline(lg->db->timeout_ms))) < 0)
			break;
	}
	lg->n = 0;
	buf_reset(&lg->arena);
	return rc;
}

/*
 * A round: the fresh timestamp first, then, under one hold of the
 * store, the check against gc's safe point, the walk of the locks and
 * the first batch of changes.
 */
int
perc_log_round(perc_log *lg, perc_ts *resolved, perc_log_fn fn, void *arg)
{
	perc_ts t, r;
	int rc;

	if ((rc = perc_ts_next(&t, lg->db, 1)) < 0 ||
	    (rc = db_acquire(lg->db, clock_deadline(lg->db->timeout_ms))) < 0)
		return rc;
	if ((rc = check_safe_point(lg)) == 0 &&
	    (rc = resolve(lg, t, &r)) == 0 && r > lg->from)
		rc = read_upto(lg, r, fn, arg);
	else
		db_release(lg->db);
	if (rc < 0) {
		/* A hold that no round has used is no one's: a --since
		   below the safe point must not leave one at it. */
		if (!lg->held)
			gc_hold_drop(lg->db->dir, lg->hold);
		return rc;
	}
	*resolved = lg->from;   /* never down: from only grows */
	lg->held = 1;
	return hold_at(lg, lg->from);
}

int
perc_log_blocker(const perc_log *lg, perc_bytes *row, perc_bytes *col,
    perc_ts *start_ts)
{
	if (lg->oldest == UINT64_MAX)
		return 0;
	*row = buf_bytes(&lg->brow);
	*col = buf_bytes(&lg->bcol);
	*start_ts = lg->oldest;
	return 1;
}

int
perc_log_wait(perc_log *lg, int64_t timeout_ms, const void *mask)
{
	return db_wait_wake(lg->db, 1, clock_deadline(timeout_ms), mask);
}

int64_t
perc_log_poll_ms(void)
{
	int64_t ms = clock_env_ms("PERC_LOG_POLL", POLL_MS);

	return ms > 0 ? ms : 1;
}

int64_t
perc_log_stuck_ms(void)
{
	return clock_env_ms("PERC_LOG_STUCK", STUCK_MS);
}

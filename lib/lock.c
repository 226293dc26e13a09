/*
 * lib/lock.c - whose lock is this, and cleaning up after a dead owner.
 *
 * A lock names its transaction's primary cell.  The primary decides
 * the fate of every lock of the transaction: committed there means
 * roll forward, which is always safe; not committed there means roll
 * back, which needs proof that the owner is gone (its token is free)
 * or has overrun its TTL, and starts on the primary, so the owner's
 * own commit of the primary fails from then on.
 */
#include <string.h>

#include "batch.h"
#include "buf.h"
#include "clock.h"
#include "error.h"
#include "lock.h"

/*
 * An owner past its TTL that waits for the store (TOKEN_WAITING) is at
 * work: its heartbeat is late because the others, this reader among
 * them, hold the store; its commit gives up past 10 of its
 * PERC_LOCK_TIMEOUTs (yield_store), and so, past 10 of ours, does a
 * reader's patience with one stopped where it waits.
 */
int
lock_owner_state(perc_db *db, const struct lock_rec *lock)
{
	int64_t age = clock_wall_ms() - (int64_t)lock->wall_ms;
	int64_t ttl = (int64_t)lock->ttl_ms;
	int alive = db->store->ops->owner_alive(db->store, lock, db->host);

	if (alive == 0)
		return OWNER_DEAD;
	if (alive == TOKEN_WAITING)
		ttl += 10 * (int64_t)db->timeout_ms;
	if (age > ttl)
		return OWNER_EXPIRED;
	return OWNER_ALIVE;
}

const char *
lock_owner_state_name(int state)
{
	switch (state) {
	case OWNER_ALIVE:
		return "alive";
	case OWNER_DEAD:
		return "dead";
	}
	return "expired";
}

const char *
action_name(int action)
{
	switch (action) {
	case RESOLVE_FORWARD:
		return "rolled-forward";
	case RESOLVE_BACK:
		return "rolled-back";
	}
	return "alive";
}

/*
 * Decide the fate of transaction lock->start_ts from its primary, and
 * roll the primary back when it is still locked by a gone owner (or by
 * anyone, with RESOLVE_FORCE).  Sets *committed_at to its commit
 * timestamp, or 0 when it is (now) rolled back; RESOLVE_ALIVE in
 * *action when its owner lives.
 */
static int
primary_fate(perc_ts *committed_at, int *action, perc_db *db,
    const struct lock_rec *lock, unsigned flags)
{
	perc_bytes prow = buf_bytes(&lock->primary_row);
	perc_bytes pcol = buf_bytes(&lock->primary_col);
	struct store *s = db->store;
	struct lock_rec plock;
	perc_ts at;
	int rc, op;

	*committed_at = 0;
	*action = RESOLVE_BACK;
	memset(&plock, 0, sizeof(plock));
	rc = s->ops->get_lock(s, &plock, prow, pcol);
	if (rc == 0 && plock.start_ts == lock->start_ts) {
		/* Not committed yet: its owner may still be at work. */
		if (!(flags & RESOLVE_FORCE) &&
		    lock_owner_state(db, &plock) == OWNER_ALIVE)
			*action = RESOLVE_ALIVE;
		else if (!(flags & RESOLVE_DRY_RUN))
			rc = s->ops->rollback(s, prow, pcol, lock->start_ts,
			    STORE_PRIMARY);
		/*
		 * On a store others use while we look (Redis), the owner may
		 * have committed between our look and the rollback, which
		 * then refuses: its write record below decides.
		 */
		if (rc != PERC_ECONFLICT)
			goto done;
		rc = PERC_ENOTFOUND;
	}
	if (rc < 0 && rc != PERC_ENOTFOUND)
		goto done;
	/*
	 * The primary holds no lock of ours (another transaction's lock
	 * there says nothing about us): its write records decide.
	 */
	rc = s->ops->find_commit(s, &at, &op, prow, pcol, lock->start_ts);
	if (rc == 0 && op != OP_ROLLBACK) {
		*committed_at = at;
		*action = RESOLVE_FORWARD;
	} else if (rc == PERC_ENOTFOUND && !(flags & RESOLVE_DRY_RUN)) {
		/* Never committed: a rollback record keeps it that way. */
		rc = s->ops->rollback(s, prow, pcol, lock->start_ts,
		    STORE_PRIMARY);
	} else if (rc == PERC_ENOTFOUND) {
		rc = 0;
	}
done:
	codec_lock_dispose(&plock);
	return rc;
}

/* A secondary of transaction start_ts: committed at committed_at, or
   rolled back when that is 0. */
static int
settle_secondary(struct store *s, perc_bytes row, perc_bytes col,
    perc_ts start_ts, perc_ts committed_at)
{
	if (committed_at != 0)
		return s->ops->commit(s, row, col, start_ts, committed_at, 0);
	return s->ops->rollback(s, row, col, start_ts, 0);
}

/*
 * Resolve lock, met on (row, col): roll it forward or back by the state
 * of its primary, or leave it (RESOLVE_ALIVE) when its owner lives and
 * RESOLVE_FORCE is not given.  The caller holds the store.  A walk over
 * many locks passes decided, the fate of the last transaction it
 * settled, final once its primary says it: the other locks of that
 * transaction (thousands, after a big commit died) skip the look at the
 * primary.
 */
int
lock_resolve(int *action, perc_db *db, perc_bytes row, perc_bytes col,
    const struct lock_rec *lock, unsigned flags, struct lock_fate *decided)
{
	perc_ts committed_at;
	int rc;

	if (decided != NULL && decided->start_ts == lock->start_ts) {
		committed_at = decided->commit_ts;
		*action = committed_at != 0 ? RESOLVE_FORWARD : RESOLVE_BACK;
	} else {
		if ((rc = primary_fate(&committed_at, action, db, lock,
		    flags)) < 0 || *action == RESOLVE_ALIVE ||
		    (flags & RESOLVE_DRY_RUN))
			return rc;
		if (decided != NULL) {
			decided->start_ts = lock->start_ts;
			decided->commit_ts = committed_at;
		}
	}
	if (bytes_eq(row, buf_bytes(&lock->primary_row)) &&
	    bytes_eq(col, buf_bytes(&lock->primary_col)))
		return 0;       /* primary_fate did the work */
	return settle_secondary(db->store, row, col, lock->start_ts,
	    committed_at);
}

/* Can the store do the put-off step of decided's locks at once? */
static int
batchable(const struct lock_batch *b)
{
	return !(b->flags & RESOLVE_DRY_RUN) && store_batches(b->db->store);
}

int
lock_batch_add(struct lock_batch *b, perc_bytes row, perc_bytes col,
    const struct lock_rec *lock)
{
	int rc, action;

	if (lock->start_ts == b->decided.start_ts && batchable(b) &&
	    !(bytes_eq(row, buf_bytes(&lock->primary_row)) &&
	    bytes_eq(col, buf_bytes(&lock->primary_col)))) {
		if (b->held.n == BATCH_CELLS &&
		    (rc = lock_batch_flush(b)) != 0)
			return rc;
		return writeset_append(&b->held, &b->cap, OP_LOCK, row, col,
		    bytes_of("", 0));
	}
	if ((rc = lock_batch_flush(b)) != 0 ||
	    (rc = lock_resolve(&action, b->db, row, col, lock, b->flags,
	    &b->decided)) < 0)
		return rc;
	return b->report ? b->report(b->arg, row, col, lock->start_ts,
	    action) : 0;
}

/* The run over the held locks of b->decided (batch.h): its hooks. */
static const struct write *
held_cell(void *arg, size_t k)
{
	struct lock_batch *b = arg;

	return &b->held.w[k];
}

static int
settle_held(void *arg, const struct write *w)
{
	struct lock_batch *b = arg;

	return settle_secondary(b->db->store, buf_bytes(&w->row),
	    buf_bytes(&w->col), b->decided.start_ts, b->decided.commit_ts);
}

static int
settle_held_together(void *arg, const struct write *const *w, size_t n,
    int *done)
{
	struct lock_batch *b = arg;
	struct store *s = b->db->store;
	struct lock_fate d = b->decided;

	if (d.commit_ts != 0)
		return store_commit_many(s, w, n, d.start_ts, d.commit_ts,
		    done);
	return store_rollback_many(s, w, n, d.start_ts, done);
}

static int
report_held(void *arg, const struct write *w)
{
	struct lock_batch *b = arg;

	return b->report(b->arg, buf_bytes(&w->row), buf_bytes(&w->col),
	    b->decided.start_ts, b->decided.commit_ts != 0 ?
	    RESOLVE_FORWARD : RESOLVE_BACK);
}

/*
 * The held locks go together; one the store did not do with the others
 * (it met something else: another lock, no replica in time) is done
 * alone, which says what.
 */
int
lock_batch_flush(struct lock_batch *b)
{
	struct batch run = { .cell = held_cell, .many = settle_held_together,
	    .one = settle_held, .each = b->report != NULL ? report_held : NULL,
	    .arg = b };
	int rc;

	if (b->held.n == 0)
		return 0;
	rc = batch_run(&run, 0, b->held.n);
	lock_batch_dispose(b);
	return rc;
}

void
lock_batch_dispose(struct lock_batch *b)
{
	writeset_dispose(&b->held);
	b->cap = 0;
}

/*
 * A reader that may not write (a read-only directory, a full disk, a
 * failed write) cannot clean a gone owner's lock up, but can often read
 * past it: a committed primary tells the lock's commit timestamp, and
 * a dead owner (its token free) holds no commit timestamp it could
 * still use, so if its primary is not committed it commits, if ever,
 * at a timestamp the oracle hands out later, above this reader's.
 * Only an owner past its TTL whose token this host cannot see may be
 * between its commit timestamp and its commit point: that lock needs
 * a writer.  Sets *known, or returns RESOLVE_ALIVE in *action.
 */
static int
decide_without_writing(struct lock_fate *known, int *action, perc_db *db,
    perc_bytes row, perc_bytes col, const struct lock_rec *lock)
{
	struct lock_rec plock;
	perc_ts committed_at;
	int rc, pending;

	if ((rc = primary_fate(&committed_at, action, db, lock,
	    RESOLVE_DRY_RUN)) < 0 || *action == RESOLVE_ALIVE)
		return rc;
	/* Rolled back for good, or a primary still locked by its owner? */
	memset(&plock, 0, sizeof(plock));
	rc = db->store->ops->get_lock(db->store, &plock,
	    buf_bytes(&lock->primary_row), buf_bytes(&lock->primary_col));
	pending = rc == 0 && plock.start_ts == lock->start_ts &&
	    lock_owner_state(db, &plock) != OWNER_DEAD;
	codec_lock_dispose(&plock);
	if (rc < 0 && rc != PERC_ENOTFOUND)
		return rc;
	if (*action == RESOLVE_BACK && pending)
		return error_set(PERC_EIO, "row '%s' column '%s' is locked by "
		    "transaction %llu, whose owner on host '%.*s' is past "
		    "its TTL; only a process that can write the data "
		    "directory can roll it back: run 'perc resolve-locks' "
		    "there", error_quote(row), error_quote(col),
		    (unsigned long long)lock->start_ts, (int)lock->host.len,
		    lock->host.data);
	known->start_ts = lock->start_ts;
	known->commit_ts = committed_at;
	return 0;
}

/*
 * A live large transaction is pushed to commit above snapshot ts, and
 * the reader reads past its locks, as if it had rolled back: 0, with
 * its fate in *known; or 0 with *known alone when it is decided
 * meanwhile (the caller looks again and finds out how).
 */
static int
push_past(perc_db *db, const struct lock_rec *lock, perc_ts ts,
    struct lock_fate *known)
{
	int rc;

	rc = db->store->ops->push(db->store, buf_bytes(&lock->primary_row),
	    buf_bytes(&lock->primary_col), lock->start_ts, ts);
	if (rc == PERC_ENOTFOUND)
		return 0;
	if (rc == 0) {
		known->start_ts = lock->start_ts;
		known->commit_ts = 0;   /* not in snapshot ts, ever */
	}
	return rc;
}

/*
 * A reader at snapshot ts met lock on (row, col): clean it up if its
 * owner is gone, and read past the other locks of its transaction from
 * then on (*known; when the store cannot be written, learn its fate
 * there without cleaning); push it past ts if it is a large
 * transaction's (see store_ops.push); else let go of the store so the
 * owner can finish, and wait a while.  *decided, when decided is not
 * NULL, becomes the fate of a transaction this call settled, which its
 * other locks, still in the store, share: a scan cleans them as it
 * reads past them.  Returns 0 when the caller should look again,
 * PERC_ETIMEOUT once the deadline has passed.
 */
int
lock_wait_or_clean(perc_db *db, perc_bytes row, perc_bytes col,
    const struct lock_rec *lock, perc_ts ts, struct lock_fate *known,
    struct lock_fate *decided, unsigned *delay_us, int64_t deadline_ms)
{
	struct lock_fate settled = { 0, 0 };
	int rc, action;

	if (db->store->read_only || db->store->failed)
		rc = decide_without_writing(known, &action, db, row, col,
		    lock);
	else if ((rc = lock_resolve(&action, db, row, col, lock, 0,
	    &settled)) < 0 &&
	    (db->store->failed || db->store->read_only))
		/* the disk filled up (the write failed, or a store's server
		   opened it read-only since): read past it */
		rc = decide_without_writing(known, &action, db, row, col,
		    lock);
	else if (rc == 0 && action == RESOLVE_ALIVE && lock->large)
		return push_past(db, lock, ts, known);
	else if (rc == 0 && action != RESOLVE_ALIVE) {
		*known = settled;       /* final: the primary said it */
		if (decided != NULL)
			*decided = settled;
	}
	if (rc < 0 || action != RESOLVE_ALIVE)
		return rc;
	db->store->ops->release(db->store);
	if (clock_backoff(delay_us, 100000, deadline_ms) < 0)
		return error_set(PERC_ETIMEOUT, "row '%s' column '%s' is "
		    "locked by transaction %llu of live process %u; try "
		    "again later, or see 'perc resolve-locks'",
		    error_quote(row), error_quote(col),
		    (unsigned long long)lock->start_ts, lock->pid);
	return db_acquire(db, deadline_ms);
}

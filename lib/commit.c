/*
 * lib/commit.c - Percolator's two-phase commit, and abort.
 *
 * Commit: prewrite the primary, then the secondaries (a write committed
 * after our start, or a live lock, is a conflict; a dead owner's lock
 * is cleaned and we go on); take the commit timestamp only then, which
 * the paper's proof of snapshot isolation needs; commit the primary in
 * one synced batch, the commit point; commit the secondaries.  Where
 * the store writes a whole transaction atomically, a small one takes
 * one step instead (commit_at_once).
 *
 * Before its first prewrite a commit marks the journal, so the journal
 * of a commit that died on the way is frozen: running commit again
 * finishes it (every step is idempotent) unless someone rolled it back
 * meanwhile, and abort knows there are locks to roll back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch.h"
#include "buf.h"
#include "clock.h"
#include "error.h"
#include "failpoint.h"
#include "lock.h"
#include "store.h"
#include "txn.h"
#include "wake.h"
#include "weak.h"

static const perc_bytes none = { "", 0 };

/*
 * A bulk commit (perc_load's, txn->bulk) has the store gather the
 * writes of its secondaries' steps into groups (store_ops.group), each
 * written after GROUP_CELLS cells or GROUP_BYTES bytes, before a lock
 * in the way is resolved, and before a failpoint or the commit point:
 * a crash still stops it between two steps of a cell, never inside one.
 */
#define GROUP_CELLS 4096
#define GROUP_BYTES ((size_t)4 << 20)

struct group {
	int    on;              /* the store is gathering */
	size_t cells, bytes;    /* gathered since the last write */
};

static int
group_start(perc_txn *txn, struct group *g)
{
	struct store *s = txn->db->store;

	if (!txn->bulk || !store_groups(s))
		return 0;
	g->on = 1;
	return store_group(s, 1);
}

/* Write the group out now (when it has grown by w, only if it is big). */
static int
group_flush(perc_txn *txn, struct group *g, const struct write *w)
{
	struct store *s = txn->db->store;

	if (!g->on)
		return 0;
	if (w != NULL) {
		g->cells++;
		g->bytes += w->row.len + w->col.len + w->value.len;
		if (g->cells < GROUP_CELLS && g->bytes < GROUP_BYTES)
			return 0;
	}
	g->cells = g->bytes = 0;
	return store_group(s, 1);
}

/* Write the group out and stop gathering; rc, or the write's failure. */
static int
group_end(perc_txn *txn, struct group *g, int rc)
{
	struct store *s = txn->db->store;
	int wrc;

	if (!g->on)
		return rc;
	g->on = 0;
	wrc = store_group(s, 0);
	return rc < 0 ? rc : wrc;
}

/*
 * A transaction larger than one group, in cells or in bytes, may take
 * longer than a reader would wait: its locks say so, and readers push
 * it past their snapshots rather than wait for it (store_ops.push).
 * Smaller ones commit within one stretch of the store, and readers
 * wait for them, as SPEC says.
 */
static int
is_large(const struct writeset *ws)
{
	size_t i, bytes = 0;

	if (ws->n >= GROUP_CELLS)
		return 1;
	for (i = 0; i < ws->n; i++) {
		bytes += ws->w[i].row.len + ws->w[i].col.len +
		    ws->w[i].value.len;
		if (bytes >= GROUP_BYTES)
			return 1;
	}
	return 0;
}

static int renew_lease(int64_t *renewed, perc_txn *txn);

/*
 * The LevelDB store is one process's at a time: a commit that has held
 * it for YIELD_MS lets the others in between two of its steps, its
 * group written out first.  Its locks stay: what the others do
 * meanwhile meets them as any live transaction's, and its heartbeat
 * keeps them from looking expired: it beats last thing before the
 * commit lets go, after the store's upkeep (the pause, which may take
 * a third of the TTL, and longer on a slow disk), so the others find
 * its primary's wall time fresh (none is needed once the primary is
 * committed: renewed NULL).  Getting the store back may wait for those
 * others longer than a command would: the commit is under way.  When
 * no one waits, the commit keeps the store and goes on: closing and
 * opening LevelDB every YIELD_MS, replaying megabytes of log each time,
 * and waiting at each pause for compactions that a store kept open
 * does in the background, made a lone 1M-cell commit up to ten times
 * slower (keep_lease beats its heart meanwhile).
 */
#define YIELD_MS      100
#define YIELD_PAUSE_US 5000

static int
yield_store(perc_txn *txn, struct group *g, int64_t *since,
    int64_t *renewed)
{
	perc_db *db = txn->db;
	struct store *s = db->store;
	int rc;

	if (!store_exclusive(s) || clock_mono_ms() - *since < YIELD_MS)
		return 0;       /* (a store no one waits for has no pause) */
	if (!store_waited_for(s)) {
		*since = clock_mono_ms();
		return 0;
	}
	if (g->on && (rc = store_group(s, 0)) < 0)
		return rc;
	store_pause(s, clock_deadline(db->ttl_ms / 3));
	if (renewed != NULL && (rc = renew_lease(renewed, txn)) < 0)
		return rc;
	/* Until it is back, the others see it waits (TOKEN_WAITING). */
	journal_mark_waiting(&txn->journal, 1);
	s->ops->release(s);     /* held or not: a pause */
	/* A waiter polls every 2 ms at most (clock_flock): its turn. */
	usleep(YIELD_PAUSE_US);
	rc = db_acquire(db, clock_deadline(10 * db->timeout_ms));
	journal_mark_waiting(&txn->journal, 0);
	if (rc < 0)
		return error_set(PERC_EIO, "the store stayed busy for %lld s "
		    "in the middle of commit %s; readers or perc "
		    "resolve-locks finish it", (long long)(10 *
		    db->timeout_ms / 1000), txn->journal.handle);
	*since = clock_mono_ms();
	return g->on ? store_group(s, 1) : 0;
}

/*
 * The k-th write in commit order: the primary first, then the others
 * in byte order.
 */
static const struct write *
nth(const struct writeset *ws, size_t k)
{
	if (k == 0)
		return &ws->w[ws->primary];
	return &ws->w[k <= ws->primary ? k - 1 : k];
}

static perc_bytes
row_of(const struct write *w)
{
	return buf_bytes(&w->row);
}

static perc_bytes
col_of(const struct write *w)
{
	return buf_bytes(&w->col);
}

/* STORE_BULK for each step of a bulk load's commit. */
static unsigned
bulk_flag(const perc_txn *txn)
{
	return txn->bulk ? STORE_BULK : 0;
}

/* The flags of w's prewrite: STORE_NOTIFY where w changes an observed
   column, and bulk_flag. */
static unsigned
cell_flags(const perc_txn *txn, const struct write *w)
{
	return (db_is_strong(txn->db, col_of(w)) ? STORE_NOTIFY : 0) |
	    bulk_flag(txn);
}

/*
 * Prewrite one cell, cleaning up the locks of gone owners on the way;
 * a live owner's lock is a conflict at once, never a wait.  The
 * primary's prewrite takes our lease in the store, on a store shared
 * with other machines, which cannot see our journal token.
 */
static int
prewrite_cell(perc_ts *committed_at, perc_txn *txn, const struct write *w,
    struct lock_rec *lock, struct group *g)
{
	struct store *s = txn->db->store;
	unsigned flags = cell_flags(txn, w);
	struct lock_rec blocker;
	int rc, action, tries;

	if (w == nth(&txn->writes, 0))
		flags |= STORE_PRIMARY;
	memset(&blocker, 0, sizeof(blocker));
	lock->op = w->op;
	for (tries = 0; tries < 64; tries++) {
		rc = s->ops->prewrite(s, committed_at, w, lock, flags,
		    &blocker);
		if (rc != PERC_ELOCKED || (rc = group_flush(txn, g, NULL)) < 0)
			break;
		rc = lock_resolve(&action, txn->db, row_of(w), col_of(w),
		    &blocker, 0, NULL);
		if (rc == 0 && action == RESOLVE_ALIVE)
			rc = error_set(PERC_ECONFLICT, "row '%s' column '%s' "
			    "is locked by live transaction %llu (process "
			    "%u); retry with a new transaction",
			    error_quote(row_of(w)), error_quote(col_of(w)),
			    (unsigned long long)blocker.start_ts, blocker.pid);
		if (rc < 0)
			break;
	}
	codec_lock_dispose(&blocker);
	return rc;
}

/*
 * The commit point: the primary's write record, durable, with, for an
 * observer, the clearing of the notifications it handled in the same
 * single-row step, and the dropping of our lease.
 */
static int
commit_primary(perc_txn *txn, perc_ts commit_ts)
{
	const struct write *p = nth(&txn->writes, 0);
	struct store *s = txn->db->store;

	return s->ops->commit(s, row_of(p), col_of(p), txn->journal.start_ts,
	    commit_ts, STORE_SYNC | STORE_PRIMARY | bulk_flag(txn) |
	    (p->ack ? STORE_CLEAR_NOTIFY : 0));
}

/*
 * A commit that takes long beats its heart every sixth of its TTL, as
 * the paper's long commits do: its primary lock's wall time becomes
 * now, so that readers it lets in (yield_store) do not take its locks
 * for expired, and where owners keep a lease (the Redis store), the
 * lease is renewed, as the paper's workers keep their Chubby lock.
 */
static int
renew_lease(int64_t *renewed, perc_txn *txn)
{
	struct store *s = txn->db->store;

	*renewed = clock_mono_ms();
	return s->ops->lease_keep(s, row_of(nth(&txn->writes, 0)),
	    col_of(nth(&txn->writes, 0)), txn->journal.start_ts,
	    txn->db->ttl_ms);
}

static int
keep_lease(int64_t *renewed, perc_txn *txn)
{
	if (clock_mono_ms() - *renewed < (int64_t)txn->db->ttl_ms / 6)
		return 0;
	return renew_lease(renewed, txn);
}

/*
 * A run of one step over the transaction's cells (lib/batch.c), in
 * commit order, and what a long one keeps up between two steps.
 */
struct run {
	perc_txn        *txn;
	struct group     g;
	int64_t          held;          /* yield_store's */
	int64_t          renewed;       /* the heartbeat's */
	int              beats;         /* the primary is not committed */
	const char      *failpoint;     /* after the first step */
	struct lock_rec *lock;          /* prewrite's */
	perc_ts         *committed_at;  /* prewrite's */
	perc_ts          commit_ts;     /* commit's */
};

static const struct write *
run_cell(void *arg, size_t k)
{
	struct run *r = arg;

	return nth(&r->txn->writes, k);
}

/*
 * Between two steps: after the first, the failpoint, and the store
 * starts gathering a bulk commit's writes; after the others, what is
 * gathered is written when it is big.  Then the heartbeat, before the
 * commit point, and the others' turn at the store (yield_store).
 */
static int
pace(void *arg, const struct write *w, int first)
{
	struct run *r = arg;
	int rc = 0;

	if (first) {
		if ((rc = failpoint(r->txn->db, r->failpoint)) == 0)
			rc = group_start(r->txn, &r->g);
	} else if (w != NULL) {
		rc = group_flush(r->txn, &r->g, w);
	}
	if (rc == 0 && r->beats)
		rc = keep_lease(&r->renewed, r->txn);
	if (rc == 0)
		rc = yield_store(r->txn, &r->g, &r->held,
		    r->beats ? &r->renewed : NULL);
	return rc;
}

static int
prewrite_one(void *arg, const struct write *w)
{
	struct run *r = arg;

	return prewrite_cell(r->committed_at, r->txn, w, r->lock, &r->g);
}

static int
prewrite_batch(void *arg, const struct write *const *w, size_t n,
    int *done)
{
	struct run *r = arg;
	struct store *s = r->txn->db->store;
	unsigned flags[BATCH_CELLS] = { 0 };    /* as batch.c's w */
	size_t i;

	for (i = 0; i < n; i++)
		flags[i] = cell_flags(r->txn, w[i]);
	return store_prewrite_many(s, w, flags, n, r->lock, done);
}

/* The lock that the prewrites leave on each cell. */
static int
lock_init(struct lock_rec *lock, perc_txn *txn)
{
	const struct writeset *ws = &txn->writes;
	perc_db *db = txn->db;
	int rc;

	memset(lock, 0, sizeof(*lock));
	lock->start_ts = txn->journal.start_ts;
	lock->wall_ms = (uint64_t)clock_wall_ms();
	lock->ttl_ms = db->ttl_ms;
	lock->pid = (uint32_t)getpid();
	lock->large = is_large(ws);
	if ((rc = buf_set(&lock->host, db->host, strlen(db->host))) < 0 ||
	    (rc = buf_addb(&lock->primary_row, row_of(nth(ws, 0)))) < 0)
		return rc;
	return buf_addb(&lock->primary_col, col_of(nth(ws, 0)));
}

/*
 * The prewrites, the primary first: 0 when every cell is locked,
 * PERC_ECOMMITTED when an earlier run of this commit already passed
 * the commit point, else the failure, with *done set to how many
 * cells this transaction locked (batch_run's count).
 */
static int
prewrite_all(perc_ts *committed_at, size_t *done, perc_txn *txn)
{
	struct lock_rec lock;
	struct run r = { .txn = txn, .held = clock_mono_ms(), .beats = 1,
	    .failpoint = "after-prewrite-primary", .lock = &lock,
	    .committed_at = committed_at };
	struct batch b = { .cell = run_cell, .one = prewrite_one,
	    .after = pace, .arg = &r, .first_alone = 1, .db = txn->db,
	    .counted = "cells locked" };
	int rc;

	r.renewed = r.held;
	if (store_batches(txn->db->store))
		b.many = prewrite_batch;
	if ((rc = lock_init(&lock, txn)) == 0) {
		rc = batch_run(&b, 0, txn->writes.n);
		*done = b.done;
		/* What is gathered is written: a rollback must see those
		   locks. */
		rc = group_end(txn, &r.g, rc);
		if (rc == 0)
			rc = failpoint(txn->db, "after-prewrite");
	}
	codec_lock_dispose(&lock);
	return rc;
}

static int
commit_one(void *arg, const struct write *w)
{
	struct run *r = arg;
	struct store *s = r->txn->db->store;

	return s->ops->commit(s, row_of(w), col_of(w),
	    r->txn->journal.start_ts, r->commit_ts, bulk_flag(r->txn));
}

static int
commit_batch(void *arg, const struct write *const *w, size_t n, int *done)
{
	struct run *r = arg;
	struct store *s = r->txn->db->store;

	return store_commit_many(s, w, n, r->txn->journal.start_ts,
	    r->commit_ts, done);
}

/* Commit every secondary at commit_ts, and settle the weak
   notifications; the commit point is behind us. */
static int
commit_secondaries(perc_txn *txn, perc_ts commit_ts)
{
	struct run r = { .txn = txn, .held = clock_mono_ms(),
	    .failpoint = "after-commit-secondary", .commit_ts = commit_ts };
	struct batch b = { .cell = run_cell, .one = commit_one,
	    .after = pace, .arg = &r, .first_alone = 1, .db = txn->db,
	    .counted = "cells committed" };
	int rc;

	if (store_batches(txn->db->store))
		b.many = commit_batch;
	if ((rc = batch_run(&b, 1, txn->writes.n)) == 0)
		db_progress(txn->db, "cells committed", txn->writes.n);
	rc = group_end(txn, &r.g, rc);
	if (rc == 0 && txn->bulk)
		rc = store_bulk_done(txn->db->store, txn->journal.start_ts);
	/* The weak notifications pending since before the commit point. */
	if (rc == 0)
		rc = weak_settle_all(txn, commit_ts, 0);
	if (rc < 0)
		return error_set(rc == PERC_ECONFLICT ? PERC_EIO : rc,
		    "transaction %s committed at %llu but its secondaries "
		    "could not all be finished (%s); readers will finish "
		    "them, or run 'perc resolve-locks'", txn->journal.handle,
		    (unsigned long long)commit_ts, perc_errmsg());
	return 0;
}

static int
rollback_one(void *arg, const struct write *w)
{
	struct run *r = arg;
	struct store *s = r->txn->db->store;

	return s->ops->rollback(s, row_of(w), col_of(w),
	    r->txn->journal.start_ts,
	    w == nth(&r->txn->writes, 0) ? STORE_PRIMARY : 0);
}

/* Roll back the first n cells of this transaction, in commit order. */
static int
roll_back_own(perc_txn *txn, size_t n)
{
	struct run r = { .txn = txn };
	struct batch b = { .cell = run_cell, .one = rollback_one, .arg = &r };
	int rc;

	if ((rc = batch_run(&b, 0, n)) == 0 && txn->bulk)
		rc = store_bulk_done(txn->db->store, txn->journal.start_ts);
	return rc;
}

/*
 * Take the commit timestamp and commit the primary at it.  Readers may
 * have pushed a large transaction above their snapshots meanwhile
 * (PERC_EPUSHED): a timestamp taken after that is above every mark
 * set before it, so the next try passes, unless readers push again.
 */
static int
commit_point(perc_ts *commit_ts, perc_txn *txn)
{
	int rc, tries = 0;

	do {
		if ((rc = perc_ts_next(commit_ts, txn->db, 1)) < 0)
			return error_set(PERC_ECONFLICT, "%s", perc_errmsg());
		rc = commit_primary(txn, *commit_ts);
	} while (rc == PERC_EPUSHED && ++tries < 64);
	if (rc == PERC_EPUSHED)
		rc = error_set(PERC_ECONFLICT, "readers kept pushing "
		    "transaction %s past its commit timestamps; retry with "
		    "a new transaction", txn->journal.handle);
	return rc;
}

/*
 * A transaction commits in one step where the store can write it whole
 * atomically (store_ops.commit_at_once): no locks, one synced write,
 * where the two steps write each cell twice and the lock twice more
 * (a load of 1M cells in batches of 100,000: 2.0 s, against 7.5 s).
 * Not a commit that an earlier run began, which may have left locks;
 * nor an observer's, whose ack clears notifications at its commit
 * point; nor one with weak notifications, which are pending before its
 * commit point (weak.c); nor under PERC_FAILPOINT, whose points are
 * the two steps' (SPEC: they leave locks on purpose); nor one that
 * would keep the store from the others much longer than a big commit's
 * YIELD_MS stretch: ONCE_CELLS cells take some 150 ms here.
 * PERC_ELOCKED: take the two steps.
 */
#define ONCE_CELLS ((size_t)1 << 17)
#define ONCE_BYTES ((size_t)16 << 20)

static int
commit_at_once(perc_ts *commit_ts, perc_txn *txn)
{
	const struct writeset *ws = &txn->writes;
	struct store *s = txn->db->store;
	unsigned *flags;
	size_t i, bytes = 0;
	int rc = 0;

	if (!store_commits_at_once(s) || ws->commit_begun ||
	    ws->n > ONCE_CELLS || ws->nnotes > 0 || failpoint_armed())
		return PERC_ELOCKED;
	if ((flags = calloc(ws->n, sizeof(*flags))) == NULL)
		return error_set(PERC_EIO, "out of memory");
	for (i = 0; i < ws->n && rc == 0; i++) {
		const struct write *w = &ws->w[i];

		bytes += w->row.len + w->col.len + w->value.len;
		if (w->ack || w->op == OP_ACK || bytes > ONCE_BYTES)
			rc = PERC_ELOCKED;
		flags[i] = cell_flags(txn, w);
	}
	if (rc == 0 && (rc = store_commit_at_once(s, ws, flags,
	    txn->journal.start_ts, commit_ts)) == 0 &&
	    *commit_ts > txn->db->ts_high)
		txn->db->ts_high = *commit_ts;
	free(flags);
	return rc;
}

/* After the token and the store are ours: the protocol itself. */
static int
commit_locked(perc_ts *out, perc_txn *txn)
{
	const struct writeset *ws = &txn->writes;
	perc_db *db = txn->db;
	perc_ts commit_ts = 0;
	size_t done = 0;
	char why[512];
	int rc, rb;

	if (!ws->commit_begun && (rc = journal_append(&txn->journal,
	    JOURNAL_COMMIT_BEGUN, none, none, none, 0)) < 0)
		return rc;
	if (ws->n == 0)
		return weak_commit_notes(out, txn);
	rc = commit_at_once(&commit_ts, txn);
	txn->writes.commit_begun = 1;   /* for an abort of bulk writes */
	if (rc == 0)
		goto done;
	if (rc == PERC_ECONFLICT || rc == PERC_ETOOOLD) {
		snprintf(why, sizeof(why), "%s", perc_errmsg());
		journal_finish(&txn->journal);
		return error_set(rc, "%s", why);
	}
	if (rc != PERC_ELOCKED)
		return rc;
	rc = prewrite_all(&commit_ts, &done, txn);
	if (rc == PERC_ECOMMITTED)
		goto secondaries;       /* an earlier run got that far */
	if (rc == 0)
		rc = weak_pend_all(txn);
	if (rc == 0)
		rc = commit_point(&commit_ts, txn);
	if (rc == PERC_ECONFLICT || rc == PERC_ETOOOLD) {
		/* Finished: take back what we locked, primary first. */
		snprintf(why, sizeof(why), "%s", perc_errmsg());
		if ((rb = roll_back_own(txn, done < ws->n ? done + 1 : done))
		    < 0)
			return rb;
		journal_finish(&txn->journal);
		return error_set(rc, "%s", why);
	}
	if (rc < 0 || (rc = failpoint(db, "after-commit-primary")) < 0)
		return rc;
secondaries:
	if ((rc = commit_secondaries(txn, commit_ts)) < 0)
		return rc;
done:
	*out = commit_ts;
	return journal_finish(&txn->journal);
}

/*
 * Does the commit set a notification (a write that changes an observed
 * column, cell_flags, or a weak one, perc_txn_notify) or clear one (an
 * observer's ack)?  Only such a commit wakes the waiters: runners, perc
 * wait (lib/wake.c).
 */
static int
changes_notifications(const perc_txn *txn)
{
	const struct writeset *ws = &txn->writes;
	size_t i;

	if (ws->nnotes > 0)
		return 1;
	for (i = 0; i < ws->n; i++)
		if (ws->w[i].ack || (!OP_KEEPS_VALUE(ws->w[i].op) &&
		    (cell_flags(txn, &ws->w[i]) & STORE_NOTIFY)))
			return 1;
	return 0;
}

int
perc_txn_commit(perc_ts *out, perc_txn *txn)
{
	int64_t deadline = clock_deadline(txn->db->timeout_ms);
	struct store *s = txn->db->store;
	int rc, bulk = s->bulk;

	*out = 0;
	if (!txn->bulk) {
		txn->loaded = 0;
		writeset_dispose(&txn->writes);
	}
	if ((rc = failpoint_check()) < 0 ||
	    (rc = journal_take_token(&txn->journal, deadline)) < 0 ||
	    (rc = txn_writes(txn)) < 0)
		return rc;
	if (txn->writes.n == 0 && txn->writes.nnotes == 0)
		return journal_finish(&txn->journal);
	/* A large commit keeps the store while no one waits (yield_store):
	   opened for a bulk writer, its memtables make tables of MBs. */
	s->bulk = bulk || is_large(&txn->writes);
	rc = db_acquire(txn->db, deadline);
	s->bulk = bulk;
	if (rc < 0)
		return rc;
	rc = commit_locked(out, txn);
	db_release(txn->db);
	if (rc == 0)
		db_count_commit(txn->db);
	/* Whatever the outcome: a notify cell of a commit that failed
	   late stays, and an observer finds it. */
	if (changes_notifications(txn))
		db_wake(txn->db, 0);
	/* The followers of the log: a commit that wrote something. */
	if (rc == 0)
		db_wake(txn->db, 1);
	return rc;
}

/*
 * Abort: discard the journal, and when a commit had begun, roll back
 * its locks, the primary first so that no one can roll it forward.
 * A crashed commit whose primary has decided is finished already
 * (PERC_ENOTXN): past its commit point it cannot be aborted, and its
 * secondaries are finished instead; rolled back by a reader, what is
 * left of its locks goes.
 */
static int
abort_locked(perc_txn *txn)
{
	const struct writeset *ws = &txn->writes;
	perc_ts at;
	int rc, op, rolled_back;

	rc = txn->db->store->ops->find_commit(txn->db->store, &at, &op,
	    row_of(nth(ws, 0)), col_of(nth(ws, 0)), txn->journal.start_ts);
	if (rc == 0 && op != OP_ROLLBACK) {
		if ((rc = commit_secondaries(txn, at)) == 0)
			rc = error_set(PERC_ENOTXN, "transaction %s had "
			    "already committed at %llu and is finished; it "
			    "cannot be aborted", txn->journal.handle,
			    (unsigned long long)at);
		return rc;
	}
	if (rc < 0 && rc != PERC_ENOTFOUND)
		return rc;
	/* A rollback record: a reader's, after the commit died. */
	rolled_back = rc == 0;
	if ((rc = roll_back_own(txn, ws->n)) < 0 || !rolled_back)
		return rc;
	return error_set(PERC_ENOTXN, "transaction %s was already rolled "
	    "back and is finished", txn->journal.handle);
}

int
perc_txn_abort(perc_txn *txn)
{
	int64_t deadline = clock_deadline(txn->db->timeout_ms);
	int rc, finished;

	if (!txn->bulk) {
		txn->loaded = 0;
		writeset_dispose(&txn->writes);
	}
	if ((rc = journal_take_token(&txn->journal, deadline)) < 0)
		return rc;
	/*
	 * A damaged journal cannot say which cells it locked; if a commit
	 * had begun, readers clean those locks up once we are gone.
	 */
	if (txn_writes(txn) == 0 && txn->writes.commit_begun &&
	    txn->writes.n > 0) {
		if ((rc = db_acquire(txn->db, deadline)) < 0)
			return rc;
		rc = abort_locked(txn);
		db_release(txn->db);
		if (rc < 0 && rc != PERC_ENOTXN)
			return rc;
	}
	/* A journal that stays (read-only directory) keeps it open. */
	if ((finished = journal_finish(&txn->journal)) < 0)
		return finished;
	return rc;
}

/*
 * A crashed commit (journal_each_abandoned) is finished once its
 * primary holds no lock of it and has its write record: committed
 * (readers roll the rest forward) or rolled back.  Its journal then
 * goes.  A primary with neither was never prewritten, and perc commit
 * may still be run again, unless the transaction started below gc's
 * safe point: gc settled its locks first, and may have removed the
 * record since.  A damaged journal is perc abort's to discard.  A bulk
 * load's journal holds no writes (they were in its memory): nothing can
 * run it again, and its locks are settled by their primary.
 */
static int
crash_finished(int *finished, struct store *s, const struct journal *j,
    const struct write *primary)
{
	struct lock_rec lock;
	perc_ts at, safe_point;
	int rc, op;

	*finished = 0;
	memset(&lock, 0, sizeof(lock));
	rc = s->ops->get_lock(s, &lock, row_of(primary), col_of(primary));
	if (rc == 0 && lock.start_ts == j->start_ts)
		goto done;      /* its fate is still open */
	if (rc == 0 || rc == PERC_ENOTFOUND)
		rc = s->ops->find_commit(s, &at, &op, row_of(primary),
		    col_of(primary), j->start_ts);
	if (rc == PERC_ENOTFOUND &&
	    (rc = s->ops->safe_point(s, &safe_point)) == 0)
		*finished = j->start_ts < safe_point;
	else if (rc == 0)
		*finished = 1;
done:
	codec_lock_dispose(&lock);
	return rc;
}

static int
remove_if_finished(struct journal *j, void *arg)
{
	perc_db *db = arg;
	struct writeset ws;
	int rc = 0, finished = 1;

	if (journal_load(&ws, j) < 0)
		return 0;
	if (ws.n > 0)
		rc = crash_finished(&finished, db->store, j, nth(&ws, 0));
	if (rc == 0 && finished)
		rc = journal_finish(j);
	writeset_dispose(&ws);
	return rc;
}

int
txn_remove_finished(perc_db *db)
{
	return journal_each_abandoned(db->dir, remove_if_finished, db);
}

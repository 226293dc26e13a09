/*
 * lib/wait.c - waiting for notifications: a runner's wait for one
 * (perc_notify_wait), and perc wait, which waits until the observers
 * are done (perc_wait).
 *
 * Why perc wait cannot return early (perc-wait(1) says it for users):
 *
 *  1. A pending change is always a visible notify cell.  A commit
 *     writes the notify cell of a cell of an observed column in the
 *     same single-row step as that cell's lock, at prewrite (STORE_NOTIFY:
 *     leveldb/mvcc.c, redis/lua/prewrite.lua; the LevelDB store's commit
 *     in one step, commit_at_once, writes them in its one batch).  An
 *     observer's run is on a dirty cell, whose notify cell stays until
 *     the run's ack commits: the commit point, the same single-row step
 *     that clears it (STORE_CLEAR_NOTIFY), comes after the prewrites of
 *     all of the run's own writes, whose notify cells are then there.
 *     A weak notification (weak.c) is a notify-region key too: pending
 *     before its transaction's commit point, the notification after it
 *     in one step; a weak run clears it after its own commit.
 *     No other step removes a notify cell (rollbacks and gc leave them).
 *     So at every instant, a commit that has locked a cell of an
 *     observed column and is not finished, or an observer's run that
 *     may still commit, has a notify cell in the store: at an instant
 *     when there is none, nothing is pending but commits that have not
 *     yet locked such a cell, which may as well begin after wait ends.
 *
 *  2. The look must see one instant.  A walk of the notify cells that
 *     is not atomic can miss a chain: B written behind the walk before
 *     A, ahead of it, is cleared.  On the LevelDB store the walk is one
 *     iterator, a snapshot, under the store's lock, which every commit
 *     holds for each of its steps: atomic.  On a Redis store each
 *     bucket's mark (store.h's notify_epoch) changes in the same script
 *     as any of its notify cells; read before and after the walk, marks
 *     that did not move say no notify cell changed during the walk,
 *     which therefore saw the state of one instant.
 *
 * With no dirty cell in such a look, wait ends.  Otherwise it sleeps
 * until a commit that sets or clears a notification wakes it (lib/wake.c),
 * with the fallback poll, and looks again.
 */
#include <inttypes.h>
#include <stdio.h>

#include "buf.h"
#include "clock.h"
#include "db.h"
#include "error.h"
#include "runners.h"
#include "wake.h"

/* A look that saw the marks move looks again this soon. */
#define UNSETTLED_MS 20

int
perc_notify_wait(perc_db *db, int64_t timeout_ms, const void *mask)
{
	return db_wait_wake(db, 0, clock_deadline(timeout_ms), mask);
}

void
perc_notify_wake(perc_db *db)
{
	db_wake(db, 0);
}

int64_t
perc_notify_poll_ms(void)
{
	return wake_poll_ms();
}

struct dirty_count {
	const perc_bytes *cols;
	size_t            ncols;
	uint64_t          n;
};

static int
count_dirty(void *arg, perc_bytes row, perc_bytes col, perc_bytes failures)
{
	struct dirty_count *c = arg;
	size_t i;

	(void)row;
	(void)failures;
	for (i = 0; i < c->ncols; i++)
		if (bytes_eq(c->cols[i], col))
			break;
	if (c->ncols == 0 || i < c->ncols)
		c->n++;
	return 0;
}

/*
 * One look at the dirty cells of the columns (all, when none are
 * named): their number, and whether the look saw one instant (*settled
 * 0: a notify cell changed meanwhile, look again).
 */
static int
look(struct dirty_count *c, int *settled, perc_db *db)
{
	perc_buf before = PERC_BUF_INIT, after = PERC_BUF_INIT;
	struct store *s = db->store;
	int rc;

	c->n = 0;
	*settled = 1;
	if ((rc = db_acquire(db, clock_deadline(db->timeout_ms))) < 0)
		return rc;
	rc = store_notify_epoch(s, &before);
	if (rc == 0)
		rc = s->ops->notify_scan(s, c->ncols == 1 ? &c->cols[0] : NULL,
		    count_dirty, c);
	if (rc == 0 && c->n == 0 &&
	    (rc = store_notify_epoch(s, &after)) == 0)
		*settled = bytes_eq(buf_bytes(&before), buf_bytes(&after));
	db_release(db);
	perc_buf_dispose(&before);
	perc_buf_dispose(&after);
	return rc;
}

/*
 * Dirty cells whose count has not gone down for this long are waited
 * for with a hint, on a terminal: a person cannot tell a wait for a
 * runner that is not there from one for a runner that works.
 */
#define STUCK_MS 3000

/*
 * What the wait is at, for a person (db_progress): the dirty cells,
 * the runners of their columns seen on this machine (read off
 * /proc/locks, so only when someone is shown it), and, stuck, a hint.
 */
static void
show_progress(perc_db *db, const struct dirty_count *c,
    const perc_bytes *columns, size_t ncolumns, int stuck)
{
	unsigned runners = runners_seen(db->dir, columns, ncolumns);
	const char *hint = "";
	char shown[128];

	if (stuck)
		hint = runners == 0 ? ", none done for 3 s: start perc "
		    "run-observer on their columns" : ", none done for 3 s";
	snprintf(shown, sizeof(shown), "dirty cells left, %u runner%s seen%s",
	    runners, runners == 1 ? "" : "s", hint);
	db_progress(db, shown, c->n);
}

int
perc_wait(uint64_t *dirty, perc_db *db, const perc_bytes *columns,
    size_t ncolumns, int64_t timeout_ms)
{
	struct dirty_count c = { columns, ncolumns, 0 };
	int64_t end, until, now, moved = clock_mono_ms();
	uint64_t last = UINT64_MAX;
	size_t i;
	int rc, settled;

	*dirty = 0;
	for (i = 0; i < ncolumns; i++)
		if ((rc = perc_observer_check(db, columns[i])) < 0)
			return rc;
	end = timeout_ms < 0 ? INT64_MAX : clock_deadline(timeout_ms);
	/* Watch first: a wake that comes after the look is not missed. */
	db_wait_wake(db, 0, clock_mono_ms(), NULL);
	for (;;) {
		if ((rc = look(&c, &settled, db)) < 0)
			return rc;
		*dirty = c.n;
		if (c.n < last)
			moved = clock_mono_ms();
		last = c.n;
		if (db->progress != NULL)
			show_progress(db, &c, columns, ncolumns,
			    c.n > 0 && clock_mono_ms() - moved >= STUCK_MS);
		if (c.n == 0 && settled)
			return 0;
		if ((now = clock_mono_ms()) >= end)
			break;
		until = now + (settled ? wake_poll_ms() : UNSETTLED_MS);
		db_wait_wake(db, 0, until < end ? until : end, NULL);
	}
	if (c.n == 0)
		return error_set(PERC_ETIMEOUT, "the notify cells kept "
		    "changing until the timeout; try again, or with a longer "
		    "--timeout");
	return error_set(PERC_ETIMEOUT, "%" PRIu64 " cell%s still dirty at "
	    "the timeout; perc scan-notify lists %s, and perc "
	    "run-observer on each observed column runs %s", c.n,
	    c.n == 1 ? " is" : "s are", c.n == 1 ? "it" : "them",
	    c.n == 1 ? "its observer" : "their observers");
}

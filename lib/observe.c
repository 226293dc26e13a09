/*
 * lib/observe.c - one pass of an observer runner over the dirty cells
 * of a column, scheduled as in the paper: start at a random cell and
 * wrap around; before running on a row take a light lock on it (a
 * kernel lock, gone with its holder), and when another runner holds
 * it, we are right behind that runner: jump to a new random point.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "error.h"
#include "escape.h"
#include "notify.h"
#include "runners.h"
#include "txn.h"
#include "wake.h"
#include "weak_run.h"

struct dirty {
	perc_buf row;
	int64_t  retry_at_ms;
	int      visited;       /* this pass has been here */
};

struct dirty_list {
	struct dirty *cells;
	size_t        n, cap;
};

static int
collect(const perc_notify *n, void *arg)
{
	struct dirty_list *l = arg;
	struct dirty *grown;

	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 64;
		if ((grown = realloc(l->cells, l->cap * sizeof(*grown))) ==
		    NULL)
			return error_set(PERC_EIO, "out of memory");
		l->cells = grown;
	}
	memset(&l->cells[l->n], 0, sizeof(*l->cells));
	l->cells[l->n].retry_at_ms = n->retry_at_ms;
	return buf_addb(&l->cells[l->n++].row, n->row);
}

/*
 * The first cell at or after from, wrapping around, that this pass has
 * not visited; the caller knows one is left.
 */
static size_t
next_unvisited(const struct dirty_list *l, size_t from)
{
	size_t i = from % l->n;

	while (l->cells[i].visited)
		i = (i + 1) % l->n;
	return i;
}

/*
 * The light per-row lock: an open-file-description lock on one byte of
 * DIR/observer.lock.  1 when taken, 0 when another runner has it.
 */
static int
row_lock(int fd, perc_bytes row, int how)
{
	struct flock fl;

	memset(&fl, 0, sizeof(fl));
	fl.l_type = how;
	fl.l_whence = SEEK_SET;
	fl.l_start = runners_row_byte(row);
	fl.l_len = 1;
	return fcntl(fd, F_OFD_SETLK, &fl) == 0;
}

/*
 * A run in flight: its cell, its transaction, and the light lock on its
 * row, taken through an open file description of its own, so that two
 * runs of one pass exclude each other as two runners do.
 */
struct slot {
	size_t    cell;
	perc_txn *txn;
	int       fd;
	int       busy;
};

/*
 * The pass's side of observe, start and wait: with observe, a run ends
 * as it starts, and wait gives back its status.
 */
struct runs {
	const perc_observer *obs;
	struct slot         *slot;
	size_t               n, busy;
	size_t               ended;    /* observe's run: its slot */
	int                  status;   /* and its status */
};

static void
start_run(struct runs *r, size_t k, perc_bytes row, perc_bytes column)
{
	const perc_observer *obs = r->obs;

	if (obs->start != NULL) {
		obs->start(k, r->slot[k].txn, row, column, obs->arg);
		return;
	}
	r->ended = k;
	r->status = obs->observe(r->slot[k].txn, row, column, obs->arg);
}

/* The slot of the next run to end, its status in *status. */
static size_t
wait_run(struct runs *r, int *status)
{
	if (r->obs->start != NULL)
		return r->obs->wait(status, r->obs->arg);
	*status = r->status;
	return r->ended;
}

/*
 * The end of a run on (row, column) whose observer said status: commit
 * or abort its transaction, and report what happened.
 */
static int
end_run(perc_db *db, perc_bytes row, perc_bytes column,
    const perc_observer *obs, struct slot *sl, size_t k, int status)
{
	perc_observer_run run;
	perc_txn *txn = sl->txn;
	int rc, weak = db_is_weak(db, column);

	memset(&run, 0, sizeof(run));
	run.row = row;
	run.column = column;
	run.slot = k;
	run.status = status;
	if (run.status == 0) {
		rc = perc_txn_commit(&run.commit_ts, txn);
		/* A weak run, even one that wrote nothing, clears what
		   its snapshot saw (weak_run.c). */
		if (rc == 0 && weak)
			rc = weak_observer_clear(db, row, column,
			    perc_txn_start_ts(txn));
		if (rc == 0) {
			run.outcome = "committed";
		} else if (rc == PERC_ECONFLICT || rc == PERC_ENOTXN) {
			/*
			 * Another runner's ack clears the cell; a conflict on
			 * anything else leaves it dirty for a later run.
			 */
			run.outcome = notify_pending(db, row, column) ==
			    PERC_ENOTFOUND ? "taken" : "conflicted";
			rc = 0;
		}
	} else {
		perc_txn_abort(txn);
		run.outcome = "failed";
		rc = perc_observer_failed(&run.failures, db, row, column);
	}
	perc_txn_free(txn);
	sl->txn = NULL;
	if (obs->done != NULL)
		obs->done(&run, rc, obs->arg);
	if (rc == 0 && obs->report != NULL)
		obs->report(&run, obs->arg);
	if (rc == 0 && (run.status != 0 ||
	    strcmp(run.outcome, "conflicted") == 0))
		rc = 1;
	return rc;
}

/* A message's list of the observed columns stops at about this long. */
#define OBSERVED_LIST_MAX 300

/* Refuse a column that is not observed, naming those that are. */
int
perc_observer_check(perc_db *db, perc_bytes column)
{
	const struct observed *o = &db->observed;
	perc_buf list = PERC_BUF_INIT;
	size_t i, n = o->nstrong + o->nweak;
	int rc = 0;

	if (db_is_observed(db, column))
		return 0;
	for (i = 0; i < n && rc == 0; i++) {
		if (list.len > OBSERVED_LIST_MAX) {
			rc = buf_addf(&list, ", ...");
			break;
		}
		if (i > 0)
			rc = buf_addf(&list, ", ");
		if (rc == 0)
			rc = escape_field(&list, buf_bytes(i < o->nstrong ?
			    &o->strong[i] : &o->weak[i - o->nstrong]));
		if (rc == 0 && i >= o->nstrong)
			rc = buf_addf(&list, " (weak)");
	}
	if (rc == 0)
		rc = error_set(PERC_EUSAGE, "column '%s' is not observed; "
		    "observed: %s (perc init --observe COLUMN adds one)",
		    error_quote(column), n > 0 ? list.data : "none");
	perc_buf_dispose(&list);
	return rc;
}

/* A row another runner held is looked at again this soon (ms). */
#define HELD_RETRY_MS 100

/* A cell left for its backoff: the runner wakes when it is due. */
static void
note_retry(const perc_observer *obs, int64_t at_ms)
{
	if (obs->retry_at_ms != NULL && (*obs->retry_at_ms == 0 ||
	    at_ms < *obs->retry_at_ms))
		*obs->retry_at_ms = at_ms;
}

/* Each slot's own open file description of DIR/observer.lock. */
static int
open_slots(struct runs *r, perc_db *db)
{
	size_t k;

	r->n = r->obs->start != NULL && r->obs->slots > 1 ?
	    r->obs->slots : 1;
	if ((r->slot = calloc(r->n, sizeof(*r->slot))) == NULL)
		return error_set(PERC_EIO, "out of memory");
	for (k = 0; k < r->n; k++)
		r->slot[k].fd = -1;
	for (k = 0; k < r->n; k++)
		if ((r->slot[k].fd = runners_lock_open(db->dir)) < 0)
			return r->slot[k].fd;
	return 0;
}

static void
close_slots(struct runs *r)
{
	size_t k;

	for (k = 0; r->slot != NULL && k < r->n; k++)
		if (r->slot[k].fd >= 0)
			close(r->slot[k].fd);
	free(r->slot);
}

/* A slot with no run in flight, or r->n when all have one. */
static size_t
free_slot(const struct runs *r)
{
	size_t k;

	for (k = 0; k < r->n && r->slot[k].busy; k++)
		;
	return k;
}

/*
 * Visit cell *i and move *i on to the next one to visit: start its run
 * in slot k, or pass it over, when it is in its backoff or another
 * runner holds its row and is running it now (then jump to a new
 * random point: we are right behind that runner).  A jump lands on the
 * next cell not yet visited, so no cell is missed.  0 (a run started
 * or not: the slot says), or a negative PERC_E* code.
 */
static int
visit(struct runs *r, size_t k, struct dirty_list *l, size_t *i,
    size_t *visited, perc_db *db, perc_bytes column)
{
	const perc_observer *obs = r->obs;
	struct slot *sl = &r->slot[k];
	struct dirty *cell = &l->cells[*i];
	perc_bytes row = buf_bytes(&cell->row);
	size_t next = *i + 1;
	int rc = 0;

	cell->visited = 1;
	++*visited;
	if (!obs->once && cell->retry_at_ms > clock_wall_ms()) {
		note_retry(obs, cell->retry_at_ms);
	} else if (!row_lock(sl->fd, row, F_WRLCK)) {
		/* Look again soon, should its run not wake us. */
		note_retry(obs, clock_wall_ms() + HELD_RETRY_MS);
		next = (size_t)rand();
	} else {
		rc = db_is_weak(db, column) ?
		    weak_observer_begin(&sl->txn, db, row, column, obs->local) :
		    notify_observer_begin(&sl->txn, db, row, column,
		    obs->local);
		if (rc == 0) {
			sl->cell = *i;
			sl->busy = 1;
			r->busy++;
			start_run(r, k, row, column);
		} else {
			row_lock(sl->fd, row, F_UNLCK);
		}
	}
	if (*visited < l->n)
		*i = next_unvisited(l, next);
	return rc == PERC_ENOTFOUND ? 0 : rc;
}

/*
 * One pass over the cells of column dirty when it starts.  *ran counts
 * the observer runs.  Returns 0, 1 if an observer failed, or a negative
 * PERC_E* code (PERC_EUSAGE: column is not observed).  Without obs->once,
 * cells in their failure backoff wait.  With obs->start, up to
 * obs->slots runs are in flight at once.
 */
int
perc_observer_pass(size_t *ran, perc_db *db, perc_bytes column,
    const perc_observer *obs)
{
	struct dirty_list l = { NULL, 0, 0 };
	struct runs r;
	struct slot *sl;
	perc_bytes row;
	size_t i, k, visited = 0;
	int rc, got, status, failed = 0;

	*ran = 0;
	memset(&r, 0, sizeof(r));
	r.obs = obs;
	if (obs->retry_at_ms != NULL)
		*obs->retry_at_ms = 0;
	if ((rc = perc_observer_check(db, column)) < 0 ||
	    (rc = perc_notify_scan(db, &column, collect, &l)) < 0 ||
	    l.n == 0 || (rc = open_slots(&r, db)) < 0)
		goto done;
	i = next_unvisited(&l, (size_t)rand());
	for (;;) {
		/* Every free slot gets a cell, until a stop or an error. */
		while (rc >= 0 && visited < l.n && !(obs->stop != NULL &&
		    *obs->stop) && (k = free_slot(&r)) < r.n)
			if ((got = visit(&r, k, &l, &i, &visited, db,
			    column)) < 0)
				rc = got;
		if (r.busy == 0)
			break;
		k = wait_run(&r, &status);
		sl = &r.slot[k];
		row = buf_bytes(&l.cells[sl->cell].row);
		got = end_run(db, row, column, obs, sl, k, status);
		row_lock(sl->fd, row, F_UNLCK);
		sl->busy = 0;
		r.busy--;
		/*
		 * The commit woke the waiters while the row was still ours:
		 * a runner of another column of it that looked then passed
		 * it by.  Now it is free, wake them again.
		 */
		db_wake(db, 0);
		if (got == 1)
			failed = 1;
		if (got >= 0)
			++*ran;
		else if (rc >= 0)
			rc = got;
	}
done:
	close_slots(&r);
	for (i = 0; i < l.n; i++)
		perc_buf_dispose(&l.cells[i].row);
	free(l.cells);
	return rc < 0 ? rc : failed;
}

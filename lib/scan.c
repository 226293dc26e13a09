/*
 * lib/scan.c - scans of the visible cells of a snapshot.
 *
 * The store is read in batches and let go between them, so a scan
 * piped into other perc commands never holds them up for long.  A
 * batch resumes from the key after the last cell read; cells already
 * read cannot change at the snapshot meanwhile, since any transaction
 * that could still commit below it had locked them first, and a lock
 * below the snapshot stops the scan until it is resolved.  The walk
 * then goes on from that lock's cell, and reads past the other locks
 * of a transaction whose fate it has learned; those of a dead one are
 * cleaned as it goes, many at a time as resolve-locks cleans them, so
 * a crashed commit of any size costs a scan one look at its primary.
 *
 * A fresh scan reads a snapshot that gc does not pass while it lasts
 * (perc_snapshot_begin): its lines, once printed, are never taken back
 * by a "snapshot too old".
 */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cell.h"
#include "clock.h"
#include "codec.h"
#include "db.h"
#include "error.h"
#include "lock.h"
#include "store.h"
#include "journal.h"
#include "txn.h"

/*
 * A batch holds the store for about BATCH_MS, or until it has
 * BATCH_BYTES of cells: long enough that the store's open, which each
 * batch pays, is a small part of it (the store's speed through a
 * large table), short enough that the other processes' commands wait
 * little.  The clock is read every BATCH_CHECK cells.  A store no one
 * waits for (Redis) is read in batches of BATCH_BYTES alone: each batch
 * there starts its walk again.
 */
#define BATCH_MS    25
#define BATCH_BYTES ((size_t)4 << 20)
#define BATCH_CHECK 256

/* A cell of the batch: its row, column and value, one after the
   other in the batch's arena. */
struct item {
	size_t off, rlen, clen, vlen;
};

struct perc_iter {
	perc_db     *db;
	perc_txn    *txn;          /* its buffered writes are merged in */
	perc_txn    *snapshot;     /* a fresh scan's, held open to gc */
	perc_ts      ts;
	perc_buf     prefix;       /* the row prefix, raw */
	perc_buf     column;       /* the column filter */
	int          has_column;
	int          resume;       /* the next batch starts (store.h) ... */
	perc_buf     from_row, from_col; /* ... at or after this cell */
	struct lock_fate known;    /* a transaction whose locks are read past */
	struct lock_batch cleaning; /* the dead one's, cleaned as passed */
	uint64_t     cleaned;      /* locks so far, for progress */
	int          store_done;
	int64_t      started;      /* when the batch took the store */
	perc_buf     arena;        /* the batch's bytes */
	struct item *items;
	size_t       cap;          /* room in items */
	size_t       n, pos;       /* batch and next unread item */
	size_t       wpos;         /* next unread write of txn */
	int          failed;       /* after the batch: this failure */
};

static int
wanted(const perc_iter *it, perc_bytes row, perc_bytes col)
{
	if (row.len < it->prefix.len || (it->prefix.len > 0 &&
	    memcmp(row.data, it->prefix.data, it->prefix.len) != 0))
		return 0;
	return !it->has_column || bytes_eq(col, buf_bytes(&it->column));
}

int
perc_iter_scan(perc_iter **out, perc_db *db, perc_txn *txn,
    const perc_scan_options *opts)
{
	perc_iter *it;
	int rc = 0;

	*out = NULL;
	if (opts == NULL || opts->version != PERC_SCAN_OPTIONS_VERSION)
		return error_set(PERC_EUSAGE, "unknown scan options version");
	if ((it = calloc(1, sizeof(*it))) == NULL)
		return error_set(PERC_EIO, "out of memory");
	it->db = db;
	it->txn = txn;
	it->cleaning.db = db;
	if (txn != NULL) {
		it->ts = txn->journal.start_ts;
		rc = txn_writes(txn);
	} else if ((it->ts = opts->at) == 0) {
		rc = perc_snapshot_begin(&it->snapshot, &it->ts, db);
	} else {
		rc = db_check_at(db, it->ts);
	}
	if (rc == 0)
		rc = buf_addb(&it->prefix, opts->prefix);
	if (rc == 0 && opts->column.data != NULL) {
		it->has_column = 1;
		rc = buf_addb(&it->column, opts->column);
	}
	if (rc < 0) {
		perc_iter_free(it);
		return rc;
	}
	*out = it;
	return 0;
}

static void
clear_items(perc_iter *it)
{
	it->n = it->pos = 0;
	buf_reset(&it->arena);
}

static perc_bytes
item_row(const perc_iter *it, const struct item *item)
{
	return bytes_of(it->arena.data + item->off, item->rlen);
}

static perc_bytes
item_col(const perc_iter *it, const struct item *item)
{
	return bytes_of(it->arena.data + item->off + item->rlen, item->clen);
}

static perc_bytes
item_value(const perc_iter *it, const struct item *item)
{
	return bytes_of(it->arena.data + item->off + item->rlen + item->clen,
	    item->vlen);
}

/*
 * A snapshot gc has passed may miss versions it removed.  Each cell's
 * read is refused below the safe point by the store; this refuses a
 * batch that would meet no cell too, once a batch, as gc may run
 * between two.
 */
static int
below_safe_point(struct store *s, perc_ts ts)
{
	perc_ts sp;
	int rc;

	if ((rc = s->ops->safe_point(s, &sp)) == 0 && ts < sp)
		rc = cell_too_old(sp);
	return rc;
}

/* A visible cell the store gives: into the batch.  1: it is full. */
static int
add_item(void *arg, perc_bytes row, perc_bytes col, perc_bytes value)
{
	perc_iter *it = arg;
	struct item *item;
	size_t cap;
	int rc;

	if (it->n == it->cap) {
		cap = it->cap ? it->cap * 2 : 1024;
		if ((item = realloc(it->items, cap * sizeof(*item))) == NULL)
			return error_set(PERC_EIO, "out of memory");
		it->items = item;
		it->cap = cap;
	}
	item = &it->items[it->n];
	item->off = it->arena.len;
	item->rlen = row.len;
	item->clen = col.len;
	item->vlen = value.len;
	if ((rc = buf_grow(&it->arena, row.len + col.len + value.len)) < 0 ||
	    (rc = buf_addb(&it->arena, row)) < 0 ||
	    (rc = buf_addb(&it->arena, col)) < 0 ||
	    (rc = buf_addb(&it->arena, value)) < 0)
		return rc;
	it->n++;
	if (it->arena.len >= BATCH_BYTES)
		return 1;
	return it->n % BATCH_CHECK == 0 &&
	    store_exclusive(it->db->store) &&
	    clock_mono_ms() - it->started >= BATCH_MS;
}

/* The next walk starts at, or after (how), the cell (row, col). */
static int
move_cursor(perc_iter *it, int how, perc_bytes row, perc_bytes col)
{
	int rc;

	it->resume = how;
	if ((rc = buf_set(&it->from_row, row.data, row.len)) < 0)
		return rc;
	return buf_set(&it->from_col, col.data, col.len);
}

/* The next batch starts after the last cell of this one. */
static int
move_past_batch(perc_iter *it)
{
	const struct item *last = &it->items[it->n - 1];

	return move_cursor(it, SCAN_AFTER, item_row(it, last),
	    item_col(it, last));
}

/*
 * A write that cleans locks read past and fails (a full disk) leaves
 * them to a process that can write: the scan reads past them all the
 * same, as it would in a store it could not write from the start.
 */
static int
unless_unwritable(const perc_iter *it, int rc)
{
	const struct store *s = it->db->store;

	return rc < 0 && (s->failed || s->read_only) ? 0 : rc;
}

/*
 * A lock of the known transaction, which the walk read past: when it
 * is the dead transaction this scan settled, it joins the others for
 * cleaning.  A live transaction's (pushed past, see lock.c) stays, and
 * so does everything in a store this process cannot write.
 */
static int
clean_passed(void *arg, perc_bytes row, perc_bytes col,
    const struct lock_rec *lock)
{
	perc_iter *it = arg;
	struct store *s = it->db->store;

	if (s->read_only || s->failed ||
	    lock->start_ts != it->cleaning.decided.start_ts)
		return 0;
	if ((++it->cleaned & 1023) == 0)
		db_progress(it->db, "locks cleaned", it->cleaned);
	return unless_unwritable(it, lock_batch_add(&it->cleaning, row, col,
	    lock));
}

/* Fill the batch from the store. */
static int
fetch(perc_iter *it)
{
	int64_t deadline = clock_deadline(it->db->timeout_ms);
	struct store *s = it->db->store;
	perc_bytes column = buf_bytes(&it->column);
	struct store_scan sc;
	unsigned delay = 1000;
	uint64_t cleaned = it->cleaned;
	int rc, flushed;

	memset(&sc, 0, sizeof(sc));
	sc.prefix = buf_bytes(&it->prefix);
	sc.column = it->has_column ? &column : NULL;
	sc.ts = it->ts;
	sc.known = &it->known;
	sc.cell = add_item;
	sc.passed = clean_passed;
	sc.arg = it;
	clear_items(it);
	if ((rc = db_acquire(it->db, deadline)) < 0 ||
	    (rc = below_safe_point(it->db->store, it->ts)) < 0)
		goto done;
	it->started = clock_mono_ms();
	for (;;) {
		sc.resume = it->resume;
		sc.from_row = buf_bytes(&it->from_row);
		sc.from_col = buf_bytes(&it->from_col);
		if ((rc = s->ops->scan(s, &sc)) != PERC_ELOCKED)
			break;
		/*
		 * The cells before the lock are read: look again from its
		 * own, once it is settled (its cleaning first, as the
		 * transaction settled may change).
		 */
		if ((rc = move_cursor(it, SCAN_AT, buf_bytes(&sc.brow),
		    buf_bytes(&sc.bcol))) < 0 ||
		    (rc = unless_unwritable(it,
		    lock_batch_flush(&it->cleaning))) < 0 ||
		    (rc = lock_wait_or_clean(it->db, buf_bytes(&sc.brow),
		    buf_bytes(&sc.bcol), &sc.blocker, it->ts, &it->known,
		    &it->cleaning.decided, &delay, deadline)) < 0)
			break;
	}
	/* The locks read past are cleaned before the store is let go. */
	if ((flushed = unless_unwritable(it,
	    lock_batch_flush(&it->cleaning))) < 0 && rc >= 0)
		rc = flushed;
	if (it->cleaned != cleaned)
		db_progress(it->db, "locks cleaned", it->cleaned);
	if (rc == 0 && it->n > 0)
		rc = move_past_batch(it);
	it->store_done = sc.done;
done:
	db_release(it->db);
	if (rc == PERC_ETOOOLD && it->txn != NULL)
		journal_finish(&it->txn->journal);      /* SPEC: finished */
	codec_lock_dispose(&sc.blocker);
	perc_buf_dispose(&sc.brow);
	perc_buf_dispose(&sc.bcol);
	/* The cells read before a failure still come out, then the failure. */
	if (rc < 0 && it->n > 0) {
		it->failed = rc;
		it->store_done = 1;
		rc = 0;
	}
	return rc;
}

/* The next buffered write of the transaction that the scan wants. */
static const struct write *
next_write(perc_iter *it)
{
	const struct writeset *ws;
	const struct write *w;

	if (it->txn == NULL)
		return NULL;
	ws = &it->txn->writes;
	for (; it->wpos < ws->n; it->wpos++) {
		w = &ws->w[it->wpos];
		if (!OP_KEEPS_VALUE(w->op) &&
		    wanted(it, buf_bytes(&w->row), buf_bytes(&w->col)))
			return w;
	}
	return NULL;
}

static int
write_vs_item(const perc_iter *it, const struct write *w,
    const struct item *item)
{
	int c = bytes_cmp(buf_bytes(&w->row), item_row(it, item));

	return c ? c : bytes_cmp(buf_bytes(&w->col), item_col(it, item));
}

int
perc_iter_next(perc_bytes *row, perc_bytes *col, perc_bytes *value,
    perc_iter *it)
{
	const struct write *w;
	const struct item *item;
	int rc, c;

	for (;;) {
		if (it->pos == it->n && !it->store_done &&
		    (rc = fetch(it)) < 0)
			return rc;
		item = it->pos < it->n ? &it->items[it->pos] : NULL;
		if (item == NULL && it->failed < 0)
			return it->failed;
		w = next_write(it);
		if (item == NULL && w == NULL) {
			if (!it->store_done)
				continue;
			return PERC_ITEROVER;
		}
		c = item == NULL ? -1 : w == NULL ? 1 : write_vs_item(it, w, item);
		if (c >= 0)
			it->pos++;      /* the store's cell is used or hidden */
		if (c > 0) {
			*row = item_row(it, item);
			*col = item_col(it, item);
			*value = item_value(it, item);
			return 0;
		}
		it->wpos++;
		if (w->op == OP_PUT) {
			*row = buf_bytes(&w->row);
			*col = buf_bytes(&w->col);
			*value = buf_bytes(&w->value);
			return 0;
		}
	}
}

void
perc_iter_free(perc_iter *it)
{
	if (it == NULL)
		return;
	free(it->items);
	perc_buf_dispose(&it->arena);
	perc_buf_dispose(&it->prefix);
	perc_buf_dispose(&it->column);
	perc_buf_dispose(&it->from_row);
	perc_buf_dispose(&it->from_col);
	lock_batch_dispose(&it->cleaning);
	perc_txn_free(it->snapshot);
	free(it);
}

/*
 * lib/scan.c - scans of the visible cells of a snapshot.
 *
 * The store is read in batches and let go between them, so a scan
 * piped into other perc commands never holds them up for long.  A
 * batch resumes from the key after the last cell read; cells already
 * read cannot change at the snapshot meanwhile, since any transaction
 * that could still commit below it had locked them first, and a lock
 * below the snapshot stops the scan until it is resolved.
 */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "clock.h"
#include "codec.h"
#include "error.h"
#include "lock.h"
#include "store.h"
#include "journal.h"
#include "txn.h"

#define BATCH_CELLS 512
#define BATCH_BYTES (1 << 20)

struct item {
	perc_buf row, col, value;
};

struct perc_iter {
	perc_db     *db;
	perc_txn    *txn;          /* its buffered writes are merged in */
	perc_ts      ts;
	perc_buf     prefix;       /* the row prefix, raw */
	perc_buf     column;       /* the column filter */
	int          has_column;
	int          resume;       /* the next batch starts after ... */
	perc_buf     after_row, after_col; /* ... this cell */
	int          store_done;
	size_t       bytes;        /* in the batch */
	struct item  items[BATCH_CELLS];
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
	if (txn != NULL) {
		it->ts = txn->journal.start_ts;
		rc = txn_writes(txn);
	} else if ((it->ts = opts->at) == 0) {
		rc = perc_snapshot_ts(&it->ts, db);
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
	size_t i;

	for (i = 0; i < it->n; i++)
		buf_reset(&it->items[i].value);
	it->n = it->pos = 0;
	it->bytes = 0;
}

/* A visible cell the store gives: into the batch.  1: it is full. */
static int
add_item(void *arg, perc_bytes row, perc_bytes col, perc_bytes value)
{
	perc_iter *it = arg;
	struct item *item = &it->items[it->n];
	int rc;

	if ((rc = buf_set(&item->row, row.data, row.len)) < 0 ||
	    (rc = buf_set(&item->col, col.data, col.len)) < 0 ||
	    (rc = buf_set(&item->value, value.data, value.len)) < 0)
		return rc;
	it->n++;
	it->bytes += row.len + col.len + value.len;
	return it->n == BATCH_CELLS || it->bytes >= BATCH_BYTES;
}

/* The next batch starts after the last cell of this one. */
static int
move_cursor(perc_iter *it)
{
	const struct item *last = &it->items[it->n - 1];
	int rc;

	it->resume = 1;
	if ((rc = buf_set(&it->after_row, last->row.data, last->row.len)) < 0)
		return rc;
	return buf_set(&it->after_col, last->col.data, last->col.len);
}

/* Fill the batch from the store. */
static int
fetch(perc_iter *it)
{
	int64_t deadline = clock_deadline(it->db->timeout_ms);
	struct store *s = it->db->store;
	perc_bytes column = buf_bytes(&it->column);
	struct lock_fate known = { 0, 0 };
	struct store_scan sc;
	unsigned delay = 1000;
	int rc;

	memset(&sc, 0, sizeof(sc));
	sc.prefix = buf_bytes(&it->prefix);
	sc.column = it->has_column ? &column : NULL;
	sc.ts = it->ts;
	sc.known = &known;
	sc.cell = add_item;
	sc.arg = it;
	clear_items(it);
	if ((rc = db_acquire(it->db, deadline)) < 0)
		goto done;
	for (;;) {
		sc.resume = it->resume;
		sc.after_row = buf_bytes(&it->after_row);
		sc.after_col = buf_bytes(&it->after_col);
		rc = s->ops->scan(s, &sc);
		if (it->n > 0 && (rc == 0 || rc == PERC_ELOCKED)) {
			int moved = move_cursor(it);

			if (moved < 0)
				rc = moved;
		}
		if (rc != PERC_ELOCKED)
			break;
		if ((rc = lock_wait_or_clean(it->db, buf_bytes(&sc.brow),
		    buf_bytes(&sc.bcol), &sc.blocker, &known, &delay,
		    deadline)) < 0)
			break;
	}
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
write_vs_item(const struct write *w, const struct item *item)
{
	int c = bytes_cmp(buf_bytes(&w->row), buf_bytes(&item->row));

	return c ? c : bytes_cmp(buf_bytes(&w->col), buf_bytes(&item->col));
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
		c = item == NULL ? -1 : w == NULL ? 1 : write_vs_item(w, item);
		if (c >= 0)
			it->pos++;      /* the store's cell is used or hidden */
		if (c > 0) {
			*row = buf_bytes(&item->row);
			*col = buf_bytes(&item->col);
			*value = buf_bytes(&item->value);
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
	size_t i;

	if (it == NULL)
		return;
	for (i = 0; i < BATCH_CELLS; i++) {
		perc_buf_dispose(&it->items[i].row);
		perc_buf_dispose(&it->items[i].col);
		perc_buf_dispose(&it->items[i].value);
	}
	perc_buf_dispose(&it->prefix);
	perc_buf_dispose(&it->column);
	perc_buf_dispose(&it->after_row);
	perc_buf_dispose(&it->after_col);
	free(it);
}

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
#include "mvcc.h"
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
	perc_buf     range;        /* every key of the scan starts with it */
	perc_buf     prefix;       /* the row prefix, raw */
	perc_buf     column;       /* the column filter */
	int          has_column;
	perc_buf     cursor;       /* where the next batch starts */
	int          store_done;
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
	if (rc == 0 && (rc = codec_row_prefix(&it->range, REGION_CELL,
	    opts->prefix)) == 0)
		rc = buf_addb(&it->cursor, buf_bytes(&it->range));
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
}

/*
 * Read the visible value of the cell at the iterator into the batch.
 * Returns 0, PERC_ELOCKED with *blocker, or a failure.
 */
static int
read_cell(perc_iter *it, leveldb_iterator_t *li, struct key *k,
    struct lock_rec *blocker, const struct lock_fate *known, size_t *bytes)
{
	struct item *item = &it->items[it->n];
	int rc;

	if (!wanted(it, buf_bytes(&k->row), buf_bytes(&k->col)))
		return 0;
	rc = mvcc_read(&item->value, it->db, li, buf_bytes(&k->row),
	    buf_bytes(&k->col), it->ts, blocker, known);
	if (rc == PERC_ENOTFOUND)
		return 0;
	if (rc < 0)
		return rc;
	if ((rc = buf_set(&item->row, k->row.data, k->row.len)) < 0 ||
	    (rc = buf_set(&item->col, k->col.data, k->col.len)) < 0)
		return rc;
	*bytes += k->row.len + k->col.len + item->value.len;
	it->n++;
	return 0;
}

/* Fill the batch from the store, from it->cursor on. */
static int
fetch(perc_iter *it)
{
	int64_t deadline = clock_deadline(it->db->timeout_ms);
	leveldb_iterator_t *li = NULL;
	struct lock_rec blocker;
	struct lock_fate known = { 0, 0 };
	struct key k;
	size_t bytes = 0, klen;
	unsigned delay = 1000;
	const char *key;
	int rc;

	memset(&k, 0, sizeof(k));
	memset(&blocker, 0, sizeof(blocker));
	clear_items(it);
	if ((rc = db_acquire(it->db, deadline)) < 0)
		goto done;
	li = store_iter(&it->db->store);
	leveldb_iter_seek(li, it->cursor.data, it->cursor.len);
	while (it->n < BATCH_CELLS && bytes < BATCH_BYTES) {
		/*
		 * A damaged block does not end LevelDB's iteration: it steps
		 * past and records the error, so look after every seek.
		 */
		if ((rc = store_iter_error(li)) < 0)
			break;
		if (!leveldb_iter_valid(li) ||
		    (key = leveldb_iter_key(li, &klen), klen < it->range.len) ||
		    memcmp(key, it->range.data, it->range.len) != 0) {
			it->store_done = 1;
			rc = store_iter_error(li);
			break;
		}
		if ((rc = codec_parse_key(&k, key, klen)) < 0)
			break;
		rc = read_cell(it, li, &k, &blocker, &known, &bytes);
		if (rc == PERC_ELOCKED) {
			leveldb_iter_destroy(li);
			li = NULL;
			if ((rc = lock_wait_or_clean(it->db,
			    buf_bytes(&k.row), buf_bytes(&k.col), &blocker,
			    &known, &delay, deadline)) < 0)
				break;
			li = store_iter(&it->db->store);
			leveldb_iter_seek(li, it->cursor.data, it->cursor.len);
			continue;
		}
		if (rc < 0)
			break;
		/* Past every key of this cell: its prefix, then kind 6. */
		if ((rc = codec_cell_prefix(&it->cursor, REGION_CELL,
		    buf_bytes(&k.row), buf_bytes(&k.col))) < 0 ||
		    (rc = buf_add(&it->cursor, "\x06", 1)) < 0)
			break;
		leveldb_iter_seek(li, it->cursor.data, it->cursor.len);
	}
done:
	if (li != NULL)
		leveldb_iter_destroy(li);
	db_release(it->db);
	codec_key_dispose(&k);
	codec_lock_dispose(&blocker);
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
	perc_buf_dispose(&it->range);
	perc_buf_dispose(&it->prefix);
	perc_buf_dispose(&it->column);
	perc_buf_dispose(&it->cursor);
	free(it);
}

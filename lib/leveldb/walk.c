/*
 * lib/leveldb/walk.c - the LevelDB store's walks: scans of a snapshot,
 * the locks for resolve-locks, a row's raw keys for show, and the
 * notify region.  The caller holds the store.
 *
 * A walk reads one LevelDB iterator, which sees the store as it was
 * when the walk began; what the caller writes meanwhile (resolving a
 * lock it was shown) does not move it.
 */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "clock.h"
#include "codec.h"
#include "error.h"
#include "leveldb.h"
#include "seen.h"

/* Does the cell belong to the scan? */
static int
scan_wants(const struct store_scan *sc, perc_bytes row, perc_bytes col)
{
	if (row.len < sc->prefix.len || (sc->prefix.len > 0 &&
	    memcmp(row.data, sc->prefix.data, sc->prefix.len) != 0))
		return 0;
	return sc->column == NULL || bytes_eq(col, *sc->column);
}

/*
 * Put the scan's walk where its batch begins: on the first cell of the
 * range, or at the resume point (SCAN_AT: on that cell; else past it).
 */
static int
scan_seek(struct cell_walk *w, perc_buf *prefix, const perc_buf *range,
    const struct store_scan *sc)
{
	int rc;

	if (!sc->resume) {
		kv_iter_seek(w->it, range->data, range->len);
		return 0;
	}
	if ((rc = codec_cell_prefix(prefix, REGION_CELL, sc->from_row,
	    sc->from_col)) < 0)
		return rc;
	if (sc->resume == SCAN_AT) {
		kv_iter_seek(w->it, prefix->data, prefix->len);
		return 0;
	}
	w->prefix = buf_bytes(prefix);
	return ldb_walk_seek(w, KIND_FAILURES, 0);      /* past all */
}

/*
 * Decide the cell whose first key, k, the walk stands on: give its
 * value to sc->cell, or stop at its lock (PERC_ELOCKED, the cell in
 * sc->brow and sc->bcol).  0 to go on, 1 when sc->cell stops the scan,
 * or a failure.
 */
static int
scan_cell(struct cell_walk *w, struct store_scan *sc, const struct key *k)
{
	const struct lock_rec *lock = NULL;
	perc_bytes value;
	const char *v;
	size_t vlen;
	int rc, stop;

	if (k->kind == KIND_LOCK) {
		v = kv_iter_value(w->it, &vlen);
		rc = codec_lock_decode(&sc->blocker, v, vlen);
		if (rc < 0 && rc != PERC_ENOTFOUND)
			return rc;
		lock = rc == 0 ? &sc->blocker : NULL;
		kv_iter_next(w->it);
		if (lock != NULL && sc->passed != NULL && sc->known != NULL &&
		    lock->start_ts == sc->known->start_ts &&
		    (rc = sc->passed(sc->arg, w->row, w->col, lock)) < 0)
			return rc;
	}
	rc = ldb_visible(w, &value, sc->ts, lock, sc->known);
	if (rc == PERC_ELOCKED) {
		if (buf_set(&sc->brow, w->row.data, w->row.len) < 0 ||
		    buf_set(&sc->bcol, w->col.data, w->col.len) < 0)
			return PERC_EIO;
		return rc;
	}
	if (rc == 0 && (stop = sc->cell(sc->arg, w->row, w->col, value)) != 0)
		return stop < 0 ? stop : 1;
	return rc < 0 && rc != PERC_ENOTFOUND ? rc : 0;
}

/*
 * One batch of a scan, on one iterator that walks the cell region
 * forward: each cell's keys come in order, lock, write records, data,
 * and ldb_visible decides on them as they come, seeking only past many
 * versions.  The value given to sc->cell points into the iterator.
 */
int
ldb_scan(struct store *base, struct store_scan *sc)
{
	struct ldb_store *s = (struct ldb_store *)base;
	perc_buf range = PERC_BUF_INIT, prefix = PERC_BUF_INIT;
	struct cell_walk w;
	struct key k;
	const char *key;
	size_t klen;
	int rc;

	memset(&k, 0, sizeof(k));
	memset(&w, 0, sizeof(w));
	sc->done = 0;
	if ((rc = codec_row_prefix(&range, REGION_CELL, sc->prefix)) < 0)
		goto out;
	w.it = ldb_iter(s);
	rc = scan_seek(&w, &prefix, &range, sc);
	while (rc == 0) {
		/*
		 * A damaged block does not end LevelDB's iteration: it steps
		 * past and records the error, so look after every move.
		 */
		if ((rc = ldb_iter_error(w.it)) < 0)
			break;
		if (!kv_iter_valid(w.it) ||
		    (key = kv_iter_key(w.it, &klen), klen < range.len) ||
		    memcmp(key, range.data, range.len) != 0) {
			sc->done = 1;
			break;
		}
		if ((rc = codec_parse_key(&k, key, klen)) < 0 ||
		    (rc = buf_set(&prefix, key, klen - 9)) < 0)
			break;
		w.prefix = buf_bytes(&prefix);
		w.row = buf_bytes(&k.row);
		w.col = buf_bytes(&k.col);
		if (scan_wants(sc, w.row, w.col) &&
		    (rc = scan_cell(&w, sc, &k)) != 0) {
			rc = rc > 0 ? 0 : rc;
			break;
		}
		rc = ldb_walk_past(&w);
	}
	kv_iter_free(w.it);
out:
	ldb_walk_dispose(&w);
	codec_key_dispose(&k);
	perc_buf_dispose(&range);
	perc_buf_dispose(&prefix);
	return rc;
}

/*
 * Every lock by the walk of the cell region: a look at each key of the
 * store.  What a directory whose lock index is not known whole does
 * (store.h's FORMAT_LOCK_INDEX), and what builds the index.
 */
static int
locks_by_cells(struct ldb_store *s, int (*fn)(void *arg, perc_bytes row,
    perc_bytes col, const struct lock_rec *lock), void *arg)
{
	struct kv_iter *it;
	const unsigned char *key;
	const char *val;
	struct lock_rec lock;
	struct key k;
	size_t klen, vlen;
	unsigned char region = REGION_CELL;
	int rc = 0;

	memset(&k, 0, sizeof(k));
	memset(&lock, 0, sizeof(lock));
	it = ldb_iter(s);
	for (kv_iter_seek(it, (const char *)&region, 1);
	    kv_iter_valid(it); kv_iter_next(it)) {
		key = (const unsigned char *)kv_iter_key(it, &klen);
		if (key[0] != REGION_CELL)
			break;
		/* Only locks: the kind byte sits 9 bytes from the end. */
		if (klen < 9 || key[klen - 9] != KIND_LOCK)
			continue;
		val = kv_iter_value(it, &vlen);
		rc = codec_lock_decode(&lock, val, vlen);
		if (rc == PERC_ENOTFOUND) {     /* a head without a lock */
			rc = 0;
			continue;
		}
		if (rc < 0 || (rc = codec_parse_key(&k, key, klen)) < 0 ||
		    (rc = fn(arg, buf_bytes(&k.row), buf_bytes(&k.col),
		    &lock)) != 0)
			break;
	}
	if (rc == 0)
		rc = ldb_iter_error(it);
	kv_iter_free(it);
	codec_lock_dispose(&lock);
	codec_key_dispose(&k);
	return rc;
}

/* Is k, of klen bytes, a bulk commit's marker (ldb_marker_key)? */
static int
is_marker(const char *k, size_t klen)
{
	return klen == 11 && k[0] == REGION_LOCKS && k[1] == 0 && k[2] == 0;
}

/*
 * Every lock by the lock index: each cell it names, its head read by a
 * point lookup (which sees what fn resolved meanwhile: a lock gone
 * since is passed over).  The cost follows the number of locks, and
 * the index keys that LevelDB has not compacted away since their
 * locks went.
 */
static int
locks_by_index(struct ldb_store *s, int (*fn)(void *arg, perc_bytes row,
    perc_bytes col, const struct lock_rec *lock), void *arg)
{
	perc_buf head_key = PERC_BUF_INIT;
	struct cell_head head;
	struct kv_iter *it;
	const char *key;
	struct lock_rec lock;
	struct key k;
	size_t klen;
	unsigned char region = REGION_LOCKS;
	int rc = 0;

	memset(&k, 0, sizeof(k));
	memset(&lock, 0, sizeof(lock));
	it = ldb_iter(s);
	for (kv_iter_seek(it, (const char *)&region, 1);
	    kv_iter_valid(it); kv_iter_next(it)) {
		key = kv_iter_key(it, &klen);
		if (key[0] != REGION_LOCKS)
			break;
		if (is_marker(key, klen))
			continue;
		if ((rc = buf_set(&head_key, key, klen)) < 0)
			break;
		head_key.data[0] = REGION_CELL;
		if ((rc = codec_parse_key(&k, head_key.data,
		    head_key.len)) < 0)
			break;
		rc = ldb_get_head(s, &head, &lock, buf_bytes(&k.row),
		    buf_bytes(&k.col));
		if (rc == PERC_ENOTFOUND || (rc == 0 && !head.locked)) {
			rc = 0;
			continue;
		}
		if (rc < 0 || (rc = fn(arg, buf_bytes(&k.row),
		    buf_bytes(&k.col), &lock)) != 0)
			break;
	}
	if (rc == 0)
		rc = ldb_iter_error(it);
	kv_iter_free(it);
	codec_lock_dispose(&lock);
	codec_key_dispose(&k);
	perc_buf_dispose(&head_key);
	return rc;
}

/* The bulk commits' markers in the lock index (ldb_marker_key). */
struct markers {
	struct lock_rec *lock;  /* each one's primary lock, as written */
	int             *met;   /* the cell walk met a lock of it */
	size_t           n;
	int            (*fn)(void *arg, perc_bytes row, perc_bytes col,
	                     const struct lock_rec *lock);
	void            *arg;
};

static void
markers_dispose(struct markers *m)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		codec_lock_dispose(&m->lock[i]);
	free(m->lock);
	free(m->met);
	memset(m, 0, sizeof(*m));
}

/* Read every marker into m: they sort first in the index. */
static int
markers_read(struct ldb_store *s, struct markers *m)
{
	perc_buf key = PERC_BUF_INIT;
	struct kv_iter *it;
	const char *k, *v;
	size_t klen, vlen;
	void *p;
	int rc;

	if ((rc = ldb_marker_key(&key, 0)) < 0)
		return rc;
	it = ldb_iter(s);
	for (kv_iter_seek(it, key.data, key.len); kv_iter_valid(it) &&
	    (k = kv_iter_key(it, &klen), is_marker(k, klen));
	    kv_iter_next(it)) {
		if ((p = realloc(m->lock, (m->n + 1) * sizeof(*m->lock))) !=
		    NULL)
			m->lock = p;
		if (p == NULL || (p = realloc(m->met,
		    (m->n + 1) * sizeof(*m->met))) == NULL) {
			rc = error_set(PERC_EIO, "out of memory");
			break;
		}
		m->met = p;
		memset(&m->lock[m->n], 0, sizeof(*m->lock));
		m->met[m->n] = 0;
		v = kv_iter_value(it, &vlen);
		if ((rc = codec_lock_decode(&m->lock[m->n++], v, vlen)) < 0)
			break;
	}
	if (rc == 0)
		rc = ldb_iter_error(it);
	kv_iter_free(it);
	perc_buf_dispose(&key);
	return rc;
}

/*
 * Does the primary of marker lock still hold its lock, with its owner
 * alive and not expired (lib/lock.c's lock_owner_state)?  Then the
 * index's entry of the primary stands for the whole transaction.
 */
static int
marker_live(struct ldb_store *s, const struct lock_rec *marker)
{
	struct cell_head head;
	struct lock_rec lock;
	int rc, alive, live;

	memset(&lock, 0, sizeof(lock));
	rc = ldb_get_head(s, &head, &lock, buf_bytes(&marker->primary_row),
	    buf_bytes(&marker->primary_col));
	alive = rc == 0 && head.locked && lock.start_ts == marker->start_ts ?
	    s->owner_alive(s->dir, lock.start_ts, lock.pid, lock.wall_ms) : 0;
	live = alive == TOKEN_WAITING || (alive != 0 && clock_wall_ms() -
	    (int64_t)lock.wall_ms <= (int64_t)lock.ttl_ms);
	codec_lock_dispose(&lock);
	return rc < 0 && rc != PERC_ENOTFOUND ? rc : live;
}

/* A lock the cell walk met: noted against its marker, and to fn. */
static int
marker_met(void *arg, perc_bytes row, perc_bytes col,
    const struct lock_rec *lock)
{
	struct markers *m = arg;
	size_t i;

	for (i = 0; i < m->n; i++)
		if (m->lock[i].start_ts == lock->start_ts)
			m->met[i] = 1;
	return m->fn(m->arg, row, col, lock);
}

/*
 * After a walk of the cells: the markers of transactions that hold no
 * lock and whose owner is dead go (a live owner may still write locks,
 * and removes its marker itself).  Not on a store this process may
 * not write: the next walk does it.
 */
static int
markers_drop(struct ldb_store *s, const struct markers *m)
{
	perc_buf key = PERC_BUF_INIT;
	struct kv_batch *b;
	size_t i, n = 0;
	int rc = 0;

	if (s->base.read_only)
		return 0;
	b = kv_batch_new();
	for (i = 0; i < m->n && rc == 0; i++) {
		if (m->met[i] || s->owner_alive(s->dir, m->lock[i].start_ts,
		    m->lock[i].pid, m->lock[i].wall_ms) != 0)
			continue;
		if ((rc = ldb_marker_key(&key, m->lock[i].start_ts)) == 0) {
			kv_batch_delete(b, key.data, key.len);
			n++;
		}
	}
	if (rc == 0 && n > 0)
		rc = ldb_write(s, b, 0);
	kv_batch_free(b);
	perc_buf_dispose(&key);
	return rc;
}

/*
 * The walk of the locks with the index.  A bulk commit's secondaries
 * have no entry of their own, its marker stands for them (codec.h's
 * REGION_LOCKS): when by_txn, a marker whose primary is locked by a
 * live owner needs nothing more, the primary's entry reporting the
 * transaction; any other marker, and every marker when each lock is
 * wanted, takes the walk of the cells, after which the markers of dead
 * owners that it found no lock of go.
 */
static int
locks_indexed(struct ldb_store *s, int by_txn, int (*fn)(void *arg,
    perc_bytes row, perc_bytes col, const struct lock_rec *lock), void *arg)
{
	struct markers m;
	size_t i;
	int rc, live = 1;

	memset(&m, 0, sizeof(m));
	m.fn = fn;
	m.arg = arg;
	rc = markers_read(s, &m);
	for (i = 0; i < m.n && rc == 0 && live > 0; i++)
		live = by_txn ? marker_live(s, &m.lock[i]) : 0;
	if (rc == 0 && live < 0)
		rc = live;
	if (rc == 0 && live > 0)
		rc = locks_by_index(s, fn, arg);
	else if (rc == 0 && (rc = locks_by_cells(s, marker_met, &m)) == 0)
		rc = markers_drop(s, &m);
	markers_dispose(&m);
	return rc;
}

int
ldb_locks(struct store *base, int (*fn)(void *arg, perc_bytes row,
    perc_bytes col, const struct lock_rec *lock), void *arg)
{
	struct ldb_store *s = (struct ldb_store *)base;

	if (base->format >= FORMAT_LOCK_INDEX)
		return locks_indexed(s, 0, fn, arg);
	return locks_by_cells(s, fn, arg);
}

int
ldb_locks_by_txn(struct store *base, int (*fn)(void *arg, perc_bytes row,
    perc_bytes col, const struct lock_rec *lock), void *arg)
{
	struct ldb_store *s = (struct ldb_store *)base;

	if (base->format >= FORMAT_LOCK_INDEX)
		return locks_indexed(s, 1, fn, arg);
	return locks_by_cells(s, fn, arg);
}

/* A lock the build of the index met: its entry into the batch. */
static int
index_lock(void *arg, perc_bytes row, perc_bytes col,
    const struct lock_rec *lock)
{
	perc_buf key = PERC_BUF_INIT;
	int rc;

	(void)lock;
	if ((rc = codec_key(&key, REGION_CELL, row, col, KIND_LOCK,
	    LOCK_TS)) == 0) {
		key.data[0] = REGION_LOCKS;
		kv_batch_put(arg, key.data, key.len, "", 0);
	}
	perc_buf_dispose(&key);
	return rc;
}

/*
 * store_ops.upgrade: build the lock index of a directory of an older
 * format, in one synced batch: every entry there is goes (a perc of
 * that format may have let locks go without theirs, after an earlier
 * build that a crash kept from marking the config), and one goes in
 * for each lock the cell region holds.
 */
int
ldb_upgrade(struct store *base, int from)
{
	struct ldb_store *s = (struct ldb_store *)base;
	struct kv_batch *b;
	struct kv_iter *it;
	const char *k;
	size_t klen;
	unsigned char region = REGION_LOCKS;
	int rc;

	if (from >= FORMAT_LOCK_INDEX)
		return 0;
	b = kv_batch_new();
	it = ldb_iter(s);
	for (kv_iter_seek(it, (const char *)&region, 1); kv_iter_valid(it);
	    kv_iter_next(it)) {
		k = kv_iter_key(it, &klen);
		if (k[0] != REGION_LOCKS)
			break;
		kv_batch_delete(b, k, klen);
	}
	rc = ldb_iter_error(it);
	kv_iter_free(it);
	if (rc == 0 && (rc = locks_by_cells(s, index_lock, b)) == 0)
		rc = ldb_write(s, b, 1);
	kv_batch_free(b);
	return rc;
}

/* Walk every key of region that starts with the prefix for row/col. */
static int
raw_region(struct ldb_store *s, int region, perc_bytes row,
    const perc_bytes *col, store_raw_fn fn, void *arg)
{
	perc_buf prefix = PERC_BUF_INIT;
	struct kv_iter *it;
	struct key k;
	const char *key, *val;
	size_t klen, vlen;
	int rc;

	memset(&k, 0, sizeof(k));
	if (col != NULL)
		rc = codec_cell_prefix(&prefix, region, row, *col);
	else if ((rc = codec_row_prefix(&prefix, region, row)) == 0)
		rc = buf_add(&prefix, "\0\1", 2);   /* the row's end mark */
	if (rc < 0)
		goto out;
	it = ldb_iter(s);
	for (kv_iter_seek(it, prefix.data, prefix.len);
	    kv_iter_valid(it); kv_iter_next(it)) {
		key = kv_iter_key(it, &klen);
		if (klen < prefix.len || memcmp(key, prefix.data, prefix.len))
			break;
		val = kv_iter_value(it, &vlen);
		if ((rc = codec_parse_key(&k, key, klen)) < 0 ||
		    (rc = fn(arg, region, buf_bytes(&k.col), k.kind, k.ts,
		    bytes_of(val, vlen))) != 0)
			break;
	}
	if (rc == 0)
		rc = ldb_iter_error(it);
	kv_iter_free(it);
out:
	codec_key_dispose(&k);
	perc_buf_dispose(&prefix);
	return rc;
}

int
ldb_raw(struct store *base, perc_bytes row, const perc_bytes *col,
    store_raw_fn fn, void *arg)
{
	struct ldb_store *s = (struct ldb_store *)base;
	int rc;

	if ((rc = raw_region(s, REGION_CELL, row, col, fn, arg)) == 0)
		rc = raw_region(s, REGION_NOTIFY, row, col, fn, arg);
	return rc;
}

static int
failures_key(perc_buf *out, perc_bytes row, perc_bytes col)
{
	return codec_key(out, REGION_NOTIFY, row, col, KIND_FAILURES, 0);
}

/*
 * Add to batch the deletion of every notification of (row, col) whose
 * write the observer transaction start_ts saw, and of its failures.
 */
int
ldb_notify_clear(struct kv_batch *batch, struct ldb_store *s,
    perc_bytes row, perc_bytes col, perc_ts start_ts)
{
	perc_buf prefix = PERC_BUF_INIT;
	struct kv_iter *it;
	const char *k;
	size_t klen;
	perc_ts ts;
	int rc, seen;

	if ((rc = codec_cell_prefix(&prefix, REGION_NOTIFY, row, col)) < 0)
		goto out;
	it = ldb_iter(s);
	for (kv_iter_seek(it, prefix.data, prefix.len);
	    kv_iter_valid(it); kv_iter_next(it)) {
		k = kv_iter_key(it, &klen);
		if (klen != prefix.len + 9 ||
		    memcmp(k, prefix.data, prefix.len) != 0)
			break;
		if (k[prefix.len] != KIND_NOTIFY)
			continue;
		ts = ~codec_get_u64((const unsigned char *)k + prefix.len + 1);
		if ((rc = write_seen(&seen, &s->base, row, col, ts,
		    start_ts)) < 0)
			break;
		if (seen)
			kv_batch_delete(batch, k, klen);
	}
	if (rc == 0)
		rc = ldb_iter_error(it);
	kv_iter_free(it);
	if (rc == 0 && (rc = failures_key(&prefix, row, col)) == 0)
		kv_batch_delete(batch, prefix.data, prefix.len);
out:
	perc_buf_dispose(&prefix);
	return rc;
}

int
ldb_failures_get(struct store *base, perc_buf *out, perc_bytes row,
    perc_bytes col)
{
	perc_buf key = PERC_BUF_INIT;
	int rc;

	if ((rc = failures_key(&key, row, col)) == 0)
		rc = ldb_get(out, (struct ldb_store *)base, buf_bytes(&key));
	perc_buf_dispose(&key);
	return rc;
}

int
ldb_failures_put(struct store *base, perc_bytes row, perc_bytes col,
    perc_bytes rec)
{
	perc_buf key = PERC_BUF_INIT;
	struct kv_batch *b;
	int rc;

	if ((rc = failures_key(&key, row, col)) == 0) {
		b = kv_batch_new();
		kv_batch_put(b, key.data, key.len, rec.data, rec.len);
		rc = ldb_write((struct ldb_store *)base, b, 0);
		kv_batch_free(b);
	}
	perc_buf_dispose(&key);
	return rc;
}

/*
 * Call fn for every dirty cell (of column only, when not NULL), in
 * byte order, with its failure record (empty when it has none).  Only
 * the notify range is read, so the cost follows the number of dirty
 * cells, not the size of the table.
 */
int
ldb_notify_scan(struct store *base, const perc_bytes *column,
    int (*fn)(void *arg, perc_bytes row, perc_bytes col,
    perc_bytes failures), void *arg)
{
	struct kv_iter *it;
	const char *k;
	struct key key;
	perc_buf last = PERC_BUF_INIT, fails = PERC_BUF_INIT;
	unsigned char region = REGION_NOTIFY;
	size_t klen;
	int rc = 0;

	memset(&key, 0, sizeof(key));
	it = ldb_iter((struct ldb_store *)base);
	for (kv_iter_seek(it, (const char *)&region, 1);
	    kv_iter_valid(it); kv_iter_next(it)) {
		k = kv_iter_key(it, &klen);
		if (k[0] != REGION_NOTIFY)
			break;
		/* One report a cell: skip its other notify keys. */
		if ((k[klen - 9] != KIND_NOTIFY &&
		    k[klen - 9] != KIND_PENDING) || (last.len == klen - 9 &&
		    memcmp(last.data, k, klen - 9) == 0))
			continue;
		if ((rc = buf_set(&last, k, klen - 9)) < 0 ||
		    (rc = codec_parse_key(&key, k, klen)) < 0)
			break;
		if (column != NULL && !bytes_eq(buf_bytes(&key.col), *column))
			continue;
		buf_reset(&fails);
		rc = ldb_failures_get(base, &fails, buf_bytes(&key.row),
		    buf_bytes(&key.col));
		if ((rc < 0 && rc != PERC_ENOTFOUND) ||
		    (rc = fn(arg, buf_bytes(&key.row), buf_bytes(&key.col),
		    buf_bytes(&fails))) != 0)
			break;
	}
	if (rc == 0)
		rc = ldb_iter_error(it);
	kv_iter_free(it);
	codec_key_dispose(&key);
	perc_buf_dispose(&last);
	perc_buf_dispose(&fails);
	return rc;
}

/* store_ops.notify_pending: the notify cells of (row, col), in order. */
int
ldb_notify_pending(struct store *base, perc_bytes row, perc_bytes col,
    perc_ts *ts, size_t max, size_t *n)
{
	perc_buf prefix = PERC_BUF_INIT;
	struct kv_iter *it;
	const char *k;
	size_t klen;
	int rc;

	*n = 0;
	if ((rc = codec_cell_prefix(&prefix, REGION_NOTIFY, row, col)) < 0)
		goto out;
	it = ldb_iter((struct ldb_store *)base);
	rc = PERC_ENOTFOUND;
	for (kv_iter_seek(it, prefix.data, prefix.len);
	    kv_iter_valid(it); kv_iter_next(it)) {
		k = kv_iter_key(it, &klen);
		if (klen != prefix.len + 9 ||
		    memcmp(k, prefix.data, prefix.len) != 0 ||
		    k[prefix.len] != KIND_NOTIFY)
			break;
		rc = 0;
		if (*n == max)
			break;
		ts[(*n)++] = ~codec_get_u64((const unsigned char *)k +
		    prefix.len + 1);
	}
	if (rc == PERC_ENOTFOUND && ldb_iter_error(it) < 0)
		rc = PERC_EIO;
	kv_iter_free(it);
out:
	perc_buf_dispose(&prefix);
	return rc;
}

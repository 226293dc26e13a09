/*
 * lib/inspect.c - show and resolve-locks: the raw cells of a row, and
 * cleaning up every abandoned lock in the store.
 */
#include <inttypes.h>
#include <string.h>

#include "buf.h"
#include "clock.h"
#include "codec.h"
#include "error.h"
#include "escape.h"
#include "lock.h"
#include "mvcc.h"

/* The failure count of an observed cell shows as part of its notify. */
static const char *const kind_names[] = {
	NULL, "lock", "write", "data", "ack", "notify", "notify"
};

/* key=value with the value escaped, spaces included. */
static int
add_pair(perc_buf *out, const char *key, perc_bytes value)
{
	int rc;

	if (out->len > 0 && (rc = buf_add(out, " ", 1)) < 0)
		return rc;
	if ((rc = buf_addf(out, "%s=", key)) < 0)
		return rc;
	return escape_field_spaces(out, value);
}

/* The DETAIL of a lock; *ts becomes its owner's start_ts. */
static int
lock_detail(perc_buf *out, perc_ts *ts, const perc_db *db, perc_bytes v)
{
	struct lock_rec lock;
	int64_t age;
	int rc;

	memset(&lock, 0, sizeof(lock));
	if ((rc = codec_lock_decode(&lock, v.data, v.len)) < 0)
		goto done;
	*ts = lock.start_ts;
	age = clock_wall_ms() - (int64_t)lock.wall_ms;
	if ((rc = buf_addf(out, "op=%s", codec_op_name(lock.op))) < 0 ||
	    (rc = add_pair(out, "primary-row",
	    buf_bytes(&lock.primary_row))) < 0 ||
	    (rc = add_pair(out, "primary-column",
	    buf_bytes(&lock.primary_col))) < 0 ||
	    (rc = buf_addf(out, " owner=%" PRIu32 "@", lock.pid)) < 0 ||
	    (rc = escape_field_spaces(out, buf_bytes(&lock.host))) < 0)
		goto done;
	rc = buf_addf(out, " age=%.3fs ttl=%.3fs owner-state=%s",
	    (double)age / 1000, (double)lock.ttl_ms / 1000,
	    lock_owner_state_name(lock_owner_state(db, &lock)));
done:
	codec_lock_dispose(&lock);
	return rc;
}

/*
 * The DETAIL of a raw cell.  A lock's key has no timestamp, so *ts
 * becomes the start_ts its record names; other kinds leave *ts alone.
 */
static int
cell_detail(perc_buf *out, perc_ts *ts, const perc_db *db, int kind,
    perc_bytes v)
{
	struct write_rec w;
	int rc;

	buf_reset(out);
	switch (kind) {
	case KIND_LOCK:
		return lock_detail(out, ts, db, v);
	case KIND_WRITE:
		if ((rc = codec_write_decode(&w, v.data, v.len)) < 0)
			return rc;
		return buf_addf(out, "op=%s start=%" PRIu64,
		    codec_op_name(w.op), w.start_ts);
	case KIND_DATA:
		if ((rc = buf_addf(out, "bytes=%zu", v.len)) < 0)
			return rc;
		return add_pair(out, "value", v);
	case KIND_FAILURES:
		if (v.len == 12)
			return buf_addf(out, "failures=%" PRIu32,
			    codec_get_u32(v.data));
		break;
	}
	return buf_add(out, "-", 1);
}

/* Walk every key of region that starts with the prefix for row/col. */
static int
show_region(perc_db *db, int region, perc_bytes row, const perc_bytes *col,
    int (*fn)(const perc_raw_cell *, void *), void *arg)
{
	perc_buf prefix = PERC_BUF_INIT, detail = PERC_BUF_INIT;
	leveldb_iterator_t *it;
	perc_raw_cell cell;
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
	it = store_iter(&db->store);
	for (leveldb_iter_seek(it, prefix.data, prefix.len);
	    leveldb_iter_valid(it); leveldb_iter_next(it)) {
		key = leveldb_iter_key(it, &klen);
		if (klen < prefix.len || memcmp(key, prefix.data, prefix.len))
			break;
		val = leveldb_iter_value(it, &vlen);
		if ((rc = codec_parse_key(&k, key, klen)) < 0)
			break;
		cell.ts = k.ts;
		if ((rc = cell_detail(&detail, &cell.ts, db, k.kind,
		    bytes_of(val, vlen))) < 0)
			break;
		cell.column = buf_bytes(&k.col);
		cell.kind = kind_names[k.kind];
		/* An observer's ack is a write record of its own kind. */
		if (k.kind == KIND_WRITE && vlen > 0 && val[0] == OP_ACK)
			cell.kind = "ack";
		cell.detail = detail.data;
		if ((rc = fn(&cell, arg)) != 0)
			break;
	}
	if (rc == 0)
		rc = store_iter_error(it);
	leveldb_iter_destroy(it);
out:
	codec_key_dispose(&k);
	perc_buf_dispose(&prefix);
	perc_buf_dispose(&detail);
	return rc;
}

int
perc_show(perc_db *db, perc_bytes row, const perc_bytes *col,
    int (*fn)(const perc_raw_cell *, void *), void *arg)
{
	int rc;

	if ((rc = db_acquire(db, clock_deadline(db->timeout_ms))) < 0)
		return rc;
	if ((rc = show_region(db, REGION_CELL, row, col, fn, arg)) == 0)
		rc = show_region(db, REGION_NOTIFY, row, col, fn, arg);
	db_release(db);
	return rc;
}

/* Resolve one lock met by the walk and tell fn what was done. */
static int
resolve_one(perc_db *db, struct key *k, perc_bytes v, unsigned flags,
    int64_t older_than_ms, int (*fn)(const perc_resolved *, void *),
    void *arg)
{
	struct lock_rec lock;
	perc_resolved r;
	int rc, action;

	memset(&lock, 0, sizeof(lock));
	if ((rc = codec_lock_decode(&lock, v.data, v.len)) < 0)
		goto done;
	if (clock_wall_ms() - (int64_t)lock.wall_ms < older_than_ms)
		goto done;
	if ((rc = lock_resolve(&action, db, buf_bytes(&k->row),
	    buf_bytes(&k->col), &lock,
	    ((flags & PERC_RESOLVE_ALL) ? RESOLVE_FORCE : 0) |
	    ((flags & PERC_RESOLVE_DRY_RUN) ? RESOLVE_DRY_RUN : 0))) < 0)
		goto done;
	r.row = buf_bytes(&k->row);
	r.column = buf_bytes(&k->col);
	r.start_ts = lock.start_ts;
	r.action = action_name(action);
	rc = fn(&r, arg);
done:
	codec_lock_dispose(&lock);
	return rc;
}

/*
 * The walk reads a LevelDB iterator, which sees the store as it was
 * when the walk began; resolving a secondary may roll back its primary
 * ahead of the walk, and meeting that primary later finds its fate
 * already settled, so every lock is reported once, with its fate.
 */
int
perc_resolve_locks(perc_db *db, unsigned flags, int64_t older_than_ms,
    int (*fn)(const perc_resolved *, void *), void *arg)
{
	leveldb_iterator_t *it;
	const unsigned char *key;
	const char *val;
	struct key k;
	size_t klen, vlen;
	unsigned char region = REGION_CELL;
	int rc;

	memset(&k, 0, sizeof(k));
	if ((rc = db_acquire(db, clock_deadline(db->timeout_ms))) < 0)
		return rc;
	it = store_iter(&db->store);
	for (leveldb_iter_seek(it, (const char *)&region, 1);
	    leveldb_iter_valid(it); leveldb_iter_next(it)) {
		key = (const unsigned char *)leveldb_iter_key(it, &klen);
		if (key[0] != REGION_CELL)
			break;
		/* Only locks: the kind byte sits 9 bytes from the end. */
		if (klen < 9 || key[klen - 9] != KIND_LOCK)
			continue;
		val = leveldb_iter_value(it, &vlen);
		if ((rc = codec_parse_key(&k, key, klen)) < 0 ||
		    (rc = resolve_one(db, &k, bytes_of(val, vlen), flags,
		    older_than_ms, fn, arg)) != 0)
			break;
	}
	if (rc == 0)
		rc = store_iter_error(it);
	leveldb_iter_destroy(it);
	codec_key_dispose(&k);
	db_release(db);
	return rc;
}

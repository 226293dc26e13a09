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
#include "store.h"
#include "txn.h"

/* The failure count of an observed cell shows as part of its notify,
   and so does a weak notification still pending. */
static const char *const kind_names[] = {
	NULL, "lock", "write", "data", "ack", "notify", "notify", "notify"
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

/*
 * The DETAIL of a lock; *ts becomes its owner's start_ts.
 * PERC_ENOTFOUND: the key holds a cell's head without a lock, which
 * show leaves out.
 */
static int
lock_detail(perc_buf *out, perc_ts *ts, perc_db *db, perc_bytes v)
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

/* A pending weak notification's: the primary that decides it. */
static int
pending_detail(perc_buf *out, perc_bytes v)
{
	const unsigned char *p = v.data;
	uint32_t n;
	int rc;

	if (v.len < 4 || (n = codec_get_u32(p)) > v.len - 4)
		return buf_addf(out, "weak=pending damaged");
	if ((rc = buf_addf(out, "weak=pending")) == 0 &&
	    (rc = add_pair(out, "primary-row", bytes_of(p + 4, n))) == 0)
		rc = add_pair(out, "primary-column", bytes_of(p + 4 + n,
		    v.len - 4 - n));
	return rc;
}

/*
 * The DETAIL of a raw cell.  A lock's key has no timestamp, so *ts
 * becomes the start_ts its record names; other kinds leave *ts alone.
 */
static int
cell_detail(perc_buf *out, perc_ts *ts, perc_db *db, perc_bytes col,
    int kind, perc_bytes v)
{
	struct write_rec w;
	int rc;

	buf_reset(out);
	switch (kind) {
	case KIND_NOTIFY:
		if (db_is_weak(db, col))
			return buf_addf(out, "weak=committed");
		break;
	case KIND_PENDING:
		return pending_detail(out, v);
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

struct show_walk {
	perc_db  *db;
	perc_buf  detail;
	int     (*fn)(const perc_raw_cell *, void *);
	void     *arg;
};

static int
show_one(void *arg, int region, perc_bytes col, int kind, perc_ts ts,
    perc_bytes v)
{
	struct show_walk *walk = arg;
	perc_raw_cell cell;
	int rc;

	(void)region;
	cell.ts = ts;
	rc = cell_detail(&walk->detail, &cell.ts, walk->db, col, kind, v);
	if (rc == PERC_ENOTFOUND)
		return 0;
	if (rc < 0)
		return rc;
	cell.column = col;
	cell.kind = kind_names[kind];
	/* An observer's ack is a write record of its own kind. */
	if (kind == KIND_WRITE && v.len > 0 &&
	    ((const char *)v.data)[0] == OP_ACK)
		cell.kind = "ack";
	cell.detail = walk->detail.data;
	return walk->fn(&cell, walk->arg);
}

int
perc_show(perc_db *db, perc_bytes row, const perc_bytes *col,
    int (*fn)(const perc_raw_cell *, void *), void *arg)
{
	struct show_walk walk = { db, PERC_BUF_INIT, fn, arg };
	int rc;

	if ((rc = db_acquire(db, clock_deadline(db->timeout_ms))) < 0)
		return rc;
	rc = db->store->ops->raw(db->store, row, col, show_one, &walk);
	db_release(db);
	perc_buf_dispose(&walk.detail);
	return rc;
}

struct resolve_walk {
	int64_t            older_than_ms;
	int              (*fn)(const perc_resolved *, void *);
	void              *arg;
	struct lock_batch  batch;
};

/* Tell fn what was done to one lock. */
static int
report_one(void *arg, perc_bytes row, perc_bytes col, perc_ts start_ts,
    int action)
{
	struct resolve_walk *walk = arg;
	perc_resolved r;

	r.row = row;
	r.column = col;
	r.start_ts = start_ts;
	r.action = action_name(action);
	return walk->fn(&r, walk->arg);
}

/* Resolve one lock met by the walk (lock_batch_add reports it). */
static int
resolve_one(void *arg, perc_bytes row, perc_bytes col,
    const struct lock_rec *lock)
{
	struct resolve_walk *walk = arg;

	if (clock_wall_ms() - (int64_t)lock->wall_ms < walk->older_than_ms)
		return 0;
	return lock_batch_add(&walk->batch, row, col, lock);
}

/*
 * The walk may see the store as it was when it began: resolving a
 * secondary may roll back its primary ahead of the walk, and meeting
 * that primary later finds its fate already settled, so every lock is
 * reported once, with its fate.
 */
int
perc_resolve_locks(perc_db *db, unsigned flags, int64_t older_than_ms,
    int (*fn)(const perc_resolved *, void *), void *arg)
{
	struct resolve_walk walk;
	int rc;

	memset(&walk, 0, sizeof(walk));
	walk.older_than_ms = older_than_ms;
	walk.fn = fn;
	walk.arg = arg;
	walk.batch.db = db;
	walk.batch.flags = ((flags & PERC_RESOLVE_ALL) ? RESOLVE_FORCE : 0) |
	    ((flags & PERC_RESOLVE_DRY_RUN) ? RESOLVE_DRY_RUN : 0);
	walk.batch.report = report_one;
	walk.batch.arg = &walk;
	if ((rc = db_acquire(db, clock_deadline(db->timeout_ms))) < 0)
		return rc;
	if ((rc = db->store->ops->locks(db->store, resolve_one, &walk)) == 0)
		rc = lock_batch_flush(&walk.batch);
	/* The crashed commits it decided are finished: their journals go. */
	if (rc == 0 && !(flags & PERC_RESOLVE_DRY_RUN))
		rc = txn_remove_finished(db);
	db_release(db);
	lock_batch_dispose(&walk.batch);
	return rc;
}

/*
 * lib/cell.c - the rules on one cell's records that both stores apply:
 * what gc's pass drops, the refusal of a snapshot below the safe point,
 * and whether a notification's write is seen (cell.h).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cell.h"
#include "codec.h"
#include "error.h"

int
cell_too_old(perc_ts sp)
{
	return error_set(PERC_ETOOOLD, "snapshot too old: gc has removed "
	    "versions below its safe point %" PRIu64 "; read at a newer "
	    "timestamp, or start a new transaction", sp);
}

static int
cmp_ts(const void *a, const void *b)
{
	perc_ts x = *(const perc_ts *)a, y = *(const perc_ts *)b;

	return x < y ? -1 : x > y;
}

static int
forget_cell(struct gc_cell *c, perc_bytes prefix)
{
	c->skip = c->have_version = c->have_ack = 0;
	c->nputs = 0;
	c->sorted = 0;
	return buf_set(&c->prefix, prefix.data, prefix.len);
}

static int
drop_put(struct gc_cell *c, perc_ts start_ts)
{
	perc_ts *p;
	size_t cap;

	if (c->nputs == c->cap) {
		cap = c->cap ? 2 * c->cap : 64;
		if ((p = realloc(c->puts, cap * sizeof(*p))) == NULL)
			return error_set(PERC_EIO, "out of memory");
		c->puts = p;
		c->cap = cap;
	}
	c->puts[c->nputs++] = start_ts;
	return 1;
}

/*
 * The keys of a cell come in codec order: its lock, then its write
 * records newest first, then its data newest first.  Of the write
 * records at or below the bound, the newest put or delete is the
 * version every snapshot at or above the bound reads: a put stays, a
 * delete goes, and everything older goes, with the data of its puts.
 * Rollback and lock-only records at or below the bound go too: what
 * they guard against (a late prewrite, a write-write conflict) is a
 * transaction that started below the bound, which the store refuses
 * from now on; but a rollback record at the bound, whose transaction
 * began there and may still be open (the oldest, which set the bound),
 * stays.  The newest ack stays, so an observer still sees that
 * it ran.  A cell locked below the bound is left alone.  A cell's head
 * (the LevelDB store's, codec.h) stays, unless all it says is that the
 * cell was deleted at or below the bound: that delete goes, and the
 * cell with it.
 */
int
cell_gc_drops(struct gc_cell *c, perc_bytes prefix, int kind, perc_ts ts,
    perc_bytes value)
{
	struct cell_head head;
	struct lock_rec lock;
	struct write_rec w;
	int rc;

	if (!bytes_eq(prefix, buf_bytes(&c->prefix)) &&
	    (rc = forget_cell(c, prefix)) < 0)
		return rc;
	switch (kind) {
	case KIND_LOCK:
		memset(&lock, 0, sizeof(lock));
		if ((rc = codec_head_decode(&head, &lock, value.data,
		    value.len)) == 0 && head.locked)
			c->skip |= lock.start_ts < c->bound;
		else if (rc == 0)
			rc = head.newest_op == OP_DELETE &&
			    head.newest_commit <= c->bound;
		codec_lock_dispose(&lock);
		return rc;
	case KIND_WRITE:
		if (c->skip || ts > c->bound)
			return 0;
		if ((rc = codec_write_decode(&w, value.data, value.len)) < 0)
			return rc;
		if (w.op == OP_ACK) {
			rc = c->have_ack;
			c->have_ack = 1;
			return rc;
		}
		if (w.op == OP_ROLLBACK && ts == c->bound)
			return 0;       /* its transaction began at the bound */
		if (c->have_version)
			return w.op == OP_PUT ? drop_put(c, w.start_ts) : 1;
		if (w.op == OP_PUT || w.op == OP_DELETE)
			c->have_version = 1;
		return w.op != OP_PUT;
	case KIND_DATA:
		if (c->skip || c->nputs == 0)
			return 0;
		if (!c->sorted) {
			qsort(c->puts, c->nputs, sizeof(*c->puts), cmp_ts);
			c->sorted = 1;
		}
		return bsearch(&ts, c->puts, c->nputs, sizeof(*c->puts),
		    cmp_ts) != NULL;
	default:
		return 0;
	}
}

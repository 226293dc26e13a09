/*
 * lib/leveldb/head.c - the keys of one cell of the held LevelDB store:
 * a cursor over its versions of one kind, and its head (codec.h), the
 * key that holds its lock and its newest write.
 */
#include <string.h>

#include "buf.h"
#include "codec.h"
#include "leveldb.h"

int
ldb_cell_open(struct cell *c, struct ldb_store *s, perc_bytes row,
    perc_bytes col)
{
	memset(c, 0, sizeof(*c));
	c->row = row;
	c->col = col;
	c->it = ldb_reader(s);
	return codec_cell_prefix(&c->prefix, REGION_CELL, row, col);
}

void
ldb_cell_close(struct cell *c)
{
	perc_buf_dispose(&c->prefix);
	perc_buf_dispose(&c->key);
}

/* Position on the newest version of kind at or below ts. */
int
ldb_cell_seek(struct cell *c, int kind, perc_ts ts)
{
	int rc;

	if ((rc = codec_key(&c->key, REGION_CELL, c->row, c->col, kind,
	    ts)) < 0)
		return rc;
	kv_iter_seek(c->it, c->key.data, c->key.len);
	return 0;
}

/*
 * Is the cursor on a version of kind in this cell?  Sets *ts and the
 * value; 0 at the end of them, -1 on a valid version.
 */
int
ldb_cell_at(struct cell *c, int kind, perc_ts *ts, perc_bytes *value)
{
	const char *k;
	size_t klen, vlen;

	if (!kv_iter_valid(c->it))
		return 0;
	k = kv_iter_key(c->it, &klen);
	if (klen != c->prefix.len + 9 ||
	    memcmp(k, c->prefix.data, c->prefix.len) != 0 ||
	    (unsigned char)k[c->prefix.len] != kind)
		return 0;
	*ts = ~codec_get_u64((const unsigned char *)k + c->prefix.len + 1);
	value->data = kv_iter_value(c->it, &vlen);
	value->len = vlen;
	return -1;
}

/*
 * The head of (row, col) (codec.h) into *head, and its lock, if it
 * holds one (head->locked), into *lock: 0, or PERC_ENOTFOUND when the
 * cell has no head.  A point lookup: an iterator would have to step
 * over every older version of the one head key that LevelDB still
 * keeps, one for each commit since the last compaction.
 */
int
ldb_get_head(struct ldb_store *s, struct cell_head *head, struct lock_rec *lock,
    perc_bytes row, perc_bytes col)
{
	int rc;

	head->locked = head->newest_op = 0;
	head->lock_has_value = head->newest_has_value = 0;
	head->written_at = 0;
	if ((rc = codec_key(&s->head_key, REGION_CELL, row, col, KIND_LOCK,
	    LOCK_TS)) == 0 &&
	    (rc = ldb_get(&s->head_val, s, buf_bytes(&s->head_key))) == 0)
		rc = codec_head_decode(head, lock, s->head_val.data,
		    s->head_val.len);
	return rc;
}

/*
 * The lock on (row, col) if transaction start_ts holds it, with the
 * head it is in: 0, or PERC_ENOTFOUND when the lock is someone else's
 * or there is none.
 */
int
ldb_get_own_lock(struct ldb_store *s, struct cell_head *head,
    struct lock_rec *lock, perc_bytes row, perc_bytes col, perc_ts start_ts)
{
	int rc;

	rc = ldb_get_head(s, head, lock, row, col);
	if (rc == 0 && (!head->locked || lock->start_ts != start_ts))
		rc = PERC_ENOTFOUND;
	return rc;
}

/*
 * Add to b the change of (row, col)'s entry in the lock index
 * (codec.h's REGION_LOCKS), whose head, in head_key, held a lock
 * (head->locked, as read in this hold of the store) and will hold one
 * when lock is not NULL: so the index names a cell exactly when its
 * head holds a lock, in every batch, crash or not.
 */
static void
lock_index_put(struct kv_batch *b, perc_buf *head_key,
    const struct cell_head *head, const struct lock_rec *lock)
{
	if ((lock != NULL) == (head->locked != 0))
		return;         /* a lock rewritten, or still none */
	head_key->data[0] = REGION_LOCKS;
	if (lock != NULL)
		kv_batch_put(b, head_key->data, head_key->len, "", 0);
	else
		kv_batch_delete(b, head_key->data, head_key->len);
	head_key->data[0] = REGION_CELL;
}

/*
 * The key of transaction start_ts's marker in the lock index (codec.h's
 * REGION_LOCKS): two NUL bytes after the region byte, which no cell's
 * key has there (a row's NUL is escaped as NUL 0xff, its end is NUL 1),
 * then start_ts, big-endian.
 */
int
ldb_marker_key(perc_buf *out, perc_ts start_ts)
{
	unsigned char k[11];

	k[0] = REGION_LOCKS;
	k[1] = k[2] = 0;
	codec_put_u64(k + 3, start_ts);
	buf_reset(out);
	return buf_add(out, k, sizeof(k));
}

/*
 * Add to b the head of (row, col) with lock (NULL: none) and head's
 * newest write; a head with neither goes.  A bulk load's step
 * (STORE_BULK in flags) starts no head where the cell had none: it
 * would add a key to each cell loaded, and the cell is read by its
 * write records as before.  The lock index follows (lock_index_put),
 * but for the secondaries of a bulk commit (STORE_BULK without
 * STORE_PRIMARY), whose transaction's marker stands for them.
 */
int
ldb_put_head(struct kv_batch *b, perc_buf *key, perc_bytes row,
    perc_bytes col, struct cell_head *head, const struct lock_rec *lock,
    int had_newest, unsigned flags)
{
	perc_buf enc = PERC_BUF_INIT;
	int rc;

	if ((flags & STORE_BULK) && !had_newest) {
		head->newest_op = 0;
		head->lock_has_value = 0;
	}
	if ((rc = codec_key(key, REGION_CELL, row, col, KIND_LOCK,
	    LOCK_TS)) < 0)
		return rc;
	/* A bulk commit's secondaries: its marker stands for them. */
	if (!(flags & STORE_BULK) || (flags & STORE_PRIMARY))
		lock_index_put(b, key, head, lock);
	if (lock == NULL && head->newest_op == 0) {
		kv_batch_delete(b, key->data, key->len);
		return 0;
	}
	if ((rc = codec_head_encode(&enc, head, lock)) == 0)
		kv_batch_put(b, key->data, key->len, enc.data,
		    enc.len);
	perc_buf_dispose(&enc);
	return rc;
}

/*
 * Note in head a write record of op, committed at commit_ts, that the
 * batch being made adds: as its newest write when it changes the
 * cell's value, with its value when short (value; NULL: not known);
 * and in written_at.  A commit's commit_ts is above every record the
 * cell holds (its lock kept others out since its prewrite, or, in one
 * step, the store), so it bounds them all.
 */
void
ldb_head_newest(struct cell_head *head, int op, perc_ts start_ts,
    perc_ts commit_ts, const perc_bytes *value)
{
	if (head->written_at < commit_ts)
		head->written_at = commit_ts;
	if (op != OP_PUT && op != OP_DELETE)
		return;
	head->newest_op = op;
	head->newest_start = start_ts;
	head->newest_commit = commit_ts;
	head->newest_has_value = op == OP_PUT && value != NULL &&
	    value->len <= HEAD_VALUE_MAX;
	if (head->newest_has_value)
		head->newest_value = *value;
}

/*
 * lib/leveldb/log_entry.c - the change log's entries as commits make
 * them: a key in REGION_LOG per batch that commits puts or deletes of
 * a transaction, or per few KB of it (codec_log_key of its first such
 * cell), added to that batch, so that each cell is in the log exactly
 * when its write record is.
 *
 * An entry's value is the op of the key's cell and the transaction's
 * start_ts (8 bytes), then for each further cell of the entry its op,
 * its row and its column, each after its length (4 bytes).  An entry
 * of one cell is the 9 bytes that a per-cell entry of an earlier perc
 * holds, so a directory of either kind reads the same.
 */
#include "buf.h"
#include "codec.h"
#include "leveldb.h"

/*
 * An entry grows to about a LevelDB block, then the next cell starts
 * another: any seek that lands on an entry reads its whole block, and
 * the walk of an empty lock index (REGION_LOCKS, just before the log)
 * lands on the log's first one, which a bulk load's batch made of
 * megabytes.
 */
#define LOG_ENTRY_BYTES 4096

void
ldb_log_flush(struct ldb_log_entry *e, struct kv_batch *b)
{
	if (e->cells > 0)
		kv_batch_put(b, e->key.data, e->key.len, e->value.data,
		    e->value.len);
	e->cells = 0;
	buf_reset(&e->key);
	buf_reset(&e->value);
}

void
ldb_log_dispose(struct ldb_log_entry *e)
{
	perc_buf_dispose(&e->key);
	perc_buf_dispose(&e->value);
	e->cells = 0;
}

/* The first cell: the entry's key, and the value's head. */
static int
log_start(struct ldb_log_entry *e, const struct ldb_log_cell *c)
{
	unsigned char head[LOG_HEAD_LEN];
	int rc;

	head[0] = (unsigned char)(c->op | (e->apart ? LOG_OP_APART : 0));
	codec_put_u64(head + 1, c->start_ts);
	if ((rc = buf_grow(&e->value, sizeof(head))) < 0 ||
	    (rc = codec_log_key(&e->key, c->commit_ts, c->row, c->col)) < 0) {
		buf_reset(&e->key);
		return rc;
	}
	(void)buf_add(&e->value, head, sizeof(head));    /* room made */
	e->start_ts = c->start_ts;
	e->commit_ts = c->commit_ts;
	e->cells = 1;
	return 0;
}

/* A further cell, all or nothing. */
static int
log_append(struct ldb_log_entry *e, const struct ldb_log_cell *c)
{
	unsigned char head[LOG_CELL_LEN];
	int rc;

	/* A length fits in 4 bytes: the journal took no longer one. */
	if ((rc = buf_grow(&e->value, sizeof(head) + c->row.len +
	    c->col.len)) < 0)
		return rc;
	head[0] = (unsigned char)c->op;
	codec_put_u32(head + 1, (uint32_t)c->row.len);
	codec_put_u32(head + 5, (uint32_t)c->col.len);
	(void)buf_add(&e->value, head, sizeof(head));    /* room made */
	(void)buf_addb(&e->value, c->row);
	(void)buf_addb(&e->value, c->col);
	e->cells++;
	return 0;
}

/*
 * Add cell c, whose write record goes into the batch that e's entry
 * goes into, to e: all or nothing, so that on a failure e holds just
 * the cells whose write records went in.  An entry holds cells of one
 * commit of one transaction, up to LOG_ENTRY_BYTES: e's, of another or
 * full, is first written into b (which goes in with them).  Lock-only
 * writes and acks change nothing and are left out.
 */
int
ldb_log_add(struct ldb_log_entry *e, struct kv_batch *b,
    const struct ldb_log_cell *c)
{
	if (!ldb_log_changes(c->op))
		return 0;
	if (e->cells > 0 && (e->start_ts != c->start_ts ||
	    e->commit_ts != c->commit_ts || e->value.len >= LOG_ENTRY_BYTES))
		ldb_log_flush(e, b);
	return e->cells == 0 ? log_start(e, c) : log_append(e, c);
}

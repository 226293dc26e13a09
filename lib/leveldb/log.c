/*
 * lib/leveldb/log.c - the change log of the LevelDB store (perc log):
 * a key in REGION_LOG per committed put or delete (codec_log_key),
 * added to the batch that writes the cell's write record, so that it
 * is there exactly when the write is; read in commit order, and
 * dropped below gc's safe point.
 */
#include <string.h>

#include "buf.h"
#include "codec.h"
#include "error.h"
#include "leveldb.h"

/* The value of a change log key: the op, then start_ts. */
#define LOG_VALUE_LEN 9

/* Add to b the change log's entry of a write of op on (row, col). */
int
ldb_log_put(struct kv_batch *b, perc_bytes row, perc_bytes col, int op,
    perc_ts start_ts, perc_ts commit_ts)
{
	perc_buf key = PERC_BUF_INIT;
	unsigned char v[LOG_VALUE_LEN];
	int rc;

	if (op != OP_PUT && op != OP_DELETE)
		return 0;       /* lock-only writes and acks change nothing */
	v[0] = (unsigned char)op;
	codec_put_u64(v + 1, start_ts);
	if ((rc = codec_log_key(&key, commit_ts, row, col)) == 0)
		kv_batch_put(b, key.data, key.len, (const char *)v, sizeof(v));
	perc_buf_dispose(&key);
	return rc;
}

static int
log_wanted(const struct store_log *lg, const struct key *k)
{
	if (k->row.len < lg->prefix.len || (lg->prefix.len > 0 &&
	    memcmp(k->row.data, lg->prefix.data, lg->prefix.len) != 0))
		return 0;
	return lg->column == NULL || bytes_eq(buf_bytes(&k->col), *lg->column);
}

/* Give one entry of the log, reading a put's data at its start_ts. */
static int
log_give(struct ldb_store *s, struct store_log *lg, const struct key *k,
    const unsigned char *v, size_t vlen, perc_buf *key, perc_buf *value)
{
	perc_bytes row = buf_bytes(&k->row), col = buf_bytes(&k->col);
	int rc, op;

	if (vlen != LOG_VALUE_LEN || (v[0] != OP_PUT && v[0] != OP_DELETE))
		return error_set(PERC_EIO, "the store holds a malformed change "
		    "log entry; the data directory is damaged");
	op = v[0];
	buf_reset(value);
	if (op == OP_PUT) {
		if ((rc = codec_key(key, REGION_CELL, row, col, KIND_DATA,
		    codec_get_u64(v + 1))) < 0)
			return rc;
		if ((rc = ldb_get(value, s, buf_bytes(key))) == PERC_ENOTFOUND)
			return error_set(PERC_EIO, "a change log entry names "
			    "data the store does not hold; the data "
			    "directory is damaged");
		if (rc < 0)
			return rc;
	}
	return lg->change(lg->arg, k->ts, row, col, op, buf_bytes(value));
}

int
ldb_log_read(struct store *base, struct store_log *lg)
{
	struct ldb_store *s = (struct ldb_store *)base;
	struct kv_iter *it = ldb_iter(s);
	perc_buf key = PERC_BUF_INIT, value = PERC_BUF_INIT;
	unsigned char start[9];
	const char *k, *v;
	size_t klen, vlen, n = 0;
	struct key pk;
	int rc = 0;

	memset(&pk, 0, sizeof(pk));
	start[0] = REGION_LOG;
	codec_put_u64(start + 1, lg->from + 1);
	lg->upto = lg->to;
	for (kv_iter_seek(it, (const char *)start, sizeof(start));
	    kv_iter_valid(it); kv_iter_next(it)) {
		k = kv_iter_key(it, &klen);
		if (k[0] != REGION_LOG)
			break;
		if ((rc = codec_parse_log_key(&pk, k, klen)) < 0)
			break;
		if (pk.ts > lg->to)
			break;
		if (n >= lg->max && pk.ts > lg->upto) {
			lg->upto = pk.ts - 1;   /* a transaction's end */
			goto out;
		}
		n++;
		lg->upto = pk.ts;
		if (!log_wanted(lg, &pk))
			continue;
		v = kv_iter_value(it, &vlen);
		if ((rc = log_give(s, lg, &pk, (const unsigned char *)v, vlen,
		    &key, &value)) != 0)
			break;
	}
	lg->upto = lg->to;
	lg->done = 1;
out:
	if (rc == 0)
		rc = ldb_iter_error(it);
	kv_iter_free(it);
	codec_key_dispose(&pk);
	perc_buf_dispose(&key);
	perc_buf_dispose(&value);
	return rc;
}

/*
 * Drop the change log's entries at or below sp, in the batch that
 * raises the safe point: history below it is gone anyway.
 */
int
ldb_log_trim(struct ldb_store *s, struct kv_batch *b, perc_ts sp)
{
	struct kv_iter *it = ldb_iter(s);
	unsigned char first = REGION_LOG;
	const char *k;
	size_t klen;
	int rc;

	for (kv_iter_seek(it, (const char *)&first, 1); kv_iter_valid(it);
	    kv_iter_next(it)) {
		k = kv_iter_key(it, &klen);
		if (klen < 9 || k[0] != REGION_LOG ||
		    codec_get_u64((const unsigned char *)k + 1) > sp)
			break;
		kv_batch_delete(b, k, klen);
	}
	rc = ldb_iter_error(it);
	kv_iter_free(it);
	return rc;
}

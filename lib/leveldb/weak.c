/*
 * lib/leveldb/weak.c - weak notifications in the notify region (see
 * store.h's weak_pend, weak_settle and weak_clear): each a batch of
 * its own, under the store's lock, which makes it one step.
 */
#include <string.h>

#include "buf.h"
#include "leveldb.h"

int
ldb_weak_pend(struct store *base, perc_bytes row, perc_bytes col,
    perc_ts start_ts, perc_bytes primary)
{
	struct ldb_store *s = (struct ldb_store *)base;
	perc_buf key = PERC_BUF_INIT;
	struct kv_batch *b;
	int rc;

	if ((rc = codec_key(&key, REGION_NOTIFY, row, col, KIND_PENDING,
	    start_ts)) == 0) {
		b = kv_batch_new();
		kv_batch_put(b, key.data, key.len, primary.data,
		    primary.len);
		rc = ldb_write(s, b, 0);
		kv_batch_free(b);
	}
	perc_buf_dispose(&key);
	return rc;
}

int
ldb_weak_settle(struct store *base, perc_bytes row, perc_bytes col,
    perc_ts start_ts, perc_ts commit_ts, unsigned flags)
{
	struct ldb_store *s = (struct ldb_store *)base;
	perc_buf key = PERC_BUF_INIT, val = PERC_BUF_INIT;
	struct kv_batch *b = kv_batch_new();
	int rc = 0, notify = commit_ts != 0;

	if (start_ts != 0 && (rc = codec_key(&key, REGION_NOTIFY, row, col,
	    KIND_PENDING, start_ts)) == 0) {
		if ((rc = ldb_get(&val, s, buf_bytes(&key))) == 0)
			kv_batch_delete(b, key.data, key.len);
		else if (rc == PERC_ENOTFOUND)
			notify = rc = 0;        /* settled before */
	}
	if (rc == 0 && notify && (rc = codec_key(&key, REGION_NOTIFY, row,
	    col, KIND_NOTIFY, commit_ts)) == 0)
		kv_batch_put(b, key.data, key.len, "", 0);
	if (rc == 0)
		rc = ldb_write(s, b, (flags & STORE_SYNC) != 0);
	kv_batch_free(b);
	perc_buf_dispose(&key);
	perc_buf_dispose(&val);
	return rc;
}

/*
 * The notifications at or below upto are the keys from KIND_NOTIFY at
 * upto on, timestamps being inverted in keys (newest first).
 */
int
ldb_weak_clear(struct store *base, perc_bytes row, perc_bytes col,
    perc_ts upto)
{
	struct ldb_store *s = (struct ldb_store *)base;
	perc_buf from = PERC_BUF_INIT, prefix = PERC_BUF_INIT;
	struct kv_batch *b = kv_batch_new();
	struct kv_iter *it = NULL;
	const char *k;
	size_t klen;
	int rc;

	if ((rc = codec_cell_prefix(&prefix, REGION_NOTIFY, row, col)) < 0 ||
	    (rc = codec_key(&from, REGION_NOTIFY, row, col, KIND_NOTIFY,
	    upto)) < 0)
		goto done;
	it = ldb_iter(s);
	for (kv_iter_seek(it, from.data, from.len);
	    kv_iter_valid(it); kv_iter_next(it)) {
		k = kv_iter_key(it, &klen);
		if (klen != prefix.len + 9 ||
		    memcmp(k, prefix.data, prefix.len) != 0 ||
		    k[prefix.len] != KIND_NOTIFY)
			break;
		kv_batch_delete(b, k, klen);
	}
	if ((rc = ldb_iter_error(it)) == 0 && (rc = codec_key(&from,
	    REGION_NOTIFY, row, col, KIND_FAILURES, 0)) == 0) {
		kv_batch_delete(b, from.data, from.len);
		rc = ldb_write(s, b, 0);
	}
done:
	if (it != NULL)
		kv_iter_free(it);
	kv_batch_free(b);
	perc_buf_dispose(&from);
	perc_buf_dispose(&prefix);
	return rc;
}

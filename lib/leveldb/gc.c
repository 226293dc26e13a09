/*
 * lib/leveldb/gc.c - gc on the LevelDB store: its safe point, key "g"
 * outside the cell and notify regions, which each process reads when
 * it takes the store and checks before every read and prewrite; and
 * the pass, a batch of keys at a time under the store's lock.
 */
#include <string.h>

#include "buf.h"
#include "cell.h"
#include "codec.h"
#include "error.h"
#include "leveldb.h"

#define SAFE_POINT_KEY "g"
#define GC_BATCH_KEYS  20000    /* keys looked at per hold of the store */

/* The safe point as the store holds it, into s->safe_point. */
int
ldb_load_safe_point(struct ldb_store *s)
{
	perc_buf v = PERC_BUF_INIT;
	int rc;

	s->safe_point = 0;
	rc = ldb_get(&v, s, bytes_of(SAFE_POINT_KEY, 1));
	if (rc == 0 && v.len != 8)
		rc = error_set(PERC_EIO, "gc's safe point in '%s' is damaged; "
		    "restore the data directory from a backup", s->path);
	if (rc == 0)
		s->safe_point = codec_get_u64((const unsigned char *)v.data);
	perc_buf_dispose(&v);
	return rc == PERC_ENOTFOUND ? 0 : rc;
}

int
ldb_safe_point(struct store *base, perc_ts *out)
{
	*out = ((struct ldb_store *)base)->safe_point;
	return 0;
}

/* Synced: nothing below it is removed before it is on disk. */
int
ldb_safe_point_raise(struct store *base, perc_ts sp)
{
	struct ldb_store *s = (struct ldb_store *)base;
	struct kv_batch *b;
	unsigned char enc[8];
	int rc;

	if (sp <= s->safe_point)
		return 0;
	codec_put_u64(enc, sp);
	b = kv_batch_new();
	kv_batch_put(b, SAFE_POINT_KEY, 1, (const char *)enc, 8);
	if ((rc = ldb_log_trim(s, b, sp)) == 0 && (rc = ldb_write(s, b, 1)) == 0)
		s->safe_point = sp;
	kv_batch_free(b);
	return rc;
}

/*
 * One batch of the pass: from where the last stopped, up to
 * GC_BATCH_KEYS keys of the cell region, each asked of cell_gc_drops
 * (whose state carries over between batches, in the middle of a cell
 * too), the ones dropped removed in one write batch.  Not synced: a
 * removal lost to a crash leaves garbage, which the next gc takes.
 */
int
ldb_gc(struct store *base, struct store_gc *gc)
{
	struct ldb_store *s = (struct ldb_store *)base;
	struct kv_batch *b = kv_batch_new();
	struct kv_iter *it = ldb_iter(s);
	const unsigned char *k;
	perc_bytes v;
	size_t klen, vlen, n, dropped = 0;
	int rc = 0, kind;

	if (gc->resume.len > 0)
		kv_iter_seek(it, gc->resume.data, gc->resume.len);
	else
		kv_iter_seek(it, "c", 1);
	for (n = 0; kv_iter_valid(it); kv_iter_next(it), n++) {
		k = (const unsigned char *)kv_iter_key(it, &klen);
		if (klen < 10 || k[0] != REGION_CELL)
			break;
		if (n == GC_BATCH_KEYS) {
			rc = buf_set(&gc->resume, k, klen);
			goto write;
		}
		v.data = kv_iter_value(it, &vlen);
		v.len = vlen;
		kind = k[klen - 9];
		if ((rc = cell_gc_drops(&gc->cell, bytes_of(k, klen - 9), kind,
		    ~codec_get_u64(k + klen - 8), v)) < 0)
			goto done;
		if (rc == 0)
			continue;
		gc->removed += kind == KIND_WRITE;
		kv_batch_delete(b, (const char *)k, klen);
		dropped++;
	}
	rc = 0;
	gc->done = 1;
write:
	if (rc == 0 && ldb_iter_error(it) < 0)
		rc = PERC_EIO;
	if (rc == 0 && !gc->dry_run && dropped > 0)
		rc = ldb_write(s, b, 0);
done:
	kv_iter_free(it);
	kv_batch_free(b);
	return rc;
}

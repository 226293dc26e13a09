/*
 * lib/redis/notify.c - the notify region of the Redis store: the dirty
 * cells walked (walk.h), one cell's notifications, and the failure
 * records of observers' runs.
 */
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "codec.h"
#include "error.h"
#include "redis.h"
#include "walk.h"

static int
failures_key(perc_buf *out, perc_bytes row, perc_bytes col)
{
	return codec_key(out, REGION_NOTIFY, row, col, KIND_FAILURES, 0);
}

/* HGET of one key of row's bucket into out: 0 or PERC_ENOTFOUND. */
static int
row_hget(perc_buf *out, struct redis_store *s, perc_bytes row, perc_bytes key)
{
	char v[RS_KEY_MAX];
	redisReply *r;
	perc_bytes argv[3];
	int rc;

	rs_bucket_key(v, s, rs_bucket(row), 'v');
	argv[0] = bytes_of("HGET", 4);
	argv[1] = bytes_of(v, strlen(v));
	argv[2] = key;
	if ((rc = rs_row_command(&r, s, row, 3, argv)) < 0)
		return rc;
	if (r->type == REDIS_REPLY_NIL)
		rc = PERC_ENOTFOUND;
	else if (r->type == REDIS_REPLY_STRING)
		rc = buf_set(out, r->str, r->len);
	else if (r->type == REDIS_REPLY_ERROR)
		rc = rs_reply_error(s, r, "reading the notify cells");
	else
		rc = rs_bad_reply(s, "reading the notify cells");
	freeReplyObject(r);
	return rc;
}

/*
 * Every dirty cell (of column only, when not NULL), in byte order,
 * with its failure record (empty when none), from the notify region
 * only.
 */
int
rs_notify_scan(struct store *base, const perc_bytes *column,
    int (*fn)(void *arg, perc_bytes row, perc_bytes col,
    perc_bytes failures), void *arg)
{
	struct redis_store *s = (struct redis_store *)base;
	static const unsigned char region = REGION_NOTIFY;
	perc_buf last = PERC_BUF_INIT, fkey = PERC_BUF_INIT;
	perc_buf fail = PERC_BUF_INIT;
	const struct page_item *it;
	const unsigned char *key;
	struct key k;
	struct walk w;
	unsigned b;
	size_t klen;
	int rc;

	memset(&k, 0, sizeof(k));
	if ((rc = rs_walk_init(&w, s, 'k', 0, bytes_of("[n", 2),
	    bytes_of(&region, 1), -1)) < 0)
		goto done;
	while ((rc = rs_walk_next(&w, &b, &it)) > 0) {
		key = (const unsigned char *)it->key.data;
		klen = it->key.len;
		/* One report a cell: skip its other notify keys. */
		if (klen < 9 || (key[klen - 9] != KIND_NOTIFY &&
		    key[klen - 9] != KIND_PENDING) ||
		    (last.len == klen - 9 && memcmp(last.data, key,
		    klen - 9) == 0))
			continue;
		if ((rc = buf_set(&last, key, klen - 9)) < 0 ||
		    (rc = codec_parse_key(&k, key, klen)) < 0)
			break;
		if (column != NULL && !bytes_eq(buf_bytes(&k.col), *column))
			continue;
		buf_reset(&fail);
		if ((rc = failures_key(&fkey, buf_bytes(&k.row),
		    buf_bytes(&k.col))) < 0)
			break;
		rc = row_hget(&fail, s, buf_bytes(&k.row), buf_bytes(&fkey));
		if (rc == PERC_ENOTFOUND)
			buf_reset(&fail);
		else if (rc < 0)
			break;
		if ((rc = fn(arg, buf_bytes(&k.row), buf_bytes(&k.col),
		    buf_bytes(&fail))) != 0)
			break;
	}
done:
	rs_walk_dispose(&w);
	codec_key_dispose(&k);
	perc_buf_dispose(&last);
	perc_buf_dispose(&fkey);
	perc_buf_dispose(&fail);
	return rc;
}

/* store_ops.notify_pending: from the row's bucket index, in order. */
int
rs_notify_pending(struct store *base, perc_bytes row, perc_bytes col,
    perc_ts *ts, size_t max, size_t *n)
{
	struct redis_store *s = (struct redis_store *)base;
	perc_buf prefix = PERC_BUF_INIT, lo = PERC_BUF_INIT, hi = PERC_BUF_INIT;
	char z[RS_KEY_MAX], limit[24];
	const redisReply *m;
	redisReply *r = NULL;
	perc_bytes argv[7];
	size_t i;
	int rc;

	*n = 0;
	if ((rc = codec_cell_prefix(&prefix, REGION_NOTIFY, row, col)) < 0 ||
	    (rc = rs_bound(&lo, '[', buf_bytes(&prefix))) < 0 ||
	    (rc = buf_add(&lo, "\5", 1)) < 0 ||
	    (rc = rs_bound(&hi, '(', buf_bytes(&prefix))) < 0 ||
	    (rc = buf_add(&hi, "\6", 1)) < 0)
		goto done;
	rs_bucket_key(z, s, rs_bucket(row), 'k');
	snprintf(limit, sizeof(limit), "%zu", max > 0 ? max : 1);
	argv[0] = bytes_of("ZRANGEBYLEX", 11);
	argv[1] = bytes_of(z, strlen(z));
	argv[2] = buf_bytes(&lo);
	argv[3] = buf_bytes(&hi);
	argv[4] = bytes_of("LIMIT", 5);
	argv[5] = bytes_of("0", 1);
	argv[6] = bytes_of(limit, strlen(limit));
	if ((rc = rs_row_command(&r, s, row, 7, argv)) < 0)
		goto done;
	if (r->type == REDIS_REPLY_ERROR) {
		rc = rs_reply_error(s, r, "reading the notify cells");
		goto done;
	}
	if (r->type != REDIS_REPLY_ARRAY) {
		rc = rs_bad_reply(s, "reading the notify cells");
		goto done;
	}
	rc = r->elements > 0 ? 0 : PERC_ENOTFOUND;
	/* Each member is a notify cell's key, its ts last (inverted). */
	for (i = 0; i < r->elements && *n < max; i++) {
		m = r->element[i];
		if (m->type != REDIS_REPLY_STRING || m->len != prefix.len + 9) {
			rc = rs_bad_reply(s, "reading the notify cells");
			break;
		}
		ts[(*n)++] = ~codec_get_u64((const unsigned char *)m->str +
		    prefix.len + 1);
	}
done:
	if (r != NULL)
		freeReplyObject(r);
	perc_buf_dispose(&prefix);
	perc_buf_dispose(&lo);
	perc_buf_dispose(&hi);
	return rc;
}

/* The failure record of (row, col): 0, or PERC_ENOTFOUND. */
int
rs_failures_get(struct store *base, perc_buf *out, perc_bytes row,
    perc_bytes col)
{
	struct redis_store *s = (struct redis_store *)base;
	perc_buf key = PERC_BUF_INIT;
	int rc;

	if ((rc = failures_key(&key, row, col)) == 0)
		rc = row_hget(out, s, row, buf_bytes(&key));
	perc_buf_dispose(&key);
	return rc;
}

int
rs_failures_put(struct store *base, perc_bytes row, perc_bytes col,
    perc_bytes rec)
{
	struct redis_store *s = (struct redis_store *)base;
	perc_buf key = PERC_BUF_INIT;
	redisReply *r = NULL;
	perc_bytes args[2];
	long long code;
	int rc;

	if ((rc = failures_key(&key, row, col)) < 0)
		goto done;
	args[0] = buf_bytes(&key);
	args[1] = rec;
	if ((rc = rs_row_eval(&r, &code, NULL, s, RS_PUT, row, 0, 2, args,
	    "recording an observer's failure")) < 0)
		goto done;
	if (code != 0)
		rc = rs_bad_reply(s, "recording an observer's failure");
done:
	if (r != NULL)
		freeReplyObject(r);
	perc_buf_dispose(&key);
	return rc;
}

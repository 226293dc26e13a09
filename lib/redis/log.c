/*
 * lib/redis/log.c - the change log of the Redis store (perc log): each
 * bucket's sorted set perc:{T:B}:g, to which commit.lua adds an entry
 * per put or delete in the script that writes the cell's write record
 * (log_put in lua/common.lua), and raise.lua trims below gc's safe
 * point.  A read asks every bucket at once (one pipeline, a round trip
 * per master) and merges their entries in commit order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "codec.h"
#include "error.h"
#include "redis.h"

/* An entry as a bucket gave it: 'L', commit8, P, op, start8; and a
   put's value. */
struct entry {
	const redisReply *member, *value;
};

static int
cmp_entry(const void *a, const void *b)
{
	const redisReply *x = ((const struct entry *)a)->member;
	const redisReply *y = ((const struct entry *)b)->member;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->str, y->str, n);

	if (c != 0)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

static perc_ts
entry_commit(const redisReply *member)
{
	return codec_get_u64((const unsigned char *)member->str + 1);
}

static int
log_wanted(const struct store_log *lg, const struct key *k)
{
	if (k->row.len < lg->prefix.len || (lg->prefix.len > 0 &&
	    memcmp(k->row.data, lg->prefix.data, lg->prefix.len) != 0))
		return 0;
	return lg->column == NULL || bytes_eq(buf_bytes(&k->col), *lg->column);
}

/* Ask every bucket for up to max entries in (from, to]. */
static int
ask_buckets(rc_pipeline **out, struct redis_store *s,
    const struct store_log *lg, size_t max)
{
	char names[4][RS_KEY_MAX], count[24];
	unsigned char from8[8], to8[8];
	perc_bytes keys[4], args[3];
	unsigned b;
	int rc;

	codec_put_u64(from8, lg->from);
	codec_put_u64(to8, lg->to);
	snprintf(count, sizeof(count), "%zu", max);
	args[0] = bytes_of(from8, 8);
	args[1] = bytes_of(to8, 8);
	args[2] = bytes_str(count);
	if ((rc = rc_pipeline_new(out, s->cl)) < 0)
		return rc;
	for (b = 0; b < RS_BUCKETS && rc == 0; b++) {
		rs_bucket_keys(names, keys, s, b);
		rc = rc_pipeline_evalsha(*out, keys[1], 0,
		    s->script[RS_LOG_READ], 4, keys, 3, args);
	}
	if (rc == 0)
		rc = rc_pipeline_exec(*out, rs_deadline(s));
	return rc;
}

/*
 * The buckets' entries into e (*n of them), and in *upto the newest
 * commit_ts below which every bucket gave all it has: a bucket that
 * gave max entries may have more at its last one's commit_ts.
 */
static int
gather(struct entry *e, size_t *n, perc_ts *upto, struct redis_store *s,
    const rc_pipeline *p, size_t max)
{
	const redisReply *r;
	size_t i, j, got;
	unsigned b;

	*n = 0;
	for (b = 0; b < RS_BUCKETS; b++) {
		r = rc_pipeline_reply(p, b);
		if (r->type == REDIS_REPLY_ERROR)
			return rs_reply_error(s, r, "reading the change log");
		if (r->type != REDIS_REPLY_ARRAY || r->elements % 2 != 1)
			return rs_bad_reply(s, "reading the change log");
		got = (r->elements - 1) / 2;
		for (i = 0; i < got; i++) {
			j = 1 + 2 * i;
			if (r->element[j]->type != REDIS_REPLY_STRING ||
			    r->element[j]->len < 1 + 8 + 1 + 4 + 9 ||
			    r->element[j + 1]->type != REDIS_REPLY_STRING)
				return rs_bad_reply(s, "reading the change log");
			e[*n].member = r->element[j];
			e[*n].value = r->element[j + 1];
			(*n)++;
		}
		if (got == max && got > 0 &&
		    entry_commit(r->element[r->elements - 2]) - 1 < *upto)
			*upto = entry_commit(r->element[r->elements - 2]) - 1;
	}
	return 0;
}

/* Give the entries at or below lg->upto, in order, as the filters say. */
static int
give(struct store_log *lg, struct entry *e, size_t n)
{
	struct key k;
	const redisReply *m;
	size_t i;
	int rc = 0, op;

	memset(&k, 0, sizeof(k));
	qsort(e, n, sizeof(*e), cmp_entry);
	for (i = 0; i < n && rc == 0; i++) {
		m = e[i].member;
		if (entry_commit(m) > lg->upto)
			break;
		op = (unsigned char)m->str[m->len - 9];
		if ((rc = codec_parse_log_key(&k, m->str, m->len - 9)) < 0)
			break;
		if (op != OP_PUT && op != OP_DELETE)
			rc = error_set(PERC_EIO, "the store holds a malformed "
			    "change log entry; the table is damaged");
		else if (log_wanted(lg, &k))
			rc = lg->change(lg->arg, k.ts, buf_bytes(&k.row),
			    buf_bytes(&k.col), op, bytes_of(e[i].value->str,
			    e[i].value->len));
	}
	codec_key_dispose(&k);
	return rc;
}

int
rs_log_read(struct store *base, struct store_log *lg)
{
	struct redis_store *s = (struct redis_store *)base;
	size_t max = lg->max > 0 ? lg->max : 1, n = 0;
	rc_pipeline *p = NULL;
	struct entry *e = NULL;
	int rc;

	for (;;) {
		if ((rc = ask_buckets(&p, s, lg, max)) < 0)
			break;
		free(e);
		if ((e = calloc(RS_BUCKETS * max, sizeof(*e))) == NULL) {
			rc = error_set(PERC_EIO, "out of memory");
			break;
		}
		lg->upto = lg->to;
		if ((rc = gather(e, &n, &lg->upto, s, p, max)) < 0)
			break;
		if (lg->upto > lg->from)
			break;
		/* One transaction fills a bucket's page: a bigger page. */
		rc_pipeline_free(p);
		p = NULL;
		max *= 4;
	}
	if (rc == 0) {
		lg->done = lg->upto == lg->to;
		rc = give(lg, e, n);
	}
	free(e);
	rc_pipeline_free(p);
	return rc;
}

/*
 * lib/redis/gc.c - gc's safe point on the Redis store: field g of the
 * table's hash perc:{T:oracle}:gc, and of every bucket's v hash, where
 * the read and prewrite scripts check it in the same atomic step as
 * their work (refuse_below_safe_point in lib/redis/lua/common.lua).
 */
#include <string.h>

#include "buf.h"
#include "codec.h"
#include "error.h"
#include "redis.h"

int
rs_safe_point(struct store *base, perc_ts *out)
{
	struct redis_store *s = (struct redis_store *)base;
	char key[RS_KEY_MAX];
	perc_bytes argv[3];
	redisReply *r;
	int rc;

	*out = 0;
	rs_special_key(key, s, "oracle", "gc");
	argv[0] = bytes_str("HGET");
	argv[1] = bytes_str(key);
	argv[2] = bytes_str("g");
	if ((rc = rc_command(&r, NULL, s->cl, argv[1], 3, argv,
	    rs_deadline(s))) < 0)
		return rc;
	if (r->type == REDIS_REPLY_ERROR)
		rc = rs_reply_error(s, r, "reading gc's safe point");
	else if (r->type == REDIS_REPLY_STRING && r->len == 8)
		*out = codec_get_u64((const unsigned char *)r->str);
	else if (r->type != REDIS_REPLY_NIL)
		rc = rs_bad_reply(s, "reading gc's safe point");
	freeReplyObject(r);
	return rc;
}

/*
 * Every bucket first, then the table's: what gc reports never runs
 * ahead of what the scripts enforce.  Each write waits for a replica
 * (where there is one), so a failover cannot bring back a lower safe
 * point over removed versions.
 */
int
rs_safe_point_raise(struct store *base, perc_ts sp)
{
	struct redis_store *s = (struct redis_store *)base;
	char names[2][RS_KEY_MAX];
	unsigned char enc[8];
	perc_bytes keys[2], arg;
	rc_pipeline *p = NULL;
	const redisReply *r;
	redisReply *reply;
	unsigned b;
	size_t i;
	int rc;

	codec_put_u64(enc, sp);
	arg = bytes_of(enc, 8);
	if ((rc = rc_pipeline_new(&p, s->cl)) < 0)
		return rc;
	/* KEYS: the bucket's v hash and its change log, g (raise.lua). */
	for (b = 0; b < RS_BUCKETS && rc == 0; b++) {
		rs_bucket_key(names[0], s, b, 'v');
		rs_bucket_key(names[1], s, b, 'g');
		keys[0] = bytes_str(names[0]);
		keys[1] = bytes_str(names[1]);
		rc = rc_pipeline_evalsha(p, keys[0], RC_WAIT,
		    s->script[RS_RAISE], 2, keys, 1, &arg);
	}
	if (rc == 0)
		rc = rc_pipeline_exec(p, rs_deadline(s));
	for (i = 0; i < RS_BUCKETS && rc == 0; i++) {
		r = rc_pipeline_reply(p, i);
		if (r->type == REDIS_REPLY_ERROR)
			rc = rs_reply_error(s, r, "raising gc's safe point");
		else if (rc_pipeline_replicas(p, i) == 0)
			rc = error_set(PERC_ETIMEOUT, "no replica confirmed "
			    "gc's safe point in table '%s' in time; check the "
			    "cluster's replicas and run gc again", s->table);
	}
	rc_pipeline_free(p);
	if (rc < 0)
		return rc;
	rs_special_key(names[0], s, "oracle", "gc");
	keys[0] = bytes_str(names[0]);
	if ((rc = rc_evalsha(&reply, NULL, s->cl, s->script[RS_RAISE], keys[0],
	    1, keys, 1, &arg, rs_deadline(s))) < 0)
		return rc;
	if (reply->type == REDIS_REPLY_ERROR)
		rc = rs_reply_error(s, reply, "raising gc's safe point");
	freeReplyObject(reply);
	return rc;
}

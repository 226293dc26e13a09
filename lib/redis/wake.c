/*
 * lib/redis/wake.c - the Redis store's wakeup and perc wait's mark.
 *
 * The wakeup is a shard channel, perc:{T:oracle}:wake: a writer
 * SPUBLISHes to it after a commit that set or cleared a notification,
 * and each waiter holds an SSUBSCRIBE to the master of its slot.
 * Measured on the 2-core machine of tests/bench (redis-benchmark, one
 * client, a cluster of tests/cluster): SPUBLISH answers in 0.02-0.1 ms,
 * a round trip, and writes nothing to the AOF; a stream (XADD, read by
 * XREAD BLOCK) or a list (LPUSH, BLPOP) is a write, which the
 * cluster's appendfsync always makes cost an fsync, 1-3 ms here, and
 * a list wakes one waiter, not all.  Messages of a channel are not
 * kept: one sent while a waiter is not subscribed is lost to it.
 * That is the failover case: the master of the channel's slot dies,
 * or hands the slot on (the server then ends the subscription with
 * sunsubscribe); the waiter subscribes again to the new master, on a
 * map loaded anew, and looks again, which finds what the lost
 * messages were about.  A waiter that does not hear of the failover
 * (its old master cut off but alive) is woken by its fallback poll
 * (PERC_OBSERVER_POLL).
 *
 * perc wait's mark (store.h's notify_epoch) is the field e of each
 * bucket's v hash, which every script that writes or removes a notify
 * cell raises in the same step (notify_changed, common.lua).
 */
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "error.h"
#include "redis.h"

/* A wake needs no answer in time: a lost one is found by the poll. */
#define WAKE_MS 500

/* The feed's is perc:{T:oracle}:feed, for the followers of perc log. */
static void
channel_key(char *out, const struct redis_store *s, int feed)
{
	rs_special_key(out, s, "oracle", feed ? "feed" : "wake");
}

void
rs_wake(struct store *base, int feed)
{
	struct redis_store *s = (struct redis_store *)base;
	char ch[RS_KEY_MAX];
	perc_bytes argv[3];
	redisReply *r;

	channel_key(ch, s, feed);
	argv[0] = bytes_str("SPUBLISH");
	argv[1] = bytes_str(ch);
	argv[2] = bytes_str("1");
	if (rc_command(&r, NULL, s->cl, argv[1], 3, argv,
	    clock_deadline(WAKE_MS)) == 0)
		freeReplyObject(r);
}

int
rs_wait_wake(struct store *base, int feed, int64_t deadline_ms,
    const sigset_t *mask)
{
	struct redis_store *s = (struct redis_store *)base;
	char ch[RS_KEY_MAX];
	int64_t by;
	int rc;

	/* One inherited through fork(2) is the parent's connection. */
	if (s->wake_sub != NULL && rc_sub_pid(s->wake_sub) != getpid()) {
		rc_sub_close(s->wake_sub);
		s->wake_sub = NULL;
	}
	if (s->wake_sub == NULL) {
		channel_key(ch, s, feed);
		by = clock_deadline(RC_IO_MS);
		if (s->wake_lost)
			rc_map_behind(s->cl);
		if ((rc = rc_subscribe(&s->wake_sub, s->cl, bytes_str(ch),
		    deadline_ms > by ? deadline_ms : by)) < 0)
			return rc;
		s->wake_lost = 0;
		return 1;       /* armed: look, then wait */
	}
	if ((rc = rc_sub_wait(s->wake_sub, deadline_ms, mask)) >= 0)
		return rc;
	/* Ended, by a failover or a lost connection: subscribe anew. */
	rc_sub_close(s->wake_sub);
	s->wake_sub = NULL;
	s->wake_lost = 1;
	return 1;
}

int
rs_notify_epoch(struct store *base, perc_buf *out)
{
	struct redis_store *s = (struct redis_store *)base;
	const redisReply *r;
	rc_pipeline *p;
	char v[RS_KEY_MAX];
	perc_bytes argv[3];
	unsigned b;
	int rc;

	buf_reset(out);
	if ((rc = rc_pipeline_new(&p, s->cl)) < 0)
		return rc;
	argv[0] = bytes_str("HGET");
	argv[2] = bytes_str("e");
	for (b = 0; b < RS_BUCKETS && rc == 0; b++) {
		rs_bucket_key(v, s, b, 'v');
		argv[1] = bytes_str(v);
		rc = rc_pipeline_add(p, argv[1], 0, 3, argv);
	}
	if (rc == 0)
		rc = rc_pipeline_exec(p, rs_deadline(s));
	for (b = 0; b < RS_BUCKETS && rc == 0; b++) {
		r = rc_pipeline_reply(p, b);
		if (r->type == REDIS_REPLY_ERROR)
			rc = rs_reply_error(s, r, "reading the notify marks");
		else if (r->type == REDIS_REPLY_STRING)
			rc = buf_add(out, r->str, r->len);
		if (rc == 0)
			rc = buf_add(out, ",", 1);
	}
	rc_pipeline_free(p);
	return rc;
}

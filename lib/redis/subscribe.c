/*
 * lib/redis/subscribe.c - a shard channel subscription (cluster.h):
 * what a waiter of the Redis store blocks on (wake.c).  Its own
 * connection, since a subscribed connection takes no other command.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "cluster_internal.h"
#include "error.h"

struct rc_sub {
	redisContext *c;
	pid_t         pid;
};

/* Is r the push message kind, "smessage" or "sunsubscribe"? */
static int
push_is(const redisReply *r, const char *kind)
{
	return r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
	    r->element[0]->type == REDIS_REPLY_STRING &&
	    strcmp(r->element[0]->str, kind) == 0;
}

int
rc_subscribe(rc_sub **out, rc_cluster *cl, perc_bytes channel,
    int64_t deadline_ms)
{
	const char *argv[2] = { "SSUBSCRIBE", channel.data };
	size_t len[2] = { 10, channel.len };
	redisContext *c = NULL;
	redisReply *r = NULL;
	struct node *nd;
	size_t nmasters;
	int *masters, k, rc;
	char why[160];

	*out = NULL;
	if ((rc = rc_masters(&masters, &nmasters, cl, deadline_ms)) < 0)
		return rc;
	free(masters);
	if ((k = rc_slot_node(cl, rc_slot(channel.data, channel.len))) < 0)
		return error_set(PERC_EIO, "no master serves the wakeup's "
		    "channel");
	nd = &cl->nodes[k];
	c = redisConnectWithTimeout(nd->addr.host, nd->addr.port,
	    rc_io_timeout(deadline_ms, 0, 0));
	if (c == NULL || c->err ||
	    redisSetTimeout(c, rc_io_timeout(deadline_ms, 0, 0)) != REDIS_OK) {
		rc = error_set(PERC_EIO, "cannot reach %s for the wakeup: %s; "
		    "check the cluster and retry", nd->name,
		    c != NULL ? c->errstr : "out of memory");
		goto fail;
	}
	switch (rc_auth(cl, c, why, sizeof(why))) {
	case RC_AUTH_FAILED:
		rc = error_set(PERC_EIO, "cannot reach %s for the wakeup: %s; "
		    "check the cluster and retry", nd->name, why);
		goto fail;
	case RC_AUTH_REFUSED:
		rc = error_set(PERC_EIO, "%s refused the wakeup's connection "
		    "(%s); check the user and password in the store URL "
		    "given to 'perc init --store'", nd->name, why);
		goto fail;
	}
	r = redisCommandArgv(c, 2, argv, len);
	if (r == NULL || !push_is(r, "ssubscribe")) {
		rc = error_set(PERC_EIO, "%s refused SSUBSCRIBE for the "
		    "wakeup: %s", nd->name, r == NULL ? c->errstr :
		    r->type == REDIS_REPLY_ERROR ? r->str : "a strange reply");
		goto fail;
	}
	freeReplyObject(r);
	if ((*out = malloc(sizeof(**out))) == NULL) {
		redisFree(c);
		return error_set(PERC_EIO, "out of memory");
	}
	(*out)->c = c;
	(*out)->pid = getpid();
	return 0;
fail:
	if (r != NULL)
		freeReplyObject(r);
	redisFree(c);
	return rc;
}

/*
 * Take the replies read so far: *got is set when a message was among
 * them.  -1 when the subscription ended.
 */
static int
take_replies(rc_sub *sub, int *got)
{
	void *v;
	redisReply *r;
	int ended;

	for (;;) {
		if (redisReaderGetReply(sub->c->reader, &v) != REDIS_OK)
			return -1;
		if ((r = v) == NULL)
			return 0;
		ended = push_is(r, "sunsubscribe");
		*got |= push_is(r, "smessage");
		freeReplyObject(r);
		if (ended)
			return -1;
	}
}

int
rc_sub_wait(rc_sub *sub, int64_t deadline_ms, const sigset_t *mask)
{
	struct pollfd p = { sub->c->fd, POLLIN, 0 };
	struct timespec ts;
	int64_t left;
	int got = 0;

	for (;;) {
		if (take_replies(sub, &got) < 0)
			return -1;
		if (got)
			return 1;
		left = deadline_ms - clock_mono_ms();
		if (left < 0)
			left = 0;
		ts.tv_sec = (time_t)(left / 1000);
		ts.tv_nsec = (long)(left % 1000) * 1000000L;
		if (ppoll(&p, 1, &ts, mask) <= 0)
			return 0;       /* the deadline, or a signal */
		if (redisBufferRead(sub->c) != REDIS_OK)
			return -1;
	}
}

pid_t
rc_sub_pid(const rc_sub *sub)
{
	return sub->pid;
}

void
rc_sub_close(rc_sub *sub)
{
	if (sub == NULL)
		return;
	redisFree(sub->c);
	free(sub);
}

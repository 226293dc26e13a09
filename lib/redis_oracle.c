/*
 * lib/redis_oracle.c - the Redis store's timestamp oracle: the function
 * library of lib/redis/oracle.lua, which hands out timestamps from the
 * memory of the master of perc:{T:oracle}:ts and persists a ceiling
 * ahead of them, as the paper's oracle does.
 *
 * A call that hands out timestamps writes nothing: no fsync, no WAIT.
 * About once every 1.5 s of use a caller moves the ceiling: it
 * writes it (in the AOF before the reply, appendfsync always), waits
 * until a replica has it too (when the master has replicas), and only
 * then confirms it, which lets the master hand out timestamps up to it.
 * A restart or a failover starts from the ceiling, above everything
 * handed out, so a timestamp never repeats; a gap is harmless.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "clock.h"
#include "error.h"
#include "redis_scripts.h"
#include "store_redis.h"
#include "timestamp.h"

/* The most timestamps one oracle call hands out. */
#define TS_MAX_BATCH ((uint64_t)1 << 40)

static int
load_library(struct redis_store *s, perc_bytes key, int64_t deadline_ms)
{
	perc_bytes argv[3];
	redisReply *r;
	int rc = 0;

	argv[0] = bytes_str("FUNCTION");
	argv[1] = bytes_str("LOAD");
	argv[2] = bytes_str(redis_lua_oracle);
	if ((rc = rc_command(&r, NULL, s->cl, key, 3, argv, deadline_ms)) < 0)
		return rc;
	/* Another client may have loaded it first. */
	if (r->type == REDIS_REPLY_ERROR && strstr(r->str, "already exists")
	    == NULL)
		rc = rs_reply_error(s, r, "loading the oracle's functions");
	freeReplyObject(r);
	return rc;
}

#define ORACLE_ARGS 4

/*
 * FCALL fn 1 KEY ARG...: the reply, an integer or an array of two, in
 * v[]; the function library is loaded first where the master lacks it
 * (a new cluster, a node that lost it).  With replicas not NULL the
 * call is followed by a WAIT, as rc_command does.
 */
static int
oracle_call(long long v[2], int *replicas, struct redis_store *s,
    const char *fn, const uint64_t *args, int nargs, int64_t deadline_ms)
{
	char key[RS_KEY_MAX], num[ORACLE_ARGS][24];
	perc_bytes argv[4 + ORACLE_ARGS];
	redisReply *r;
	int rc, tries, i;

	rs_special_key(key, s, "oracle", "ts");
	argv[0] = bytes_str("FCALL");
	argv[1] = bytes_str(fn);
	argv[2] = bytes_str("1");
	argv[3] = bytes_str(key);
	for (i = 0; i < nargs; i++) {
		snprintf(num[i], sizeof(num[i]), "%" PRIu64, args[i]);
		argv[4 + i] = bytes_str(num[i]);
	}
	for (tries = 0;; tries++) {
		if ((rc = rc_command(&r, replicas, s->cl, argv[3], 4 + nargs,
		    argv, deadline_ms)) < 0)
			return rc;
		if (r->type != REDIS_REPLY_ERROR || tries > 0 ||
		    strstr(r->str, "Function not found") == NULL)
			break;
		freeReplyObject(r);
		if ((rc = load_library(s, argv[3], deadline_ms)) < 0)
			return rc;
	}
	if (r->type == REDIS_REPLY_ERROR)
		rc = rs_reply_error(s, r, "taking timestamps");
	else if (r->type == REDIS_REPLY_INTEGER)
		v[0] = r->integer, v[1] = 0;
	else if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
	    r->element[0]->type == REDIS_REPLY_INTEGER &&
	    r->element[1]->type == REDIS_REPLY_INTEGER)
		v[0] = r->element[0]->integer, v[1] = r->element[1]->integer;
	else
		rc = rs_bad_reply(s, "taking timestamps");
	freeReplyObject(r);
	if (rc == 0 && (v[0] < 0 || v[1] < 0))
		rc = rs_bad_reply(s, "taking timestamps");
	return rc;
}

/*
 * Move the ceiling to at least ceiling, durably: 1 when it is
 * confirmed, 0 when no replica took it in time (try again), or the
 * failure.
 */
static int
raise_ceiling(struct redis_store *s, uint64_t ceiling, int64_t deadline_ms)
{
	long long v[2];
	int rc, replicas;

	if ((rc = oracle_call(v, &replicas, s, "perc2_ts_persist", &ceiling,
	    1, deadline_ms)) < 0)
		return rc;
	if (replicas == 0)
		return 0;
	if ((rc = oracle_call(v, NULL, s, "perc2_ts_confirm", &ceiling, 1,
	    deadline_ms)) < 0)
		return rc;
	return v[0] == 1;
}

int
rs_ts_next(struct store *base, perc_ts *out, uint64_t n, int64_t deadline_ms)
{
	struct redis_store *s = (struct redis_store *)base;
	/* The count and the layout of timestamp.h, which lives here only. */
	const uint64_t args[ORACLE_ARGS] = { n, (uint64_t)TS_EPOCH_MS,
	    TS_LOGICAL_BITS, TS_AHEAD_MS };
	unsigned delay = 1000;
	long long v[2] = { 0, 0 };    /* gcc -O3 cannot tell the call sets them */
	int rc;

	if (n == 0 || n > TS_MAX_BATCH)
		return error_set(PERC_EUSAGE, "cannot hand out %" PRIu64
		    " timestamps at once", n);
	for (;;) {
		if ((rc = oracle_call(v, NULL, s, "perc2_ts", args,
		    ORACLE_ARGS, deadline_ms)) < 0)
			return rc;
		if (v[0] > 0) {
			*out = (perc_ts)v[0];
			/*
			 * Asked to move the ceiling while there is room:
			 * if this fails, a later call will have to.
			 */
			if (v[1] > 0)
				(void)raise_ceiling(s, (uint64_t)v[1],
				    deadline_ms);
			return 0;
		}
		if ((rc = raise_ceiling(s, (uint64_t)v[1], deadline_ms)) < 0)
			return rc;
		if (rc == 0 && clock_backoff(&delay, 100000, deadline_ms) < 0)
			return error_set(PERC_ETIMEOUT, "no replica of the "
			    "redis master of table '%s''s oracle confirmed a "
			    "timestamp in time; check the cluster's replicas",
			    s->table);
	}
}

int
rs_ts_last(struct store *base, perc_ts *out, int64_t deadline_ms)
{
	struct redis_store *s = (struct redis_store *)base;
	long long v[2];
	int rc;

	if ((rc = oracle_call(v, NULL, s, "perc2_ts_last", NULL, 0,
	    deadline_ms)) < 0)
		return rc;
	*out = (perc_ts)v[0];
	return 0;
}

/*
 * lib/redis/oracle.c - the Redis store's timestamp oracle: the function
 * library of lib/redis/lua/oracle.lua, which hands out timestamps from the
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
#include "scripts.h"
#include "redis.h"
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

#define ORACLE_ARGS 6

/* An oracle function's numeric argument, in its buffer. */
static perc_bytes
num_arg(char buf[24], uint64_t v)
{
	snprintf(buf, 24, "%" PRIu64, v);
	return bytes_str(buf);
}

/*
 * FCALL fn 1 KEY ARG...: the reply, an integer or an array of two, in
 * v[]; the function library is loaded first where the master lacks it
 * (a new cluster, a node that lost it).  With replicas not NULL the
 * call is followed by a WAIT, as rc_command does.
 */
static int
oracle_call(long long v[2], int *replicas, struct redis_store *s,
    const char *fn, const perc_bytes *args, int nargs, int64_t deadline_ms)
{
	char key[RS_KEY_MAX];
	perc_bytes argv[4 + ORACLE_ARGS];
	redisReply *r;
	int rc, tries;

	rs_special_key(key, s, "oracle", "ts");
	argv[0] = bytes_str("FCALL");
	argv[1] = bytes_str(fn);
	argv[2] = bytes_str("1");
	argv[3] = bytes_str(key);
	if (nargs > 0)
		memcpy(argv + 4, args, (size_t)nargs * sizeof(*args));
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
	char num[24];
	perc_bytes arg = num_arg(num, ceiling);
	long long v[2];
	int rc, replicas;

	if ((rc = oracle_call(v, &replicas, s, "perc3_ts_persist", &arg, 1,
	    deadline_ms)) < 0)
		return rc;
	if (replicas == 0)
		return 0;
	if ((rc = oracle_call(v, NULL, s, "perc3_ts_confirm", &arg, 1,
	    deadline_ms)) < 0)
		return rc;
	return v[0] == 1;
}

/*
 * n timestamps, the first in *out; with dir not NULL, the first starts
 * a transaction of that data directory (perc3_begin).
 */
static int
ts_next(struct redis_store *s, perc_ts *out, uint64_t n, const char *dir,
    int64_t deadline_ms)
{
	/* The count and the layout of timestamp.h, which lives here only. */
	char num[4][24];
	const perc_bytes args[ORACLE_ARGS] = { num_arg(num[0], n),
	    num_arg(num[1], (uint64_t)TS_EPOCH_MS),
	    num_arg(num[2], TS_LOGICAL_BITS), num_arg(num[3], TS_AHEAD_MS),
	    bytes_str(dir ? dir : "") };
	unsigned delay = 1000;
	long long v[2] = { 0, 0 };    /* gcc -O3 cannot tell the call sets them */
	int rc;

	if (n == 0 || n > TS_MAX_BATCH)
		return error_set(PERC_EUSAGE, "cannot hand out %" PRIu64
		    " timestamps at once", n);
	for (;;) {
		if ((rc = oracle_call(v, NULL, s, dir ? "perc3_begin" :
		    "perc3_ts", args, dir ? 5 : 4, deadline_ms)) < 0)
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
rs_ts_next(struct store *base, perc_ts *out, uint64_t n, int64_t deadline_ms)
{
	return ts_next((struct redis_store *)base, out, n, NULL, deadline_ms);
}

int
rs_ts_begin(struct store *base, perc_ts *out, int64_t deadline_ms)
{
	struct redis_store *s = (struct redis_store *)base;

	return ts_next(s, out, 1, s->owner, deadline_ms);
}

/*
 * What this data directory has open (see perc3_open in
 * lib/redis/lua/oracle.lua), and the oldest start that any directory of
 * the table may have open in *oldest_all, 0 when none may.
 */
int
rs_open_publish(struct store *base, perc_ts at, perc_ts oldest_here,
    perc_ts *oldest_all, int64_t deadline_ms)
{
	struct redis_store *s = (struct redis_store *)base;
	char num[2][24];
	const perc_bytes args[3] = { bytes_str(s->owner), num_arg(num[0], at),
	    num_arg(num[1], oldest_here == UINT64_MAX ? 0 : oldest_here) };
	long long v[2];
	int rc;

	if ((rc = oracle_call(v, NULL, s, "perc3_open", args, 3,
	    deadline_ms)) < 0)
		return rc;
	*oldest_all = (perc_ts)v[0];
	return 0;
}

int
rs_ts_last(struct store *base, perc_ts *out, int64_t deadline_ms)
{
	struct redis_store *s = (struct redis_store *)base;
	long long v[2];
	int rc;

	if ((rc = oracle_call(v, NULL, s, "perc3_ts_last", NULL, 0,
	    deadline_ms)) < 0)
		return rc;
	*out = (perc_ts)v[0];
	return 0;
}

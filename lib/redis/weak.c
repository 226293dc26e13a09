/*
 * lib/redis/weak.c - weak notifications in the notify region (see
 * store.h's weak_pend, weak_settle and weak_clear), each one script on
 * the row's bucket: put.lua, weak_settle.lua and weak_clear.lua.
 */
#include <string.h>

#include "buf.h"
#include "codec.h"
#include "error.h"
#include "redis.h"

/* Run script on row's bucket; replicated: wait for a replica too. */
static int
weak_eval(struct redis_store *s, int script, perc_bytes row, int replicated,
    size_t nargs, const perc_bytes *args, const char *doing)
{
	redisReply *r = NULL;
	long long code;
	int rc;

	rc = replicated ? rs_eval_replicated(&r, &code, s, script, row, 0,
	    nargs, args, doing) : rs_row_eval(&r, &code, NULL, s, script,
	    row, 0, nargs, args, doing);
	if (rc == 0 && code != 0)
		rc = rs_bad_reply(s, doing);
	if (r != NULL)
		freeReplyObject(r);
	return rc;
}

/* Replicated: the commit point that follows, on another master
   perhaps, must not outlive it in a failover. */
int
rs_weak_pend(struct store *base, perc_bytes row, perc_bytes col,
    perc_ts start_ts, perc_bytes primary)
{
	perc_buf key = PERC_BUF_INIT;
	perc_bytes args[2];
	int rc;

	if ((rc = codec_key(&key, REGION_NOTIFY, row, col, KIND_PENDING,
	    start_ts)) == 0) {
		args[0] = buf_bytes(&key);
		args[1] = primary;
		rc = weak_eval((struct redis_store *)base, RS_PUT, row, 1, 2,
		    args, "writing a weak notification");
	}
	perc_buf_dispose(&key);
	return rc;
}

int
rs_weak_settle(struct store *base, perc_bytes row, perc_bytes col,
    perc_ts start_ts, perc_ts commit_ts, unsigned flags)
{
	perc_buf prefix = PERC_BUF_INIT;
	unsigned char start8[8], commit8[8];
	perc_bytes args[3];
	int rc;

	if ((rc = codec_cell_prefix(&prefix, REGION_NOTIFY, row, col)) < 0)
		return rc;
	codec_put_u64(start8, start_ts);
	codec_put_u64(commit8, commit_ts);
	args[0] = buf_bytes(&prefix);
	args[1] = bytes_of(start8, start_ts != 0 ? 8 : 0);
	args[2] = bytes_of(commit8, commit_ts != 0 ? 8 : 0);
	rc = weak_eval((struct redis_store *)base, RS_WEAK_SETTLE, row,
	    (flags & STORE_SYNC) != 0, 3, args, "writing a weak notification");
	perc_buf_dispose(&prefix);
	return rc;
}

int
rs_weak_clear(struct store *base, perc_bytes row, perc_bytes col,
    perc_ts upto)
{
	perc_buf prefix = PERC_BUF_INIT;
	unsigned char upto8[8];
	perc_bytes args[2];
	int rc;

	if ((rc = codec_cell_prefix(&prefix, REGION_NOTIFY, row, col)) < 0)
		return rc;
	codec_put_u64(upto8, upto);
	args[0] = buf_bytes(&prefix);
	args[1] = bytes_of(upto8, 8);
	rc = weak_eval((struct redis_store *)base, RS_WEAK_CLEAR, row, 0, 2,
	    args, "clearing weak notifications");
	perc_buf_dispose(&prefix);
	return rc;
}

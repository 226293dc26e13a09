/*
 * lib/redis/mvcc.c - Percolator's steps on one cell of the Redis store:
 * each one EVALSHA of a script of lib/redis/lua/ on the row's slot, which
 * Redis runs alone, so a step is atomic as the LevelDB store's write
 * batches are.
 * The scripts decide; this side encodes their arguments (codec keys,
 * timestamps as 8-byte big-endian strings) and reads their answers.
 */
#include <inttypes.h>
#include <string.h>

#include "buf.h"
#include "clock.h"
#include "codec.h"
#include "error.h"
#include "writeset.h"
#include "redis.h"

/* Element i of a script's reply, a string: else NULL. */
static const redisReply *
elem_str(const redisReply *r, size_t i)
{
	if (i >= r->elements || r->element[i]->type != REDIS_REPLY_STRING)
		return NULL;
	return r->element[i];
}

/* The timestamp in the last 8 bytes of a codec key (a commit_ts). */
static int
key_ts(perc_ts *out, const redisReply *key)
{
	if (key == NULL || key->len < 9)
		return -1;
	*out = ~codec_get_u64((const unsigned char *)key->str + key->len - 8);
	return 0;
}

/*
 * Run a script that decides a transaction's fate on row's master, and
 * return only once a replica has it too (WAIT 1), when the master has
 * one: a failover to a replica that missed it would undo a decision
 * others acted on.  That is the commit point, and also every prewrite
 * (the commit point makes every lock of the transaction count: a lock
 * lost in a failover would lose its cell's write, where LevelDB's
 * synced commit carries every earlier write of its log to disk; even
 * the primary's, the commit point's own row: readers see the commit
 * record on the master before its WAIT is over and act on it, and
 * should a failover lose the record, the commit's retry on the new
 * master must find the lock there to commit it again) and every
 * rollback (its record is what keeps a late commit out).  A
 * secondary's commit needs none: lost, its lock comes back and rolls
 * forward.  And every look at a primary's commit or rollback record
 * that others will act on (find_commit): a reader that rolled a
 * secondary forward on a commit record that only a cut-off master held
 * left a transfer committed in part once the replica took over.  And
 * every read of a cell's value (read): a value that only the master
 * holds is one a failover can take back after it was read.  These
 * write a fence (RS_FENCE) for the WAIT to cover what they read.
 * Should no replica confirm in time, the script is sent again, which
 * finds its work done and writes nothing, until one does or the
 * deadline passes: PERC_ETIMEOUT then, with the message of why.
 */
int
rs_eval_replicated(redisReply **out, long long *code, struct redis_store *s,
    int script, perc_bytes row, perc_ts lease_ts, size_t nargs,
    const perc_bytes *args, const char *doing)
{
	int64_t deadline = rs_deadline(s);
	unsigned delay = 1000;
	int rc, replicas;

	for (;;) {
		if ((rc = rs_row_eval(out, code, &replicas, s, script, row,
		    lease_ts, nargs, args, doing)) < 0 || replicas != 0)
			return rc;
		freeReplyObject(*out);
		*out = NULL;
		if (clock_backoff(&delay, 100000, deadline) < 0)
			return error_set(PERC_ETIMEOUT, "no replica of the "
			    "redis master of row '%s' confirmed %s in time; "
			    "check the cluster's replicas, then retry",
			    error_quote(row), doing);
	}
}

void
rs_snapshot_args(struct rs_snapshot *out, perc_ts ts,
    const struct lock_fate *known)
{
	int has_known = known != NULL && known->start_ts != 0;

	codec_put_u64(out->ts8, ts);
	codec_put_u64(out->kstart, has_known ? known->start_ts : 0);
	out->args[0] = bytes_of(out->ts8, 8);
	out->args[1] = bytes_of(out->kstart, has_known ? 8 : 0);
	out->args[2] = bytes_str(has_known && known->commit_ts != 0 &&
	    known->commit_ts <= ts ? "1" : "0");
}

/* Scripts read and write the protocol's cells: see lib/redis/. */

int
rs_read(struct store *base, perc_buf *out, perc_bytes row, perc_bytes col,
    perc_ts ts, struct lock_rec *blocker, const struct lock_fate *known)
{
	struct redis_store *s = (struct redis_store *)base;
	perc_buf prefix = PERC_BUF_INIT;
	struct rs_snapshot snap;
	const redisReply *v;
	redisReply *r = NULL;
	perc_bytes args[4];
	long long code;
	int rc;

	if ((rc = codec_cell_prefix(&prefix, REGION_CELL, row, col)) < 0)
		goto done;
	rs_snapshot_args(&snap, ts, known);
	args[0] = buf_bytes(&prefix);
	memcpy(args + 1, snap.args, sizeof(snap.args));
	if ((rc = rs_eval_replicated(&r, &code, s, RS_READ, row, RS_FENCE, 4,
	    args, "reading a cell")) < 0)
		goto done;
	v = elem_str(r, 1);
	if (code == 0 && v != NULL)
		rc = buf_set(out, v->str, v->len);
	else if (code == 1)
		rc = PERC_ENOTFOUND;
	else if (code == 2 && v != NULL)
		rc = codec_lock_decode(blocker, v->str, v->len) < 0 ? PERC_EIO :
		    PERC_ELOCKED;
	else if (code == 3 && v != NULL && v->len == 8)
		rc = error_set(PERC_EIO, "the value of row '%s' column '%s' "
		    "written at %" PRIu64 " is missing; redis table '%s' is "
		    "damaged", error_quote(row), error_quote(col),
		    codec_get_u64((const unsigned char *)v->str), s->table);
	else
		rc = rs_bad_reply(s, "reading a cell");
done:
	if (r != NULL)
		freeReplyObject(r);
	perc_buf_dispose(&prefix);
	return rc;
}

/* The lock on (row, col), whoever holds it: 0 or PERC_ENOTFOUND. */
int
rs_get_lock(struct store *base, struct lock_rec *out, perc_bytes row,
    perc_bytes col)
{
	struct redis_store *s = (struct redis_store *)base;
	perc_buf key = PERC_BUF_INIT;
	char v[RS_KEY_MAX];
	redisReply *r = NULL;
	perc_bytes argv[3];
	int rc;

	if ((rc = codec_key(&key, REGION_CELL, row, col, KIND_LOCK,
	    LOCK_TS)) < 0)
		goto done;
	rs_bucket_key(v, s, rs_bucket(row), 'v');
	argv[0] = bytes_str("HGET");
	argv[1] = bytes_str(v);
	argv[2] = buf_bytes(&key);
	if ((rc = rs_row_command(&r, s, row, 3, argv)) < 0)
		goto done;
	if (r->type == REDIS_REPLY_NIL)
		rc = PERC_ENOTFOUND;
	else if (r->type == REDIS_REPLY_STRING)
		rc = codec_lock_decode(out, r->str, r->len);
	else if (r->type == REDIS_REPLY_ERROR)
		rc = rs_reply_error(s, r, "reading a lock");
	else
		rc = rs_bad_reply(s, "reading a lock");
done:
	if (r != NULL)
		freeReplyObject(r);
	perc_buf_dispose(&key);
	return rc;
}

int
rs_find_commit(struct store *base, perc_ts *commit_ts, int *op,
    perc_bytes row, perc_bytes col, perc_ts start_ts)
{
	struct redis_store *s = (struct redis_store *)base;
	perc_buf prefix = PERC_BUF_INIT;
	unsigned char start8[8];
	const redisReply *opr;
	redisReply *r = NULL;
	perc_bytes args[2];
	long long code;
	int rc;

	if ((rc = codec_cell_prefix(&prefix, REGION_CELL, row, col)) < 0)
		goto done;
	codec_put_u64(start8, start_ts);
	args[0] = buf_bytes(&prefix);
	args[1] = bytes_of(start8, 8);
	if ((rc = rs_eval_replicated(&r, &code, s, RS_FIND_COMMIT, row,
	    RS_FENCE, 2, args, "looking for a commit")) < 0)
		goto done;
	opr = elem_str(r, 2);
	if (code == 1)
		rc = PERC_ENOTFOUND;
	else if (code != 0 || opr == NULL || opr->len != 1 ||
	    key_ts(commit_ts, elem_str(r, 1)) < 0)
		rc = rs_bad_reply(s, "looking for a commit");
	else
		*op = (unsigned char)opr->str[0];
done:
	if (r != NULL)
		freeReplyObject(r);
	perc_buf_dispose(&prefix);
	return rc;
}

/* prewrite.lua's arguments for w under lock, and the bytes they use. */
struct prewrite_args {
	perc_buf      prefix, enc, nkey;
	unsigned char start8[8];
	char          op, ttl[24];
	perc_bytes    v[9];
};

static int
prewrite_args(struct prewrite_args *a, const struct redis_store *s,
    const struct write *w, const struct lock_rec *lock, unsigned flags)
{
	perc_bytes row = buf_bytes(&w->row), col = buf_bytes(&w->col);
	int rc;

	memset(a, 0, sizeof(*a));
	if ((rc = codec_cell_prefix(&a->prefix, REGION_CELL, row, col)) < 0 ||
	    (rc = codec_lock_encode(&a->enc, lock)) < 0)
		return rc;
	if (!OP_KEEPS_VALUE(w->op) && (flags & STORE_NOTIFY) &&
	    (rc = codec_key(&a->nkey, REGION_NOTIFY, row, col, KIND_NOTIFY,
	    lock->start_ts)) < 0)
		return rc;
	codec_put_u64(a->start8, lock->start_ts);
	a->op = (char)w->op;
	a->v[0] = buf_bytes(&a->prefix);
	a->v[1] = bytes_of(a->start8, 8);
	a->v[2] = buf_bytes(&a->enc);
	a->v[3] = bytes_of(&a->op, 1);
	a->v[4] = bytes_str(w->ack ? "1" : "0");
	a->v[5] = w->op == OP_PUT ? buf_bytes(&w->value) : bytes_str("");
	a->v[6] = buf_bytes(&a->nkey);
	snprintf(a->ttl, sizeof(a->ttl), "%" PRIu64,
	    (uint64_t)lock->ttl_ms + LEASE_SLACK_MS);
	a->v[7] = bytes_str(s->owner);
	a->v[8] = bytes_str(a->ttl);
	return 0;
}

static void
prewrite_args_dispose(struct prewrite_args *a)
{
	perc_buf_dispose(&a->prefix);
	perc_buf_dispose(&a->enc);
	perc_buf_dispose(&a->nkey);
}

/*
 * Prewrite w for the transaction of lock: see lib/redis/lua/prewrite.lua.
 * 0, PERC_ECONFLICT, PERC_ELOCKED with *blocker, or PERC_ECOMMITTED
 * with *committed_at, as store.h's prewrite says.  With STORE_PRIMARY the lock
 * takes, or a retry refreshes, the owner's lease.
 */
int
rs_prewrite(struct store *base, perc_ts *committed_at, const struct write *w,
    const struct lock_rec *lock, unsigned flags, struct lock_rec *blocker)
{
	struct redis_store *s = (struct redis_store *)base;
	perc_bytes row = buf_bytes(&w->row), col = buf_bytes(&w->col);
	perc_ts lease = (flags & STORE_PRIMARY) ? lock->start_ts : 0;
	struct prewrite_args a;
	const redisReply *v;
	redisReply *r = NULL;
	long long code;
	int rc;

	if ((rc = prewrite_args(&a, s, w, lock, flags)) < 0)
		goto done;
	if ((rc = rs_eval_replicated(&r, &code, s, RS_PREWRITE, row, lease, 9,
	    a.v, "writing a lock")) < 0)
		goto done;
	v = elem_str(r, 1);
	if (code == 0)
		rc = 0;
	else if (code == 1)
		rc = error_conflict(row, col, "this transaction was rolled back by "
		    "another process");
	else if (code == 2 && key_ts(committed_at, v) == 0)
		rc = PERC_ECOMMITTED;
	else if (code == 3 && v != NULL)
		rc = codec_lock_decode(blocker, v->str, v->len) < 0 ? PERC_EIO :
		    PERC_ELOCKED;
	else if (code == 4)
		rc = error_conflict(row, col, w->ack ? "another observer or writer "
		    "got there after this one began" : "another transaction "
		    "committed it after this one began");
	else
		rc = rs_bad_reply(s, "writing a lock");
done:
	if (r != NULL)
		freeReplyObject(r);
	prewrite_args_dispose(&a);
	return rc;
}

/*
 * Commit start_ts on (row, col) at commit_ts: see lib/redis/lua/commit.lua.
 * With STORE_SYNC this is the commit point, acknowledged only once in
 * the master's AOF (appendfsync always) and on a replica.  Should that
 * not come in time, the commit is on its master but its fate is not
 * sure: PERC_EIO, not a timeout, since something was written.  With
 * STORE_PRIMARY the owner's lease goes with the lock.
 */
int
rs_commit(struct store *base, perc_bytes row, perc_bytes col,
    perc_ts start_ts, perc_ts commit_ts, unsigned flags)
{
	struct redis_store *s = (struct redis_store *)base;
	perc_buf prefix = PERC_BUF_INIT, nprefix = PERC_BUF_INIT;
	unsigned char start8[8], commit8[8];
	perc_ts lease = (flags & STORE_PRIMARY) ? start_ts : 0;
	redisReply *r = NULL;
	perc_bytes args[4];
	long long code;
	int rc;

	if ((rc = codec_cell_prefix(&prefix, REGION_CELL, row, col)) < 0)
		goto done;
	if ((flags & STORE_CLEAR_NOTIFY) &&
	    (rc = codec_cell_prefix(&nprefix, REGION_NOTIFY, row, col)) < 0)
		goto done;
	codec_put_u64(start8, start_ts);
	codec_put_u64(commit8, commit_ts);
	args[0] = buf_bytes(&prefix);
	args[1] = bytes_of(start8, 8);
	args[2] = bytes_of(commit8, 8);
	args[3] = buf_bytes(&nprefix);
	if (flags & STORE_SYNC) {
		rc = rs_eval_replicated(&r, &code, s, RS_COMMIT, row, lease, 4,
		    args, "a commit");
		if (rc == PERC_ETIMEOUT)
			rc = error_set(PERC_EIO, "the commit of row '%s' "
			    "column '%s' at %" PRIu64 " is on its redis "
			    "master but no replica confirmed it in time; "
			    "check the cluster's replicas (a failover now "
			    "could lose it)", error_quote(row),
			    error_quote(col), commit_ts);
	} else {
		rc = rs_row_eval(&r, &code, NULL, s, RS_COMMIT, row, lease, 4,
		    args, "committing a cell");
	}
	if (rc < 0)
		goto done;
	if (code == 1)
		rc = error_conflict(row, col, "this transaction was rolled back by "
		    "another process");
	else if (code == 2)
		rc = PERC_EPUSHED;
	else if (code != 0)
		rc = rs_bad_reply(s, "committing a cell");
done:
	if (r != NULL)
		freeReplyObject(r);
	perc_buf_dispose(&prefix);
	perc_buf_dispose(&nprefix);
	return rc;
}

/*
 * Did a pipelined step succeed, its script saying 0 and, where asked
 * for, a replica having it (replicas -1: the master has none)?
 */
static int
step_done(const rc_pipeline *p, size_t i, int replicated)
{
	const redisReply *r = rc_pipeline_reply(p, i);

	return r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements >= 1 &&
	    r->element[0]->type == REDIS_REPLY_INTEGER &&
	    r->element[0]->integer == 0 &&
	    (!replicated || rc_pipeline_replicas(p, i) != 0);
}

/*
 * Send the pipeline p of n steps, unless building it failed (rc), mark
 * in done[] which steps succeeded (step_done), and free it.
 */
static int
pipeline_finish(rc_pipeline *p, const struct redis_store *s, int rc,
    size_t n, int replicated, int *done)
{
	size_t i;

	if (rc == 0)
		rc = rc_pipeline_exec(p, rs_deadline(s));
	for (i = 0; i < n; i++)
		done[i] = rc == 0 && step_done(p, i, replicated);
	rc_pipeline_free(p);
	return rc;
}

/*
 * store_ops.prewrite_many: the prewrites of secondaries, pipelined by
 * master with one WAIT each, as rs_eval_replicated's alone: a lock lost in
 * a failover would lose its cell's write.
 */
int
rs_prewrite_many(struct store *base, const struct write *const *w,
    const unsigned *flags, size_t n, const struct lock_rec *lock, int *done)
{
	struct redis_store *s = (struct redis_store *)base;
	char names[RS_ROW_KEYS][RS_KEY_MAX];
	struct lock_rec cell = *lock;   /* its op each cell's own */
	struct prewrite_args a;
	perc_bytes keys[RS_ROW_KEYS];
	rc_pipeline *p = NULL;
	size_t i, nkeys;
	int rc;

	if ((rc = rc_pipeline_new(&p, s->cl)) < 0)
		return rc;
	for (i = 0; i < n && rc == 0; i++) {
		nkeys = rs_row_keys(names, keys, s, buf_bytes(&w[i]->row), 0);
		cell.op = w[i]->op;
		if ((rc = prewrite_args(&a, s, w[i], &cell, flags[i])) == 0)
			rc = rc_pipeline_evalsha(p, keys[0], RC_WAIT,
			    s->script[RS_PREWRITE], nkeys, keys, 9, a.v);
		prewrite_args_dispose(&a);
	}
	return pipeline_finish(p, s, rc, n, 1, done);
}

/*
 * One script on each of the n cells w[], pipelined by master: ARGV the
 * cell's prefix in args[0], then args[1..nargs); with RC_WAIT in flags
 * a cell is done only once a replica has it too.
 */
static int
each_cell(struct redis_store *s, const struct write *const *w, size_t n,
    int script, unsigned flags, perc_bytes *args, size_t nargs, int *done)
{
	char names[RS_ROW_KEYS][RS_KEY_MAX];
	perc_buf prefix = PERC_BUF_INIT;
	perc_bytes keys[RS_ROW_KEYS];
	rc_pipeline *p = NULL;
	size_t i, nkeys;
	int rc;

	if ((rc = rc_pipeline_new(&p, s->cl)) < 0)
		return rc;
	for (i = 0; i < n && rc == 0; i++) {
		nkeys = rs_row_keys(names, keys, s, buf_bytes(&w[i]->row), 0);
		if ((rc = codec_cell_prefix(&prefix, REGION_CELL,
		    buf_bytes(&w[i]->row), buf_bytes(&w[i]->col))) < 0)
			break;
		args[0] = buf_bytes(&prefix);
		rc = rc_pipeline_evalsha(p, keys[0], flags, s->script[script],
		    nkeys, keys, nargs, args);
	}
	perc_buf_dispose(&prefix);
	return pipeline_finish(p, s, rc, n, (flags & RC_WAIT) != 0, done);
}

/* store_ops.commit_many: secondaries' commits, pipelined by master. */
int
rs_commit_many(struct store *base, const struct write *const *w, size_t n,
    perc_ts start_ts, perc_ts commit_ts, int *done)
{
	unsigned char start8[8], commit8[8];
	perc_bytes args[4];

	codec_put_u64(start8, start_ts);
	codec_put_u64(commit8, commit_ts);
	args[1] = bytes_of(start8, 8);
	args[2] = bytes_of(commit8, 8);
	args[3] = bytes_str("");        /* no notifications to clear */
	return each_cell((struct redis_store *)base, w, n, RS_COMMIT, 0, args,
	    4, done);
}

/*
 * store_ops.rollback_many: secondaries' rollbacks, with one WAIT per
 * master, as rs_eval_replicated's alone: a failover that lost a rollback
 * record would let a delayed prewrite in again.
 */
int
rs_rollback_many(struct store *base, const struct write *const *w, size_t n,
    perc_ts start_ts, int *done)
{
	unsigned char start8[8];
	perc_bytes args[2];

	codec_put_u64(start8, start_ts);
	args[1] = bytes_of(start8, 8);
	return each_cell((struct redis_store *)base, w, n, RS_ROLLBACK,
	    RC_WAIT, args, 2, done);
}

/*
 * A reader's mark on a primary: see lib/redis/lua/push.lua.  Acknowledged
 * once a replica has it, as a prewrite is: a failover that lost it
 * would let the transaction commit below a snapshot that read past it.
 */
int
rs_push(struct store *base, perc_bytes primary_row, perc_bytes primary_col,
    perc_ts start_ts, perc_ts ts)
{
	struct redis_store *s = (struct redis_store *)base;
	perc_buf prefix = PERC_BUF_INIT;
	unsigned char start8[8], ts8[8];
	redisReply *r = NULL;
	perc_bytes args[3];
	long long code;
	int rc;

	if ((rc = codec_cell_prefix(&prefix, REGION_CELL, primary_row,
	    primary_col)) < 0)
		return rc;
	codec_put_u64(start8, start_ts);
	codec_put_u64(ts8, ts);
	args[0] = buf_bytes(&prefix);
	args[1] = bytes_of(start8, 8);
	args[2] = bytes_of(ts8, 8);
	rc = rs_eval_replicated(&r, &code, s, RS_PUSH, primary_row, 0, 3, args,
	    "a reader's mark on a lock");
	if (rc == 0 && code == 1)
		rc = PERC_ENOTFOUND;
	else if (rc == 0 && code != 0)
		rc = rs_bad_reply(s, "marking a lock");
	if (r != NULL)
		freeReplyObject(r);
	perc_buf_dispose(&prefix);
	return rc;
}

/* Roll start_ts back on (row, col), its lease too with STORE_PRIMARY. */
int
rs_rollback(struct store *base, perc_bytes row, perc_bytes col,
    perc_ts start_ts, unsigned flags)
{
	struct redis_store *s = (struct redis_store *)base;
	perc_buf prefix = PERC_BUF_INIT;
	unsigned char start8[8];
	redisReply *r = NULL;
	perc_bytes args[2];
	long long code;
	perc_ts at;
	int rc;

	if ((rc = codec_cell_prefix(&prefix, REGION_CELL, row, col)) < 0)
		goto done;
	codec_put_u64(start8, start_ts);
	args[0] = buf_bytes(&prefix);
	args[1] = bytes_of(start8, 8);
	if ((rc = rs_eval_replicated(&r, &code, s, RS_ROLLBACK, row,
	    (flags & STORE_PRIMARY) ? start_ts : 0, 2, args,
	    "rolling back a cell")) < 0)
		goto done;
	if (code == 1 && key_ts(&at, elem_str(r, 1)) == 0)
		rc = error_set(PERC_ECONFLICT, "transaction %" PRIu64
		    " already committed at %" PRIu64 "; it cannot be rolled "
		    "back", start_ts, at);
	else if (code != 0)
		rc = rs_bad_reply(s, "rolling back a cell");
done:
	if (r != NULL)
		freeReplyObject(r);
	perc_buf_dispose(&prefix);
	return rc;
}


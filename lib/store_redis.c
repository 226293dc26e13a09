/*
 * lib/store_redis.c - the Redis Cluster store: a table of cells that
 * many perc processes on many machines share.
 *
 * Percolator needs single-row atomicity only.  Every key of a row has
 * one hash tag (see store_redis.h), so each step on one cell is one
 * EVALSHA of a script of lib/redis/ on the row's slot: Redis runs a
 * script alone, and each of ours reads everything it needs before its
 * first write, so a script that fails halfway has written nothing.
 * The scripts mirror mvcc.c over ZRANGEBYLEX on the codec's keys.
 *
 * The client may send a command twice when a connection breaks after
 * it was written (redis_cluster.h): every script checks its own
 * preconditions, so running twice is running once.
 *
 * Durability comes from the servers' settings, which init checks on
 * every master: appendonly yes with appendfsync always, so an
 * acknowledged write is in the AOF on disk, and noeviction.  A commit
 * point (STORE_SYNC) and each oracle step also wait for a replica, when
 * the master has one, so that a failover cannot lose them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "clock.h"
#include "codec.h"
#include "error.h"
#include "journal.h"
#include "redis_scripts.h"
#include "store_redis.h"

#define MARKER       "perc-redis-table 1"
/* The most timestamps one oracle call hands out. */
#define TS_MAX_BATCH ((uint64_t)1 << 40)

static perc_bytes
str(const char *s)
{
	return bytes_of(s, strlen(s));
}

void
rs_bucket_key(char *out, const struct redis_store *s, unsigned bucket,
    char which)
{
	snprintf(out, RS_KEY_MAX, "perc:{%s:%u}:%c", s->table, bucket, which);
}

static void
special_key(char *out, const struct redis_store *s, const char *tag,
    const char *name)
{
	snprintf(out, RS_KEY_MAX, "perc:{%s:%s}:%s", s->table, tag, name);
}

static void
lease_key(char *out, const struct redis_store *s, perc_ts start_ts)
{
	snprintf(out, RS_KEY_MAX, "perc:{%s:lease}:%" PRIu64, s->table,
	    start_ts);
}

unsigned
rs_bucket(perc_bytes row)
{
	return codec_crc32(0, row.data, row.len) % RS_BUCKETS;
}

int64_t
rs_deadline(const struct redis_store *s)
{
	return clock_deadline(s->timeout_ms);
}

int
rs_reply_error(const struct redis_store *s, const redisReply *r,
    const char *doing)
{
	if (r->len > 0 && strstr(r->str, "PERCDAMAGED") != NULL)
		return error_set(PERC_EIO, "redis table '%s' holds a damaged "
		    "cell (%s); the store's data is corrupt", s->table, doing);
	return error_set(PERC_EIO, "redis error while %s in table '%s': %s",
	    doing, s->table, error_quote(bytes_of(r->str, r->len)));
}

int
rs_bad_reply(const struct redis_store *s, const char *doing)
{
	return error_set(PERC_EIO, "redis gave an unexpected reply while %s "
	    "in table '%s'; is another program writing perc's keys?", doing,
	    s->table);
}

int
rs_row_command(redisReply **out, struct redis_store *s, perc_bytes row,
    size_t argc, const perc_bytes *argv)
{
	char v[RS_KEY_MAX];

	rs_bucket_key(v, s, rs_bucket(row), 'v');
	return rc_command(out, NULL, s->cl, str(v), argc, argv,
	    rs_deadline(s));
}

int
rs_row_eval(redisReply **out, long long *code, int *replicas,
    struct redis_store *s, int script, perc_bytes row, size_t nargs,
    const perc_bytes *args, const char *doing)
{
	char names[3][RS_KEY_MAX];
	perc_bytes keys[3];
	unsigned b = rs_bucket(row);
	redisReply *r;
	int rc, i;

	*out = NULL;
	for (i = 0; i < 3; i++) {
		rs_bucket_key(names[i], s, b, "kvl"[i]);
		keys[i] = str(names[i]);
	}
	if ((rc = rc_evalsha(&r, replicas, s->cl, s->script[script],
	    keys[0], 3, keys, nargs, args, rs_deadline(s))) < 0)
		return rc;
	if (r->type == REDIS_REPLY_ERROR)
		rc = rs_reply_error(s, r, doing);
	else if (r->type != REDIS_REPLY_ARRAY || r->elements < 1 ||
	    r->element[0]->type != REDIS_REPLY_INTEGER)
		rc = rs_bad_reply(s, doing);
	if (rc < 0) {
		freeReplyObject(r);
		return rc;
	}
	*code = r->element[0]->integer;
	*out = r;
	return 0;
}

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

static int
conflict(perc_bytes row, perc_bytes col, const char *why)
{
	return error_set(PERC_ECONFLICT, "write conflict on row '%s' column "
	    "'%s': %s; retry with a new transaction", error_quote(row),
	    error_quote(col), why);
}

/* Scripts read and write the protocol's cells: see lib/redis/. */

static int
rs_read(struct store *base, perc_buf *out, perc_bytes row, perc_bytes col,
    perc_ts ts, struct lock_rec *blocker, const struct lock_fate *known)
{
	struct redis_store *s = (struct redis_store *)base;
	perc_buf prefix = PERC_BUF_INIT;
	unsigned char ts8[8], kstart[8];
	const redisReply *v;
	redisReply *r = NULL;
	perc_bytes args[4];
	long long code;
	int rc, has_known = known != NULL && known->start_ts != 0;

	if ((rc = codec_cell_prefix(&prefix, REGION_CELL, row, col)) < 0)
		goto done;
	codec_put_u64(ts8, ts);
	codec_put_u64(kstart, has_known ? known->start_ts : 0);
	args[0] = buf_bytes(&prefix);
	args[1] = bytes_of(ts8, 8);
	args[2] = bytes_of(kstart, has_known ? 8 : 0);
	args[3] = str(has_known && known->commit_ts != 0 &&
	    known->commit_ts <= ts ? "1" : "0");
	if ((rc = rs_row_eval(&r, &code, NULL, s, RS_READ, row, 4, args,
	    "reading a cell")) < 0)
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
static int
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
	argv[0] = str("HGET");
	argv[1] = str(v);
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

static int
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
	if ((rc = rs_row_eval(&r, &code, NULL, s, RS_FIND_COMMIT, row, 2,
	    args, "looking for a commit")) < 0)
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

/*
 * Prewrite w for the transaction of lock: see lib/redis/prewrite.lua.
 * 0, PERC_ECONFLICT, PERC_ELOCKED with *blocker, or PERC_ECOMMITTED
 * with *committed_at, as mvcc_prewrite.
 */
static int
rs_prewrite(struct store *base, perc_ts *committed_at, const struct write *w,
    const struct lock_rec *lock, unsigned flags, struct lock_rec *blocker)
{
	struct redis_store *s = (struct redis_store *)base;
	perc_bytes row = buf_bytes(&w->row), col = buf_bytes(&w->col);
	perc_buf prefix = PERC_BUF_INIT, enc = PERC_BUF_INIT;
	perc_buf nkey = PERC_BUF_INIT;
	unsigned char start8[8];
	char op = (char)w->op;
	const redisReply *v;
	redisReply *r = NULL;
	perc_bytes args[7];
	long long code;
	int rc;

	if ((rc = codec_cell_prefix(&prefix, REGION_CELL, row, col)) < 0 ||
	    (rc = codec_lock_encode(&enc, lock)) < 0)
		goto done;
	if (!OP_KEEPS_VALUE(w->op) && (flags & STORE_NOTIFY) &&
	    (rc = codec_key(&nkey, REGION_NOTIFY, row, col, KIND_NOTIFY,
	    lock->start_ts)) < 0)
		goto done;
	codec_put_u64(start8, lock->start_ts);
	args[0] = buf_bytes(&prefix);
	args[1] = bytes_of(start8, 8);
	args[2] = buf_bytes(&enc);
	args[3] = bytes_of(&op, 1);
	args[4] = str(w->ack ? "1" : "0");
	args[5] = w->op == OP_PUT ? buf_bytes(&w->value) : str("");
	args[6] = buf_bytes(&nkey);
	if ((rc = rs_row_eval(&r, &code, NULL, s, RS_PREWRITE, row, 7, args,
	    "writing a lock")) < 0)
		goto done;
	v = elem_str(r, 1);
	if (code == 0)
		rc = 0;
	else if (code == 1)
		rc = conflict(row, col, "this transaction was rolled back by "
		    "another process");
	else if (code == 2 && key_ts(committed_at, v) == 0)
		rc = PERC_ECOMMITTED;
	else if (code == 3 && v != NULL)
		rc = codec_lock_decode(blocker, v->str, v->len) < 0 ? PERC_EIO :
		    PERC_ELOCKED;
	else if (code == 4)
		rc = conflict(row, col, w->ack ? "another observer or writer "
		    "got there after this one began" : "another transaction "
		    "committed it after this one began");
	else
		rc = rs_bad_reply(s, "writing a lock");
done:
	if (r != NULL)
		freeReplyObject(r);
	perc_buf_dispose(&prefix);
	perc_buf_dispose(&enc);
	perc_buf_dispose(&nkey);
	return rc;
}

/*
 * Commit start_ts on (row, col) at commit_ts: see lib/redis/commit.lua.
 * With STORE_SYNC this is the commit point, and it is acknowledged only
 * once in the master's AOF (appendfsync always) and, when the master has
 * a replica, on one: WAIT after the script.  Should no replica confirm
 * it in time, the script is sent again, which finds the commit done and
 * writes nothing, until one does or the deadline passes.
 */
static int
rs_commit(struct store *base, perc_bytes row, perc_bytes col,
    perc_ts start_ts, perc_ts commit_ts, unsigned flags)
{
	struct redis_store *s = (struct redis_store *)base;
	perc_buf prefix = PERC_BUF_INIT, nprefix = PERC_BUF_INIT;
	unsigned char start8[8], commit8[8];
	int64_t deadline = rs_deadline(s);
	unsigned delay = 1000;
	redisReply *r = NULL;
	perc_bytes args[4];
	long long code;
	int rc, replicas = -1, sync = (flags & STORE_SYNC) != 0;

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
	for (;;) {
		if ((rc = rs_row_eval(&r, &code, sync ? &replicas : NULL, s,
		    RS_COMMIT, row, 4, args, "committing a cell")) < 0)
			goto done;
		if (code == 1) {
			rc = conflict(row, col, "this transaction was rolled "
			    "back by another process");
			goto done;
		}
		if (code != 0) {
			rc = rs_bad_reply(s, "committing a cell");
			goto done;
		}
		if (!sync || replicas != 0)
			break;
		freeReplyObject(r);
		r = NULL;
		if (clock_backoff(&delay, 100000, deadline) < 0) {
			rc = error_set(PERC_EIO, "the commit of row '%s' "
			    "column '%s' at %" PRIu64 " is on its redis "
			    "master but no replica confirmed it in time; check "
			    "the cluster's replicas (a failover now could lose "
			    "it)", error_quote(row), error_quote(col),
			    commit_ts);
			goto done;
		}
	}
done:
	if (r != NULL)
		freeReplyObject(r);
	perc_buf_dispose(&prefix);
	perc_buf_dispose(&nprefix);
	return rc;
}

static int
rs_rollback(struct store *base, perc_bytes row, perc_bytes col,
    perc_ts start_ts)
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
	if ((rc = rs_row_eval(&r, &code, NULL, s, RS_ROLLBACK, row, 2, args,
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

/*
 * The oracle is one counter, moved by INCRBY: atomic, so timestamps are
 * strictly increasing across every client, and in the AOF (appendfsync
 * always) before the reply.  It waits for a replica too, when the
 * master has one, so a failover cannot hand out a timestamp again; a
 * step no replica confirmed in time is thrown away (a gap is harmless)
 * and another taken.  A command sent twice after a broken connection
 * makes a gap too, never a repeat.  One call costs one fsync whatever n
 * is: the paper's "ceiling ahead" is what a client does with n.
 */
static int
rs_ts_next(struct store *base, perc_ts *out, uint64_t n, int64_t deadline_ms)
{
	struct redis_store *s = (struct redis_store *)base;
	char key[RS_KEY_MAX], num[24];
	unsigned delay = 1000;
	redisReply *r;
	perc_bytes argv[3];
	int rc, replicas;

	if (n == 0 || n > TS_MAX_BATCH)
		return error_set(PERC_EUSAGE, "cannot hand out %" PRIu64
		    " timestamps at once", n);
	special_key(key, s, "oracle", "ts");
	snprintf(num, sizeof(num), "%" PRIu64, n);
	argv[0] = str("INCRBY");
	argv[1] = str(key);
	argv[2] = str(num);
	for (;;) {
		if ((rc = rc_command(&r, &replicas, s->cl, argv[1], 3, argv,
		    deadline_ms)) < 0)
			return rc;
		if (r->type == REDIS_REPLY_ERROR)
			rc = rs_reply_error(s, r, "taking timestamps");
		else if (r->type != REDIS_REPLY_INTEGER ||
		    r->integer < (long long)n)
			rc = rs_bad_reply(s, "taking timestamps");
		else
			*out = (perc_ts)r->integer - n + 1;
		freeReplyObject(r);
		if (rc < 0 || replicas != 0)
			return rc;
		if (clock_backoff(&delay, 100000, deadline_ms) < 0)
			return error_set(PERC_ETIMEOUT, "no replica of the "
			    "redis master of table '%s''s oracle confirmed a "
			    "timestamp in time; check the cluster's replicas",
			    s->table);
	}
}

static int
rs_ts_last(struct store *base, perc_ts *out, int64_t deadline_ms)
{
	struct redis_store *s = (struct redis_store *)base;
	char key[RS_KEY_MAX], *end;
	redisReply *r;
	perc_bytes argv[2];
	int rc = 0;

	special_key(key, s, "oracle", "ts");
	argv[0] = str("GET");
	argv[1] = str(key);
	if ((rc = rc_command(&r, NULL, s->cl, argv[1], 2, argv,
	    deadline_ms)) < 0)
		return rc;
	*out = 0;
	if (r->type == REDIS_REPLY_STRING) {
		errno = 0;
		*out = strtoull(r->str, &end, 10);
		if (errno != 0 || end == r->str || *end != '\0')
			rc = rs_bad_reply(s, "reading the oracle");
	} else if (r->type == REDIS_REPLY_ERROR) {
		rc = rs_reply_error(s, r, "reading the oracle");
	} else if (r->type != REDIS_REPLY_NIL) {
		rc = rs_bad_reply(s, "reading the oracle");
	}
	freeReplyObject(r);
	return rc;
}

/*
 * A committing owner keeps a lease key, perc:{T:lease}:START_TS, with a
 * TTL (the ttl_ms its caller asks for, refreshed as it goes): the
 * owner is alive while the key lives.  A lease runs out by itself when
 * its owner dies; when the store cannot be asked, -1 leaves the
 * decision to the lock's own TTL.
 */
static int
rs_owner_alive(struct store *base, const struct lock_rec *lock,
    const char *host)
{
	struct redis_store *s = (struct redis_store *)base;
	char key[RS_KEY_MAX];
	redisReply *r;
	perc_bytes argv[2];
	int alive = -1;

	(void)host;
	lease_key(key, s, lock->start_ts);
	argv[0] = str("EXISTS");
	argv[1] = str(key);
	if (rc_command(&r, NULL, s->cl, argv[1], 2, argv, rs_deadline(s)) < 0)
		return -1;
	if (r->type == REDIS_REPLY_INTEGER)
		alive = r->integer > 0;
	freeReplyObject(r);
	return alive;
}

static int
rs_lease_renew(struct store *base, perc_ts start_ts, uint32_t ttl_ms)
{
	struct redis_store *s = (struct redis_store *)base;
	char key[RS_KEY_MAX], ttl[16];
	redisReply *r;
	perc_bytes argv[5];
	int rc;

	lease_key(key, s, start_ts);
	snprintf(ttl, sizeof(ttl), "%" PRIu32, ttl_ms > 0 ? ttl_ms : 1);
	argv[0] = str("SET");
	argv[1] = str(key);
	argv[2] = str("1");
	argv[3] = str("PX");
	argv[4] = str(ttl);
	if ((rc = rc_command(&r, NULL, s->cl, argv[1], 5, argv,
	    rs_deadline(s))) < 0)
		return rc;
	if (r->type == REDIS_REPLY_ERROR)
		rc = rs_reply_error(s, r, "renewing a lease");
	freeReplyObject(r);
	return rc;
}

static void
rs_lease_drop(struct store *base, perc_ts start_ts)
{
	struct redis_store *s = (struct redis_store *)base;
	char key[RS_KEY_MAX];
	redisReply *r;
	perc_bytes argv[2];

	lease_key(key, s, start_ts);
	argv[0] = str("DEL");
	argv[1] = str(key);
	/* A lease not dropped runs out by itself. */
	if (rc_command(&r, NULL, s->cl, argv[1], 2, argv, rs_deadline(s)) == 0)
		freeReplyObject(r);
}

/* Nothing to take: every client works on the cluster at once. */
static int
rs_acquire(struct store *base, int64_t deadline_ms)
{
	(void)base;
	(void)deadline_ms;
	return 0;
}

static void
rs_release(struct store *base)
{
	(void)base;
}

static int
rs_held(const struct store *base)
{
	(void)base;
	return 1;
}

static void
rs_dispose(struct store *base)
{
	struct redis_store *s = (struct redis_store *)base;

	if (s == NULL)
		return;
	if (s->cl != NULL)
		rc_close(s->cl);
	free(s);
}

static const struct store_ops redis_ops = {
	.name           = "redis",
	.dispose        = rs_dispose,
	.acquire        = rs_acquire,
	.release        = rs_release,
	.held           = rs_held,
	.power_cut      = NULL,
	.ts_next        = rs_ts_next,
	.ts_last        = rs_ts_last,
	.owner_alive    = rs_owner_alive,
	.lease_renew    = rs_lease_renew,
	.lease_drop     = rs_lease_drop,
	.read           = rs_read,
	.get_lock       = rs_get_lock,
	.find_commit    = rs_find_commit,
	.prewrite       = rs_prewrite,
	.commit         = rs_commit,
	.rollback       = rs_rollback,
	.scan           = rs_scan,
	.locks          = rs_locks,
	.raw            = rs_raw,
	.notify_scan    = rs_notify_scan,
	.notify_pending = rs_notify_pending,
	.failures_get   = rs_failures_get,
	.failures_put   = rs_failures_put,
};

/*
 * Split url, redis://HOST:PORT[,HOST:PORT]...[/TABLE], into the seed
 * list (for rc_open) and the table.
 */
static int
parse_url(char **seeds, char *table, const char *url)
{
	const char *p = url, *slash;
	size_t i, n;

	*seeds = NULL;
	if (strncmp(p, "redis://", 8) != 0)
		return error_set(PERC_EUSAGE, "bad store URL '%s': it should "
		    "read redis://HOST:PORT[,HOST:PORT]...[/TABLE]",
		    error_quote(str(url)));
	p += 8;
	if ((slash = strchr(p, '/')) == NULL) {
		strcpy(table, "perc");
		n = strlen(p);
	} else {
		n = (size_t)(slash - p);
		if (strlen(slash + 1) < 1 || strlen(slash + 1) > RS_TABLE_MAX)
			return error_set(PERC_EUSAGE, "bad store URL '%s': "
			    "TABLE must have 1 to %d characters",
			    error_quote(str(url)), RS_TABLE_MAX);
		for (i = 0; slash[1 + i] != '\0'; i++)
			if (strchr("abcdefghijklmnopqrstuvwxyz"
			    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-",
			    slash[1 + i]) == NULL)
				return error_set(PERC_EUSAGE, "bad store URL "
				    "'%s': TABLE may only hold letters, "
				    "digits, '_', '.' and '-'",
				    error_quote(str(url)));
		strcpy(table, slash + 1);
	}
	if ((*seeds = strndup(p, n)) == NULL)
		return error_set(PERC_EIO, "out of memory");
	return 0;
}

/* A new store on the cluster of url, its scripts registered. */
static int
rs_connect(struct redis_store **out, const char *url, int64_t timeout_ms,
    int64_t deadline_ms)
{
	const char *body[RS_NSCRIPTS] = { redis_lua_read,
		redis_lua_find_commit, redis_lua_prewrite, redis_lua_commit,
		redis_lua_rollback, redis_lua_put, redis_lua_range };
	struct redis_store *s;
	perc_buf text = PERC_BUF_INIT;
	rc_addr *addrs;
	size_t n;
	char *seeds;
	int rc, i;

	*out = NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return error_set(PERC_EIO, "out of memory");
	s->base.ops = &redis_ops;
	s->timeout_ms = timeout_ms;
	if ((rc = parse_url(&seeds, s->table, url)) < 0)
		goto fail;
	/* A bad seed list is the user's, not the cluster's: say so now. */
	if ((rc = rc_parse_seeds(&addrs, &n, seeds)) == 0) {
		free(addrs);
		rc = rc_open(&s->cl, seeds, deadline_ms);
	}
	free(seeds);
	if (rc < 0)
		goto fail;
	for (i = 0; i < RS_NSCRIPTS && rc == 0; i++) {
		buf_reset(&text);
		if ((rc = buf_add(&text, redis_lua_common,
		    strlen(redis_lua_common))) == 0 &&
		    (rc = buf_add(&text, body[i], strlen(body[i]))) == 0 &&
		    (s->script[i] = rc_script_register(s->cl, text.data,
		    text.len)) < 0)
			rc = s->script[i];
	}
	perc_buf_dispose(&text);
	if (rc < 0)
		goto fail;
	*out = s;
	return 0;
fail:
	rs_dispose(&s->base);
	return rc;
}

/* The value of one setting of node, in out (size 64). */
static int
config_get(char *out, struct redis_store *s, int node, const char *name,
    int64_t deadline_ms)
{
	redisReply *r;
	perc_bytes argv[3];
	int rc;

	argv[0] = str("CONFIG");
	argv[1] = str("GET");
	argv[2] = str(name);
	if ((rc = rc_node_command(&r, s->cl, node, 3, argv, deadline_ms)) < 0)
		return rc;
	if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
	    r->element[1]->type == REDIS_REPLY_STRING)
		snprintf(out, 64, "%.*s", (int)r->element[1]->len,
		    r->element[1]->str);
	else
		rc = error_set(PERC_EUSAGE, "redis node %s does not tell its "
		    "setting '%s' (CONFIG GET refused?); perc must check it",
		    rc_node_name(s->cl, node), name);
	freeReplyObject(r);
	return rc;
}

/*
 * Every master must keep what it acknowledged: refuse a cluster where
 * one would not.  A usage error, as a bad URL: the user picked a store
 * perc cannot be safe on, and one CONFIG SET fixes it.
 */
static int
check_settings(struct redis_store *s, int64_t deadline_ms)
{
	static const struct {
		const char *name, *want, *why;
	} settings[] = {
		{ "appendonly", "yes", "a commit acknowledged there is not "
		  "on disk" },
		{ "appendfsync", "always", "a commit acknowledged there could "
		  "be lost" },
		{ "maxmemory-policy", "noeviction", "it could evict perc's "
		  "keys, and lose commits and locks" },
	};
	char value[64];
	int *nodes = NULL;
	size_t n, i, j;
	int rc;

	if ((rc = rc_masters(&nodes, &n, s->cl, deadline_ms)) < 0)
		return rc;
	for (i = 0; i < n && rc == 0; i++) {
		for (j = 0; j < sizeof(settings) / sizeof(settings[0]); j++) {
			if ((rc = config_get(value, s, nodes[i],
			    settings[j].name, deadline_ms)) < 0)
				break;
			if (strcmp(value, settings[j].want) == 0)
				continue;
			rc = error_set(PERC_EUSAGE, "redis node %s has %s %s; "
			    "%s: set '%s %s' (CONFIG SET %s %s, and in "
			    "redis.conf)", rc_node_name(s->cl, nodes[i]),
			    settings[j].name, value, settings[j].why,
			    settings[j].name, settings[j].want,
			    settings[j].name, settings[j].want);
			break;
		}
	}
	free(nodes);
	return rc;
}

/* Is the table's marker there (0), missing (PERC_ENOTFOUND), other? */
static int
marker_check(struct redis_store *s, int64_t deadline_ms)
{
	char key[RS_KEY_MAX];
	redisReply *r;
	perc_bytes argv[2];
	int rc;

	special_key(key, s, "oracle", "table");
	argv[0] = str("GET");
	argv[1] = str(key);
	if ((rc = rc_command(&r, NULL, s->cl, argv[1], 2, argv,
	    deadline_ms)) < 0)
		return rc;
	if (r->type == REDIS_REPLY_NIL)
		rc = PERC_ENOTFOUND;
	else if (r->type == REDIS_REPLY_ERROR)
		rc = rs_reply_error(s, r, "looking for the table");
	else if (r->type != REDIS_REPLY_STRING || r->len != strlen(MARKER) ||
	    memcmp(r->str, MARKER, r->len) != 0)
		rc = error_set(PERC_ENOTDB, "redis table '%s' has a marker "
		    "of an unknown format; it was not made by this perc",
		    s->table);
	freeReplyObject(r);
	return rc;
}

/*
 * Make the table (its marker; every other key comes when first
 * written), or join it when it exists, changing nothing.
 */
int
store_redis_create(const char *url, int64_t deadline_ms)
{
	struct redis_store *s;
	char key[RS_KEY_MAX];
	redisReply *r;
	perc_bytes argv[4];
	int rc;

	if ((rc = rs_connect(&s, url, 10000, deadline_ms)) < 0)
		return rc;
	if ((rc = check_settings(s, deadline_ms)) < 0)
		goto done;
	special_key(key, s, "oracle", "table");
	argv[0] = str("SET");
	argv[1] = str(key);
	argv[2] = str(MARKER);
	argv[3] = str("NX");
	if ((rc = rc_command(&r, NULL, s->cl, argv[1], 4, argv,
	    deadline_ms)) < 0)
		goto done;
	if (r->type == REDIS_REPLY_ERROR)
		rc = rs_reply_error(s, r, "making the table");
	freeReplyObject(r);
	if (rc == 0)
		rc = marker_check(s, deadline_ms);
done:
	rs_dispose(&s->base);
	return rc;
}

int
store_redis_open(struct store **out, const char *url, const char *dir,
    int64_t timeout_ms)
{
	struct redis_store *s;
	int64_t deadline = clock_deadline(timeout_ms);
	int rc;

	(void)dir;
	*out = NULL;
	if ((rc = rs_connect(&s, url, timeout_ms, deadline)) < 0)
		return rc;
	if ((rc = marker_check(s, deadline)) == PERC_ENOTFOUND)
		rc = error_set(PERC_ENOTDB, "redis table '%s' does not exist "
		    "in the store %s; make it with perc init --store",
		    s->table, error_quote(str(url)));
	if (rc < 0) {
		rs_dispose(&s->base);
		return rc;
	}
	*out = &s->base;
	return 0;
}

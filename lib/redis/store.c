/*
 * lib/redis/store.c - the Redis Cluster store: a table of cells that
 * many perc processes on many machines share.
 *
 * Percolator needs single-row atomicity only.  Every key of a row has
 * one hash tag (see redis.h), so each step on one cell is one
 * EVALSHA of a script of lib/redis/lua/ on the row's slot: Redis runs
 * a script alone, and each of ours reads everything it needs before
 * its first write, so a script that fails halfway has written nothing.
 * The scripts do the steps on a cell that store.h describes, over
 * ZRANGEBYLEX on the codec's keys (mvcc.c runs them; walk.c does the
 * walks).
 *
 * The client may send a command twice when a connection breaks after
 * it was written (cluster.h): every script checks its own
 * preconditions, so running twice is running once.
 *
 * Durability comes from the servers' settings, which init checks on
 * every master: appendonly yes with appendfsync always, so an
 * acknowledged write is in the AOF on disk, and noeviction.  What
 * decides a transaction's fate (prewrites, the commit point, rollbacks:
 * see eval_replicated in mvcc.c) and each move of the oracle's
 * ceiling (oracle.c) also wait for a replica, when the master has
 * one, so that a failover cannot lose them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "cell.h"
#include "clock.h"
#include "codec.h"
#include "error.h"
#include "scripts.h"
#include "redis.h"

#define MARKER       "perc-redis-table 1"

void
rs_bucket_key(char *out, const struct redis_store *s, unsigned bucket,
    char which)
{
	snprintf(out, RS_KEY_MAX, "perc:{%s:%u}:%c", s->table, bucket, which);
}

void
rs_special_key(char *out, const struct redis_store *s, const char *tag,
    const char *name)
{
	snprintf(out, RS_KEY_MAX, "perc:{%s:%s}:%s", s->table, tag, name);
}

/* The name of the lease of transaction start_ts, whose primary is in
   primary_row. */
static void
rs_lease_key(char *out, const struct redis_store *s, perc_bytes primary_row,
    perc_ts start_ts)
{
	snprintf(out, RS_KEY_MAX, "perc:{%s:%u}:lease:%" PRIu64, s->table,
	    rs_bucket(primary_row), start_ts);
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
	const char *old;

	if (r->len > 0 && (old = strstr(r->str, "PERCTOOOLD ")) != NULL)
		return cell_too_old(strtoull(old + 11, NULL, 10));
	if (r->len > 0 && strstr(r->str, "PERCDAMAGED") != NULL)
		return error_set(PERC_EIO, "redis table '%s' holds a damaged "
		    "cell (%s); look at it with perc show, and restore the "
		    "table from a copy", s->table, doing);
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
	return rc_command(out, NULL, s->cl, bytes_str(v), argc, argv,
	    rs_deadline(s));
}

void
rs_bucket_keys(char names[4][RS_KEY_MAX], perc_bytes keys[4],
    const struct redis_store *s, unsigned bucket)
{
	int i;

	for (i = 0; i < 4; i++) {
		rs_bucket_key(names[i], s, bucket, "kvlg"[i]);
		keys[i] = bytes_str(names[i]);
	}
}

size_t
rs_row_keys(char names[RS_ROW_KEYS][RS_KEY_MAX],
    perc_bytes keys[RS_ROW_KEYS], const struct redis_store *s, perc_bytes row, perc_ts lease_ts)
{
	rs_bucket_keys(names, keys, s, rs_bucket(row));
	if (lease_ts == 0)
		return 4;
	if (lease_ts == RS_FENCE)
		rs_bucket_key(names[4], s, rs_bucket(row), 'f');
	else
		rs_lease_key(names[4], s, row, lease_ts);
	keys[4] = bytes_str(names[4]);
	return 5;
}

int
rs_row_eval(redisReply **out, long long *code, int *replicas,
    struct redis_store *s, int script, perc_bytes row, perc_ts lease_ts,
    size_t nargs, const perc_bytes *args, const char *doing)
{
	char names[RS_ROW_KEYS][RS_KEY_MAX];
	perc_bytes keys[RS_ROW_KEYS];
	size_t nkeys = rs_row_keys(names, keys, s, row, lease_ts);
	redisReply *r;
	int rc;

	*out = NULL;
	if ((rc = rc_evalsha(&r, replicas, s->cl, s->script[script],
	    keys[0], nkeys, keys, nargs, args, rs_deadline(s))) < 0)
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

/*
 * lock's owner has no lease: it is gone (0), unless its transaction
 * committed, which dropped the lease at the commit point while the
 * owner went on to the secondaries: only the lock's TTL can tell then
 * (-1, as when the store cannot be asked).
 */
static int
owner_without_lease(struct store *base, const struct lock_rec *lock)
{
	perc_ts at;
	int rc, op;

	/* Through the table: the steps (mvcc.c) stand on this file. */
	rc = base->ops->find_commit(base, &at, &op,
	    buf_bytes(&lock->primary_row), buf_bytes(&lock->primary_col),
	    lock->start_ts);
	if (rc == PERC_ENOTFOUND || (rc == 0 && op == OP_ROLLBACK))
		return 0;
	return -1;
}

/*
 * A committing owner keeps a lease, perc:{T:B}:lease:START_TS in the
 * slot of its primary row, while its primary is locked: the primary's
 * prewrite sets it with the lock, for the lock's TTL and some slack
 * (see mvcc.c), and its commit or rollback drops it.  A lease
 * runs out by itself when its owner dies, within its TTL.  On the
 * owner's own host the lease says more: its value names the owner's
 * data directory, whose journal token (a kernel lock) tells at once
 * whether the owner still runs.  No lease means a gone owner, but for
 * owner_without_lease's exception.  When the store cannot be asked, -1
 * leaves the decision to the lock's own TTL.
 */
static int
rs_owner_alive(struct store *base, const struct lock_rec *lock,
    const char *host)
{
	struct redis_store *s = (struct redis_store *)base;
	char key[RS_KEY_MAX], *dir;
	redisReply *r;
	perc_bytes argv[2];
	size_t hlen = strlen(host);
	int alive = -1;

	rs_lease_key(key, s, buf_bytes(&lock->primary_row), lock->start_ts);
	argv[0] = bytes_str("GET");
	argv[1] = bytes_str(key);
	if (rc_command(&r, NULL, s->cl, argv[1], 2, argv, rs_deadline(s)) < 0)
		return -1;
	if (r->type == REDIS_REPLY_NIL) {
		alive = owner_without_lease(base, lock);
	} else if (r->type == REDIS_REPLY_STRING) {
		alive = 1;
		if (r->len > hlen + 1 && memcmp(r->str, host, hlen) == 0 &&
		    r->str[hlen] == '\t' &&
		    (dir = strndup(r->str + hlen + 1, r->len - hlen - 1))) {
			alive = s->owner_alive(dir, lock->start_ts,
			    lock->pid, lock->wall_ms);
			free(dir);
		}
	}
	freeReplyObject(r);
	return alive;
}

/*
 * A long commit renews its lease as it goes.  PEXPIRE leaves a lease
 * that is gone alone: a reader took the owner for dead and rolled the
 * primary back, and the commit point will say so.
 */
static int
rs_lease_keep(struct store *base, perc_bytes primary_row,
    perc_bytes primary_col, perc_ts start_ts, uint32_t ttl_ms)
{
	struct redis_store *s = (struct redis_store *)base;
	perc_buf cell = PERC_BUF_INIT;
	unsigned char start8[8], wall8[8];
	char ms[16];
	perc_bytes args[4];
	redisReply *r;
	long long code;
	int rc;

	if ((rc = codec_cell_prefix(&cell, REGION_CELL, primary_row,
	    primary_col)) < 0)
		return rc;
	codec_put_u64(start8, start_ts);
	codec_put_u64(wall8, (uint64_t)clock_wall_ms());
	snprintf(ms, sizeof(ms), "%" PRIu32, ttl_ms + LEASE_SLACK_MS);
	args[0] = buf_bytes(&cell);
	args[1] = bytes_of(start8, 8);
	args[2] = bytes_of(wall8, 8);
	args[3] = bytes_str(ms);
	rc = rs_row_eval(&r, &code, NULL, s, RS_KEEP, primary_row, start_ts,
	    4, args, "renewing a lease");
	if (rc == 0)
		freeReplyObject(r);
	perc_buf_dispose(&cell);
	return rc;
}

/*
 * Nothing to take: every client works on the cluster at once.  But a
 * call that will use the store finds out here, before it changes
 * anything of its own (a commit marks its journal), that the cluster
 * answers and the table is there.
 */
static int
rs_acquire(struct store *base, int64_t deadline_ms)
{
	return rc_reach(((struct redis_store *)base)->cl, deadline_ms);
}

static void
rs_release(struct store *base)
{
	(void)base;
}

static int
rs_held(const struct store *base)
{
	return rc_reached(((const struct redis_store *)base)->cl);
}

static void
rs_dispose(struct store *base)
{
	struct redis_store *s = (struct redis_store *)base;

	if (s == NULL)
		return;
	rc_sub_close(s->wake_sub);
	if (s->cl != NULL)
		rc_close(s->cl);
	free(s->url);
	free(s->owner);
	free(s);
}

static const struct store_ops redis_ops = {
	.name           = "redis",
	.data_format    = 1,
	.dispose        = rs_dispose,
	.acquire        = rs_acquire,
	.release        = rs_release,
	.held           = rs_held,
	.power_cut      = NULL,
	.ts_next        = rs_ts_next,
	.ts_last        = rs_ts_last,
	.ts_begin       = rs_ts_begin,
	.open_publish   = rs_open_publish,
	.owner_alive    = rs_owner_alive,
	.lease_keep     = rs_lease_keep,
	.read           = rs_read,
	.get_lock       = rs_get_lock,
	.find_commit    = rs_find_commit,
	.prewrite       = rs_prewrite,
	.commit         = rs_commit,
	.prewrite_many  = rs_prewrite_many,
	.commit_many    = rs_commit_many,
	.rollback       = rs_rollback,
	.rollback_many  = rs_rollback_many,
	.push           = rs_push,
	.safe_point     = rs_safe_point,
	.safe_point_raise = rs_safe_point_raise,
	.gc             = rs_gc,
	.log_read       = rs_log_read,
	.scan           = rs_scan,
	.locks          = rs_locks,
	.raw            = rs_raw,
	.notify_scan    = rs_notify_scan,
	.notify_pending = rs_notify_pending,
	.failures_get   = rs_failures_get,
	.failures_put   = rs_failures_put,
	.weak_pend      = rs_weak_pend,
	.weak_settle    = rs_weak_settle,
	.weak_clear     = rs_weak_clear,
	.wake           = rs_wake,
	.wait_wake      = rs_wait_wake,
	.notify_epoch   = rs_notify_epoch,
};

int
store_url_public(perc_buf *out, const char *url)
{
	return rc_public_url(out, url);
}

/*
 * Split url, redis://[USER:PASSWORD@]HOST[:PORT][,HOST[:PORT]]...
 * [/TABLE], into the seed list with its credentials (for rc_new) and
 * the table.  Messages show the URL without its password (shown).
 */
static int
parse_url(char **seeds, char *table, const char *url, const char *shown)
{
	const char *p = url, *slash, *at;
	size_t i, n;

	*seeds = NULL;
	if (strncmp(p, "redis://", 8) != 0)
		return error_set(PERC_EUSAGE, "bad store URL '%s': it should "
		    "read redis://[USER:PASSWORD@]HOST[:PORT][,HOST[:PORT]]..."
		    "[/TABLE]", error_quote(bytes_str(shown)));
	p += 8;
	/* A password may hold a '/': the table's is after its '@'. */
	at = strrchr(p, '@');
	if ((slash = strchr(at != NULL ? at : p, '/')) == NULL) {
		strcpy(table, "perc");
		n = strlen(p);
	} else {
		n = (size_t)(slash - p);
		if (strlen(slash + 1) < 1 || strlen(slash + 1) > RS_TABLE_MAX)
			return error_set(PERC_EUSAGE, "bad store URL '%s': "
			    "TABLE must have 1 to %d characters",
			    error_quote(bytes_str(shown)), RS_TABLE_MAX);
		for (i = 0; slash[1 + i] != '\0'; i++)
			if (strchr("abcdefghijklmnopqrstuvwxyz"
			    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-",
			    slash[1 + i]) == NULL)
				return error_set(PERC_EUSAGE, "bad store URL "
				    "'%s': TABLE may only hold letters, "
				    "digits, '_', '.' and '-'",
				    error_quote(bytes_str(shown)));
		strcpy(table, slash + 1);
	}
	if ((*seeds = strndup(p, n)) == NULL)
		return error_set(PERC_EIO, "out of memory");
	return 0;
}

static int table_check(void *arg, int64_t deadline_ms);

/* Each script run by EVALSHA, by its enum rs_script. */
static const char *const script_body[RS_NSCRIPTS] = {
#define SCRIPT(NAME, name) [RS_##NAME] = redis_lua_##name,
#include "scripts.def"
#undef SCRIPT
};

/*
 * A new store on the cluster of url, its scripts registered; the
 * cluster is first reached by the first command, which with check
 * first makes sure that the table exists (table_check).
 */
static int
rs_connect(struct redis_store **out, const char *url, int64_t timeout_ms,
    int check)
{
	struct redis_store *s;
	perc_buf text = PERC_BUF_INIT;
	char *seeds;
	int rc, i;

	*out = NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return error_set(PERC_EIO, "out of memory");
	s->base.ops = &redis_ops;
	s->timeout_ms = timeout_ms;
	if ((rc = rc_public_url(&text, url)) < 0 ||
	    (rc = parse_url(&seeds, s->table, url, text.data)) < 0)
		goto fail;
	if ((s->url = strdup(text.data)) == NULL) {
		free(seeds);
		rc = error_set(PERC_EIO, "out of memory");
		goto fail;
	}
	/* rc_new reaches no one: a bad seed list is said now. */
	rc = rc_new(&s->cl, seeds, check ? table_check : NULL, s);
	free(seeds);
	if (rc < 0)
		goto fail;
	for (i = 0; i < RS_NSCRIPTS && rc == 0; i++) {
		buf_reset(&text);
		if ((rc = buf_add(&text, redis_lua_common,
		    strlen(redis_lua_common))) == 0 &&
		    (rc = buf_add(&text, script_body[i],
		    strlen(script_body[i]))) == 0 &&
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
	perc_buf_dispose(&text);
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

	argv[0] = bytes_str("CONFIG");
	argv[1] = bytes_str("GET");
	argv[2] = bytes_str(name);
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

/* The oracle is a function library: Redis 7.0 or later. */
static int
check_functions(struct redis_store *s, int node, int64_t deadline_ms)
{
	perc_bytes argv[2] = { bytes_str("FUNCTION"), bytes_str("STATS") };
	redisReply *r;
	int rc;

	if ((rc = rc_node_command(&r, s->cl, node, 2, argv, deadline_ms)) < 0)
		return rc;
	if (r->type == REDIS_REPLY_ERROR)
		rc = error_set(PERC_EUSAGE, "redis node %s has no functions "
		    "(FUNCTION STATS: %s), which perc's oracle needs; use "
		    "Redis 7.0 or later", rc_node_name(s->cl, node),
		    error_quote(bytes_of(r->str, r->len)));
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
		if ((rc = check_functions(s, nodes[i], deadline_ms)) < 0)
			break;
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

	rs_special_key(key, s, "oracle", "table");
	argv[0] = bytes_str("GET");
	argv[1] = bytes_str(key);
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

/* rc_new's check of an opened store: its table is there. */
static int
table_check(void *arg, int64_t deadline_ms)
{
	struct redis_store *s = arg;
	int rc;

	if ((rc = marker_check(s, deadline_ms)) == PERC_ENOTFOUND)
		rc = error_set(PERC_ENOTDB, "redis table '%s' does not exist "
		    "in the store %s; make it with perc init --store",
		    s->table, error_quote(bytes_str(s->url)));
	return rc;
}

/*
 * How many replicas the master of key's slot says it has (ROLE): 0
 * when it says none, or says something else than a master would.
 */
static int
master_replicas(struct redis_store *s, perc_bytes key, int64_t deadline_ms)
{
	perc_bytes argv[1] = { bytes_str("ROLE") };
	redisReply *r;
	int rc, n = 0;

	if ((rc = rc_command(&r, NULL, s->cl, key, 1, argv, deadline_ms)) < 0)
		return rc;
	if (r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
	    r->element[0]->type == REDIS_REPLY_STRING &&
	    strcmp(r->element[0]->str, "master") == 0 &&
	    r->element[2]->type == REDIS_REPLY_ARRAY)
		n = (int)r->element[2]->elements;
	freeReplyObject(r);
	return n;
}

/*
 * Make the table (its marker; every other key comes when first
 * written), or join it when it exists, changing nothing.  The marker
 * is on a replica, where the cluster has replicas, before init says
 * so, as a commit is: a failover right after would otherwise lose the
 * table.  A new replica takes writes only after its first sync's
 * acknowledgment, up to a second late, so the WAIT is tried again
 * (the marker's SET again, a no-op, keeps its connection's offset).
 * Nor does every node learn of a new replica at once: when the map
 * lists none, the master is asked, and the map loaded again while it
 * has some.
 */
int
store_redis_create(const char *url, const struct store_env *env)
{
	int64_t deadline_ms = clock_deadline(env->timeout_ms);
	struct redis_store *s;
	char key[RS_KEY_MAX];
	redisReply *r;
	perc_bytes argv[4];
	unsigned delay = 10000;
	int rc, replicas = 0;

	if ((rc = rs_connect(&s, url, 10000, 0)) < 0)
		return rc;
	if ((rc = check_settings(s, deadline_ms)) < 0)
		goto done;
	rs_special_key(key, s, "oracle", "table");
	argv[0] = bytes_str("SET");
	argv[1] = bytes_str(key);
	argv[2] = bytes_str(MARKER);
	argv[3] = bytes_str("NX");
	for (;;) {
		if ((rc = rc_command(&r, &replicas, s->cl, argv[1], 4, argv,
		    deadline_ms)) < 0)
			goto done;
		if (r->type == REDIS_REPLY_ERROR)
			rc = rs_reply_error(s, r, "making the table");
		freeReplyObject(r);
		if (rc < 0)
			goto done;
		if (replicas > 0)
			break;
		if (replicas < 0) {
			if ((rc = master_replicas(s, argv[1],
			    deadline_ms)) <= 0)
				break;
			rc_map_behind(s->cl);
		}
		if (clock_backoff(&delay, 250000, deadline_ms) < 0) {
			rc = error_set(PERC_ETIMEOUT, "no replica of the redis "
			    "master of table '%s' confirmed its marker in "
			    "time; check the cluster's replicas", s->table);
			goto done;
		}
	}
	if (rc >= 0)
		rc = marker_check(s, deadline_ms);
done:
	rs_dispose(&s->base);
	return rc;
}

/* Our leases' value: this host and the data directory, absolute. */
static int
lease_owner(struct redis_store *s, const char *dir)
{
	char host[64] = "localhost", *abs;
	int n;

	if (gethostname(host, sizeof(host) - 1) != 0)
		strcpy(host, "localhost");
	if ((abs = realpath(dir, NULL)) == NULL)
		return error_set(PERC_EIO, "cannot resolve the data directory "
		    "'%s': %s", dir, strerror(errno));
	n = asprintf(&s->owner, "%s\t%s", host, abs);
	free(abs);
	if (n < 0) {
		s->owner = NULL;
		return error_set(PERC_EIO, "out of memory");
	}
	return 0;
}

int
store_redis_open(struct store **out, const char *url,
    const struct store_env *env)
{
	struct redis_store *s;
	int rc;

	*out = NULL;
	if ((rc = rs_connect(&s, url, env->timeout_ms, 1)) < 0)
		return rc;
	s->owner_alive = env->owner_alive;
	if ((rc = lease_owner(s, env->dir)) < 0) {
		rs_dispose(&s->base);
		return rc;
	}
	*out = &s->base;
	return 0;
}

/*
 * tests/bench/rbench.c - make bench's figures for the Redis Cluster
 * store: libperc on a Redis-store data directory against the same
 * Percolator protocol written by hand on the cluster client
 * (lib/redis/cluster.h), and a read and a write against raw GET and SET.
 *
 *   rbench lib DIR N PROCS     libperc 2-row transfers per second from
 *                              PROCS processes, N each, each process on
 *                              rows of its own (no conflicts)
 *   rbench raw URL N PROCS     the same transfers by hand (raw_transfer)
 *   rbench read DIR URL N      median ms of a snapshot read through
 *                              libperc, and of a raw GET, in turns
 *   rbench write DIR URL N     median ms of a 1-cell write transaction
 *                              (perc_set), of a raw SET, and of a SET
 *                              with WAIT 1, in turns
 *
 * URL is the cluster's seed list (redis://HOST:PORT,...).  The raw side
 * writes keys "rbench:{...}" only, which no perc table uses.  Setup
 * (connecting, seeding rows) is outside the timing: the processes
 * start together once all are ready.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "common.h"
#include "perc.h"
#include "codec.h"
#include "redis/cluster.h"
#include "redis/redis.h"

#define DEADLINE_MS 30000

/*
 * Run run(ready(arg, proc), n) in procs processes at once and print
 * the operations per second of them all.  Each child readies itself,
 * says so on one pipe and blocks on another until the parent closes
 * it, so that connecting and seeding stay out of the timing.  A child
 * that dies while readying closes its end too: no one waits forever.
 */
typedef void *(*ready_fn)(const char *arg, int proc);
typedef void (*run_fn)(void *state, int n);

static int
in_parallel(ready_fn ready, run_fn run, const char *arg, int n, int procs)
{
	int go[2], up[2], i, status, bad = 0;
	double start;
	char c;

	if (pipe(go) < 0 || pipe(up) < 0)
		return perror("rbench: pipe"), 1;
	for (i = 0; i < procs; i++) {
		switch (fork()) {
		case -1:
			return perror("rbench: fork"), 1;
		case 0: {
			void *state = ready(arg, i);

			close(go[1]);
			close(up[0]);
			if (write(up[1], "r", 1) != 1)
				_exit(1);
			close(up[1]);
			if (read(go[0], &c, 1) != 0)
				_exit(1);
			run(state, n);
			_exit(0);
		}
		}
	}
	close(go[0]);
	close(up[1]);
	for (i = 0; i < procs; i++)
		if (read(up[0], &c, 1) != 1)
			bad = 1;
	start = now_ms();
	close(go[1]);
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			bad = 1;
	if (bad)
		return fprintf(stderr, "rbench: a worker failed\n"), 1;
	printf("%.0f\n", (double)n * procs / ((now_ms() - start) / 1e3));
	return 0;
}

/* libperc: transfers of 1 between rows aP and bP of the data directory. */
struct lib_state {
	perc_db *db;
	char a[32], b[32];
};

static void *
lib_ready(const char *dir, int proc)
{
	struct lib_state *s = calloc(1, sizeof(*s));
	perc_ts ts;

	snprintf(s->a, sizeof(s->a), "a%d", proc);
	snprintf(s->b, sizeof(s->b), "b%d", proc);
	if (perc_db_open(&s->db, dir) < 0 || perc_db_hold(s->db) < 0)
		die("open");
	if (perc_set(&ts, s->db, b(s->a), b("bal"), b("1000000")) < 0 ||
	    perc_set(&ts, s->db, b(s->b), b("bal"), b("0")) < 0)
		die("seed");
	return s;
}

static void
lib_run(void *state, int n)
{
	perc_buf va = PERC_BUF_INIT, vb = PERC_BUF_INIT;
	struct lib_state *s = state;
	perc_txn *txn;
	perc_ts ts;
	char num[32];
	int i;

	for (i = 0; i < n; i++) {
		if (perc_txn_begin_local(&txn, s->db) < 0 ||
		    perc_txn_get(&va, txn, b(s->a), b("bal"), 0) < 0 ||
		    perc_txn_get(&vb, txn, b(s->b), b("bal"), 0) < 0)
			die("read");
		snprintf(num, sizeof(num), "%ld", atol(va.data) - 1);
		perc_txn_set(txn, b(s->a), b("bal"), b(num));
		snprintf(num, sizeof(num), "%ld", atol(vb.data) + 1);
		perc_txn_set(txn, b(s->b), b("bal"), b(num));
		if (perc_txn_commit(&ts, txn) < 0)
			die("commit");
		perc_txn_free(txn);
	}
	if (perc_snapshot_get(&va, s->db, 0, b(s->a), b("bal")) < 0 ||
	    perc_snapshot_get(&vb, s->db, 0, b(s->b), b("bal")) < 0)
		die("check");
	if (atol(va.data) + atol(vb.data) != 1000000) {
		fprintf(stderr, "rbench: libperc's transfers lost money\n");
		exit(1);
	}
	perc_buf_dispose(&va);
	perc_buf_dispose(&vb);
	perc_db_release(s->db);
	perc_db_close(s->db);
	free(s);
}

/*
 * The hand-written protocol.  A row R is a hash rbench:{R} (its lock,
 * the lock's primary, and its data versions d:START) and a sorted set
 * rbench:{R}:w of its write records COMMIT:START, scored by COMMIT.
 * The oracle is one counter.  Each step on a row is one script, which
 * Redis runs alone.
 */
static const char raw_read_lua[] =
	"local lock = redis.call('HGET', KEYS[1], 'lock')\n"
	"if lock and tonumber(lock) <= tonumber(ARGV[1]) then\n"
	"	return {1, lock}\n"
	"end\n"
	"local w = redis.call('ZREVRANGEBYSCORE', KEYS[2], ARGV[1], '-inf',\n"
	"    'LIMIT', 0, 1)\n"
	"if #w == 0 then\n"
	"	return {2}\n"
	"end\n"
	"local start = string.match(w[1], ':(%d+)$')\n"
	"return {0, redis.call('HGET', KEYS[1], 'd:' .. start)}\n";

/* ARGV: start, value, primary.  {0} locked, {1} locked by another, {2}
 * written after start. */
static const char raw_prewrite_lua[] =
	"if redis.call('HEXISTS', KEYS[1], 'lock') == 1 then\n"
	"	return {1}\n"
	"end\n"
	"if #redis.call('ZREVRANGEBYSCORE', KEYS[2], '+inf', '(' .. ARGV[1],\n"
	"    'LIMIT', 0, 1) > 0 then\n"
	"	return {2}\n"
	"end\n"
	"redis.call('HSET', KEYS[1], 'lock', ARGV[1], 'primary', ARGV[3],\n"
	"    'd:' .. ARGV[1], ARGV[2])\n"
	"return {0}\n";

/* ARGV: start, commit.  {0} committed, {1} our lock is gone. */
static const char raw_commit_lua[] =
	"if redis.call('HGET', KEYS[1], 'lock') ~= ARGV[1] then\n"
	"	return {1}\n"
	"end\n"
	"redis.call('HDEL', KEYS[1], 'lock', 'primary')\n"
	"redis.call('ZADD', KEYS[2], ARGV[2], ARGV[2] .. ':' .. ARGV[1])\n"
	"return {0}\n";

struct raw_state {
	rc_cluster *cl;
	int read, prewrite, commit;             /* script ids */
	char key[2][2][48];                     /* row, hash (0) or zset (1) */
	char oracle[32];
	long wait_missed;                       /* WAITs no replica met */
};

static int64_t
deadline(void)
{
	return clock_deadline(DEADLINE_MS);
}

static void
raw_connect(struct raw_state *s, const char *url)
{
	if (rc_open(&s->cl, url, deadline()) < 0)
		die("connect");
	s->read = rc_script_register(s->cl, raw_read_lua,
	    strlen(raw_read_lua));
	s->prewrite = rc_script_register(s->cl, raw_prewrite_lua,
	    strlen(raw_prewrite_lua));
	s->commit = rc_script_register(s->cl, raw_commit_lua,
	    strlen(raw_commit_lua));
	if (s->read < 0 || s->prewrite < 0 || s->commit < 0)
		die("scripts");
}

/* A reply that must be an array whose first element is 0. */
static void
expect_ok(redisReply *r, const char *what)
{
	if (r->type != REDIS_REPLY_ARRAY || r->elements < 1 ||
	    r->element[0]->type != REDIS_REPLY_INTEGER ||
	    r->element[0]->integer != 0) {
		fprintf(stderr, "rbench: %s: unexpected reply%s%s\n", what,
		    r->type == REDIS_REPLY_ERROR ? ": " : "",
		    r->type == REDIS_REPLY_ERROR ? r->str : "");
		exit(1);
	}
}

/* One oracle step, confirmed by a replica as perc's oracle is. */
static uint64_t
raw_ts(struct raw_state *s)
{
	perc_bytes argv[2] = { b("INCR"), b(s->oracle) };
	redisReply *r;
	uint64_t ts;
	int replicas;

	if (rc_command(&r, &replicas, s->cl, argv[1], 2, argv,
	    deadline()) < 0)
		die("oracle");
	if (r->type != REDIS_REPLY_INTEGER)
		die("oracle reply");
	ts = (uint64_t)r->integer;
	s->wait_missed += replicas == 0;
	freeReplyObject(r);
	return ts;
}

static void
raw_row_keys(perc_bytes *keys, struct raw_state *s, int row)
{
	keys[0] = b(s->key[row][0]);
	keys[1] = b(s->key[row][1]);
}

/* The value of row at snapshot ts. */
static long
raw_get(struct raw_state *s, int row, uint64_t ts)
{
	perc_bytes keys[2], args[1];
	char num[24];
	redisReply *r;
	long v;

	raw_row_keys(keys, s, row);
	snprintf(num, sizeof(num), "%" PRIu64, ts);
	args[0] = b(num);
	if (rc_evalsha(&r, NULL, s->cl, s->read, keys[0], 2, keys, 1, args,
	    deadline()) < 0)
		die("read");
	expect_ok(r, "read");
	if (r->elements < 2 || r->element[1]->type != REDIS_REPLY_STRING)
		die("read reply");
	v = atol(r->element[1]->str);
	freeReplyObject(r);
	return v;
}

static void *
raw_ready(const char *url, int proc)
{
	struct raw_state *s = calloc(1, sizeof(*s));
	char tag[32];
	int node[2], row = 0, i;
	uint64_t start, commit;
	perc_bytes keys[2], args[3];
	char st[24], cm[24];
	redisReply *r;

	raw_connect(s, url);
	snprintf(s->oracle, sizeof(s->oracle), "rbench:{oracle}");
	/* Two rows on two masters, as perc's rows of a transfer may be. */
	for (i = 0; row < 2; i++) {
		snprintf(tag, sizeof(tag), "p%dr%d", proc, i);
		snprintf(s->key[row][0], sizeof(s->key[row][0]),
		    "rbench:{%s}", tag);
		node[row] = rc_slot_node(s->cl, rc_slot(tag, strlen(tag)));
		if (row == 0 || node[1] != node[0] || i > 1000)
			row++;
	}
	for (row = 0; row < 2; row++) {
		snprintf(s->key[row][1], sizeof(s->key[row][1]), "%s:w",
		    s->key[row][0]);
		/* Seed: one committed version, as a committed transfer. */
		start = raw_ts(s);
		commit = raw_ts(s);
		snprintf(st, sizeof(st), "%" PRIu64, start);
		snprintf(cm, sizeof(cm), "%" PRIu64, commit);
		raw_row_keys(keys, s, row);
		args[0] = b(st);
		args[1] = b(row == 0 ? "1000000" : "0");
		args[2] = b(s->key[row][0]);
		if (rc_evalsha(&r, NULL, s->cl, s->prewrite, keys[0], 2, keys,
		    3, args, deadline()) < 0)
			die("seed");
		expect_ok(r, "seed");
		freeReplyObject(r);
		args[1] = b(cm);
		if (rc_evalsha(&r, NULL, s->cl, s->commit, keys[0], 2, keys,
		    2, args, deadline()) < 0)
			die("seed");
		expect_ok(r, "seed");
		freeReplyObject(r);
	}
	return s;
}

/*
 * One transfer as perc makes it, by hand: a start timestamp, 2 reads,
 * the 2 prewrites pipelined to their masters, a commit timestamp, the
 * primary's commit, then the secondary's.  Where perc waits for a
 * replica (WAIT 1: oracle steps, prewrites, the primary's commit), so
 * does this, so that both give the same guarantee.
 */
static void
raw_transfer(struct raw_state *s)
{
	perc_bytes keys[2], args[3];
	char st[24], cm[24], val[2][24];
	uint64_t start, commit;
	rc_pipeline *p;
	redisReply *r;
	long va, vb;
	int row, replicas;

	start = raw_ts(s);
	va = raw_get(s, 0, start);
	vb = raw_get(s, 1, start);
	snprintf(val[0], sizeof(val[0]), "%ld", va - 1);
	snprintf(val[1], sizeof(val[1]), "%ld", vb + 1);
	snprintf(st, sizeof(st), "%" PRIu64, start);
	if (rc_pipeline_new(&p, s->cl) < 0)
		die("pipeline");
	for (row = 0; row < 2; row++) {
		raw_row_keys(keys, s, row);
		args[0] = b(st);
		args[1] = b(val[row]);
		args[2] = b(s->key[0][0]);
		if (rc_pipeline_evalsha(p, keys[0], RC_WAIT, s->prewrite, 2,
		    keys, 3, args) < 0)
			die("prewrite");
	}
	if (rc_pipeline_exec(p, deadline()) < 0)
		die("prewrite");
	for (row = 0; row < 2; row++) {
		expect_ok(rc_pipeline_reply(p, (size_t)row), "prewrite");
		s->wait_missed += rc_pipeline_replicas(p, (size_t)row) == 0;
	}
	rc_pipeline_free(p);
	commit = raw_ts(s);
	snprintf(cm, sizeof(cm), "%" PRIu64, commit);
	for (row = 0; row < 2; row++) {
		raw_row_keys(keys, s, row);
		args[0] = b(st);
		args[1] = b(cm);
		if (rc_evalsha(&r, row == 0 ? &replicas : NULL, s->cl,
		    s->commit, keys[0], 2, keys, 2, args, deadline()) < 0)
			die("commit");
		expect_ok(r, "commit");
		freeReplyObject(r);
		if (row == 0)
			s->wait_missed += replicas == 0;
	}
}

static void
raw_run(void *state, int n)
{
	struct raw_state *s = state;
	uint64_t ts;
	int i;

	for (i = 0; i < n; i++)
		raw_transfer(s);
	ts = raw_ts(s);
	if (raw_get(s, 0, ts) + raw_get(s, 1, ts) != 1000000) {
		fprintf(stderr, "rbench: the hand-written transfers lost "
		    "money\n");
		exit(1);
	}
	if (s->wait_missed > 0)
		fprintf(stderr, "rbench: %ld WAITs met no replica in time\n",
		    s->wait_missed);
	rc_close(s->cl);
	free(s);
}

/*
 * The library's read (or 1-cell write transaction) and a raw GET (or
 * SET, and a SET with WAIT 1, as durable as perc's commit point) taken
 * in turns, n of each, so that all see the same load on a busy
 * machine: prints the median ms of each, the library's first.
 * The GET and SET go to the node of the cell the library reads or
 * writes: on a loopback cluster the nodes answer at speeds that differ
 * by more than twice (where the scheduler runs them), and only the
 * same node makes a fair pair.
 */
struct pair {
	perc_db *db;
	rc_cluster *cl;
	perc_ts at;
	perc_buf v;
	char get_key[200], set_key[200];
};

/*
 * A key of the hash slot of row's cells in the table of data directory
 * dir: the table's bucket tag, {TABLE:BUCKET} (lib/store_redis.c), in
 * a name of rbench's own.
 */
static void
slot_key(char *out, size_t size, const char *dir, const char *row)
{
	char path[4096], line[4096], *table = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "%s/config", dir);
	if ((f = fopen(path, "r")) == NULL)
		die("config");
	while (table == NULL && fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "store ", 6) == 0 &&
		    (table = strrchr(line, '/')) != NULL)
			table[strcspn(table, "\n")] = '\0';
	fclose(f);
	if (table == NULL)
		die("config names no redis table");
	snprintf(out, size, "rbench:{%s:%u}", table + 1,
	    (unsigned)(codec_crc32(0, row, strlen(row)) % RS_BUCKETS));
}

/* argv on its key's master; with replicas not NULL, and a WAIT 1. */
static void
command(rc_cluster *cl, int *replicas, size_t argc, const perc_bytes *argv)
{
	redisReply *r;

	if (rc_command(&r, replicas, cl, argv[1], argc, argv, deadline()) < 0)
		die(argv[0].data);
	if (r->type == REDIS_REPLY_ERROR)
		fprintf(stderr, "rbench: %s\n", r->str), exit(1);
	freeReplyObject(r);
}

/* The kinds of one_op: the library's, raw, and a raw SET with WAIT 1. */
enum { OP_LIB, OP_RAW, OP_RAW_WAIT };

static void
one_op(struct pair *o, int write, int kind)
{
	perc_bytes get[2] = { b("GET"), b(o->get_key) };
	perc_bytes set[3] = { b("SET"), b(o->set_key), b("value") };
	perc_ts ts;
	int replicas;

	if (kind == OP_LIB && !write &&
	    perc_snapshot_get(&o->v, o->db, o->at, b("r"), b("c")) < 0)
		die("read");
	if (kind == OP_LIB && write &&
	    perc_set(&ts, o->db, b("w"), b("c"), b("value")) < 0)
		die("write");
	if (kind != OP_LIB)
		command(o->cl, kind == OP_RAW_WAIT ? &replicas : NULL,
		    write ? 3 : 2, write ? set : get);
}

static int
pair(const char *dir, const char *url, int n, int write)
{
	struct pair o = { NULL, NULL, 0, PERC_BUF_INIT, "", "" };
	perc_bytes seed[3];
	double *t[3], start;
	perc_ts ts;
	int i, k, kinds = write ? 3 : 2;

	slot_key(o.get_key, sizeof(o.get_key), dir, "r");
	slot_key(o.set_key, sizeof(o.set_key), dir, "w");
	seed[0] = b("SET");
	seed[1] = b(o.get_key);
	seed[2] = b("value");

	for (k = 0; k < kinds; k++)
		if ((t[k] = calloc((size_t)n, sizeof(double))) == NULL)
			die("memory");
	if (rc_open(&o.cl, url, deadline()) < 0)
		die("connect");
	if (perc_db_open(&o.db, dir) < 0 || perc_db_hold(o.db) < 0)
		die("open");
	if (perc_set(&ts, o.db, b("r"), b("c"), b("value")) < 0 ||
	    perc_snapshot_ts(&o.at, o.db) < 0)
		die("seed");
	command(o.cl, NULL, 3, seed);
	for (i = 0; i < n; i++) {
		for (k = 0; k < kinds; k++) {
			start = now_ms();
			one_op(&o, write, (i + k) % kinds);
			t[(i + k) % kinds][i] = now_ms() - start;
		}
	}
	for (k = 0; k < kinds; k++)
		printf("%s%.3f", k ? " " : "", median(t[k], n));
	printf("\n");
	perc_buf_dispose(&o.v);
	perc_db_release(o.db);
	perc_db_close(o.db);
	rc_close(o.cl);
	for (k = 0; k < kinds; k++)
		free(t[k]);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "lib") == 0)
		return in_parallel(lib_ready, lib_run, argv[2], atoi(argv[3]),
		    atoi(argv[4]));
	if (argc == 5 && strcmp(argv[1], "raw") == 0)
		return in_parallel(raw_ready, raw_run, argv[2], atoi(argv[3]),
		    atoi(argv[4]));
	if (argc == 5 && strcmp(argv[1], "read") == 0)
		return pair(argv[2], argv[3], atoi(argv[4]), 0);
	if (argc == 5 && strcmp(argv[1], "write") == 0)
		return pair(argv[2], argv[3], atoi(argv[4]), 1);
	fprintf(stderr, "usage: rbench lib|raw|read|write ...\n");
	return 2;
}

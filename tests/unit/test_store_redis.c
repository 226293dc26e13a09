/*
 * tests/unit/test_store_redis.c - the Redis Cluster store's verbs on a
 * live cluster named by PERC_TEST_REDIS_URL (skipped when it is not
 * set), each test on a fresh table of a random name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "codec.h"
#include "journal.h"
#include "perc.h"
#include "redis/cluster.h"
#include "store.h"
#include "unit.h"

#define LIVE_MS 20000

static perc_bytes
str(const char *s)
{
	return bytes_of(s, strlen(s));
}

static const char *
live_url(void)
{
	const char *url = getenv("PERC_TEST_REDIS_URL");

	if (url == NULL || *url == '\0') {
		unit_skip("PERC_TEST_REDIS_URL is not set");
		return NULL;
	}
	return url;
}

/* The URL of a fresh table of the test cluster, in out. */
static void
table_url(char *out, size_t size, const char *url)
{
	static unsigned seq;

	snprintf(out, size, "%s/t%ld-%u-%u", url, (long)getpid(),
	    (unsigned)time(NULL) % 100000, seq++);
}

/* What backend.c hands a store of data directory dir (store.h). */
static const struct store_env *
env_of(const char *dir, int64_t timeout_ms)
{
	static struct store_env env;

	env.dir = dir;
	env.timeout_ms = timeout_ms;
	env.power_cuts = 0;
	env.owner_alive = journal_owner_alive;
	return &env;
}

static struct store *
fresh_url(const char *url, char *u, size_t size)
{
	struct store *s = NULL;

	table_url(u, size, url);
	CHECK(store_redis_create(u, env_of(".", LIVE_MS)) == 0);
	CHECK(store_redis_open(&s, u, env_of(".", LIVE_MS)) == 0);
	if (s == NULL)
		printf("# %s\n", perc_errmsg());
	return s;
}

static struct store *
fresh(const char *url)
{
	char u[512];

	return fresh_url(url, u, sizeof(u));
}

static perc_ts
ts(struct store *s)
{
	perc_ts t = 0;

	CHECK(s->ops->ts_next(s, &t, 1, clock_deadline(LIVE_MS)) == 0);
	return t;
}

/* A lock record of transaction start with primary (prow, pcol). */
static void
mklock(struct lock_rec *l, int op, perc_ts start, const char *prow,
    const char *pcol)
{
	memset(l, 0, sizeof(*l));
	l->op = op;
	l->start_ts = start;
	l->wall_ms = (uint64_t)clock_wall_ms();
	l->ttl_ms = 5000;
	l->pid = (uint32_t)getpid();
	buf_set(&l->host, "host", 4);
	buf_set(&l->primary_row, prow, strlen(prow));
	buf_set(&l->primary_col, pcol, strlen(pcol));
}

static int
prewrite_full(struct store *s, perc_ts *committed_at, const char *row,
    const char *col, int op, int ack, const char *value, perc_ts start,
    unsigned flags, struct lock_rec *blocker)
{
	struct write w;
	struct lock_rec l;
	perc_ts at = 0;
	int rc;

	memset(&w, 0, sizeof(w));
	buf_set(&w.row, row, strlen(row));
	buf_set(&w.col, col, strlen(col));
	if (value != NULL)
		buf_set(&w.value, value, strlen(value));
	w.op = op;
	w.ack = ack;
	mklock(&l, op, start, row, col);
	rc = s->ops->prewrite(s, committed_at ? committed_at : &at, &w, &l,
	    flags, blocker);
	codec_lock_dispose(&l);
	perc_buf_dispose(&w.row);
	perc_buf_dispose(&w.col);
	perc_buf_dispose(&w.value);
	return rc;
}

static int
prewrite(struct store *s, const char *row, const char *col, int op,
    const char *value, perc_ts start)
{
	struct lock_rec b;
	int rc;

	memset(&b, 0, sizeof(b));
	rc = prewrite_full(s, NULL, row, col, op, 0, value, start, 0, &b);
	codec_lock_dispose(&b);
	return rc;
}

static int
commit(struct store *s, const char *row, const char *col, perc_ts start,
    perc_ts at, unsigned flags)
{
	return s->ops->commit(s, str(row), str(col), start, at, flags);
}

/* Put value in (row, col) in one transaction: its commit_ts. */
static perc_ts
put(struct store *s, const char *row, const char *col, const char *value)
{
	perc_ts start = ts(s), at;

	CHECK(prewrite(s, row, col, value ? OP_PUT : OP_DELETE, value,
	    start) == 0);
	at = ts(s);
	CHECK(commit(s, row, col, start, at, STORE_SYNC) == 0);
	return at;
}

/* Is the value of (row, col) at t expected (NULL: none)? */
static int
reads(struct store *s, const char *row, const char *col, perc_ts t,
    const char *expected)
{
	perc_buf out = PERC_BUF_INIT;
	struct lock_rec b;
	int rc, ok;

	memset(&b, 0, sizeof(b));
	rc = s->ops->read(s, &out, str(row), str(col), t, &b, NULL);
	if (expected == NULL)
		ok = rc == PERC_ENOTFOUND;
	else
		ok = rc == 0 && bytes_eq(buf_bytes(&out), str(expected));
	if (!ok)
		printf("# read %s/%s at %llu: rc %d '%.*s', expected %s\n",
		    row, col, (unsigned long long)t, rc, (int)out.len,
		    out.data ? out.data : "", expected ? expected : "none");
	perc_buf_dispose(&out);
	codec_lock_dispose(&b);
	return ok;
}

static void
test_rs_url(const char *dir)
{
	static const char *bad[] = { "http://127.0.0.1:1", "redis://",
		"redis://127.0.0.1:1/", "redis://127.0.0.1:1/a{b}",
		"redis://127.0.0.1:1/a:b", "redis://127.0.0.1:1/a/b",
		"redis://127.0.0.1:0/t", "redis://h:1,/t",
		"redis://u:secret@127.0.0.1:1/a{b}", "redis://u:se/cret@",
		"redis://u@h:1/t", NULL };
	struct store *s = NULL;
	int i;

	(void)dir;
	for (i = 0; bad[i] != NULL; i++) {
		CHECK(store_redis_open(&s, bad[i], env_of("/x", 100)) ==
		    PERC_EUSAGE);
		CHECK(store_redis_create(bad[i], env_of(".", 100)) ==
		    PERC_EUSAGE);
		CHECK(strchr(perc_errmsg(), '\n') == NULL);
		CHECK(strstr(perc_errmsg(), "cret") == NULL);
	}
}

static void
test_rs_open_missing(const char *dir)
{
	const char *url = live_url();
	struct store *s = NULL;
	perc_ts t;
	char u[512];

	(void)dir;
	if (url == NULL)
		return;
	table_url(u, sizeof(u), url);
	/*
	 * The open reaches no one; the first command looks for the table,
	 * and so does every one after it until the table is there.
	 */
	CHECK(store_redis_open(&s, u, env_of(".", LIVE_MS)) == 0);
	if (s == NULL)
		return;
	CHECK(s->ops->ts_next(s, &t, 1, clock_deadline(LIVE_MS)) ==
	    PERC_ENOTDB);
	CHECK(strstr(perc_errmsg(), "does not exist") != NULL);
	CHECK(s->ops->ts_next(s, &t, 1, clock_deadline(LIVE_MS)) ==
	    PERC_ENOTDB);
	/* init twice joins the table and changes nothing. */
	CHECK(store_redis_create(u, env_of(".", LIVE_MS)) == 0);
	put(s, "r", "c", "v");
	CHECK(store_redis_create(u, env_of(".", LIVE_MS)) == 0);
	CHECK(reads(s, "r", "c", ts(s), "v"));
	CHECK(strcmp(s->ops->name, "redis") == 0);
	CHECK(s->ops->held(s) == 1);
	CHECK(s->ops->acquire(s, clock_deadline(10)) == 0);
	s->ops->release(s);
	s->ops->dispose(s);
}

/* Versions and deletes read at the right snapshots. */
static void
test_rs_snapshots(const char *dir)
{
	const char *url = live_url();
	struct store *s;
	perc_ts t0, t1, t2, t3;

	(void)dir;
	if (url == NULL || (s = fresh(url)) == NULL)
		return;
	t0 = ts(s);
	t1 = put(s, "row", "col", "v1");
	t2 = put(s, "row", "col", "v2");
	t3 = put(s, "row", "col", NULL);
	CHECK(reads(s, "row", "col", t0, NULL));
	CHECK(reads(s, "row", "col", t1, "v1"));
	CHECK(reads(s, "row", "col", t2 - 1, "v1"));
	CHECK(reads(s, "row", "col", t2, "v2"));
	CHECK(reads(s, "row", "col", t3 - 1, "v2"));
	CHECK(reads(s, "row", "col", t3, NULL));
	put(s, "row", "col", "v4");
	CHECK(reads(s, "row", "col", ts(s), "v4"));
	/* Binary rows, columns and values, NULs and all. */
	{
		static const char r[] = "a\0b", c[] = "\0", v[] = "x\0\xff";
		perc_ts start = ts(s), at;
		struct write w;
		struct lock_rec l, b;
		perc_buf out = PERC_BUF_INIT;

		memset(&w, 0, sizeof(w));
		memset(&b, 0, sizeof(b));
		buf_set(&w.row, r, 3);
		buf_set(&w.col, c, 1);
		buf_set(&w.value, v, 3);
		w.op = OP_PUT;
		mklock(&l, OP_PUT, start, "p", "q");
		CHECK(s->ops->prewrite(s, &at, &w, &l, 0, &b) == 0);
		at = ts(s);
		CHECK(s->ops->commit(s, bytes_of(r, 3), bytes_of(c, 1), start,
		    at, STORE_SYNC) == 0);
		CHECK(s->ops->read(s, &out, bytes_of(r, 3), bytes_of(c, 1),
		    at, &b, NULL) == 0);
		CHECK(bytes_eq(buf_bytes(&out), bytes_of(v, 3)));
		perc_buf_dispose(&out);
		perc_buf_dispose(&w.row);
		perc_buf_dispose(&w.col);
		perc_buf_dispose(&w.value);
		codec_lock_dispose(&l);
		codec_lock_dispose(&b);
	}
	s->ops->dispose(s);
}

/* Conflicts, locks in the way, and the fate a reader knows. */
static void
test_rs_locks_and_conflicts(const char *dir)
{
	const char *url = live_url();
	perc_buf out = PERC_BUF_INIT;
	struct lock_rec b, l;
	struct lock_fate known;
	struct store *s;
	perc_ts t1, t2, at, old;

	(void)dir;
	if (url == NULL || (s = fresh(url)) == NULL)
		return;
	memset(&b, 0, sizeof(b));
	memset(&l, 0, sizeof(l));
	old = put(s, "r", "c", "old");
	t1 = ts(s);
	t2 = ts(s);
	CHECK(prewrite(s, "r", "c", OP_PUT, "two", t2) == 0);
	/* Our own lock again: a retried prewrite. */
	CHECK(prewrite(s, "r", "c", OP_PUT, "two", t2) == 0);
	/* Another transaction meets the lock. */
	CHECK(prewrite_full(s, NULL, "r", "c", OP_PUT, 0, "one", t1, 0,
	    &b) == PERC_ELOCKED);
	CHECK(b.start_ts == t2);
	/* A reader below the lock passes; above, it is stopped. */
	CHECK(reads(s, "r", "c", t1, "old"));
	CHECK(s->ops->read(s, &out, str("r"), str("c"), ts(s), &b,
	    NULL) == PERC_ELOCKED);
	CHECK(b.start_ts == t2 && b.op == OP_PUT);
	CHECK(bytes_eq(buf_bytes(&b.primary_row), str("r")));
	CHECK(s->ops->get_lock(s, &l, str("r"), str("c")) == 0);
	CHECK(l.start_ts == t2);
	CHECK(s->ops->get_lock(s, &l, str("r"), str("zz")) == PERC_ENOTFOUND);
	/* A known fate: committed below the snapshot, or never. */
	at = ts(s);
	known.start_ts = t2;
	known.commit_ts = at;
	CHECK(s->ops->read(s, &out, str("r"), str("c"), at + 1, &b,
	    &known) == 0);
	CHECK(bytes_eq(buf_bytes(&out), str("two")));
	known.commit_ts = 0;
	CHECK(s->ops->read(s, &out, str("r"), str("c"), at + 1, &b,
	    &known) == 0);
	CHECK(bytes_eq(buf_bytes(&out), str("old")));
	CHECK(commit(s, "r", "c", t2, at, STORE_SYNC) == 0);
	CHECK(reads(s, "r", "c", at, "two"));
	/* t1 began before t2 committed: a write-write conflict. */
	CHECK(prewrite(s, "r", "c", OP_PUT, "one", t1) == PERC_ECONFLICT);
	/* A lock-only lock never blocks a reader. */
	t1 = ts(s);
	CHECK(prewrite(s, "r", "c", OP_LOCK, NULL, t1) == 0);
	CHECK(reads(s, "r", "c", ts(s), "two"));
	at = ts(s);
	CHECK(commit(s, "r", "c", t1, at, 0) == 0);
	CHECK(reads(s, "r", "c", ts(s), "two"));
	(void)old;
	perc_buf_dispose(&out);
	codec_lock_dispose(&b);
	codec_lock_dispose(&l);
	s->ops->dispose(s);
}

/* Rollback records, idempotent commits, find_commit. */
static void
test_rs_rollback_commit(const char *dir)
{
	const char *url = live_url();
	struct lock_rec b;
	struct store *s;
	perc_ts t, at, found = 0, committed_at = 0;
	int op = 0;

	(void)dir;
	if (url == NULL || (s = fresh(url)) == NULL)
		return;
	memset(&b, 0, sizeof(b));
	/* A rollback with no lock still stops a late prewrite. */
	t = ts(s);
	CHECK(s->ops->rollback(s, str("r"), str("c"), t, 0) == 0);
	CHECK(s->ops->rollback(s, str("r"), str("c"), t, 0) == 0);
	CHECK(prewrite(s, "r", "c", OP_PUT, "late", t) == PERC_ECONFLICT);
	CHECK(s->ops->find_commit(s, &found, &op, str("r"), str("c"),
	    t) == 0);
	CHECK(found == t && op == OP_ROLLBACK);
	/* Rolled back under a lock: the commit fails. */
	t = ts(s);
	CHECK(prewrite(s, "r", "c", OP_PUT, "x", t) == 0);
	CHECK(s->ops->rollback(s, str("r"), str("c"), t, 0) == 0);
	CHECK(s->ops->get_lock(s, &b, str("r"), str("c")) == PERC_ENOTFOUND);
	CHECK(commit(s, "r", "c", t, ts(s), STORE_SYNC) == PERC_ECONFLICT);
	CHECK(reads(s, "r", "c", ts(s), NULL));
	/* Committed: twice is once; a rollback then fails. */
	t = ts(s);
	CHECK(prewrite(s, "r", "c", OP_PUT, "y", t) == 0);
	at = ts(s);
	CHECK(commit(s, "r", "c", t, at, STORE_SYNC) == 0);
	CHECK(commit(s, "r", "c", t, at, STORE_SYNC) == 0);
	CHECK(s->ops->rollback(s, str("r"), str("c"), t, 0) == PERC_ECONFLICT);
	CHECK(s->ops->find_commit(s, &found, &op, str("r"), str("c"),
	    t) == 0);
	CHECK(found == at && op == OP_PUT);
	/* A delayed prewrite of a committed transaction learns so. */
	CHECK(prewrite_full(s, &committed_at, "r", "c", OP_PUT, 0, "y", t, 0,
	    &b) == PERC_ECOMMITTED);
	CHECK(committed_at == at);
	/* Newer writes above it do not hide a commit. */
	put(s, "r", "c", "z");
	CHECK(s->ops->find_commit(s, &found, &op, str("r"), str("c"),
	    t) == 0 && found == at);
	CHECK(s->ops->find_commit(s, &found, &op, str("r"), str("c"),
	    ts(s)) == PERC_ENOTFOUND);
	/* A commit with no lock and no record is no success. */
	CHECK(commit(s, "r", "other", ts(s), ts(s), 0) == PERC_ECONFLICT);
	codec_lock_dispose(&b);
	s->ops->dispose(s);
}

struct collect {
	perc_buf text;
	int      n, stop_at;
};

static int
collect_cell(void *arg, perc_bytes row, perc_bytes col, perc_bytes value)
{
	struct collect *c = arg;

	buf_addf(&c->text, "%.*s/%.*s=%.*s ", (int)row.len,
	    (const char *)row.data, (int)col.len, (const char *)col.data,
	    (int)value.len, (const char *)value.data);
	return ++c->n == c->stop_at;
}

static int
fail_cell(void *arg, perc_bytes row, perc_bytes col, perc_bytes value)
{
	(void)arg;
	(void)row;
	(void)col;
	(void)value;
	return PERC_EIO;
}

static void
scan_init(struct store_scan *sc, struct collect *c, const char *prefix,
    const perc_bytes *column, perc_ts t)
{
	memset(sc, 0, sizeof(*sc));
	memset(c, 0, sizeof(*c));
	sc->prefix = str(prefix);
	sc->column = column;
	sc->ts = t;
	sc->cell = collect_cell;
	sc->arg = c;
}

static void
test_rs_scan(const char *dir)
{
	const char *url = live_url();
	struct store_scan sc;
	struct collect c;
	perc_buf want = PERC_BUF_INIT;
	perc_bytes colb = str("b");
	struct store *s;
	perc_ts t, start;
	char row[16];
	int i, rc;

	(void)dir;
	if (url == NULL || (s = fresh(url)) == NULL)
		return;
	/* Rows spread over the buckets, written out of order. */
	for (i = 199; i >= 0; i--) {
		snprintf(row, sizeof(row), "r%03d", i);
		put(s, row, "b", "vb");
		put(s, row, "a", "va");
	}
	put(s, "r007", "a", NULL);
	put(s, "q", "a", "before");
	t = ts(s);
	for (i = 0; i < 200; i++)
		buf_addf(&want, i == 7 ? "r%03d/b=vb " : "r%03d/a=va r%03d/b=vb ",
		    i, i);
	scan_init(&sc, &c, "r", NULL, t);
	CHECK(s->ops->scan(s, &sc) == 0 && sc.done);
	CHECK(bytes_eq(buf_bytes(&c.text), buf_bytes(&want)));
	/* A prefix, and a column. */
	perc_buf_dispose(&c.text);
	scan_init(&sc, &c, "r01", NULL, t);
	CHECK(s->ops->scan(s, &sc) == 0 && sc.done && c.n == 20);
	CHECK(strncmp(c.text.data, "r010/a=va r010/b=vb r011/a=va", 29) == 0);
	perc_buf_dispose(&c.text);
	scan_init(&sc, &c, "", &colb, t);
	CHECK(s->ops->scan(s, &sc) == 0 && sc.done && c.n == 200);
	perc_buf_dispose(&c.text);
	/* A batch ends when cell says so; the next resumes after it. */
	scan_init(&sc, &c, "r", NULL, t);
	c.stop_at = 3;
	CHECK(s->ops->scan(s, &sc) == 0 && !sc.done);
	CHECK(strcmp(c.text.data, "r000/a=va r000/b=vb r001/a=va ") == 0);
	perc_buf_dispose(&c.text);
	scan_init(&sc, &c, "r", NULL, t);
	sc.resume = SCAN_AFTER;
	sc.from_row = str("r001");
	sc.from_col = str("a");
	c.stop_at = 2;
	CHECK(s->ops->scan(s, &sc) == 0 && !sc.done);
	CHECK(strcmp(c.text.data, "r001/b=vb r002/a=va ") == 0);
	perc_buf_dispose(&c.text);
	/* Or at a cell (where a lock stopped the walk before). */
	scan_init(&sc, &c, "r", NULL, t);
	sc.resume = SCAN_AT;
	sc.from_row = str("r001");
	sc.from_col = str("b");
	c.stop_at = 2;
	CHECK(s->ops->scan(s, &sc) == 0 && !sc.done);
	CHECK(strcmp(c.text.data, "r001/b=vb r002/a=va ") == 0);
	perc_buf_dispose(&c.text);
	/* A failure of cell is the scan's. */
	scan_init(&sc, &c, "r", NULL, t);
	sc.cell = fail_cell;
	CHECK(s->ops->scan(s, &sc) == PERC_EIO && !sc.done);
	/* An old snapshot sees nothing of it. */
	scan_init(&sc, &c, "", NULL, 1);
	CHECK(s->ops->scan(s, &sc) == 0 && sc.done && c.n == 0);
	perc_buf_dispose(&c.text);
	/* A lock below the snapshot stops the scan there. */
	start = ts(s);
	CHECK(prewrite(s, "r150", "a", OP_PUT, "new", start) == 0);
	scan_init(&sc, &c, "r1", NULL, ts(s));
	rc = s->ops->scan(s, &sc);
	CHECK(rc == PERC_ELOCKED && !sc.done);
	CHECK(sc.blocker.start_ts == start);
	CHECK(bytes_eq(buf_bytes(&sc.brow), str("r150")));
	CHECK(bytes_eq(buf_bytes(&sc.bcol), str("a")));
	CHECK(c.n == 100);
	perc_buf_dispose(&c.text);
	codec_lock_dispose(&sc.blocker);
	perc_buf_dispose(&sc.brow);
	perc_buf_dispose(&sc.bcol);
	/* Below the lock, the scan passes it. */
	scan_init(&sc, &c, "r1", NULL, t);
	CHECK(s->ops->scan(s, &sc) == 0 && sc.done && c.n == 200);
	perc_buf_dispose(&c.text);
	perc_buf_dispose(&want);
	s->ops->dispose(s);
}

static int
collect_raw(void *arg, int region, perc_bytes col, int kind, perc_ts t,
    perc_bytes value)
{
	struct collect *c = arg;

	(void)t;
	(void)value;
	buf_addf(&c->text, "%c:%.*s:%d ", region, (int)col.len,
	    (const char *)col.data, kind);
	c->n++;
	return 0;
}

static int
collect_lock(void *arg, perc_bytes row, perc_bytes col,
    const struct lock_rec *lock)
{
	struct collect *c = arg;

	buf_addf(&c->text, "%.*s/%.*s@%llu ", (int)row.len,
	    (const char *)row.data, (int)col.len, (const char *)col.data,
	    (unsigned long long)lock->start_ts);
	c->n++;
	return 0;
}

static int
collect_notify(void *arg, perc_bytes row, perc_bytes col, perc_bytes fail)
{
	struct collect *c = arg;

	buf_addf(&c->text, "%.*s/%.*s:%zu ", (int)row.len,
	    (const char *)row.data, (int)col.len, (const char *)col.data,
	    fail.len);
	c->n++;
	return 0;
}

/* show's raw walk, resolve-locks' lock walk, notifications and acks. */
static void
test_rs_raw_locks_notify(const char *dir)
{
	const char *url = live_url();
	perc_buf out = PERC_BUF_INIT, expect = PERC_BUF_INIT;
	perc_bytes obs = str("o");
	struct lock_rec b;
	struct collect c;
	struct store *s;
	perc_ts t1, a1, t2, obs_ts, late, at, pend[4];
	size_t npend;
	char rec[12] = "abcdefghijkl";

	(void)dir;
	if (url == NULL || (s = fresh(url)) == NULL)
		return;
	memset(&b, 0, sizeof(b));
	memset(&c, 0, sizeof(c));
	t1 = ts(s);
	CHECK(prewrite_full(s, NULL, "row", "o", OP_PUT, 0, "v1", t1,
	    STORE_NOTIFY, &b) == 0);
	CHECK(prewrite(s, "other", "x", OP_PUT, "v", t1) == 0);
	/* raw: the lock and data of the cell, then its notify cell. */
	CHECK(s->ops->raw(s, str("row"), NULL, collect_raw, &c) == 0);
	CHECK(c.text.data != NULL &&
	    strcmp(c.text.data, "c:o:1 c:o:3 n:o:5 ") == 0);
	perc_buf_dispose(&c.text);
	memset(&c, 0, sizeof(c));
	CHECK(s->ops->locks(s, collect_lock, &c) == 0);
	buf_addf(&expect, "other/x@%llu row/o@%llu ", (unsigned long long)t1,
	    (unsigned long long)t1);
	CHECK(c.text.data != NULL && bytes_eq(buf_bytes(&c.text),
	    buf_bytes(&expect)));
	perc_buf_dispose(&c.text);
	a1 = ts(s);
	CHECK(commit(s, "row", "o", t1, a1, STORE_SYNC) == 0);
	CHECK(commit(s, "other", "x", t1, a1, 0) == 0);
	memset(&c, 0, sizeof(c));
	CHECK(s->ops->locks(s, collect_lock, &c) == 0 && c.n == 0);
	/* Dirty, by t1's write; a failure record rides along. */
	CHECK(s->ops->notify_pending(s, str("row"), str("o"), pend, 4,
	    &npend) == 0 && npend == 1 && pend[0] == t1);
	CHECK(s->ops->notify_pending(s, str("row"), str("p"), pend, 4,
	    &npend) == PERC_ENOTFOUND && npend == 0);
	CHECK(s->ops->failures_get(s, &out, str("row"), str("o")) ==
	    PERC_ENOTFOUND);
	CHECK(s->ops->failures_put(s, str("row"), str("o"),
	    bytes_of(rec, 12)) == 0);
	CHECK(s->ops->failures_get(s, &out, str("row"), str("o")) == 0);
	CHECK(bytes_eq(buf_bytes(&out), bytes_of(rec, 12)));
	memset(&c, 0, sizeof(c));
	CHECK(s->ops->notify_scan(s, &obs, collect_notify, &c) == 0);
	CHECK(c.text.data != NULL && strcmp(c.text.data, "row/o:12 ") == 0);
	perc_buf_dispose(&c.text);
	/* An observer begins; a write lands during its run. */
	obs_ts = ts(s);
	late = ts(s);
	t2 = ts(s);
	CHECK(prewrite_full(s, NULL, "row", "o", OP_PUT, 0, "v2", t2,
	    STORE_NOTIFY, &b) == 0);
	at = ts(s);
	CHECK(commit(s, "row", "o", t2, at, 0) == 0);
	/* The ack conflicts with no user write, only with later acks. */
	CHECK(prewrite_full(s, NULL, "row", "o", OP_ACK, 1, NULL, obs_ts, 0,
	    &b) == 0);
	at = ts(s);
	CHECK(commit(s, "row", "o", obs_ts, at,
	    STORE_SYNC | STORE_CLEAR_NOTIFY) == 0);
	/* t1's notification is cleared, t2's (after obs_ts) kept. */
	CHECK(s->ops->notify_pending(s, str("row"), str("o"), pend, 4,
	    &npend) == 0 && npend == 1 && pend[0] == t2);
	CHECK(s->ops->failures_get(s, &out, str("row"), str("o")) ==
	    PERC_ENOTFOUND);
	memset(&c, 0, sizeof(c));
	CHECK(s->ops->raw(s, str("row"), &obs, collect_raw, &c) == 0);
	CHECK(c.text.data != NULL && strstr(c.text.data, "n:o:5 ") != NULL &&
	    strstr(c.text.data, "n:o:5 n:o:5") == NULL);
	perc_buf_dispose(&c.text);
	/* A second observer that began before that ack loses to it. */
	CHECK(prewrite_full(s, NULL, "row", "o", OP_ACK, 1, NULL, late, 0,
	    &b) == PERC_ECONFLICT);
	/* The next observer clears t2's. */
	obs_ts = ts(s);
	CHECK(prewrite_full(s, NULL, "row", "o", OP_ACK, 1, NULL, obs_ts, 0,
	    &b) == 0);
	at = ts(s);
	CHECK(commit(s, "row", "o", obs_ts, at,
	    STORE_SYNC | STORE_CLEAR_NOTIFY) == 0);
	CHECK(s->ops->notify_pending(s, str("row"), str("o"), NULL, 0,
	    &npend) == PERC_ENOTFOUND);
	memset(&c, 0, sizeof(c));
	CHECK(s->ops->notify_scan(s, NULL, collect_notify, &c) == 0 &&
	    c.n == 0);
	CHECK(reads(s, "row", "o", ts(s), "v2"));
	perc_buf_dispose(&out);
	perc_buf_dispose(&expect);
	codec_lock_dispose(&b);
	s->ops->dispose(s);
}

/* One command on the master of key's slot, through a client of our own. */
static void
raw_command(const char *url, const char *key, size_t argc,
    const char **words)
{
	rc_cluster *cl = NULL;
	perc_bytes argv[4];
	redisReply *r;
	size_t i;

	for (i = 0; i < argc; i++)
		argv[i] = str(words[i]);
	CHECK(rc_open(&cl, url, clock_deadline(LIVE_MS)) == 0);
	if (cl == NULL)
		return;
	CHECK(rc_command(&r, NULL, cl, str(key), argc, argv,
	    clock_deadline(LIVE_MS)) == 0);
	CHECK(r != NULL && r->type != REDIS_REPLY_ERROR);
	freeReplyObject(r);
	rc_close(cl);
}

static void
test_rs_oracle(const char *dir)
{
	const char *url = live_url();
	struct store *s, *s2 = NULL;
	perc_ts a, b, last = 0, big;
	char u[512], key[200], num[32];
	int i, ok = 1;

	(void)dir;
	if (url == NULL)
		return;
	table_url(u, sizeof(u), url);
	snprintf(key, sizeof(key), "perc:{%s:oracle}:ts", strrchr(u, '/') + 1);
	CHECK(store_redis_create(u, env_of(".", LIVE_MS)) == 0);
	CHECK(store_redis_open(&s, u, env_of(".", LIVE_MS)) == 0);
	CHECK(store_redis_open(&s2, u, env_of(".", LIVE_MS)) == 0);
	if (s == NULL || s2 == NULL)
		return;
	CHECK(s->ops->ts_last(s, &a, clock_deadline(LIVE_MS)) == 0 && a == 0);
	for (i = 0; i < 100; i++) {
		a = ts(i % 2 ? s : s2);
		ok &= a > last;
		last = a;
	}
	CHECK(ok);
	CHECK(s->ops->ts_last(s2, &a, clock_deadline(LIVE_MS)) == 0 &&
	    a == last);
	/*
	 * Hybrid timestamps (timestamp.h) follow the server's clock: a
	 * batch of 8,000,000 runs 2 s ahead of it, and what follows within
	 * those 2 s comes straight after.
	 */
	CHECK(s->ops->ts_next(s, &big, 8000000, clock_deadline(LIVE_MS)) == 0);
	CHECK(big > last);
	b = ts(s2);
	CHECK(b == big + 8000000);
	CHECK(s->ops->ts_last(s, &a, clock_deadline(LIVE_MS)) == 0 && a == b);
	/* Batches that cross the ceiling, and the advice to move it. */
	for (i = 0, ok = 1, last = b; i < 8; i++) {
		CHECK(s->ops->ts_next(i % 2 ? s : s2, &a, 3000,
		    clock_deadline(LIVE_MS)) == 0);
		ok &= a == last + 1;
		last = a + 2999;
	}
	CHECK(ok);
	/*
	 * The server forgets the oracle (its functions flushed, as a
	 * restart from an old AOF or a new master would): it starts again
	 * above everything it handed out.
	 */
	raw_command(url, key, 2, (const char *[]){ "FUNCTION", "FLUSH" });
	CHECK(ts(s) > last);
	/* Another writer moved the ceiling: above it. */
	snprintf(num, sizeof(num), "%llu", (unsigned long long)ts(s2) + 500000);
	raw_command(url, key, 3, (const char *[]){ "SET", key, num });
	CHECK(ts(s) > strtoull(num, NULL, 10));
	CHECK(s->ops->ts_next(s, &a, 0, clock_deadline(LIVE_MS)) ==
	    PERC_EUSAGE);
	s->ops->dispose(s);
	s2->ops->dispose(s2);
}

/* Prewrite "v" in (row, c) for start, whose primary is (prow, c), as
   a large transaction's lock when large is set. */
static int
prewrite_lock(struct store *s, const char *row, perc_ts start,
    const char *prow, unsigned flags, int large)
{
	struct write w;
	struct lock_rec l, b;
	perc_ts at = 0;
	int rc;

	memset(&w, 0, sizeof(w));
	memset(&b, 0, sizeof(b));
	buf_set(&w.row, row, strlen(row));
	buf_set(&w.col, "c", 1);
	buf_set(&w.value, "v", 1);
	w.op = OP_PUT;
	mklock(&l, OP_PUT, start, prow, "c");
	l.large = large;
	rc = s->ops->prewrite(s, &at, &w, &l, flags, &b);
	codec_lock_dispose(&l);
	codec_lock_dispose(&b);
	perc_buf_dispose(&w.row);
	perc_buf_dispose(&w.col);
	perc_buf_dispose(&w.value);
	return rc;
}

static int
prewrite_of(struct store *s, const char *row, perc_ts start,
    const char *prow, unsigned flags)
{
	return prewrite_lock(s, row, start, prow, flags, 0);
}

/*
 * cmd (PTTL, DEL) on the lease of transaction start of table, in the
 * slot of its primary row prow: the integer reply (PTTL: -2, none).
 */
static long long
lease_cmd(rc_cluster *cl, const char *cmd, const char *table,
    const char *prow, perc_ts start)
{
	char key[200];
	perc_bytes argv[2];
	redisReply *r = NULL;
	long long n = -100;

	snprintf(key, sizeof(key), "perc:{%s:%u}:lease:%llu", table,
	    (unsigned)(codec_crc32(0, prow, strlen(prow)) % 64),
	    (unsigned long long)start);
	argv[0] = str(cmd);
	argv[1] = str(key);
	CHECK(rc_command(&r, NULL, cl, argv[1], 2, argv,
	    clock_deadline(LIVE_MS)) == 0);
	if (r != NULL && r->type == REDIS_REPLY_INTEGER)
		n = r->integer;
	if (r != NULL)
		freeReplyObject(r);
	return n;
}

/*
 * A lease lives in the primary's slot exactly while the primary is
 * locked: the primary's prewrite (a retry too) takes it, its commit or
 * rollback drops it.
 */
static void
test_rs_leases(const char *dir)
{
	const char *url = live_url(), *table;
	rc_cluster *cl = NULL;
	struct lock_rec l;
	struct store *s;
	char u[512];
	long long ttl;
	perc_ts t, at;

	(void)dir;
	if (url == NULL || (s = fresh_url(url, u, sizeof(u))) == NULL)
		return;
	table = strrchr(u, '/') + 1;
	CHECK(rc_open(&cl, url, clock_deadline(LIVE_MS)) == 0);
	if (cl == NULL) {
		s->ops->dispose(s);
		return;
	}
	/* The secondary x is in a bucket of its own. */
	CHECK(codec_crc32(0, "p", 1) % 64 != codec_crc32(0, "x", 1) % 64);
	t = ts(s);
	mklock(&l, OP_PUT, t, "p", "c");
	CHECK(prewrite_of(s, "p", t, "p", STORE_PRIMARY) == 0);
	ttl = lease_cmd(cl, "PTTL", table, "p", t);
	CHECK(ttl > 5000 && ttl <= 5000 + 10000);
	CHECK(s->ops->owner_alive(s, &l, "host") == 1);
	CHECK(prewrite_of(s, "x", t, "p", 0) == 0);
	CHECK(lease_cmd(cl, "PTTL", table, "x", t) == -2);
	/* A long commit keeps it alive longer. */
	CHECK(s->ops->lease_keep(s, str("p"), str("c"), t, 60000) == 0);
	ttl = lease_cmd(cl, "PTTL", table, "p", t);
	CHECK(ttl > 60000 && ttl <= 60000 + 10000);
	/* No lease while the primary is locked: a gone owner.  Its retried
	   prewrite takes the lease again. */
	CHECK(lease_cmd(cl, "DEL", table, "p", t) == 1);
	CHECK(s->ops->owner_alive(s, &l, "host") == 0);
	CHECK(prewrite_of(s, "p", t, "p", STORE_PRIMARY) == 0);
	CHECK(s->ops->owner_alive(s, &l, "host") == 1);
	/* The commit point drops it; the owner may still be at the
	   secondaries, which only the lock's TTL can tell. */
	at = ts(s);
	CHECK(commit(s, "p", "c", t, at, STORE_SYNC | STORE_PRIMARY) == 0);
	CHECK(lease_cmd(cl, "PTTL", table, "p", t) == -2);
	CHECK(s->ops->owner_alive(s, &l, "host") == -1);
	CHECK(commit(s, "x", "c", t, at, 0) == 0);
	/* A rollback of the primary drops it too, for good. */
	t = l.start_ts = ts(s);
	CHECK(prewrite_of(s, "p", t, "p", STORE_PRIMARY) == 0);
	CHECK(prewrite_of(s, "x", t, "p", 0) == 0);
	CHECK(s->ops->owner_alive(s, &l, "host") == 1);
	CHECK(s->ops->rollback(s, str("p"), str("c"), t, STORE_PRIMARY) == 0);
	CHECK(lease_cmd(cl, "PTTL", table, "p", t) == -2);
	CHECK(s->ops->owner_alive(s, &l, "host") == 0);
	/* Keeping a lease that is gone does not bring it back. */
	CHECK(s->ops->lease_keep(s, str("p"), str("c"), t, 60000) == 0);
	CHECK(lease_cmd(cl, "PTTL", table, "p", t) == -2);
	codec_lock_dispose(&l);
	rc_close(cl);
	s->ops->dispose(s);
}

/*
 * Readers push a large transaction above their snapshots: the mark on
 * its primary, which only rises, which a heartbeat keeps, and which
 * its commit point will not pass under.
 */
static void
test_rs_push(const char *dir)
{
	struct lock_fate known;
	struct lock_rec l, b;
	struct store *s;
	perc_buf out = PERC_BUF_INIT;
	perc_ts t, r1, r2, at;
	const char *url = live_url();

	(void)dir;
	if (url == NULL || (s = fresh(url)) == NULL)
		return;
	put(s, "x", "c", "old");
	t = ts(s);
	CHECK(prewrite_lock(s, "p", t, "p", STORE_PRIMARY, 1) == 0);
	CHECK(prewrite_lock(s, "x", t, "p", 0, 1) == 0);
	at = ts(s);                     /* a commit timestamp taken ... */
	r1 = ts(s);                     /* ... before a reader's snapshot */
	r2 = ts(s);
	memset(&l, 0, sizeof(l));
	memset(&b, 0, sizeof(b));
	CHECK(s->ops->read(s, &out, str("x"), str("c"), r2, &b, NULL) ==
	    PERC_ELOCKED && b.large && b.start_ts == t);
	CHECK(s->ops->push(s, str("p"), str("c"), t, r2) == 0);
	CHECK(s->ops->push(s, str("p"), str("c"), t, r1) == 0);
	CHECK(s->ops->lease_keep(s, str("p"), str("c"), t, 5000) == 0);
	CHECK(s->ops->get_lock(s, &l, str("p"), str("c")) == 0);
	CHECK(l.large && l.min_commit_ts == r2 && l.start_ts == t);
	/* The reader reads past it: the old value. */
	known.start_ts = t;
	known.commit_ts = 0;
	CHECK(s->ops->read(s, &out, str("x"), str("c"), r2, &b, &known) == 0);
	CHECK(bytes_eq(buf_bytes(&out), str("old")));
	/* The commit point refuses at or below the mark, changing nothing. */
	CHECK(commit(s, "p", "c", t, at, STORE_SYNC | STORE_PRIMARY) ==
	    PERC_EPUSHED);
	CHECK(commit(s, "p", "c", t, r2, STORE_SYNC | STORE_PRIMARY) ==
	    PERC_EPUSHED);
	CHECK(s->ops->get_lock(s, &l, str("p"), str("c")) == 0);
	at = ts(s);
	CHECK(commit(s, "p", "c", t, at, STORE_SYNC | STORE_PRIMARY) == 0);
	CHECK(commit(s, "x", "c", t, at, 0) == 0);
	CHECK(at > r2 && reads(s, "x", "c", r2, "old") &&
	    reads(s, "x", "c", at, "v"));
	/* Decided: nothing to push. */
	CHECK(s->ops->push(s, str("p"), str("c"), t, ts(s)) ==
	    PERC_ENOTFOUND);
	codec_lock_dispose(&l);
	codec_lock_dispose(&b);
	perc_buf_dispose(&out);
	s->ops->dispose(s);
}

/*
 * A cell with hundreds of versions, and many rows in its bucket: the
 * scripts' walks of write records and the scan's pages go past one.
 */
static void
test_rs_deep(const char *dir)
{
	const char *url = live_url();
	perc_ts first_start, first_at = 0, fifth = 0, t, found = 0;
	struct store_scan sc;
	struct collect c;
	struct store *s;
	char v[16], row[16];
	int i, op = 0, n = 0;

	(void)dir;
	if (url == NULL || (s = fresh(url)) == NULL)
		return;
	first_start = ts(s);
	CHECK(prewrite(s, "deep", "c", OP_PUT, "v1", first_start) == 0);
	first_at = ts(s);
	CHECK(commit(s, "deep", "c", first_start, first_at, STORE_SYNC) == 0);
	for (i = 2; i <= 300; i++) {
		snprintf(v, sizeof(v), "v%d", i);
		t = put(s, "deep", "c", v);
		if (i == 5)
			fifth = t;
	}
	/* 300 rows that share the bucket of "deep", around it. */
	for (i = 0; n < 300; i++) {
		snprintf(row, sizeof(row), "d%05d", i);
		if (codec_crc32(0, row, strlen(row)) % 64 !=
		    codec_crc32(0, "deep", 4) % 64)
			continue;
		put(s, row, "c", "x");
		n++;
	}
	t = ts(s);
	CHECK(reads(s, "deep", "c", t, "v300"));
	CHECK(reads(s, "deep", "c", fifth, "v5"));
	CHECK(reads(s, "deep", "c", first_at, "v1"));
	CHECK(reads(s, "deep", "c", first_at - 1, NULL));
	CHECK(s->ops->find_commit(s, &found, &op, str("deep"), str("c"),
	    first_start) == 0 && found == first_at && op == OP_PUT);
	CHECK(prewrite(s, "deep", "c", OP_PUT, "stale", first_start + 1) ==
	    PERC_ECONFLICT);
	scan_init(&sc, &c, "de", NULL, t);
	CHECK(s->ops->scan(s, &sc) == 0 && sc.done && c.n == 1);
	CHECK(c.text.data != NULL && strcmp(c.text.data, "deep/c=v300 ") == 0);
	perc_buf_dispose(&c.text);
	scan_init(&sc, &c, "d", NULL, t);
	CHECK(s->ops->scan(s, &sc) == 0 && sc.done && c.n == 301);
	CHECK(c.text.data != NULL && strstr(c.text.data, "deep/c=v300 ") !=
	    NULL);
	perc_buf_dispose(&c.text);
	s->ops->dispose(s);
}

/* A damaged cell is an I/O error with one line, not a wrong answer. */
static void
test_rs_damaged(const char *dir)
{
	const char *url = live_url();
	perc_buf key = PERC_BUF_INIT, out = PERC_BUF_INIT;
	rc_cluster *cl = NULL;
	struct lock_rec b;
	struct store *s;
	redisReply *r;
	perc_bytes argv[4];
	char u[512], hash[200];
	const char *table;
	perc_ts at;

	(void)dir;
	if (url == NULL || (s = fresh_url(url, u, sizeof(u))) == NULL)
		return;
	memset(&b, 0, sizeof(b));
	at = put(s, "r", "c", "v");
	table = strrchr(u, '/') + 1;
	snprintf(hash, sizeof(hash), "perc:{%s:%u}:v", table,
	    (unsigned)(codec_crc32(0, "r", 1) % 64));
	CHECK(codec_key(&key, REGION_CELL, str("r"), str("c"), KIND_WRITE,
	    at) == 0);
	CHECK(rc_open(&cl, url, clock_deadline(LIVE_MS)) == 0);
	argv[0] = str("HSET");
	argv[1] = str(hash);
	argv[2] = buf_bytes(&key);
	argv[3] = str("garbage");
	if (cl == NULL)
		return;
	CHECK(rc_command(&r, NULL, cl, argv[1], 4, argv,
	    clock_deadline(LIVE_MS)) == 0);
	freeReplyObject(r);
	CHECK(s->ops->read(s, &out, str("r"), str("c"), at, &b, NULL) ==
	    PERC_EIO);
	CHECK(strstr(perc_errmsg(), "damaged") != NULL);
	printf("# %s\n", perc_errmsg());
	rc_close(cl);
	perc_buf_dispose(&key);
	perc_buf_dispose(&out);
	s->ops->dispose(s);
}

/* Two tables on one cluster never see each other. */
static void
test_rs_tables_apart(const char *dir)
{
	const char *url = live_url();
	struct store *a, *b;
	struct store_scan sc;
	struct collect c;
	perc_ts t;

	(void)dir;
	if (url == NULL || (a = fresh(url)) == NULL)
		return;
	if ((b = fresh(url)) == NULL) {
		a->ops->dispose(a);
		return;
	}
	put(a, "r", "c", "in a");
	t = ts(b);
	CHECK(reads(b, "r", "c", t + 100, NULL));
	CHECK(reads(a, "r", "c", ts(a), "in a"));
	scan_init(&sc, &c, "", NULL, t + 100);
	CHECK(b->ops->scan(b, &sc) == 0 && sc.done && c.n == 0);
	CHECK(a->ops->ts_last(a, &t, clock_deadline(LIVE_MS)) == 0);
	a->ops->dispose(a);
	b->ops->dispose(b);
}

/* init refuses a cluster one of whose masters could lose a commit. */
static void
test_rs_settings(const char *dir)
{
	const char *url = live_url();
	rc_cluster *cl = NULL;
	redisReply *r;
	perc_bytes argv[4];
	char u[512];
	int *nodes = NULL;
	size_t n = 0;

	(void)dir;
	if (url == NULL)
		return;
	CHECK(rc_open(&cl, url, clock_deadline(LIVE_MS)) == 0);
	if (cl == NULL)
		return;
	CHECK(rc_masters(&nodes, &n, cl, clock_deadline(LIVE_MS)) == 0 &&
	    n > 0);
	if (n == 0) {
		rc_close(cl);
		return;
	}
	argv[0] = str("CONFIG");
	argv[1] = str("SET");
	argv[2] = str("appendfsync");
	argv[3] = str("everysec");
	CHECK(rc_node_command(&r, cl, nodes[n - 1], 4, argv,
	    clock_deadline(LIVE_MS)) == 0);
	freeReplyObject(r);
	table_url(u, sizeof(u), url);
	CHECK(store_redis_create(u, env_of(".", LIVE_MS)) == PERC_EUSAGE);
	CHECK(strstr(perc_errmsg(), rc_node_name(cl, nodes[n - 1])) != NULL);
	CHECK(strstr(perc_errmsg(), "appendfsync everysec") != NULL);
	CHECK(strstr(perc_errmsg(), "appendfsync always") != NULL);
	printf("# %s\n", perc_errmsg());
	argv[3] = str("always");
	CHECK(rc_node_command(&r, cl, nodes[n - 1], 4, argv,
	    clock_deadline(LIVE_MS)) == 0);
	freeReplyObject(r);
	CHECK(store_redis_create(u, env_of(".", LIVE_MS)) == 0);
	free(nodes);
	rc_close(cl);
}

const struct unit_test store_redis_tests[] = {
	{ "redis store: bad URLs are usage errors", test_rs_url },
	{ "redis store: open needs init; init joins", test_rs_open_missing },
	{ "redis store: snapshots read by commit_ts", test_rs_snapshots },
	{ "redis store: locks, conflicts, known fates",
	  test_rs_locks_and_conflicts },
	{ "redis store: rollback records, idempotent commit, find_commit",
	  test_rs_rollback_commit },
	{ "redis store: scans merge buckets in byte order", test_rs_scan },
	{ "redis store: raw, locks, notify and acks",
	  test_rs_raw_locks_notify },
	{ "redis store: oracle strictly increasing", test_rs_oracle },
	{ "redis store: leases", test_rs_leases },
	{ "redis store: readers push large transactions", test_rs_push },
	{ "redis store: tables never see each other", test_rs_tables_apart },
	{ "redis store: deep histories and crowded buckets", test_rs_deep },
	{ "redis store: a damaged cell is an I/O error", test_rs_damaged },
	{ "redis store: init refuses unsafe settings", test_rs_settings },
	{ NULL, NULL }
};

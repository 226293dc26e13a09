/*
 * tests/unit/test_store_leveldb.c - what the LevelDB store keeps of a
 * cell, read by its raw keys: cell heads (codec.h) that perc show does
 * not print.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "codec.h"
#include "db.h"
#include "leveldb/kv.h"
#include "perc.h"
#include "store.h"
#include "writeset.h"
#include "unit.h"

static perc_bytes
str(const char *s)
{
	return bytes_of(s, strlen(s));
}

/* The LevelDB at dir/name, or NULL having said why. */
static struct kv *
open_kv(const char *dir, const char *name, unsigned flags)
{
	char path[4300], *err = NULL;
	struct kv *kv;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((kv = kv_open(path, flags, &err)) == NULL) {
		printf("# %s\n", err);
		free(err);
	}
	return kv;
}

/* How many keys of cell (row, "c") the store in dir holds. */
static int
raw_keys(const char *dir, const char *row)
{
	perc_buf prefix = PERC_BUF_INIT;
	struct kv_iter *it;
	const char *k;
	size_t klen;
	struct kv *db;
	int n = 0;

	if ((db = open_kv(dir, "store", 0)) == NULL)
		return -1;
	codec_cell_prefix(&prefix, REGION_CELL, str(row), str("c"));
	it = kv_iter_new(db);
	for (kv_iter_seek(it, prefix.data, prefix.len); kv_iter_valid(it);
	    kv_iter_next(it), n++) {
		k = kv_iter_key(it, &klen);
		if (klen < prefix.len || memcmp(k, prefix.data, prefix.len))
			break;
	}
	kv_iter_free(it);
	kv_close(db);
	perc_buf_dispose(&prefix);
	return n;
}

/*
 * A deleted cell, once gc passes its delete, leaves no key behind; its
 * head went with it.  A cell with a value keeps its head, its write
 * record and its data.
 */
static void
test_gc_drops_deleted_cells(const char *tmp)
{
	char dir[4200];
	uint64_t removed;
	perc_ts ts, sp;
	perc_db *db;

	snprintf(dir, sizeof(dir), "%s/db", tmp);
	CHECK(perc_db_init(dir, NULL, 0) == 0);
	CHECK(perc_db_open(&db, dir) == 0);
	CHECK(perc_set(&ts, db, str("gone"), str("c"), str("v")) == 0);
	CHECK(perc_set(&ts, db, str("kept"), str("c"), str("v")) == 0);
	CHECK(perc_del(&ts, db, str("gone"), str("c")) == 0);
	perc_db_close(db);
	/* Head, two write records, one data key. */
	CHECK(raw_keys(dir, "gone") == 4);
	CHECK(perc_db_open(&db, dir) == 0);
	CHECK(perc_gc(&sp, &removed, db, 0, 0) == 0);
	CHECK(removed == 2);
	perc_db_close(db);
	CHECK(raw_keys(dir, "gone") == 0);
	CHECK(raw_keys(dir, "kept") == 3);
}

/*
 * The change log's entries of a transaction of 2,000 cells, committed
 * in batches of many cells: each entry's value stays about a LevelDB
 * block, so a seek that lands on one (the walk of an empty lock index
 * lands on the log's first) reads that, not a batch's worth.
 */
static void
test_log_entries_stay_small(const char *tmp)
{
	char dir[4200], row[32];
	struct kv_iter *it;
	const char *k;
	size_t klen, vlen, most = 0, entries = 0;
	struct kv *kv;
	perc_txn *txn;
	perc_db *db;
	perc_ts ts;
	int i;

	snprintf(dir, sizeof(dir), "%s/log", tmp);
	CHECK(perc_db_init(dir, NULL, 0) == 0);
	CHECK(perc_db_open(&db, dir) == 0);
	CHECK(perc_txn_begin(&txn, db) == 0);
	for (i = 0; i < 2000; i++) {
		snprintf(row, sizeof(row), "row%09d", i);
		CHECK(perc_txn_set(txn, str(row), str("c"), str("v")) == 0);
	}
	CHECK(perc_txn_commit(&ts, txn) == 0);
	perc_txn_free(txn);
	perc_db_close(db);
	if ((kv = open_kv(dir, "store", 0)) == NULL) {
		CHECK(0);
		return;
	}
	it = kv_iter_new(kv);
	for (kv_iter_seek(it, (const char []){ REGION_LOG }, 1);
	    kv_iter_valid(it); kv_iter_next(it), entries++) {
		k = kv_iter_key(it, &klen);
		if (k[0] != REGION_LOG)
			break;
		(void)kv_iter_value(it, &vlen);
		if (vlen > most)
			most = vlen;
	}
	kv_iter_free(it);
	kv_close(kv);
	CHECK(entries > 1);
	CHECK(most <= 8192);
}

/* Where a seek of it to target lands: the key, or "" at the end. */
static const char *
seek_to(struct kv_iter *it, const char *target)
{
	static char at[16];
	const char *k;
	size_t klen;

	kv_iter_seek(it, target, strlen(target));
	if (!kv_iter_valid(it))
		return "";
	k = kv_iter_key(it, &klen);
	snprintf(at, sizeof(at), "%.*s", (int)klen, k);
	return at;
}

/*
 * An iterator skips a seek that its last one shows would not move it
 * (kv.cc): each seek still lands where a fresh one would, before, at
 * and past where it stands, after a step, and past the end.
 */
static void
test_seek_lands_as_fresh(const char *tmp)
{
	char *err = NULL;
	struct kv_batch *b = kv_batch_new();
	struct kv_iter *it;
	struct kv *kv;

	if ((kv = open_kv(tmp, "kv", KV_CREATE)) == NULL) {
		CHECK(0);
		kv_batch_free(b);
		return;
	}
	kv_batch_put(b, "b", 1, "", 0);
	kv_batch_put(b, "d", 1, "", 0);
	CHECK(kv_write(kv, b, 0, &err) == 0);
	it = kv_iter_new(kv);
	CHECK(strcmp(seek_to(it, "a"), "b") == 0);
	CHECK(strcmp(seek_to(it, "b"), "b") == 0);
	CHECK(strcmp(seek_to(it, "a"), "b") == 0);
	CHECK(strcmp(seek_to(it, "c"), "d") == 0);
	CHECK(strcmp(seek_to(it, "c"), "d") == 0);
	kv_iter_next(it);
	CHECK(!kv_iter_valid(it));
	CHECK(strcmp(seek_to(it, "d"), "d") == 0);
	CHECK(strcmp(seek_to(it, "e"), "") == 0);
	CHECK(strcmp(seek_to(it, "f"), "") == 0);
	CHECK(strcmp(seek_to(it, "c"), "d") == 0);
	CHECK(strcmp(seek_to(it, ""), "b") == 0);
	kv_iter_free(it);
	kv_batch_free(b);
	kv_close(kv);
}

/*
 * A one-step commit of BIG_CELLS cells, 1.2 MB: its change log entries
 * are written apart from its cells (leveldb.h's LOG_OP_APART).
 */
#define BIG_CELLS 12000

static void
commit_big(perc_db *db, perc_ts *ts)
{
	char row[32], value[100];
	perc_txn *txn;
	int i;

	memset(value, 'v', sizeof(value));
	CHECK(perc_txn_begin(&txn, db) == 0);
	for (i = 0; i < BIG_CELLS; i++) {
		snprintf(row, sizeof(row), "row%09d", i);
		CHECK(perc_txn_set(txn, str(row), str("c"),
		    bytes_of(value, sizeof(value))) == 0);
	}
	CHECK(perc_txn_commit(ts, txn) == 0);
	perc_txn_free(txn);
}

/*
 * The tables of LevelDB's that hold both change log entries and cells,
 * from its leveldb.sstables property: each line of a table gives its
 * first key, then "..", then its last, each after a quote.
 */
static int
tables_across(const char *dir)
{
	char *v, *line, *next, *last;
	struct kv *kv;
	int n = 0;

	if ((kv = open_kv(dir, "store", 0)) == NULL)
		return -1;
	v = kv_property(kv, "leveldb.sstables");
	for (line = v; line != NULL; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if ((line = strstr(line, "['")) == NULL ||
		    (last = strstr(line, ".. '")) == NULL)
			continue;
		n += line[2] == REGION_LOG && last[4] == REGION_CELL;
	}
	free(v);
	kv_close(kv);
	return n;
}

/* The changes perc_log_round gives, counted. */
static int
count_change(void *arg, perc_ts commit_ts, perc_bytes row, perc_bytes col,
    int is_put, perc_bytes value)
{
	(void)commit_ts;
	(void)row;
	(void)col;
	(void)is_put;
	(void)value;
	(*(size_t *)arg)++;
	return 0;
}

static int
log_changes(perc_db *db, size_t *n)
{
	perc_log *lg;
	perc_ts resolved;
	int rc;

	*n = 0;
	if ((rc = perc_log_open(&lg, db, 1, 0, str(""), NULL)) < 0)
		return rc;
	rc = perc_log_round(lg, &resolved, count_change, n);
	perc_log_free(lg);
	return rc;
}

/*
 * A big one-step commit's entries go in a table of their own: in one
 * with its cells, they would make it span every cell between the two
 * regions, which LevelDB's compactions of cells would rewrite with it.
 * The log gives each cell once.
 */
static void
test_big_commit_log_apart(const char *tmp)
{
	char dir[4200];
	perc_db *db;
	perc_ts ts;
	size_t n;

	snprintf(dir, sizeof(dir), "%s/apart", tmp);
	CHECK(perc_db_init(dir, NULL, 0) == 0);
	CHECK(perc_db_open(&db, dir) == 0);
	commit_big(db, &ts);
	CHECK(log_changes(db, &n) == 0);
	CHECK(n == BIG_CELLS);
	perc_db_close(db);
	CHECK(tables_across(dir) == 0);
}

/*
 * What a crash between a big one-step commit's entries and its cells
 * leaves, the entries alone (here: the cells' keys removed), is not in
 * the log, and reading past it is no error.
 */
static void
test_apart_entries_without_commit(const char *tmp)
{
	char dir[4200], *err = NULL;
	struct kv_batch *b;
	struct kv_iter *it;
	const char *k;
	size_t klen, n;
	struct kv *kv;
	perc_db *db;
	perc_ts ts;

	snprintf(dir, sizeof(dir), "%s/orphan", tmp);
	CHECK(perc_db_init(dir, NULL, 0) == 0);
	CHECK(perc_db_open(&db, dir) == 0);
	commit_big(db, &ts);
	perc_db_close(db);
	if ((kv = open_kv(dir, "store", 0)) == NULL) {
		CHECK(0);
		return;
	}
	b = kv_batch_new();
	it = kv_iter_new(kv);
	for (kv_iter_seek(it, (const char []){ REGION_CELL }, 1);
	    kv_iter_valid(it); kv_iter_next(it)) {
		k = kv_iter_key(it, &klen);
		if (k[0] != REGION_CELL)
			break;
		kv_batch_delete(b, k, klen);
	}
	kv_iter_free(it);
	CHECK(kv_write(kv, b, 1, &err) == 0);
	kv_batch_free(b);
	kv_close(kv);
	CHECK(perc_db_open(&db, dir) == 0);
	CHECK(perc_set(&ts, db, str("after"), str("c"), str("v")) == 0);
	CHECK(log_changes(db, &n) == 0);
	CHECK(n == 1);
	perc_db_close(db);
}

/* How many bulk commits' markers the lock index of the store in dir
   holds (lib/leveldb/head.c's ldb_marker_key). */
static int
markers(const char *dir)
{
	struct kv_iter *it;
	const char *k;
	size_t klen;
	struct kv *db;
	int n = 0;

	if ((db = open_kv(dir, "store", 0)) == NULL)
		return -1;
	it = kv_iter_new(db);
	for (kv_iter_seek(it, "K\0\0", 3); kv_iter_valid(it) &&
	    (k = kv_iter_key(it, &klen), klen == 11 && k[0] == 'K' &&
	    k[1] == 0 && k[2] == 0); kv_iter_next(it))
		n++;
	kv_iter_free(it);
	kv_close(db);
	return n;
}

static int
count_lock(void *arg, perc_bytes row, perc_bytes col,
    const struct lock_rec *lock)
{
	(void)row;
	(void)col;
	(void)lock;
	(*(int *)arg)++;
	return 0;
}

/* Prewrite row/c of a bulk commit (STORE_BULK, plus flags). */
static int
bulk_prewrite(struct store *s, const char *row, const struct lock_rec *lock,
    unsigned flags)
{
	struct lock_rec blocker;
	struct write w;
	perc_ts at;
	int rc;

	memset(&w, 0, sizeof(w));
	memset(&blocker, 0, sizeof(blocker));
	w.op = OP_PUT;
	buf_set(&w.row, row, strlen(row));
	buf_set(&w.col, "c", 1);
	buf_set(&w.value, "v", 1);
	rc = s->ops->prewrite(s, &at, &w, lock, STORE_BULK | flags,
	    &blocker);
	perc_buf_dispose(&w.row);
	perc_buf_dispose(&w.col);
	perc_buf_dispose(&w.value);
	codec_lock_dispose(&blocker);
	return rc;
}

/* A process that has ended: the owner of no lock. */
static uint32_t
dead_pid(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	return (uint32_t)pid;
}

/*
 * A bulk commit's secondaries have no entry of their own in the lock
 * index: its marker stands for them.  Its owner dead, every walk of
 * the locks walks the cells and finds them all; the marker goes with
 * the walk that finds none of its locks left.  A committer that
 * finishes removes it itself.
 */
static void
test_bulk_commit_marker(const char *tmp)
{
	struct lock_rec lock;
	struct store *s;
	char dir[4200];
	perc_db *db;
	int n = 0, m = 0;

	snprintf(dir, sizeof(dir), "%s/db", tmp);
	CHECK(perc_db_init(dir, NULL, 0) == 0);
	CHECK(perc_db_open(&db, dir) == 0);
	s = db->store;
	memset(&lock, 0, sizeof(lock));
	lock.op = OP_PUT;
	lock.start_ts = 100;
	lock.wall_ms = (uint64_t)clock_wall_ms();
	lock.ttl_ms = 600000;
	lock.pid = dead_pid();
	buf_set(&lock.host, db->host, strlen(db->host));
	buf_set(&lock.primary_row, "p", 1);
	buf_set(&lock.primary_col, "c", 1);
	CHECK(db_acquire(db, clock_deadline(5000)) == 0);
	CHECK(bulk_prewrite(s, "p", &lock, STORE_PRIMARY) == 0);
	CHECK(bulk_prewrite(s, "s1", &lock, 0) == 0);
	CHECK(bulk_prewrite(s, "s2", &lock, 0) == 0);
	CHECK(s->ops->locks(s, count_lock, &n) == 0 && n == 3);
	CHECK(s->ops->locks_by_txn(s, count_lock, &m) == 0 && m == 3);
	CHECK(s->ops->rollback(s, str("p"), str("c"), 100, STORE_PRIMARY) == 0);
	CHECK(s->ops->rollback(s, str("s1"), str("c"), 100, 0) == 0);
	n = 0;
	CHECK(s->ops->locks(s, count_lock, &n) == 0 && n == 1);
	db_release(db);
	CHECK(markers(dir) == 1);
	CHECK(db_acquire(db, clock_deadline(5000)) == 0);
	CHECK(s->ops->rollback(s, str("s2"), str("c"), 100, 0) == 0);
	n = 0;
	CHECK(s->ops->locks_by_txn(s, count_lock, &n) == 0 && n == 0);
	db_release(db);
	CHECK(markers(dir) == 0);
	/* A committer's own end. */
	lock.start_ts = 200;
	CHECK(db_acquire(db, clock_deadline(5000)) == 0);
	CHECK(bulk_prewrite(s, "q", &lock, STORE_PRIMARY) == 0);
	db_release(db);
	CHECK(markers(dir) == 1);
	CHECK(db_acquire(db, clock_deadline(5000)) == 0);
	CHECK(s->ops->bulk_done(s, 200) == 0);
	db_release(db);
	CHECK(markers(dir) == 0);
	codec_lock_dispose(&lock);
	perc_db_close(db);
}

const struct unit_test store_leveldb_tests[] = {
	{ "leveldb store: an iterator's seeks land where fresh ones would",
	    test_seek_lands_as_fresh },
	{ "leveldb store: a big one-step commit's change log entries go in "
	    "a table apart from its cells", test_big_commit_log_apart },
	{ "leveldb store: entries written apart whose commit never went in "
	    "are not in the log", test_apart_entries_without_commit },
	{ "leveldb store: a transaction's change log entries stay about a "
	    "block each", test_log_entries_stay_small },
	{ "leveldb store: a bulk commit's marker in the lock index, found, "
	    "walked and removed", test_bulk_commit_marker },
	{ "leveldb store: gc leaves no key of a deleted cell, head and all",
	    test_gc_drops_deleted_cells },
	{ NULL, NULL }
};

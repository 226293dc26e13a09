/*
 * tests/bench/bench.c - the measurements make bench cannot take from a
 * shell: exec latency, in-process transfers (through libperc and
 * straight on LevelDB), bulk loading, and the store's open time.
 *
 *   bench lat N CMD [ARG]...      median wall ms of N runs of CMD
 *   bench perc DIR N              libperc 2-cell transfers per second
 *   bench raw DIR N SYNC          the same protocol straight on LevelDB
 *   bench reads DIR N             libperc point reads (fresh snapshots)
 *                                 per second, of 1000 cells
 *   bench rawreads DIR N          leveldb_get per second, of 1000 keys
 *   bench load DIR CELLS          fill DIR with CELLS cells, 1000 a txn,
 *                                 then let compaction finish
 *   bench open DIR N              median ms to open and close the store
 *   bench settle DIR              compact DIR's store in full, as a
 *                                 baseline for a store left as it was
 *   bench wake DIR N              median us of a one-cell commit to
 *                                 observed column doc (it wakes the
 *                                 waiters), and of the wakeup alone,
 *                                 with a waiter watching
 *   bench holds FILE PID          while PID lives, the longest ms any
 *                                 one process held FILE's flock, and
 *                                 how many holds of 250 ms or more:
 *                                 /proc/locks read every 0.5 ms, so
 *                                 the holders are measured untouched
 */
#include <inttypes.h>
#include <leveldb/c.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "perc.h"

static int
lat(int n, char **argv)
{
	double *t = calloc((size_t)n, sizeof(*t)), start;
	int i, status;
	pid_t pid;

	for (i = 0; i < n; i++) {
		start = now_ms();
		if ((pid = fork()) == 0) {
			if (freopen("/dev/null", "w", stdout) == NULL)
				_exit(127);
			execvp(argv[0], argv);
			_exit(127);
		}
		waitpid(pid, &status, 0);
		t[i] = now_ms() - start;
		if (!WIFEXITED(status) || WEXITSTATUS(status) > 1) {
			fprintf(stderr, "bench: %s failed\n", argv[0]);
			return 1;
		}
	}
	printf("%.3f\n", median(t, n));
	free(t);
	return 0;
}

/* Transfers of 1 between accounts a and b through libperc. */
static int
perc_transfers(const char *dir, int n)
{
	perc_buf va = PERC_BUF_INIT, vb = PERC_BUF_INIT;
	perc_db *db;
	perc_txn *txn;
	perc_ts ts;
	char num[32];
	double start;
	int i;

	if (perc_db_open(&db, dir) < 0 || perc_db_hold(db) < 0)
		die("open");
	perc_set(&ts, db, b("a"), b("bal"), b("1000000"));
	perc_set(&ts, db, b("b"), b("bal"), b("0"));
	start = now_ms();
	for (i = 0; i < n; i++) {
		if (perc_txn_begin_local(&txn, db) < 0 ||
		    perc_txn_get(&va, txn, b("a"), b("bal"), 0) < 0 ||
		    perc_txn_get(&vb, txn, b("b"), b("bal"), 0) < 0)
			die("read");
		snprintf(num, sizeof(num), "%ld", atol(va.data) - 1);
		perc_txn_set(txn, b("a"), b("bal"), b(num));
		snprintf(num, sizeof(num), "%ld", atol(vb.data) + 1);
		perc_txn_set(txn, b("b"), b("bal"), b(num));
		if (perc_txn_commit(&ts, txn) < 0)
			die("commit");
		perc_txn_free(txn);
	}
	printf("%.0f\n", n / ((now_ms() - start) / 1e3));
	perc_buf_dispose(&va);
	perc_buf_dispose(&vb);
	perc_db_release(db);
	perc_db_close(db);
	return 0;
}

static void
put(leveldb_writebatch_t *wb, const char *k, const char *v)
{
	leveldb_writebatch_put(wb, k, strlen(k), v, strlen(v));
}

/*
 * The 2-cell Percolator transfer straight on LevelDB with an in-memory
 * oracle: read both cells, prewrite both (lock and data), commit the
 * primary (synced when sync), then the secondary.  The baseline for
 * what libperc adds.
 */
static int
raw_transfers(const char *dir, int n, int sync)
{
	leveldb_options_t *o = leveldb_options_create();
	leveldb_readoptions_t *r = leveldb_readoptions_create();
	leveldb_writeoptions_t *ws = leveldb_writeoptions_create();
	leveldb_writeoptions_t *w = leveldb_writeoptions_create();
	leveldb_writebatch_t *wb = leveldb_writebatch_create();
	char *err = NULL, *v, key[64], val[64];
	uint64_t ts = 1;
	double start;
	size_t len;
	leveldb_t *db;
	int i, c;

	leveldb_options_set_create_if_missing(o, 1);
	leveldb_writeoptions_set_sync(ws, (unsigned char)sync);
	if ((db = leveldb_open(o, dir, &err)) == NULL)
		return fprintf(stderr, "bench: %s\n", err), 1;
	start = now_ms();
	for (i = 0; i < n; i++) {
		uint64_t start_ts = ts++, commit_ts;

		for (c = 0; c < 2; c++) {       /* read: lock, write, data */
			snprintf(key, sizeof(key), "%c:lock", 'a' + c);
			free(leveldb_get(db, r, key, strlen(key), &len, &err));
			snprintf(key, sizeof(key), "%c:write", 'a' + c);
			free(leveldb_get(db, r, key, strlen(key), &len, &err));
			snprintf(key, sizeof(key), "%c:data", 'a' + c);
			v = leveldb_get(db, r, key, strlen(key), &len, &err);
			free(v);
		}
		for (c = 0; c < 2; c++) {       /* prewrite */
			leveldb_writebatch_clear(wb);
			snprintf(key, sizeof(key), "%c:lock", 'a' + c);
			put(wb, key, "primary");
			snprintf(key, sizeof(key), "%c:data:%" PRIu64, 'a' + c,
			    start_ts);
			snprintf(val, sizeof(val), "%d", i);
			put(wb, key, val);
			leveldb_write(db, w, wb, &err);
		}
		commit_ts = ts++;
		for (c = 0; c < 2; c++) {       /* commit primary, secondary */
			leveldb_writebatch_clear(wb);
			snprintf(key, sizeof(key), "%c:lock", 'a' + c);
			leveldb_writebatch_delete(wb, key, strlen(key));
			snprintf(key, sizeof(key), "%c:write:%" PRIu64, 'a' + c,
			    commit_ts);
			put(wb, key, "put");
			leveldb_write(db, c == 0 ? ws : w, wb, &err);
		}
	}
	printf("%.0f\n", n / ((now_ms() - start) / 1e3));
	leveldb_close(db);
	leveldb_writebatch_destroy(wb);
	leveldb_writeoptions_destroy(w);
	leveldb_writeoptions_destroy(ws);
	leveldb_readoptions_destroy(r);
	leveldb_options_destroy(o);
	return 0;
}

#define READ_CELLS 1000

/* Point reads of READ_CELLS cells in turn, each a fresh snapshot. */
static int
perc_reads(const char *dir, int n)
{
	perc_buf v = PERC_BUF_INIT;
	perc_txn *txn;
	perc_db *db;
	perc_ts ts;
	char row[32];
	double start;
	int i;

	if (perc_db_open(&db, dir) < 0 || perc_db_hold(db) < 0 ||
	    perc_txn_begin_local(&txn, db) < 0)
		die("open");
	for (i = 0; i < READ_CELLS; i++) {
		snprintf(row, sizeof(row), "row%06d", i);
		if (perc_txn_set(txn, b(row), b("c"), b("a value")) < 0)
			die("set");
	}
	if (perc_txn_commit(&ts, txn) < 0)
		die("commit");
	perc_txn_free(txn);
	start = now_ms();
	for (i = 0; i < n; i++) {
		snprintf(row, sizeof(row), "row%06d", i % READ_CELLS);
		if (perc_snapshot_get(&v, db, 0, b(row), b("c")) < 0)
			die("get");
	}
	printf("%.0f\n", n / ((now_ms() - start) / 1e3));
	perc_buf_dispose(&v);
	perc_db_close(db);
	return 0;
}

/* The same reads straight on LevelDB: one get of a key each. */
static int
raw_reads(const char *dir, int n)
{
	leveldb_options_t *o = leveldb_options_create();
	leveldb_readoptions_t *r = leveldb_readoptions_create();
	leveldb_writeoptions_t *w = leveldb_writeoptions_create();
	char *err = NULL, key[32];
	double start;
	size_t len;
	leveldb_t *db;
	int i;

	leveldb_options_set_create_if_missing(o, 1);
	if ((db = leveldb_open(o, dir, &err)) == NULL)
		return fprintf(stderr, "bench: %s\n", err), 1;
	for (i = 0; i < READ_CELLS; i++) {
		snprintf(key, sizeof(key), "row%06d:c", i);
		leveldb_put(db, w, key, strlen(key), "a value", 7, &err);
	}
	start = now_ms();
	for (i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "row%06d:c", i % READ_CELLS);
		free(leveldb_get(db, r, key, strlen(key), &len, &err));
	}
	printf("%.0f\n", n / ((now_ms() - start) / 1e3));
	leveldb_close(db);
	leveldb_writeoptions_destroy(w);
	leveldb_readoptions_destroy(r);
	leveldb_options_destroy(o);
	return 0;
}

/*
 * Write the first and last keys again, as they are: LevelDB compacts a
 * range only into the deepest level with tables, leaving that level's
 * tables unmerged, unless a table above spans them (see compact_all in
 * lib/leveldb/settle.c).
 */
static void
span_all(leveldb_t *db)
{
	leveldb_readoptions_t *r = leveldb_readoptions_create();
	leveldb_writeoptions_t *w = leveldb_writeoptions_create();
	leveldb_writebatch_t *wb = leveldb_writebatch_create();
	leveldb_iterator_t *it = leveldb_create_iterator(db, r);
	const char *k, *v;
	size_t klen, vlen;
	char *err = NULL;
	int end;

	for (end = 0; end < 2; end++) {
		if (end == 0)
			leveldb_iter_seek_to_first(it);
		else
			leveldb_iter_seek_to_last(it);
		if (!leveldb_iter_valid(it))
			break;
		k = leveldb_iter_key(it, &klen);
		v = leveldb_iter_value(it, &vlen);
		leveldb_writebatch_put(wb, k, klen, v, vlen);
	}
	leveldb_iter_destroy(it);
	leveldb_write(db, w, wb, &err);
	if (err != NULL)
		die(err);
	leveldb_writebatch_destroy(wb);
	leveldb_writeoptions_destroy(w);
	leveldb_readoptions_destroy(r);
}

/*
 * Let LevelDB finish the compactions a bulk load leaves owing, so the
 * reads measured next see the store in its steady state instead of each
 * paying part of that debt when it closes the store.
 */
static int
settle(const char *dir)
{
	leveldb_options_t *o = leveldb_options_create();
	char path[4096], *err = NULL;
	leveldb_t *db;

	snprintf(path, sizeof(path), "%s/store", dir);
	if ((db = leveldb_open(o, path, &err)) == NULL) {
		fprintf(stderr, "bench: %s\n", err);
		return 1;
	}
	span_all(db);
	leveldb_compact_range(db, NULL, 0, NULL, 0);
	leveldb_close(db);
	/* Once more: the new manifest then holds the result, not its history. */
	if ((db = leveldb_open(o, path, &err)) == NULL) {
		fprintf(stderr, "bench: %s\n", err);
		return 1;
	}
	leveldb_close(db);
	leveldb_options_destroy(o);
	return 0;
}

static int
load(const char *dir, long cells)
{
	perc_db *db;
	perc_txn *txn;
	perc_ts ts;
	char row[32];
	long i;

	if (perc_db_open(&db, dir) < 0 || perc_db_hold(db) < 0)
		die("open");
	for (i = 0; i < cells; i++) {
		if (i % 1000 == 0 && perc_txn_begin(&txn, db) < 0)
			die("begin");
		snprintf(row, sizeof(row), "row%09ld", i);
		if (perc_txn_set(txn, b(row), b("c"), b("value")) < 0)
			die("set");
		if ((i % 1000 == 999 || i == cells - 1) &&
		    (perc_txn_commit(&ts, txn) < 0 || (perc_txn_free(txn), 0)))
			die("commit");
	}
	perc_db_release(db);
	perc_db_close(db);
	return settle(dir);
}

static int
open_time(const char *dir, int n)
{
	double *t = calloc((size_t)n, sizeof(*t)), start;
	perc_db *db;
	int i;

	if (perc_db_open(&db, dir) < 0)
		die("open");
	for (i = 0; i < n; i++) {
		start = now_ms();
		if (perc_db_hold(db) < 0)
			die("hold");
		perc_db_release(db);
		t[i] = now_ms() - start;
	}
	printf("%.3f\n", median(t, n));
	perc_db_close(db);
	free(t);
	return 0;
}

/*
 * The writer's cost of the wakeup: a one-cell commit to observed column
 * doc wakes the waiters after it (perc_notify_wake); this process
 * watches too, as a waiting runner would.  Median us of each.
 */
static int
wake_cost(const char *dir, int n)
{
	double *c = calloc((size_t)n, sizeof(*c));
	double *w = calloc((size_t)n, sizeof(*w)), start;
	perc_bytes row, col = { "doc", 3 }, val = { "v", 1 };
	char key[32];
	perc_db *db;
	perc_ts ts;
	int i;

	if (c == NULL || w == NULL || perc_db_open(&db, dir) < 0) {
		fprintf(stderr, "bench: %s\n", perc_errmsg());
		return 1;
	}
	perc_notify_wait(db, 0, NULL);  /* the first call only watches */
	for (i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "w%08d", i);
		row.data = key;
		row.len = strlen(key);
		start = now_ms();
		if (perc_set(&ts, db, row, col, val) < 0) {
			fprintf(stderr, "bench: %s\n", perc_errmsg());
			return 1;
		}
		c[i] = now_ms() - start;
		start = now_ms();
		perc_notify_wake(db);
		w[i] = now_ms() - start;
	}
	printf("%.1f %.1f\n", median(c, n) * 1000, median(w, n) * 1000);
	perc_db_close(db);
	free(c);
	free(w);
	return 0;
}

/* The pid holding an exclusive flock on inode dev:ino, or 0. */
static long
flock_holder(const char *devino)
{
	char line[256], type[16], mode[16], how[16], id[64];
	long pid, holder = 0;
	FILE *f = fopen("/proc/locks", "r");

	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "%*s %15s %15s %15s %ld %63s", type, mode, how,
		    &pid, id) == 5 && strcmp(type, "FLOCK") == 0 &&
		    strcmp(how, "WRITE") == 0 && strcmp(id, devino) == 0)
			holder = pid;
	if (f != NULL)
		fclose(f);
	return holder;
}

static int
holds(const char *file, pid_t watched)
{
	struct stat st;
	char devino[64];
	double since = now_ms(), longest = 0, t;
	long holder = 0, h;
	int n = 0, long_holds = 0;

	if (stat(file, &st) != 0) {
		perror(file);
		return 1;
	}
	snprintf(devino, sizeof(devino), "%02x:%02x:%lu", major(st.st_dev),
	    minor(st.st_dev), (unsigned long)st.st_ino);
	while (kill(watched, 0) == 0) {
		h = flock_holder(devino);
		t = now_ms();
		if (h != holder) {
			if (holder != 0) {
				n++;
				long_holds += t - since >= 250;
				if (t - since > longest)
					longest = t - since;
			}
			holder = h;
			since = t;
		}
		usleep(500);
	}
	printf("%.0f %d %d\n", longest, long_holds, n);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc > 3 && strcmp(argv[1], "lat") == 0)
		return lat(atoi(argv[2]), argv + 3);
	if (argc == 4 && strcmp(argv[1], "perc") == 0)
		return perc_transfers(argv[2], atoi(argv[3]));
	if (argc == 5 && strcmp(argv[1], "raw") == 0)
		return raw_transfers(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (argc == 4 && strcmp(argv[1], "reads") == 0)
		return perc_reads(argv[2], atoi(argv[3]));
	if (argc == 4 && strcmp(argv[1], "rawreads") == 0)
		return raw_reads(argv[2], atoi(argv[3]));
	if (argc == 4 && strcmp(argv[1], "load") == 0)
		return load(argv[2], atol(argv[3]));
	if (argc == 4 && strcmp(argv[1], "open") == 0)
		return open_time(argv[2], atoi(argv[3]));
	if (argc == 3 && strcmp(argv[1], "settle") == 0)
		return settle(argv[2]);
	if (argc == 4 && strcmp(argv[1], "wake") == 0)
		return wake_cost(argv[2], atoi(argv[3]));
	if (argc == 4 && strcmp(argv[1], "holds") == 0)
		return holds(argv[2], (pid_t)atoi(argv[3]));
	fprintf(stderr, "usage: bench lat|perc|raw|reads|rawreads|load|open|"
	    "settle|wake|holds ...\n");
	return 2;
}

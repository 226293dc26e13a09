/*
 * lib/db.c - an open data directory: its store taken and let go, the
 * columns its config observes, the timestamps it hands out, and its
 * part in gc (its commits counted, its open starts published).  Made
 * by init.c; its config is config.c's, its store backend.c's choice,
 * gc's files gc.c's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "clock.h"
#include "config.h"
#include "db.h"
#include "disk.h"
#include "error.h"
#include "gc.h"
#include "owner.h"

static void count_flush(perc_db *db);

int
perc_db_open(perc_db **out, const char *path)
{
	const struct backend *be;
	struct store_env env;
	perc_db *db;
	struct stat st;
	char *store = NULL;
	int rc;

	*out = NULL;
	if ((rc = clock_env_check()) < 0)
		return rc;
	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		return config_not_a_db(path);
	if ((db = calloc(1, sizeof(*db))) == NULL ||
	    (db->dir = strdup(path)) == NULL) {
		free(db);
		return error_set(PERC_EIO, "out of memory");
	}
	owner_init(&db->owner);
	db->runner_fd = -1;
	db->timeout_ms = clock_env_ms("PERC_LOCK_TIMEOUT", 10000);
	db->ttl_ms = (uint32_t)clock_env_ms("PERC_LOCK_TTL", 30000);
	if (gethostname(db->host, sizeof(db->host) - 1) != 0)
		strcpy(db->host, "localhost");
	if ((rc = config_read(&db->observed, &store, path, &db->config_st,
	    &db->format)) == 0 && (rc = backend_of(&be, store)) == 0) {
		backend_env_init(&env, db->dir, db->timeout_ms);
		rc = be->open(&db->store, store, &env);
	}
	db->store_url = store;
	if (rc < 0) {
		perc_db_close(db);
		return rc;
	}
	*out = db;
	return 0;
}

void
perc_db_close(perc_db *db)
{
	if (db == NULL)
		return;
	if (db->store != NULL) {
		count_flush(db);
		db_open_note(db, 1);
		db->store->ops->dispose(db->store);
	}
	owner_close(&db->owner);
	if (db->runner_fd >= 0)
		close(db->runner_fd);
	observed_free(&db->observed);
	free(db->store_url);
	free(db->dir);
	free(db);
}

int
db_is_strong(const perc_db *db, perc_bytes col)
{
	return observed_has(db->observed.strong, db->observed.nstrong, col);
}

int
db_is_weak(const perc_db *db, perc_bytes col)
{
	return observed_has(db->observed.weak, db->observed.nweak, col);
}

int
db_is_observed(const perc_db *db, perc_bytes col)
{
	return db_is_strong(db, col) || db_is_weak(db, col);
}

int
db_refuse_weak(const perc_db *db, perc_bytes col, const char *doing)
{
	if (!db_is_weak(db, col))
		return 0;
	return error_set(PERC_EUSAGE, "column '%s' is weakly observed and "
	    "holds no values, so it cannot be %s; notify a cell of it "
	    "with 'perc notify ROW COLUMN'", error_quote(col), doing);
}

int
db_require_weak(const perc_db *db, perc_bytes col)
{
	if (db_is_weak(db, col))
		return 0;
	if (db_is_strong(db, col))
		return error_set(PERC_EUSAGE, "column '%s' is strongly "
		    "observed: a write to it notifies, and perc notify is "
		    "for weakly observed columns only", error_quote(col));
	return error_set(PERC_EUSAGE, "column '%s' is not weakly observed; "
	    "perc init --observe-weak COLUMN makes one", error_quote(col));
}

/*
 * Mark a config of an older format ours before the store is written,
 * the store's data brought up first (store_ops.upgrade): read it
 * again, whole, and write it back (init --observe, which changes it,
 * holds the store too).  A config that cannot be written, or a store
 * that cannot be brought up, on a full disk, leaves the store
 * read-only, as a full disk does: reads go on, a write says what is
 * wrong, and the next command tries again.  A crash between the two
 * leaves the old format, so the next one brings the store up again.
 */
static void
upgrade_config(perc_db *db, const char *path)
{
	const struct store_ops *ops = db->store->ops;
	struct observed o;
	char *store;
	int rc, format = 0;

	rc = ops->upgrade != NULL ? ops->upgrade(db->store, db->format) : 0;
	if (rc == 0 && (rc = config_read(&o, &store, db->dir, NULL,
	    NULL)) == 0) {
		format = config_format(store, &o, 1);
		rc = config_write(db->dir, store, &o, format);
		observed_free(&o);
		free(store);
	}
	if (rc < 0) {
		db->store->read_only = errno != 0 ? errno : EIO;
		return;
	}
	db->format = format;
	if (stat(path, &db->config_st) != 0)
		memset(&db->config_st, 0, sizeof(db->config_st));
}

/*
 * Take the store.  The config is checked again under it, and read again
 * if init --observe has replaced it (it does so holding the store), so
 * a commit always notifies the columns observed when it writes; one of
 * a format older than the store's data needs is marked up.
 */
int
db_acquire(perc_db *db, int64_t deadline_ms)
{
	char path[4096];
	struct stat st;
	int rc;

	if (db->store->ops->held(db->store))
		return 0;
	if ((rc = db->store->ops->acquire(db->store, deadline_ms)) < 0)
		return rc;
	disk_path(path, sizeof(path), db->dir, "config");
	if (stat(path, &st) != 0 || st.st_ino != db->config_st.st_ino ||
	    st.st_size != db->config_st.st_size ||
	    st.st_mtim.tv_sec != db->config_st.st_mtim.tv_sec ||
	    st.st_mtim.tv_nsec != db->config_st.st_mtim.tv_nsec) {
		observed_free(&db->observed);
		if ((rc = config_read(&db->observed, NULL,
		    db->dir, &db->config_st, &db->format)) < 0) {
			db->store->ops->release(db->store);
			return rc;
		}
	}
	if (db->format < db->store->ops->data_format &&
	    !db->store->read_only)
		upgrade_config(db, path);
	db->store->format = db->format;
	return 0;
}

/*
 * The end of a call's use of the store: let it go unless held, or after
 * a failed write, which the next open must recover from.  A held store
 * goes, for a moment, to any other process that waits for it: the
 * store's pause makes our next acquire let the waiting ones go first.
 */
void
db_release(perc_db *db)
{
	struct store *s = db->store;

	if (!db->held || s->failed) {
		s->ops->release(s);
		return;
	}
	if (s->ops->held(s) && store_waited_for(s)) {
		store_pause(s, clock_deadline(db->timeout_ms));
		s->ops->release(s);
	}
}

int
perc_db_hold(perc_db *db)
{
	int rc;

	if ((rc = db_acquire(db, clock_deadline(db->timeout_ms))) == 0)
		db->held = 1;
	return rc;
}

void
perc_db_release(perc_db *db)
{
	db->held = 0;
	db->store->ops->release(db->store);
}

int
db_begin_ts(perc_ts *out, perc_db *db)
{
	struct store *s = db->store;
	int rc;

	if (!store_shared(s))
		return perc_ts_next(out, db, 1);
	/*
	 * The store notes the start as open in the step that hands it out,
	 * but after a failover of the oracle's master it knows of no older
	 * one this directory has open: publish them all (db_open_note).
	 */
	if ((rc = store_ts_begin(s, out, clock_deadline(db->timeout_ms)))
	    == 0) {
		if (*out > db->ts_high)
			db->ts_high = *out;
		db->open_unpublished = 1;
	}
	return rc;
}

int
perc_snapshot_ts(perc_ts *out, perc_db *db)
{
	int64_t deadline = clock_deadline(db->timeout_ms);

	int rc;

	if (db->store->read_only)
		return db->store->ops->ts_last(db->store, out, deadline);
	/* On a full disk, read at the last timestamp, as read-only. */
	if ((rc = db->store->ops->ts_next(db->store, out, 1, deadline)) ==
	    PERC_EIO && errno == ENOSPC)
		rc = db->store->ops->ts_last(db->store, out, deadline);
	return rc;
}

/*
 * SPEC: a snapshot never changes once read, so a read at a chosen
 * timestamp (--at) must name one the oracle has handed out already:
 * then every commit still to come takes a timestamp above it, and one
 * that took a timestamp at or below it holds its locks, which a reader
 * waits for.  The last one handed out answers cheaply (ts_last may be
 * above the exact one, but the oracle never hands out what lies below
 * it); above it a fresh timestamp decides, since it is above all of
 * them, and once taken it fixes every snapshot up to it.  PERC_EUSAGE
 * for a timestamp above even that.
 */
int
db_check_at(perc_db *db, perc_ts at)
{
	perc_ts newest;
	int rc;

	if (at <= db->ts_settled || at <= db->ts_high)
		return 0;
	if ((rc = db->store->ops->ts_last(db->store, &newest,
	    clock_deadline(db->timeout_ms))) < 0)
		return rc;
	if (at > newest && (rc = perc_snapshot_ts(&newest, db)) < 0)
		return rc;
	if (newest > db->ts_settled)
		db->ts_settled = newest;
	if (at > newest)
		return error_set(PERC_EUSAGE, "timestamp %" PRIu64 " has not "
		    "been handed out yet (the newest is %" PRIu64 "), and a "
		    "snapshot there could still change; read at a timestamp "
		    "that 'perc ts' or a commit printed", at, newest);
	return 0;
}

void
perc_db_progress(perc_db *db, perc_progress_fn fn, void *arg)
{
	db->progress = fn;
	db->progress_arg = arg;
}

void
db_progress(perc_db *db, const char *counted, uint64_t n)
{
	if (db->progress != NULL)
		db->progress(counted, n, db->progress_arg);
}

/* Write the commits counted and not yet written (db_count_commit). */
#define COUNT_EVERY_MS  1000

static void
count_flush(perc_db *db)
{
	size_t n = db->gc_uncounted;

	db->gc_uncounted = 0;
	db->gc_counted_ms = clock_mono_ms();
	if (n > 0 && !db->store->read_only && gc_count_add(db->dir, n))
		db->gc_due = 1;
}

void
db_count_commit(perc_db *db)
{
	db->gc_uncounted++;
	if (db->gc_uncounted >= GC_COUNT_BATCH ||
	    clock_mono_ms() - db->gc_counted_ms >= COUNT_EVERY_MS)
		count_flush(db);
}

int
perc_gc_due(perc_db *db)
{
	int due;

	/* A long-lived caller gone idle (an observer's runner, a shell)
	   counts its last commits now, not when it next commits. */
	if (db->gc_uncounted > 0 &&
	    clock_mono_ms() - db->gc_counted_ms >= COUNT_EVERY_MS)
		count_flush(db);
	due = db->gc_due;
	db->gc_due = 0;
	return due;
}

int
db_open_publish(perc_db *db, perc_ts at, perc_ts *oldest_all)
{
	perc_ts oldest;
	int rc;

	if ((rc = gc_open_oldest(&oldest, db->dir, at)) < 0 ||
	    (rc = store_open_publish(db->store, at, oldest, oldest_all,
	    clock_deadline(db->timeout_ms))) < 0)
		return rc;
	db->open_unpublished = 0;
	db->open_published_ms = clock_mono_ms();
	return 0;
}

/* The newest timestamp this process was handed is what db_open_note
   publishes when it holds no start. */
int
perc_ts_next(perc_ts *out, perc_db *db, size_t n)
{
	int rc;

	if ((rc = db->store->ops->ts_next(db->store, out, n,
	    clock_deadline(db->timeout_ms))) == 0 && *out + n - 1 >
	    db->ts_high)
		db->ts_high = *out + n - 1;
	return rc;
}

/*
 * After a transaction: at most once a second, and when the directory
 * is closed, say that this process's transactions are over, lest the
 * oldest of them hold back every directory's gc.  Best effort: a
 * failure leaves an older start published, which only holds gc back
 * further, and the caller's message stands.
 */
#define OPEN_PUBLISH_EVERY_MS 1000

void
db_open_note(perc_db *db, int closing)
{
	char saved[512];
	perc_ts all;

	if (!db->open_unpublished || (!closing &&
	    clock_mono_ms() - db->open_published_ms < OPEN_PUBLISH_EVERY_MS))
		return;
	snprintf(saved, sizeof(saved), "%s", perc_errmsg());
	/* A process that only finished a transaction has no timestamp:
	   one from the oracle, the newest it was handed. */
	if (db->ts_high == 0)
		(void)perc_ts_next(&all, db, 1);
	if (db->ts_high == 0 || db_open_publish(db, db->ts_high, &all) < 0)
		db->open_unpublished = 0;       /* try no more */
	error_set(0, "%s", saved);
}

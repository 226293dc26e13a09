/*
 * lib/gc.c - garbage collection: the safe point, and which keys of a
 * cell no snapshot at or above it can read.
 *
 * The safe point is taken in an order that no transaction can slip
 * through:
 *
 *  1. the older of the oldest open transaction (the journals of this
 *     data directory) that began less than PERC_TXN_MAX_AGE ago and
 *     the newest timestamp handed out more than retain_ms ago
 *     (timestamp.h tells a timestamp's age) ...
 *  2. ... goes into DIR/gc.fence; a transaction that begins from now on
 *     and started below it takes a new start timestamp;
 *  3. the journals are looked at again: one that appeared meanwhile
 *     began before its owner could see the fence, and lowers the safe
 *     point to its start; where other data directories share the store
 *     (Redis), the oldest start they may have open lowers it too (see
 *     gc_open_publish);
 *  4. locks below the safe point are resolved (a live owner's lock
 *     stays, and the cell with it), and so are the pending weak
 *     notifications of transactions that began below it, whose
 *     primaries' records must still tell their fate (weak.c);
 *  5. the store records the safe point, durably, never lower than
 *     before, and from then on refuses to read or prewrite below it
 *     (PERC_ETOOOLD), checking in the same atomic step as the read;
 *  6. the pass removes, cell by cell, what is below it.
 *
 * Below the safe point a cell no longer changes: every commit, rollback
 * or lock to come is above it, but for the leftovers of transactions
 * that started below it, whose locks step 4 cleaned or which keep the
 * cell out of the pass.  So the pass may decide on what it read and
 * remove later, in batches that let other processes in.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "codec.h"
#include "db.h"
#include "disk.h"
#include "error.h"
#include "gc.h"
#include "journal.h"
#include "lock.h"
#include "store.h"
#include "timestamp.h"
#include "weak.h"

static void
fence_path(char *out, size_t size, const char *dir)
{
	snprintf(out, size, "%s/gc.fence", dir);
}

/*
 * The fence is one number, rewritten in place under an flock: two
 * raisers that both read the old value must not cross, the lower one
 * writing last (a begin would then miss the higher fence it must see),
 * and a reader must not see half a write.  The number is padded to one
 * width, so a write covers the one before it.
 */
#define FENCE_LINE 21           /* 20 digits and a newline */

static int
lock_fence(int fd, int op)
{
	while (flock(fd, op) != 0)
		if (errno != EINTR)
			return -1;
	return 0;
}

/* The number in fd's first bytes, or 0 when there is none. */
static perc_ts
fence_of(int fd)
{
	char text[32];
	ssize_t n;

	if ((n = pread(fd, text, sizeof(text) - 1, 0)) <= 0)
		return 0;
	text[n] = '\0';
	return strtoull(text, NULL, 10);
}

int
gc_fence(perc_ts *out, const char *dir)
{
	char path[4096];
	int fd, rc = 0;

	*out = 0;
	fence_path(path, sizeof(path), dir);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return errno == ENOENT ? 0 : error_set(PERC_EIO,
		    "cannot read '%s': %s", path, strerror(errno));
	if (lock_fence(fd, LOCK_SH) != 0)
		rc = error_set(PERC_EIO, "cannot lock '%s': %s", path,
		    strerror(errno));
	else
		*out = fence_of(fd);
	close(fd);
	return rc;
}

/* Not synced: it matters to processes running now, and after a crash
   of the machine none is. */
int
gc_fence_raise(const char *dir, perc_ts ts)
{
	char path[4096], text[32];
	perc_ts old;
	int fd, saved, rc = 0;

	fence_path(path, sizeof(path), dir);
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0) {
		/* One we may not write may be high enough already. */
		saved = errno;
		if ((saved == EROFS || saved == EACCES) &&
		    gc_fence(&old, dir) == 0 && old >= ts)
			return 0;
		errno = saved;
		return disk_write_error(path, "cannot write gc's fence");
	}
	if (lock_fence(fd, LOCK_EX) != 0)
		rc = error_set(PERC_EIO, "cannot lock '%s': %s", path,
		    strerror(errno));
	else if (fence_of(fd) < ts) {
		snprintf(text, sizeof(text), "%020" PRIu64 "\n", ts);
		if (pwrite(fd, text, FENCE_LINE, 0) != FENCE_LINE)
			rc = disk_write_error(path, "cannot write gc's "
			    "fence");
	}
	close(fd);
	return rc;
}

struct below {
	perc_ts           bound;
	struct lock_batch batch;
};

/* Resolve a lock below the safe point; a live owner's stays. */
static int
resolve_below(void *arg, perc_bytes row, perc_bytes col,
    const struct lock_rec *lock)
{
	struct below *b = arg;

	if (lock->start_ts >= b->bound)
		return 0;
	return lock_batch_add(&b->batch, row, col, lock);
}

/*
 * The oldest start that still holds gc back: an open transaction that
 * began more than PERC_TXN_MAX_AGE seconds ago (a script that died
 * after perc begin) no longer does, and gets exit 8 once gc passes it.
 */
#define TXN_MAX_AGE_MS  (86400 * 1000)

perc_ts
gc_open_floor(void)
{
	return ts_of_wall_ms(clock_wall_ms() -
	    clock_env_ms("PERC_TXN_MAX_AGE", TXN_MAX_AGE_MS));
}

static void
hold_path(char *out, size_t size, const char *dir, const char *name)
{
	snprintf(out, size, "%s/holds%s%s", dir, name ? "/" : "",
	    name ? name : "");
}

int
gc_hold_set(const char *dir, const char *name, perc_ts ts, int64_t ttl_ms)
{
	char path[4096], tmp[4200], line[64];
	int fd, n, ok;

	if (ttl_ms > GC_HOLD_MAX_MS)
		ttl_ms = GC_HOLD_MAX_MS;
	hold_path(path, sizeof(path), dir, NULL);
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		goto fail;
	hold_path(path, sizeof(path), dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	n = snprintf(line, sizeof(line), "%" PRIu64 " %" PRId64 "\n", ts,
	    clock_wall_ms() + ttl_ms);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644)) < 0)
		goto fail;
	ok = write(fd, line, (size_t)n) == n;
	close(fd);
	if (ok && rename(tmp, path) == 0)
		return 0;
	(void)unlink(tmp);
fail:
	return error_set(PERC_EIO, "cannot hold gc in '%s/holds': %s; check "
	    "the data directory's permissions", dir, strerror(errno));
}

/* One hold file: its ts and expiry, 0; or -1 when it is not one. */
static int
hold_read(perc_ts *ts, int64_t *until, const char *path)
{
	char line[64];
	unsigned long long t;
	long long u;
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	line[n] = '\0';
	if (sscanf(line, "%llu %lld", &t, &u) != 2)
		return -1;
	*ts = t;
	*until = u;
	return 0;
}

int
gc_hold_oldest(perc_ts *ts, int64_t *left_ms, const char *dir)
{
	char path[4096];
	struct dirent *e;
	int64_t now = clock_wall_ms(), until;
	perc_ts t;
	DIR *d;

	*ts = UINT64_MAX;
	*left_ms = 0;
	hold_path(path, sizeof(path), dir, NULL);
	if ((d = opendir(path)) == NULL)
		return 0;       /* no hold was ever taken */
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.' || strstr(e->d_name, ".tmp") != NULL)
			continue;
		hold_path(path, sizeof(path), dir, e->d_name);
		if (hold_read(&t, &until, path) < 0)
			continue;
		if (until > now + GC_HOLD_MAX_MS)
			until = now + GC_HOLD_MAX_MS;
		if (until <= now) {
			(void)unlink(path);
			continue;
		}
		if (t < *ts) {
			*ts = t;
			*left_ms = until - now;
		}
	}
	closedir(d);
	return 0;
}

/* The safe point of steps 1 to 3 above; *bound 0: nothing to do. */
static int
safe_point(perc_ts *bound, perc_db *db, int64_t retain_ms, int dry_run)
{
	perc_ts now, clock, back, oldest, fence, others, held;
	perc_ts floor = gc_open_floor();
	int64_t left;
	int rc;

	if ((rc = perc_ts_next(&now, db, 1)) < 0 ||
	    (rc = journal_oldest(&oldest, db->dir, floor)) < 0)
		return rc;
	fence = now;
	if (retain_ms > 0) {
		/* The oracle may run ahead of the clock: the older. */
		if ((clock = ts_of_wall_ms(clock_wall_ms())) < fence)
			fence = clock;
		back = (perc_ts)retain_ms << TS_LOGICAL_BITS;
		fence = fence > back ? fence - back : 0;
	}
	if (oldest < fence)
		fence = oldest;
	if ((rc = gc_hold_oldest(&held, &left, db->dir)) < 0)
		return rc;
	if (held < fence)
		fence = held;   /* a follower's history (perc log) */
	if (!dry_run && (rc = gc_fence_raise(db->dir, fence)) < 0)
		return rc;
	if ((rc = journal_oldest(&oldest, db->dir, floor)) < 0)
		return rc;
	*bound = oldest < fence ? oldest : fence;
	if (*bound == 0 || db->store->ops->open_publish == NULL ||
	    db->store->read_only)
		return 0;
	if ((rc = gc_open_publish(db, fence, &others)) < 0)
		return rc;
	/* Another directory's start below the floor may hide younger ones
	   of it: it holds gc back to the floor. */
	if (others != 0 && others < floor)
		others = floor;
	if (others != 0 && others < *bound)
		*bound = others;
	return 0;
}

/*
 * Tell the store what this directory has open, for the gc of other
 * directories: the fence raised to at first, then the journals, so
 * that a transaction that started below at and that the journals miss
 * takes a new start above it (txn_begin).
 */
int
gc_open_publish(perc_db *db, perc_ts at, perc_ts *oldest_all)
{
	perc_ts oldest, held;
	int64_t left;
	int rc;

	if ((rc = gc_fence_raise(db->dir, at)) < 0 ||
	    (rc = journal_oldest(&oldest, db->dir, gc_open_floor())) < 0 ||
	    (rc = gc_hold_oldest(&held, &left, db->dir)) < 0)
		return rc;
	if (held < oldest)
		oldest = held;  /* other directories' gc keeps it too */
	if ((rc = db->store->ops->open_publish(db->store, at, oldest,
	    oldest_all, clock_deadline(db->timeout_ms))) < 0)
		return rc;
	db->open_unpublished = 0;
	db->open_published_ms = clock_mono_ms();
	return 0;
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
gc_open_note(perc_db *db, int closing)
{
	char saved[512];
	perc_ts all;

	if (!db->open_unpublished || (!closing &&
	    clock_mono_ms() - db->open_published_ms < OPEN_PUBLISH_EVERY_MS))
		return;
	snprintf(saved, sizeof(saved), "%s", perc_errmsg());
	/* A process that only finished a transaction has no timestamp. */
	if ((db->ts_high == 0 && perc_ts_next(&all, db, 1) < 0) ||
	    gc_open_publish(db, db->ts_high, &all) < 0)
		db->open_unpublished = 0;       /* try no more */
	error_set(0, "%s", saved);
}

#define GC_AUTO_COMMITS 10000
#define GC_RETAIN_MS    (600 * 1000)

static void
count_path(char *out, size_t size, const char *dir)
{
	snprintf(out, size, "%s/gc.count", dir);
}

/*
 * O_APPEND makes the count exact across processes without a lock.  The
 * process that sees it reach the threshold empties it, so one process,
 * give or take a race, starts the gc.  Unsynced, and failures ignored:
 * a lost count only puts the next gc off.  A process that commits
 * often counts in batches, at most once a second or every
 * COUNT_BATCH commits (and when it closes the data directory), so a
 * long-lived one does not pay an open and a write per commit.
 */
#define COUNT_BATCH     64
#define COUNT_EVERY_MS  1000

void
gc_count_commit(perc_db *db)
{
	db->gc_uncounted++;
	if (db->gc_uncounted >= COUNT_BATCH ||
	    clock_mono_ms() - db->gc_counted_ms >= COUNT_EVERY_MS)
		gc_count_flush(db);
}

void
gc_count_flush(perc_db *db)
{
	char path[4096], marks[COUNT_BATCH];
	size_t n = db->gc_uncounted;
	struct stat st;
	int64_t every;
	int fd;

	db->gc_uncounted = 0;
	db->gc_counted_ms = clock_mono_ms();
	every = clock_env_ms("PERC_GC_AUTO", GC_AUTO_COMMITS * 1000) / 1000;
	if (n == 0 || every <= 0 || db->store->read_only)
		return;
	count_path(path, sizeof(path), db->dir);
	if ((fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
	    0644)) < 0)
		return;
	memset(marks, 'c', sizeof(marks));
	if (write(fd, marks, n < sizeof(marks) ? n : sizeof(marks)) > 0 &&
	    fstat(fd, &st) == 0 && st.st_size >= every &&
	    ftruncate(fd, 0) == 0)
		db->gc_due = 1;
	close(fd);
}

/* The commits counted so far are this gc's to collect. */
static void
count_reset(const char *dir)
{
	char path[4096];

	count_path(path, sizeof(path), dir);
	(void)truncate(path, 0);
}

int
perc_gc_due(perc_db *db)
{
	int due;

	/* A long-lived caller gone idle (an observer's runner, a shell)
	   counts its last commits now, not when it next commits. */
	if (db->gc_uncounted > 0 &&
	    clock_mono_ms() - db->gc_counted_ms >= COUNT_EVERY_MS)
		gc_count_flush(db);
	due = db->gc_due;

	db->gc_due = 0;
	return due;
}

int64_t
perc_gc_retain_ms(void)
{
	return clock_env_ms("PERC_GC_RETAIN", GC_RETAIN_MS);
}

int
perc_gc(perc_ts *safe_point_out, uint64_t *removed, perc_db *db,
    int64_t retain_ms, unsigned flags)
{
	struct store *s = db->store;
	int dry_run = (flags & PERC_GC_DRY_RUN) != 0;
	struct store_gc gc;
	struct below below;
	perc_ts bound, old;
	int rc;

	memset(&below, 0, sizeof(below));
	*safe_point_out = 0;
	*removed = 0;
	if (retain_ms < 0)
		return error_set(PERC_EUSAGE, "a retention must not be "
		    "negative");
	if (s->read_only && !dry_run)
		return error_set(PERC_EIO, "cannot collect garbage in a "
		    "data directory this process may not write");
	if ((rc = safe_point(&bound, db, retain_ms, dry_run)) < 0)
		return rc;
	if (!dry_run)
		count_reset(db->dir);
	memset(&gc, 0, sizeof(gc));
	if ((rc = db_acquire(db, clock_deadline(db->timeout_ms))) < 0)
		return rc;
	if ((rc = s->ops->safe_point(s, &old)) < 0)
		goto done;
	if (bound < old)
		bound = old;            /* it never moves back */
	below.bound = bound;
	below.batch.db = db;
	below.batch.flags = dry_run ? RESOLVE_DRY_RUN : 0;
	if (bound == 0 || (rc = s->ops->locks(s, resolve_below, &below)) < 0 ||
	    (rc = lock_batch_flush(&below.batch)) < 0 ||
	    (rc = weak_gc(db, bound, dry_run)) < 0 ||
	    (!dry_run && (rc = s->ops->safe_point_raise(s, bound)) < 0))
		goto done;
	gc.bound = gc.cell.bound = bound;
	gc.dry_run = dry_run;
	while ((rc = s->ops->gc(s, &gc)) == 0 && !gc.done) {
		db_progress(db, "versions removed", gc.removed);
		/* Between batches, let other processes in. */
		db_release(db);
		if ((rc = db_acquire(db, clock_deadline(db->timeout_ms))) < 0)
			break;
	}
	*safe_point_out = bound;
	*removed = gc.removed;
done:
	db_release(db);
	lock_batch_dispose(&below.batch);
	free(gc.cell.puts);
	perc_buf_dispose(&gc.cell.prefix);
	perc_buf_dispose(&gc.resume);
	return rc;
}

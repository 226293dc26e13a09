/*
 * lib/gc.c - gc's horizon in the data directory: the fence that begin
 * respects (DIR/gc.fence), the count of commits towards the next
 * automatic gc (DIR/gc.count), the holds that keep history for perc
 * log (DIR/holds), and what this directory has open, published to a
 * store that other directories share.  The pass itself is collect.c's.
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
#include "store.h"
#include "timestamp.h"

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

/* Best effort: a hold left behind runs out by itself. */
void
gc_hold_drop(const char *dir, const char *name)
{
	char path[4096];

	hold_path(path, sizeof(path), dir, name);
	(void)unlink(path);
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
	if ((rc = store_open_publish(db->store, at, oldest, oldest_all,
	    clock_deadline(db->timeout_ms))) < 0)
		return rc;
	db->open_unpublished = 0;
	db->open_published_ms = clock_mono_ms();
	return 0;
}

/* Here, not in db.c: the newest timestamp this process was handed is
   what gc_open_note publishes when it holds no start. */
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
gc_open_note(perc_db *db, int closing)
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
	if (db->ts_high == 0 || gc_open_publish(db, db->ts_high, &all) < 0)
		db->open_unpublished = 0;       /* try no more */
	error_set(0, "%s", saved);
}

#define GC_AUTO_COMMITS 10000

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
void
gc_count_reset(const char *dir)
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

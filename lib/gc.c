/*
 * lib/gc.c - gc's horizon in the data directory: the fence that begin
 * respects (DIR/gc.fence), the count of commits towards the next
 * automatic gc (DIR/gc.count), the holds that keep history for perc
 * log (DIR/holds), and what this directory has open, for a store that
 * other directories share.  The pass itself is collect.c's; the open
 * directory's part in them (its commits counted, its starts published)
 * is db.c's.
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

#include "clock.h"
#include "disk.h"
#include "error.h"
#include "gc.h"
#include "journal.h"
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
 * What this directory has open, for the gc of other directories: the
 * fence raised to at first, then the oldest of the journals and the
 * holds, so that a transaction that started below at and that the
 * journals miss takes a new start above it (txn_begin).
 */
int
gc_open_oldest(perc_ts *oldest, const char *dir, perc_ts at)
{
	perc_ts held;
	int64_t left;
	int rc;

	if ((rc = gc_fence_raise(dir, at)) < 0 ||
	    (rc = journal_oldest(oldest, dir, gc_open_floor())) < 0 ||
	    (rc = gc_hold_oldest(&held, &left, dir)) < 0)
		return rc;
	if (held < *oldest)
		*oldest = held;  /* other directories' gc keeps it too */
	return 0;
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
 * a lost count only puts the next gc off.
 */
int
gc_count_add(const char *dir, size_t n)
{
	char path[4096], marks[GC_COUNT_BATCH];
	struct stat st;
	int64_t every;
	int fd, due = 0;

	every = clock_env_ms("PERC_GC_AUTO", GC_AUTO_COMMITS * 1000) / 1000;
	if (n == 0 || every <= 0)
		return 0;
	count_path(path, sizeof(path), dir);
	if ((fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
	    0644)) < 0)
		return 0;
	memset(marks, 'c', sizeof(marks));
	if (write(fd, marks, n < sizeof(marks) ? n : sizeof(marks)) > 0 &&
	    fstat(fd, &st) == 0 && st.st_size >= every &&
	    ftruncate(fd, 0) == 0)
		due = 1;
	close(fd);
	return due;
}

/* The commits counted so far are this gc's to collect. */
void
gc_count_reset(const char *dir)
{
	char path[4096];

	count_path(path, sizeof(path), dir);
	(void)truncate(path, 0);
}

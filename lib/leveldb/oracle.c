/*
 * lib/leveldb/oracle.c - the timestamp oracle: strictly increasing timestamps
 * for every process of one data directory, without an fsync per call.
 *
 * Two files, both under the flock of DIR/oracle.lock:
 *
 *  DIR/oracle       the ceiling: no timestamp at or above it was ever
 *                   handed out.  Replaced atomically (write, fsync,
 *                   rename, fsync the directory) and only when a request
 *                   would cross it; it is set 3 s of clock ahead
 *                   (timestamp.h), so it moves at most every 3 s.
 *  DIR/oracle.lock  the lockfile, which also holds the hot state: the
 *                   last timestamp handed out, the ceiling as it stood
 *                   then, and the boot id of the machine that wrote
 *                   them, written with no fsync.
 *
 * After kill -9 of any process the hot state is exact, since a write(2)
 * that returned lives in the page cache whatever happens to the writer.
 * After a crash of the machine the page cache is gone and the hot state
 * may be stale or torn.  The two cases are told apart by the kernel's
 * boot id (/proc/sys/kernel/random/boot_id), which is new at every boot:
 * hot state written under another boot id, or failing its checksum, is
 * ignored and the oracle resumes from the ceiling, which was on disk
 * before any timestamp below it was handed out.  That is the paper's
 * oracle: persist a ceiling ahead of what is handed out.
 *
 * A process keeps the lockfile open (struct oracle), so a timestamp
 * costs a flock, a pread and a pwrite: the ceiling is read from the
 * hot state, and the file only when the hot state does not count.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "clock.h"
#include "codec.h"
#include "disk.h"
#include "error.h"
#include "oracle.h"
#include "timestamp.h"

#define CEILING_MAGIC "PERCORC1"
#define HOT_MAGIC     "PERCHOT2"
#define CEILING_SIZE  (8 + 8 + 4)
#define BOOT_ID_SIZE  ORACLE_BOOT_ID_SIZE
#define HOT_SIZE      (8 + BOOT_ID_SIZE + 8 + 8 + 4)
/* How far the ceiling runs ahead of the clock: one fsync per 3 s used. */
#define AHEAD         ((uint64_t)TS_AHEAD_MS << TS_LOGICAL_BITS)

static void
oracle_path(char *out, size_t size, const char *dir, const char *name)
{
	snprintf(out, size, "%s/%s", dir, name);
}

/* The boot id, or all zeros when the kernel does not tell. */
static void
boot_id(char out[BOOT_ID_SIZE])
{
	int fd;

	memset(out, 0, BOOT_ID_SIZE);
	if ((fd = open("/proc/sys/kernel/random/boot_id",
	    O_RDONLY | O_CLOEXEC)) < 0)
		return;
	if (read(fd, out, BOOT_ID_SIZE) != BOOT_ID_SIZE)
		memset(out, 0, BOOT_ID_SIZE);
	close(fd);
}

/* Write, fsync, rename, fsync the directory: old or new after a cut. */
static int
write_ceiling(const char *dir, uint64_t ceiling)
{
	unsigned char rec[CEILING_SIZE];
	char path[4096], tmp[4096];
	int fd, ok;

	memcpy(rec, CEILING_MAGIC, 8);
	codec_put_u64(rec + 8, ceiling);
	codec_put_u32(rec + 16, codec_crc32(0, rec, 16));
	oracle_path(path, sizeof(path), dir, "oracle");
	oracle_path(tmp, sizeof(tmp), dir, "oracle.tmp");
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644)) < 0)
		goto fail;
	ok = write(fd, rec, sizeof(rec)) == (ssize_t)sizeof(rec) &&
	    fsync(fd) == 0;
	if (close(fd) != 0 || !ok || rename(tmp, path) != 0 ||
	    disk_sync_dir(dir) != 0)
		goto fail;
	return 0;
fail:
	return disk_write_error(path, "cannot write the oracle file");
}

static int
read_ceiling(uint64_t *out, const char *dir)
{
	unsigned char rec[CEILING_SIZE + 1];
	char path[4096];
	ssize_t n;
	int fd;

	oracle_path(path, sizeof(path), dir, "oracle");
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return error_set(PERC_EIO, "cannot open the oracle file "
		    "'%s': %s", path, strerror(errno));
	n = read(fd, rec, sizeof(rec));
	close(fd);
	if (n != CEILING_SIZE || memcmp(rec, CEILING_MAGIC, 8) != 0 ||
	    codec_get_u32(rec + 16) != codec_crc32(0, rec, 16))
		return error_set(PERC_EIO, "the oracle file '%s' is damaged; "
		    "restore the data directory from a backup", path);
	*out = codec_get_u64(rec + 8);
	return 0;
}

/*
 * The last timestamp handed out and the ceiling then, or 0 if not
 * known: only a state written in this boot counts when boot is given,
 * one of any boot when it is NULL.  The hot state of an older perc
 * (another magic) counts as none.
 */
static uint64_t
read_hot(int fd, const char *boot, uint64_t *ceiling)
{
	unsigned char rec[HOT_SIZE];

	if (pread(fd, rec, sizeof(rec), 0) != (ssize_t)sizeof(rec) ||
	    memcmp(rec, HOT_MAGIC, 8) != 0 ||
	    (boot != NULL && (boot[0] == '\0' ||
	    memcmp(rec + 8, boot, BOOT_ID_SIZE) != 0)) ||
	    codec_get_u32(rec + HOT_SIZE - 4) !=
	    codec_crc32(0, rec, HOT_SIZE - 4))
		return 0;
	*ceiling = codec_get_u64(rec + 16 + BOOT_ID_SIZE);
	return codec_get_u64(rec + 8 + BOOT_ID_SIZE);
}

/* No fsync: only a crash of the machine loses it, and the boot id says so. */
static int
write_hot(const char *dir, int fd, const char *boot, uint64_t last,
    uint64_t ceiling)
{
	unsigned char rec[HOT_SIZE];

	memcpy(rec, HOT_MAGIC, 8);
	memcpy(rec + 8, boot, BOOT_ID_SIZE);
	codec_put_u64(rec + 8 + BOOT_ID_SIZE, last);
	codec_put_u64(rec + 16 + BOOT_ID_SIZE, ceiling);
	codec_put_u32(rec + HOT_SIZE - 4, codec_crc32(0, rec, HOT_SIZE - 4));
	if (pwrite(fd, rec, sizeof(rec), 0) != (ssize_t)sizeof(rec))
		return disk_write_error(dir, "cannot write the oracle lockfile "
		    "in");
	return 0;
}

/* Create the oracle of a new data directory: the first timestamp is 1. */
int
oracle_create(const char *dir)
{
	char path[4096];
	int fd;

	/*
	 * Created empty and not synced: its hot state only counts under
	 * this boot id (above), and init syncs its directory entry.  The
	 * ceiling below is the oracle's durable part.
	 */
	oracle_path(path, sizeof(path), dir, "oracle.lock");
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0)
		return error_set(PERC_EIO, "cannot create '%s': %s", path,
		    strerror(errno));
	close(fd);
	return write_ceiling(dir, 1);
}

/* Open DIR/oracle.lock with flags: the descriptor, or an error code. */
static int
open_lockfile(const char *dir, int flags)
{
	char path[4096];
	int fd;

	oracle_path(path, sizeof(path), dir, "oracle.lock");
	if ((fd = open(path, flags | O_CLOEXEC)) < 0 && errno != ENOENT &&
	    (flags & O_ACCMODE) != O_RDONLY)
		return disk_write_error(path, "cannot open the oracle lockfile");
	if (fd < 0)
		return error_set(errno == ENOENT ? PERC_ENOTDB : PERC_EIO,
		    "cannot open the oracle lockfile '%s': %s", path,
		    strerror(errno));
	return fd;
}

static int
lock_lockfile(int fd, int op, int64_t deadline_ms)
{
	if (clock_flock(fd, op, deadline_ms) < 0)
		return error_set(PERC_ETIMEOUT, "the timestamp oracle stayed "
		    "locked by another process; try again, or raise "
		    "PERC_LOCK_TIMEOUT");
	return 0;
}

void
oracle_init(struct oracle *o, const char *dir)
{
	memset(o, 0, sizeof(*o));
	o->dir = dir;
	o->fd = -1;
}

void
oracle_dispose(struct oracle *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
}

int
oracle_next(perc_ts *out, struct oracle *o, uint64_t n, int64_t deadline_ms)
{
	uint64_t ceiling = 0, last, next, now;
	int rc;

	if (n == 0)
		return error_set(PERC_EUSAGE, "a count of timestamps must be "
		    "at least 1");
	if (o->fd < 0) {
		if ((o->fd = open_lockfile(o->dir, O_RDWR)) < 0) {
			rc = o->fd;
			o->fd = -1;
			return rc;
		}
		boot_id(o->boot);
	}
	if ((rc = lock_lockfile(o->fd, LOCK_EX, deadline_ms)) < 0)
		return rc;
	/* A damaged ceiling file is reported once a process, at least. */
	if (!o->checked && (rc = read_ceiling(&ceiling, o->dir)) < 0)
		goto done;
	o->checked = 1;
	last = read_hot(o->fd, o->boot, &ceiling);
	if (last == 0 && (rc = read_ceiling(&ceiling, o->dir)) < 0)
		goto done;
	next = last != 0 ? last + 1 : ceiling;
	if ((now = ts_of_wall_ms(clock_wall_ms())) > next)
		next = now;             /* timestamp.h */
	if (n > UINT64_MAX - AHEAD - next) {
		rc = error_set(PERC_EIO, "the timestamp oracle is exhausted");
		goto done;
	}
	if (next + n > ceiling) {
		ceiling = next + n + AHEAD;
		if ((rc = write_ceiling(o->dir, ceiling)) < 0)
			goto done;
	}
	if ((rc = write_hot(o->dir, o->fd, o->boot, next + n - 1,
	    ceiling)) == 0)
		*out = next;
done:
	flock(o->fd, LOCK_UN);
	return rc;
}

/*
 * Where a reader that may not write the oracle reads: the last
 * timestamp handed out.  Every commit timestamp yet to come is above
 * it, and every commit whose timestamp is at or below it has its locks
 * in place already, so it is a snapshot like one from oracle_next.
 * The hot state of another boot counts too (this reader may be another
 * machine sharing the directory, or have no boot id): after a crash it
 * can only be behind, which makes an older snapshot, still whole.
 * Below the ceiling only when there is no hot state at all.
 */
int
oracle_last(perc_ts *out, const char *dir, int64_t deadline_ms)
{
	uint64_t ceiling = 0, last;
	int fd, rc = 0;

	if ((fd = open_lockfile(dir, O_RDONLY)) < 0)
		return fd;
	if ((rc = lock_lockfile(fd, LOCK_SH, deadline_ms)) < 0) {
		close(fd);
		return rc;
	}
	if ((last = read_hot(fd, NULL, &ceiling)) == 0 &&
	    (rc = read_ceiling(&ceiling, dir)) == 0)
		last = ceiling > 1 ? ceiling - 1 : 1;
	if (rc == 0)
		*out = last;
	close(fd);
	return rc;
}

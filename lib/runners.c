/*
 * lib/runners.c - the observer runners of a data directory that live on
 * this machine, for perc wait to show a person who waits (a wait for a
 * runner that is not there looks like one for a runner that works).
 *
 * DIR/observer.lock stands for rows with its first ROW_BYTES bytes, each
 * locked by the runner running an observer on a row of its hash
 * (observe.c), and for columns with the next ROW_BYTES: a runner holds
 * a shared open-file-description lock on its column's byte for its
 * whole life, and the kernel lets go of it the moment the runner dies.
 * /proc/locks lists each such lock on a line of its own (OFD locks of
 * different descriptions never merge), so counting the lines on that
 * file's inode at a column's byte counts its runners.  Runners on other
 * machines (on a Redis store) are not seen; two columns whose hashes
 * meet share a byte, and are counted together.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "db.h"
#include "disk.h"
#include "error.h"
#include "runners.h"

#define ROW_BYTES ((off_t)1 << 20)

static uint32_t
fnv1a(perc_bytes b)
{
	const unsigned char *p = b.data;
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < b.len; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

off_t
runners_row_byte(perc_bytes row)
{
	return (off_t)(fnv1a(row) % ROW_BYTES);
}

static off_t
column_byte(perc_bytes column)
{
	return ROW_BYTES + (off_t)(fnv1a(column) % ROW_BYTES);
}

int
runners_lock_open(const char *dir)
{
	char path[4200];
	int fd;

	disk_path(path, sizeof(path), dir, "observer.lock");
	/* Never synced: it holds no data, only the kernel's locks. */
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0)
		return error_set(PERC_EIO, "cannot open '%s': %s; runners "
		    "need to write the data directory", path,
		    strerror(errno));
	return fd;
}

int
perc_runner_announce(perc_db *db, perc_bytes column)
{
	struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET,
	    .l_len = 1 };
	int fd;

	if (db->runner_fd >= 0)
		return 0;
	if ((fd = runners_lock_open(db->dir)) < 0)
		return fd;
	fl.l_start = column_byte(column);
	if (fcntl(fd, F_OFD_SETLK, &fl) != 0) {
		close(fd);
		return error_set(PERC_EIO, "cannot lock a byte of '%s/"
		    "observer.lock': %s; is /proc/sys/fs/file-max reached?",
		    db->dir, strerror(errno));
	}
	db->runner_fd = fd;     /* closed, the lock let go, by perc_db_close */
	return 0;
}

unsigned
runners_seen(const char *dir, const perc_bytes *columns, size_t n)
{
	char path[4200], line[256], kind[16], mode[16];
	unsigned seen = 0, maj, min;
	unsigned long long ino;
	intmax_t start;
	struct stat st;
	size_t i;
	FILE *f;

	disk_path(path, sizeof(path), dir, "observer.lock");
	if (stat(path, &st) != 0 || (f = fopen("/proc/locks", "re")) == NULL)
		return 0;
	/* "1: OFDLCK ADVISORY  READ -1 08:01:1234 1048576 1048576" */
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%*d: %15s %*s %15s %*d %x:%x:%llu %jd",
		    kind, mode, &maj, &min, &ino, &start) != 6 ||
		    strcmp(kind, "OFDLCK") != 0 || strcmp(mode, "READ") != 0 ||
		    makedev(maj, min) != st.st_dev || ino != st.st_ino ||
		    start < ROW_BYTES)
			continue;
		for (i = 0; i < n && column_byte(columns[i]) != start; i++)
			;
		seen += n == 0 || i < n;
	}
	fclose(f);
	return seen;
}

/*
 * lib/disk.c - the disk under a data directory: syncing a directory,
 * and what perc says when a write fails for want of space.
 *
 * A file's creation, rename or removal is durable only once its
 * directory is synced; disk_sync_dir is the one place that does it.
 *
 * A full disk is not damage: every committed cell is still there and
 * comes back once space is freed.  So the message names the file system
 * that is full, by its mount point and device as /proc/self/mountinfo
 * gives them, says to free space there, and never advises a restore
 * from a backup, which could destroy good data.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "disk.h"
#include "error.h"

void
disk_path(char *out, size_t size, const char *dir, const char *name)
{
	snprintf(out, size, "%s/%s", dir, name);
}

int
disk_sync_dir(const char *dir)
{
	int fd, rc;

	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

/* The mount point and source of the file system holding path. */
static int
find_mount(const char *path, char *mnt, size_t mntsz, char *src,
    size_t srcsz)
{
	char line[4096], point[1024], source[1024], *dash;
	unsigned maj, min;
	struct stat st;
	FILE *f;
	int found = 0;

	if (stat(path, &st) != 0 ||
	    (f = fopen("/proc/self/mountinfo", "re")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%*u %*u %u:%u %*s %1023s", &maj, &min,
		    point) != 3 || makedev(maj, min) != st.st_dev ||
		    (dash = strstr(line, " - ")) == NULL ||
		    sscanf(dash, " - %*s %1023s", source) != 1)
			continue;
		/* The last match is the mount on top. */
		snprintf(mnt, mntsz, "%s", point);
		snprintf(src, srcsz, "%s", source);
		found = 1;
	}
	fclose(f);
	return found ? 0 : -1;
}

int
disk_full_error(const char *path, const char *what)
{
	char mnt[1024], src[1024];

	if (find_mount(path, mnt, sizeof(mnt), src, sizeof(src)) != 0) {
		snprintf(mnt, sizeof(mnt), "%s", path);
		snprintf(src, sizeof(src), "unknown device");
	}
	error_set(PERC_EIO, "%s: no space left on the file system at '%s' "
	    "(%s); free some space there and retry: nothing committed was "
	    "lost", what, mnt, src);
	errno = ENOSPC;         /* for callers that fall back to reading */
	return PERC_EIO;
}

int
disk_write_error(const char *path, const char *what)
{
	char doing[4200];
	int err = errno;

	if (err == ENOSPC || err == EDQUOT) {
		snprintf(doing, sizeof(doing), "%s '%s'", what, path);
		return disk_full_error(path, doing);
	}
	if (err == EROFS || err == EACCES || err == EPERM)
		return error_set(PERC_EIO, "%s '%s': %s; the data directory is "
		    "read-only to this process: run this where perc may "
		    "write it", what, path, strerror(err));
	return error_set(PERC_EIO, "%s '%s': %s; check that the data "
	    "directory is writable", what, path, strerror(err ? err : EIO));
}

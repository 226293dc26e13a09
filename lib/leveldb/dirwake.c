/*
 * lib/leveldb/dirwake.c - the LevelDB store's wakeup (store.h: wake,
 * wait_wake): inotify(7) on DIR/wake.  A writer opens the file and
 * closes it, two system calls and no write to the disk, and every watch
 * on it, in every process, hears of the open.  Measured on the 2-core
 * machine of tests/bench (200,000 tries): opening and closing it costs
 * 6 us, the same as touching its times (utimensat, IN_ATTRIB: 6-7 us,
 * and a dirty inode) or writing a byte to a FIFO (6-8 us); a FIFO wakes
 * one reader only, not every runner, perc wait and a follower of the
 * log at once.  A writer only opens the file after a commit that set or
 * cleared a notification; where no one ever watched, the file does not
 * exist and the open fails at once.  The followers of perc log watch
 * DIR/wake.log instead, which every commit that wrote opens: a file
 * apart, so that the commits that notify nobody wake no runner, and
 * where no one ever followed the log, a failed open (2 us) is all a
 * commit pays.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "clock.h"
#include "error.h"
#include "dirwake.h"

static void
wake_path(char *out, size_t size, const char *dir, const char *name)
{
	snprintf(out, size, "%s/%s", dir, name);
}

void
dir_wake(const char *dir, const char *name)
{
	char path[PATH_MAX];
	int fd;

	wake_path(path, sizeof(path), dir, name);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK))
	    >= 0)
		close(fd);
}

void
dir_watch_close(struct dir_watch *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
}

/*
 * PERC_EIO, the watch closed, saying what to do about err, which
 * inotify_init1(2) or inotify_add_watch(2) gave.
 */
static int
watch_failed(struct dir_watch *w, const char *path, int err)
{
	const char *fix = "check that it is readable";

	if (err == ENOSPC)
		fix = "raise the inotify limit fs.inotify.max_user_watches "
		    "(sysctl)";
	else if (err == EMFILE)
		fix = "raise the inotify limit fs.inotify.max_user_instances "
		    "(sysctl) or the open file limit (ulimit -n)";
	dir_watch_close(w);
	return error_set(PERC_EIO, "cannot watch '%s': %s; %s", path,
	    strerror(err), fix);
}

/*
 * The watch, on DIR/wake, made first if need be (a directory made
 * before there were wakeups has none).  0 or PERC_EIO.
 */
static int
watch_arm(struct dir_watch *w, const char *dir, const char *name)
{
	char path[PATH_MAX];
	int fd;

	wake_path(path, sizeof(path), dir, name);
	if ((w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0)
		return watch_failed(w, path, errno);
	w->pid = getpid();
	if (inotify_add_watch(w->fd, path, IN_OPEN) >= 0)
		return 0;
	if (errno == ENOENT) {
		fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0) {
			error_set(PERC_EIO, "cannot make '%s' to watch it: %s; "
			    "check that '%s' is writable", path,
			    strerror(errno), dir);
			dir_watch_close(w);
			return PERC_EIO;
		}
		close(fd);
		if (inotify_add_watch(w->fd, path, IN_OPEN) >= 0)
			return 0;
	}
	return watch_failed(w, path, errno);
}

/*
 * Read every event queued: 1 when one says the watch is gone (the file
 * was removed), which the next wait arms again.
 */
static int
drain(struct dir_watch *w)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct
	    inotify_event))));
	const struct inotify_event *ev;
	ssize_t n;
	char *p;
	int gone = 0;

	while ((n = read(w->fd, buf, sizeof(buf))) > 0)
		for (p = buf; p < buf + n; p += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)p;
			gone |= (ev->mask & IN_IGNORED) != 0;
		}
	return gone;
}

int
dir_wait_wake(struct dir_watch *w, const char *dir, const char *name,
    int64_t deadline_ms, const sigset_t *mask)
{
	int rc;

	/* An instance inherited through fork(2) is shared: not ours. */
	if (w->fd >= 0 && w->pid != getpid())
		dir_watch_close(w);
	if (w->fd < 0)
		return (rc = watch_arm(w, dir, name)) < 0 ? rc : 1;
	if (!clock_pause_on(w->fd, deadline_ms, mask))
		return 0;
	if (drain(w))
		dir_watch_close(w);
	return 1;
}

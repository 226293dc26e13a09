/*
 * lib/wake.c - waking those who wait for notifications.
 *
 * An idle runner used to poll the notify cells, up to a second apart;
 * now it sleeps in the store's wait_wake until a commit that set or
 * cleared a notification calls the store's wake.  Polling stays, every
 * PERC_OBSERVER_POLL seconds, for a wakeup that is lost (a writer
 * killed between its commit and its wake, a Redis failover).
 *
 * The data directory's wakeup (the LevelDB store's) is inotify(7) on
 * DIR/wake: a writer opens the file and closes it, two system calls
 * and no write to the disk, and every watch on it, in every process,
 * hears of the open.  Measured on the 2-core machine of tests/bench
 * (200,000 tries): opening and closing it costs 6 us, the same as
 * touching its times (utimensat, IN_ATTRIB: 6-7 us, and a dirty inode)
 * or writing a byte to a FIFO (6-8 us); a FIFO wakes one reader only,
 * not every runner, perc wait and a follower of the log at once.  A
 * writer only opens the file after a commit that set or cleared a
 * notification; where no one ever watched, the file does not exist
 * and the open fails at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "db.h"
#include "error.h"
#include "wake.h"

#define POLL_MS_DEFAULT 5000

int64_t
wake_poll_ms(void)
{
	int64_t ms = clock_env_ms("PERC_OBSERVER_POLL", POLL_MS_DEFAULT);

	return ms > 0 ? ms : 1;
}

void
db_wake(perc_db *db)
{
	struct store *s = db->store;

	if (s->ops->wake != NULL)
		s->ops->wake(s);
}

/*
 * ppoll(2) on fd (-1: none) until deadline_ms, with mask while it
 * waits: 1 readable, 0 deadline or a signal.
 */
static int
pause_on(int fd, int64_t deadline_ms, const sigset_t *mask)
{
	struct pollfd p = { fd, POLLIN, 0 };
	int64_t left = deadline_ms - clock_mono_ms();
	struct timespec ts;

	if (left < 0)
		left = 0;
	ts.tv_sec = (time_t)(left / 1000);
	ts.tv_nsec = (long)(left % 1000) * 1000000L;
	return ppoll(fd >= 0 ? &p : NULL, fd >= 0 ? 1 : 0, &ts, mask) > 0;
}

int
db_wait_wake(perc_db *db, int64_t deadline_ms, const sigset_t *mask)
{
	struct store *s = db->store;
	int rc;

	if (s->ops->wait_wake != NULL &&
	    (rc = s->ops->wait_wake(s, deadline_ms, mask)) >= 0)
		return rc;
	pause_on(-1, deadline_ms, mask);
	return 0;
}

static void
wake_path(char *out, size_t size, const char *dir)
{
	snprintf(out, size, "%s/wake", dir);
}

void
dir_wake(const char *dir)
{
	char path[PATH_MAX];
	int fd;

	wake_path(path, sizeof(path), dir);
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
 * The watch, on DIR/wake, made first if need be (a directory made
 * before there were wakeups has none).  0 or PERC_EIO.
 */
static int
watch_arm(struct dir_watch *w, const char *dir)
{
	char path[PATH_MAX];
	int fd;

	wake_path(path, sizeof(path), dir);
	if ((w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0)
		return error_set(PERC_EIO, "cannot watch '%s': %s", path,
		    strerror(errno));
	w->pid = getpid();
	if (inotify_add_watch(w->fd, path, IN_OPEN) >= 0)
		return 0;
	if (errno == ENOENT &&
	    (fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0644)) >= 0) {
		close(fd);
		if (inotify_add_watch(w->fd, path, IN_OPEN) >= 0)
			return 0;
	}
	error_set(PERC_EIO, "cannot watch '%s': %s", path, strerror(errno));
	dir_watch_close(w);
	return PERC_EIO;
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
dir_wait_wake(struct dir_watch *w, const char *dir, int64_t deadline_ms,
    const sigset_t *mask)
{
	int rc;

	/* An instance inherited through fork(2) is shared: not ours. */
	if (w->fd >= 0 && w->pid != getpid())
		dir_watch_close(w);
	if (w->fd < 0)
		return (rc = watch_arm(w, dir)) < 0 ? rc : 1;
	if (!pause_on(w->fd, deadline_ms, mask))
		return 0;
	if (drain(w))
		dir_watch_close(w);
	return 1;
}

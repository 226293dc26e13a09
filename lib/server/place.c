/*
 * lib/server/place.c - where a data directory's store server is found,
 * whether one runs, and stopping it.
 *
 * Whether a server runs is told by the lock it holds on DIR/serve.lock
 * for its whole life, never by a file alone: a server killed, or a
 * reboot, leaves a socket and a process id behind, and the next server
 * replaces them.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "clock.h"
#include "disk.h"
#include "error.h"
#include "server.h"

int
server_address(char *out, size_t size, int *dirfd, const char *dir)
{
	if ((*dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return error_set(PERC_EIO, "cannot open '%s': %s", dir,
		    strerror(errno));
	snprintf(out, size, "/proc/self/fd/%d/%s", *dirfd, SERVER_SOCKET);
	return 0;
}

/* DIR/serve.lock, opened: -1 when there is none. */
static int
open_lock(const char *dir)
{
	char path[4096];

	disk_path(path, sizeof(path), dir, SERVER_LOCK);
	return open(path, O_RDONLY | O_CLOEXEC);
}

int
server_running(pid_t *pid, const char *dir)
{
	char text[32];
	ssize_t n;
	int fd;

	*pid = 0;
	if ((fd = open_lock(dir)) < 0)
		return errno == ENOENT ? 0 : error_set(PERC_EIO, "cannot open "
		    "'%s/%s': %s", dir, SERVER_LOCK, strerror(errno));
	if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
		close(fd);
		return 0;
	}
	n = pread(fd, text, sizeof(text) - 1, 0);
	close(fd);
	text[n > 0 ? n : 0] = '\0';
	*pid = (pid_t)atol(text);
	return 1;
}

int
server_stop(const char *dir, int64_t deadline_ms)
{
	pid_t pid;
	int fd, rc;

	if ((rc = server_running(&pid, dir)) <= 0)
		return rc;
	if (pid > 0)
		(void)kill(pid, SIGTERM);
	if ((fd = open_lock(dir)) < 0)
		return 0;
	rc = clock_flock(fd, LOCK_SH, deadline_ms);
	close(fd);
	return rc < 0 ? error_set(PERC_ETIMEOUT, "the store server of '%s' "
	    "(process %ld) did not stop in time; it may be stopped or hung: "
	    "kill it", dir, (long)pid) : 0;
}

/* store.h's names for them, for the core above. */
int
store_server_pid(const char *dir, long *pid)
{
	pid_t p;
	int rc = server_running(&p, dir);

	*pid = p;
	return rc;
}

int
store_server_stop(const char *dir, int64_t deadline_ms)
{
	return server_stop(dir, deadline_ms);
}

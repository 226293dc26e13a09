/*
 * lib/server/spawn.c - starting a data directory's store server in the
 * background for a process that needs the store, and waiting until it
 * serves or says why it cannot.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "disk.h"
#include "error.h"
#include "server.h"

/*
 * The server's process keeps none of its starter's: a session of its
 * own (no terminal's signals), no descriptor of the starter's (so that
 * $(perc set ...) and a pipeline end with the command), standard input
 * and output on /dev/null, its standard error DIR/serve.log for what
 * goes wrong, and signals as a new process has them.
 */
static void
become_server_process(const char *dir, int keep)
{
	char path[4096];
	sigset_t none;
	int sig;

	(void)close_range(0, (unsigned)keep - 1, 0);
	(void)close_range((unsigned)keep + 1, ~0U, 0);
	disk_path(path, sizeof(path), dir, "serve.log");
	if (open("/dev/null", O_RDWR) != 0 || dup(0) != 1 ||
	    open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600) != 2)
		_exit(1);
	for (sig = 1; sig < NSIG; sig++)
		(void)signal(sig, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	(void)prctl(PR_SET_NAME, "perc serve");
}

/*
 * What the new server says once it serves, or why it cannot (a store
 * that will not open, or stays busy): its result, then its message.
 */
static int
await_ready(int fd, const char *dir, int64_t deadline_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char msg[1024];
	size_t got = 0;
	int64_t left;
	ssize_t n;
	int rc;

	while (got < sizeof(msg) - 1) {
		if ((left = deadline_ms - clock_mono_ms()) <= 0)
			return error_set(PERC_ETIMEOUT, "the store server of "
			    "'%s' did not start in time; try again, or raise "
			    "PERC_LOCK_TIMEOUT", dir);
		if (poll(&p, 1, (int)(left > 1000 ? 1000 : left)) <= 0)
			continue;
		if ((n = read(fd, msg + got, sizeof(msg) - 1 - got)) == 0)
			break;
		if (n > 0)
			got += (size_t)n;
		else if (errno != EINTR)
			break;
	}
	msg[got] = '\0';
	if (got < sizeof(rc))
		return error_set(PERC_EIO, "the store server of '%s' ended as "
		    "it started; see '%s/serve.log'", dir, dir);
	memcpy(&rc, msg, sizeof(rc));
	return rc < 0 ? error_set(rc, "%s", msg + sizeof(rc)) : 0;
}

int
server_spawn(const char *dir, const struct store_env *env, int idle_s,
    int64_t deadline_ms)
{
	pid_t pid, server;
	int status, fds[2], keep, rc;

	if (pipe2(fds, O_CLOEXEC) != 0 || (pid = fork()) < 0)
		return error_set(PERC_EIO, "cannot start the store server: "
		    "%s", strerror(errno));
	if (pid == 0) {
		/* the middle process, gone at once: no one waits for the
		   server, which init adopts */
		if (setsid() < 0 || (server = fork()) < 0)
			_exit(1);
		if (server > 0)
			_exit(0);
		if ((keep = fcntl(fds[1], F_DUPFD_CLOEXEC, 3)) < 0)
			_exit(1);
		become_server_process(dir, keep);
		if (server_run(dir, env, idle_s, NULL, keep) >= 0)
			_exit(0);
		fprintf(stderr, "perc serve: %s\n", perc_errmsg());
		_exit(1);
	}
	close(fds[1]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	rc = await_ready(fds[0], dir, deadline_ms);
	close(fds[0]);
	return rc;
}

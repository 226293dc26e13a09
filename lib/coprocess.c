/*
 * lib/coprocess.c - the runner's side of a long-running observer
 * (coprocess.h): COMMAND's start and end, and the exchange of one cell
 * over its pipes.  Our ends of the pipes never block: every wait is a
 * poll bounded by the run's deadline, so that a COMMAND that hangs,
 * never reads its input, or stops reading its answers holds the runner
 * no longer than PERC_LOCK_TTL.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "coprocess.h"
#include "db.h"
#include "error.h"
#include "escape.h"

extern char **environ;

/* Record how the run under way failed, for coprocess_failure; -1. */
static int
fail(struct coprocess *co, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int
fail(struct coprocess *co, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(co->why, sizeof(co->why), fmt, ap);
	va_end(ap);
	return -1;
}

/* COMMAND has ended: its pipes close, its open transactions go. */
static void
command_ended(struct coprocess *co)
{
	if (co->to >= 0)
		close(co->to);
	if (co->from >= 0)
		close(co->from);
	co->to = co->from = -1;
	buf_reset(&co->in);
	co->in_off = 0;
	serve_drop_open(&co->serve);
}

/*
 * Wait until deadline_ms for COMMAND to exit, reading and dropping
 * what it still writes so that it never blocks on a full pipe; then
 * kill it.  Its wait status.
 */
static int
reap(struct coprocess *co, int64_t deadline_ms)
{
	unsigned delay_us = 1000;
	char drop[4096];
	int status = 0;
	pid_t got;

	while ((got = waitpid(co->pid, &status, WNOHANG)) == 0 ||
	    (got < 0 && errno == EINTR)) {
		while (co->from >= 0 && read(co->from, drop, sizeof(drop)) > 0)
			;
		if (clock_backoff(&delay_us, 50000, deadline_ms) < 0) {
			kill(co->pid, SIGKILL);
			while (waitpid(co->pid, &status, 0) < 0 && errno == EINTR)
				;
			break;
		}
	}
	co->pid = 0;
	command_ended(co);
	return status;
}

/* Stop COMMAND at once: its state is not to be trusted. */
static void
kill_command(struct coprocess *co)
{
	int status;

	if (co->pid == 0)
		return;
	kill(co->pid, SIGKILL);
	while (waitpid(co->pid, &status, 0) < 0 && errno == EINTR)
		;
	co->pid = 0;
	command_ended(co);
}

/* COMMAND closed its end of a pipe: how it ended, in co->why.  -1. */
static int
gone(struct coprocess *co)
{
	int status = reap(co, co->deadline_ms);

	if (WIFSIGNALED(status))
		return fail(co, "was killed by signal %d before saying done",
		    WTERMSIG(status));
	return fail(co, "exited with status %d before saying done",
	    WEXITSTATUS(status));
}

/* The run's deadline passed: COMMAND is killed.  -1. */
static int
too_late(struct coprocess *co)
{
	kill_command(co);
	return fail(co, "did not say done within %g s (PERC_LOCK_TTL), and "
	    "was killed", co->db->ttl_ms / 1000.0);
}

/* Poll pfd until it is ready, or the run's deadline has passed: -1. */
static int
wait_for(struct coprocess *co, struct pollfd *pfd)
{
	int64_t left;

	while ((left = co->deadline_ms - clock_mono_ms()) > 0)
		if (poll(pfd, 1, left > INT_MAX ? INT_MAX : (int)left) > 0)
			return 0;
	return too_late(co);
}

/* Write len bytes to COMMAND's standard input. */
static int
send_all(struct coprocess *co, const char *data, size_t len)
{
	struct pollfd pfd = { .fd = co->to, .events = POLLOUT };
	ssize_t n;

	while (len > 0) {
		if ((n = write(co->to, data, len)) >= 0) {
			data += n;
			len -= (size_t)n;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno == EPIPE)
			return gone(co);
		if (errno != EAGAIN) {
			kill_command(co);
			return fail(co, "could not be written to: %s",
			    strerror(errno));
		}
		if (wait_for(co, &pfd) < 0)
			return -1;
	}
	return 0;
}

/* serve's sink: an answer to COMMAND. */
static int
write_answer(const char *data, size_t len, void *arg)
{
	return send_all(arg, data, len) < 0 ? PERC_EIO : 0;
}

/*
 * Read what COMMAND has written into co->in, without waiting.  0, 1 at
 * the end of its output (nothing read), or -1.
 */
static int
fill(struct coprocess *co)
{
	size_t unread = co->in.len - co->in_off;
	ssize_t got;

	if (co->in_off > 0) {
		memmove(co->in.data, co->in.data + co->in_off, unread);
		co->in.len = unread;
		co->in_off = 0;
	}
	if (buf_grow(&co->in, 65536) < 0) {
		kill_command(co);
		return fail(co, "wrote a line too long for memory");
	}
	for (;;) {
		got = read(co->from, co->in.data + co->in.len,
		    co->in.cap - co->in.len - 1);
		if (got > 0) {
			co->in.len += (size_t)got;
			co->in.data[co->in.len] = '\0';
			return 0;
		}
		if (got == 0)
			return 1;
		if (errno == EAGAIN)
			return 0;
		if (errno != EINTR) {
			kill_command(co);
			return fail(co, "could not be read from: %s",
			    strerror(errno));
		}
	}
}

/*
 * The next whole line COMMAND has written, without its newline,
 * NUL-terminated, in *line (valid until the next fill): its length, or
 * -1 when it has written none yet.
 */
static ssize_t
next_line(struct coprocess *co, char **line)
{
	char *nl = co->in.len > co->in_off ? memchr(co->in.data + co->in_off,
	    '\n', co->in.len - co->in_off) : NULL;
	size_t n;

	if (nl == NULL)
		return -1;
	*nl = '\0';
	*line = co->in.data + co->in_off;
	n = (size_t)(nl - *line);
	co->in_off += n + 1;
	return (ssize_t)n;
}

static int
start(struct coprocess *co)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t dflt, none;
	int in[2], out[2], rc;

	if (pipe2(in, O_CLOEXEC) < 0)
		return fail(co, "could not be started: pipe: %s",
		    strerror(errno));
	if (pipe2(out, O_CLOEXEC) < 0) {
		rc = errno;
		close(in[0]);
		close(in[1]);
		return fail(co, "could not be started: pipe: %s", strerror(rc));
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], STDIN_FILENO);
	posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
	sigemptyset(&dflt);
	sigaddset(&dflt, SIGPIPE);
	sigaddset(&dflt, SIGINT);
	sigaddset(&dflt, SIGTERM);
	sigemptyset(&none);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigdefault(&attr, &dflt);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF |
	    POSIX_SPAWN_SETSIGMASK);
	rc = posix_spawnp(&co->pid, co->argv[0], &fa, &attr, co->argv,
	    co->envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(in[0]);
	close(out[1]);
	if (rc != 0) {
		close(in[1]);
		close(out[0]);
		co->pid = 0;
		return fail(co, "could not be run: '%s': %s", co->argv[0],
		    strerror(rc));
	}
	co->to = in[1];
	co->from = out[0];
	fcntl(co->to, F_SETFL, O_NONBLOCK);
	fcntl(co->from, F_SETFL, O_NONBLOCK);
	return 0;
}

/*
 * COMMAND, running for the next cell: started if it is not, and again
 * if it has ended its output since the last cell, which is no failure
 * of any cell.  What it wrote meanwhile stays, for the cell to read.
 */
static int
ready(struct coprocess *co)
{
	int rc;

	if (co->pid != 0 && (rc = fill(co)) != 0) {
		if (rc < 0)
			return -1;
		reap(co, clock_deadline(co->db->ttl_ms));
	}
	return co->pid != 0 ? 0 : start(co);
}

/* "run TXN ROW COLUMN", ROW and COLUMN written as words of a request. */
static int
send_run(struct coprocess *co, perc_txn *txn, perc_bytes row,
    perc_bytes col)
{
	perc_buf line = PERC_BUF_INIT;
	int rc;

	if ((rc = buf_addf(&line, "run %s ", perc_txn_handle(txn))) == 0)
		rc = row.len > 0 ? escape_field_spaces(&line, row) :
		    buf_add(&line, "\\e", 2);
	if (rc == 0 && (rc = buf_add(&line, " ", 1)) == 0)
		rc = col.len > 0 ? escape_field_spaces(&line, col) :
		    buf_add(&line, "\\e", 2);
	if (rc == 0 && (rc = buf_add(&line, "\n", 1)) == 0)
		rc = send_all(co, line.data, line.len);
	else if (rc < 0)
		fail(co, "could not be sent its cell: %s", perc_errmsg());
	perc_buf_dispose(&line);
	return rc < 0 ? -1 : 0;
}

/* Words of a line: the first at *word, its length; 0 for none. */
static size_t
first_word(const char **word, const char *line, size_t len)
{
	size_t i = 0, n = 0;

	while (i < len && line[i] == ' ')
		i++;
	*word = line + i;
	while (i + n < len && line[i + n] != ' ')
		n++;
	return n;
}

/*
 * The STATUS of "done STATUS", rest the line after "done": 0 to 255,
 * or -1 for anything else, and then PERC_EUSAGE's message.
 */
static int
done_status(const char *rest, size_t len)
{
	const char *w, *after;
	size_t n = first_word(&w, rest, len), i;
	int status = 0;

	for (i = 0; i < n && w[i] >= '0' && w[i] <= '9' && status <= 255;
	    i++)
		status = status * 10 + (w[i] - '0');
	if (n > 0 && i == n && status <= 255 && first_word(&after, w + n,
	    len - (size_t)(w + n - rest)) == 0)
		return status;
	error_set(PERC_EUSAGE, "done takes one status, a number from 0 to "
	    "255: done 0 commits the run, any other number aborts it");
	return -1;
}

/* No whole line from COMMAND yet: serve_written's return. */
#define MORE (-2)

/*
 * Serve the requests COMMAND has written, until it says done: the
 * status it gives; -1 when COMMAND fails the cell; MORE when it has
 * written no done yet.
 */
static int
serve_written(struct coprocess *co)
{
	const char *w;
	ssize_t len;
	size_t n;
	char *line = NULL;
	int status;

	while ((len = next_line(co, &line)) >= 0) {
		n = first_word(&w, line, (size_t)len);
		if (n == 4 && memcmp(w, "done", 4) == 0) {
			status = done_status(w + 4, (size_t)len -
			    (size_t)(w + 4 - line));
			if (status >= 0)
				return status;
			if (serve_error(&co->serve, PERC_EUSAGE) < 0)
				return -1;
			continue;
		}
		if (n > 0 && !request_is_verb(w, n)) {
			fail(co, "wrote '%s', neither a request nor done, and "
			    "was stopped", error_quote(bytes_of(line,
			    (size_t)len)));
			kill_command(co);       /* frees line */
			return -1;
		}
		if (serve_line(&co->serve, line, (size_t)len) < 0)
			return -1;
	}
	return MORE;
}

/* perc_observer's start: COMMAND gets the cell (its one slot). */
static void
start_cell(size_t slot, perc_txn *txn, perc_bytes row, perc_bytes col,
    void *arg)
{
	struct coprocess *co = arg;

	(void)slot;
	co->said_done = 0;
	co->why[0] = '\0';
	co->failed = ready(co) < 0;
	co->deadline_ms = clock_deadline(co->db->ttl_ms);
	if (!co->failed && send_run(co, txn, row, col) < 0)
		co->failed = 1;
	if (!co->failed)
		co->serve.run_txn = txn;
}

/* COMMAND's run has ended, its observer saying status: its slot. */
static size_t
ended(struct coprocess *co, int status, int *out)
{
	co->serve.run_txn = NULL;
	if (status > 0)
		snprintf(co->why, sizeof(co->why), "said done %d", status);
	co->said_done = status >= 0;
	*out = status;
	return 0;
}

/*
 * perc_observer's wait: serve COMMAND's requests as they come, until
 * it says done, fails, or has not said done by its run's deadline.
 * The store is taken for each request and let go after it, as by any
 * command: a COMMAND that thinks between two requests keeps no other
 * process from the store.
 */
static size_t
wait_run(int *status, void *arg)
{
	struct coprocess *co = arg;
	struct pollfd pfd;
	int rc;

	for (;;) {
		if (co->failed || (rc = serve_written(co)) != MORE)
			return ended(co, co->failed ? -1 : rc, status);
		pfd = (struct pollfd){ .fd = co->from, .events = POLLIN };
		if (wait_for(co, &pfd) < 0)             /* killed, too late */
			return ended(co, -1, status);
		if ((rc = fill(co)) != 0) {
			if (rc > 0)
				gone(co);
			return ended(co, -1, status);
		}
	}
}

/*
 * perc_observer's done: the answer to "done STATUS", once the run is
 * committed or aborted.  A COMMAND that does not take it is stopped,
 * to start again for the next cell; the run stands.
 */
static void
answer_done(const perc_observer_run *run, int rc, void *arg)
{
	struct coprocess *co = arg;
	char ts[24];

	if (!co->said_done)
		return;
	co->said_done = 0;
	co->deadline_ms = clock_deadline(co->db->ttl_ms);
	if (rc == 0 && strcmp(run->outcome, "taken") == 0)
		rc = error_set(PERC_ECONFLICT, "taken by another runner: "
		    "its run of the cell committed first");
	else if (rc == 0 && strcmp(run->outcome, "conflicted") == 0)
		rc = error_set(PERC_ECONFLICT, "the commit lost a write "
		    "conflict; the cell stays dirty and runs again");
	snprintf(ts, sizeof(ts), "%llu", (unsigned long long)run->commit_ts);
	if ((rc < 0 ? serve_error(&co->serve, rc) : serve_ok(&co->serve,
	    run->commit_ts ? bytes_str(ts) : bytes_of(NULL, 0))) < 0)
		kill_command(co);
}

/* PERC_DIR=dir, then the rest of our environment but its PERC_DIR. */
static int
make_env(struct coprocess *co, const char *dir)
{
	size_t n = 0, k = 1, i;

	while (environ[n] != NULL)
		n++;
	if ((co->envp = calloc(n + 2, sizeof(*co->envp))) == NULL ||
	    (co->envp[0] = malloc(strlen(dir) + 10)) == NULL)
		return error_set(PERC_EIO, "out of memory");
	sprintf(co->envp[0], "PERC_DIR=%s", dir);
	for (i = 0; i < n; i++)
		if (strncmp(environ[i], "PERC_DIR=", 9) != 0)
			co->envp[k++] = environ[i];
	return 0;
}

int
coprocess_init(struct coprocess *co, perc_observer *obs, perc_db *db,
    char *const *argv, const char *dir)
{
	memset(co, 0, sizeof(*co));
	co->db = db;
	co->argv = argv;
	co->to = co->from = -1;
	serve_init(&co->serve, db, write_answer, co);
	obs->observe = NULL;
	obs->start = start_cell;
	obs->wait = wait_run;
	obs->slots = 1;
	obs->done = answer_done;
	obs->local = 1;
	obs->arg = co;
	return make_env(co, dir);
}

const char *
coprocess_failure(const struct coprocess *co)
{
	return co->why;
}

void
coprocess_end(struct coprocess *co)
{
	if (co->pid != 0) {
		close(co->to);
		co->to = -1;
		reap(co, clock_deadline(co->db->ttl_ms));
	}
	serve_dispose(&co->serve);
	perc_buf_dispose(&co->in);
	if (co->envp != NULL)
		free(co->envp[0]);
	free(co->envp);
	co->envp = NULL;
}

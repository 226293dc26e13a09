/*
 * lib/server/server.c - a LevelDB data directory's store server: one
 * process holds the store open and serves the seam's verbs (verbs.h)
 * to every perc process of its user on the directory, over a
 * Unix-domain socket.
 *
 * One thread serves the requests in rounds.  A round reads what every
 * connection has sent, serves each request in turn (a verb's check and
 * its write are one step, as single-row atomicity asks, since nothing
 * else runs between them), then makes every write of the round durable
 * with one sync of LevelDB's log, and only then answers any of them:
 * writers of different rows that came together share a sync (group
 * commit), and no reader is told of a write that a crash could still
 * take back.  A sync takes hundreds of microseconds, the serving of a
 * verb a few, so while one round syncs the next round's requests pile
 * up, and the more writers there are, the more share each sync.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "disk.h"
#include "dispatch.h"
#include "error.h"
#include "server.h"
#include "wire.h"

/* How often the server looks around (its directory, waiting processes,
   idleness) when no request comes. */
#define TICK_MS 200
/* A connection that has not said who it is within this is dropped. */
#define HELLO_MS 5000
/* The most one connection's reading takes in one round. */
#define READ_CHUNK (1u << 20)

struct conn {
	int             fd;
	int64_t         since;
	perc_buf        in, out;
	size_t          sent;     /* of out */
	int             closing;
	struct dispatch d;
};

struct server {
	const char     *dir;
	struct stat     dir_st;
	struct store   *store;
	int             listen_fd;
	struct conn    *conns;
	size_t          n, cap;
	const struct store_env *env;
	int64_t         busy_ms;  /* when a process was last connected */
	int             stop;
};

static volatile sig_atomic_t signalled;

static void
on_signal(int sig)
{
	(void)sig;
	signalled = 1;
}

static void
say(const char *what)
{
	fprintf(stderr, "perc serve: %s\n", what);
}

/* Take the lock that says a server runs: 1 when another holds it. */
static int
take_server_lock(int *fd, const char *dir, pid_t *other)
{
	char path[4096], pid[32];
	int len;

	disk_path(path, sizeof(path), dir, SERVER_LOCK);
	if ((*fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0)
		return error_set(PERC_EIO, "cannot open '%s': %s", path,
		    strerror(errno));
	if (flock(*fd, LOCK_EX | LOCK_NB) != 0) {
		if (errno != EWOULDBLOCK)
			return error_set(PERC_EIO, "cannot lock '%s': %s", path,
			    strerror(errno));
		if (other != NULL && server_running(other, dir) < 0)
			*other = 0;
		close(*fd);
		*fd = -1;
		return 1;
	}
	/* For people (perc serve --status): on a full disk it may not
	   fit, which stops nothing, since the lock is what tells. */
	len = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(*fd, 0) == 0)
		(void)!pwrite(*fd, pid, (size_t)len, 0);
	return 0;
}

/* Bind the socket, in place of one a server before us left. */
static int
listen_on(struct server *sv)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	mode_t mask;
	int dirfd, rc, saved;

	if ((rc = server_address(addr.sun_path, sizeof(addr.sun_path),
	    &dirfd, sv->dir)) < 0)
		return rc;
	(void)unlink(addr.sun_path);
	sv->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, 0);
	mask = umask(077);      /* only its user reaches it */
	rc = sv->listen_fd < 0 || bind(sv->listen_fd,
	    (struct sockaddr *)&addr, sizeof(addr)) != 0 ||
	    listen(sv->listen_fd, 128) != 0 ? -1 : 0;
	saved = errno;
	umask(mask);
	close(dirfd);
	if (rc < 0)
		return error_set(PERC_EIO, "cannot listen on '%s/%s': %s",
		    sv->dir, SERVER_SOCKET, strerror(saved));
	return 0;
}

static void
unlisten(struct server *sv)
{
	char path[4096];

	if (sv->listen_fd < 0)
		return;
	close(sv->listen_fd);
	sv->listen_fd = -1;
	disk_path(path, sizeof(path), sv->dir, SERVER_SOCKET);
	(void)unlink(path);
}

/* A process of our user, or root's: else the connection is refused. */
static int
peer_allowed(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 &&
	    (cred.uid == geteuid() || cred.uid == 0);
}

static void
accept_all(struct server *sv)
{
	struct conn *c;
	int fd;

	while ((fd = accept4(sv->listen_fd, NULL, NULL, SOCK_CLOEXEC |
	    SOCK_NONBLOCK)) >= 0) {
		if (!peer_allowed(fd) || (sv->n == sv->cap &&
		    (c = realloc(sv->conns, (sv->cap * 2 + 8) *
		    sizeof(*c))) == NULL)) {
			close(fd);
			continue;
		}
		if (sv->n == sv->cap) {
			sv->conns = c;
			sv->cap = sv->cap * 2 + 8;
		}
		c = &sv->conns[sv->n++];
		memset(c, 0, sizeof(*c));
		c->fd = fd;
		c->since = clock_mono_ms();
		dispatch_init(&c->d);
	}
}

static void
conn_close(struct conn *c)
{
	close(c->fd);
	perc_buf_dispose(&c->in);
	perc_buf_dispose(&c->out);
	dispatch_dispose(&c->d);
}

/* Read what c sent, while no reply of its waits to go. */
static void
conn_read(struct conn *c)
{
	size_t got = 0;
	ssize_t n;

	while (got < READ_CHUNK) {
		if (buf_grow(&c->in, 65536) < 0) {
			c->closing = 1;
			return;
		}
		n = recv(c->fd, c->in.data + c->in.len, c->in.cap - c->in.len,
		    MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			c->closing = 1;
			return;
		}
		c->in.len += (size_t)n;
		got += (size_t)n;
	}
}

/* Serve the requests c has sent whole: a garbled one drops it. */
static void
conn_serve(struct server *sv, struct conn *c)
{
	struct wire_in frame;
	size_t used, off = 0;
	int rc;

	while (!c->closing && (rc = wire_frame(c->in.data + off,
	    c->in.len - off, &frame, &used)) != 1) {
		if (rc < 0 || dispatch(&c->out, &c->d, sv->store, &frame) < 0)
			c->closing = 1;
		off += used;
		if (c->d.stop)
			sv->stop = 1;
	}
	if (off > 0) {
		memmove(c->in.data, c->in.data + off, c->in.len - off);
		c->in.len -= off;
	}
}

static void
conn_write(struct conn *c)
{
	ssize_t n;

	while (c->sent < c->out.len) {
		n = send(c->fd, c->out.data + c->sent, c->out.len - c->sent,
		    MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n < 0) {
			c->closing = 1;
			return;
		}
		c->sent += (size_t)n;
	}
	buf_reset(&c->out);
	c->sent = 0;
}

/* Open the store, the server's way: see sync_later. */
static int
open_store(struct server *sv)
{
	int rc;

	if ((rc = store_leveldb_open(&sv->store, NULL, sv->env)) < 0)
		return rc;
	sv->store->sync_later = 1;
	return sv->store->ops->acquire(sv->store,
	    clock_deadline(sv->env->timeout_ms));
}

/*
 * One round: read, serve, sync, answer.  0, 1 when the server is to
 * stop (its store read-only for a full disk), or a failure of the
 * store after which it stops.  When the sync failed, the requests of
 * the round get no answer, and their processes send them to the next
 * server, where a step that was done finds itself done.
 */
static int
round_serve(struct server *sv, const struct pollfd *p, size_t polled)
{
	int64_t now = clock_mono_ms();
	size_t i, j;
	int rc = 0;

	/* p[1..polled] are the connections polled; the ones accepted
	   since are read at once (their reads do not block) */
	for (i = 0; i < sv->n; i++)
		if (i >= polled ||
		    (p[i + 1].revents & (POLLIN | POLLHUP | POLLERR)))
			conn_read(&sv->conns[i]);
	for (i = 0; i < sv->n; i++)
		if (sv->conns[i].out.len == 0)
			conn_serve(sv, &sv->conns[i]);
	if (sv->store->sync_owed)
		rc = sv->store->ops->sync(sv->store);
	for (i = 0; i < sv->n && rc == 0; i++)
		if (sv->conns[i].out.len > 0)
			conn_write(&sv->conns[i]);
	/*
	 * A write that failed (a full disk, a failed compaction) was
	 * answered as failed; LevelDB's log may end torn, so the store is
	 * opened anew, by the next server, before anything more goes in.
	 */
	if (rc == 0 && sv->store->failed)
		rc = error_set(PERC_EIO, "a write of the store failed: "
		    "stopping, so that the next command opens it anew");
	/* A store opened on a full disk is read-only: a command that
	   opened it itself would try to write again at its next open, and
	   so does the next server. */
	for (i = 0; i < sv->n && rc == 0; i++)
		if (sv->store->read_only == ENOSPC && sv->conns[i].d.served)
			rc = 1;

	for (i = j = 0; i < sv->n; i++) {
		struct conn *c = &sv->conns[i];

		if (!c->d.greeted && now - c->since > HELLO_MS)
			c->closing = 1;
		if (c->closing)
			conn_close(c);
		else
			sv->conns[j++] = *c;
	}
	sv->n = j;
	return rc;
}

/* Is the directory we serve still there, the same one? */
static int
dir_still_there(const struct server *sv)
{
	struct stat st;

	return stat(sv->dir, &st) == 0 && st.st_dev == sv->dir_st.st_dev &&
	    st.st_ino == sv->dir_st.st_ino;
}

/*
 * A process that opens the store itself (PERC_SERVE=0) waits for it:
 * let it go to that process, and take it back after (the requests that
 * come meanwhile wait, as they would for a held store).
 */
static int
hand_over(struct server *sv)
{
	struct store *s = sv->store;
	int rc;

	store_pause(s, clock_deadline(1000));  /* it goes first, then us */
	s->ops->release(s);
	while ((rc = s->ops->acquire(s, clock_deadline(1000))) ==
	    PERC_ETIMEOUT && !signalled && dir_still_there(sv))
		;
	return rc == PERC_ETIMEOUT ? 0 : rc;
}

static int
serve_loop(struct server *sv, int idle_s)
{
	struct pollfd *p = NULL, *np;
	int64_t now, looked = 0;
	size_t i, polled;
	int rc = 0;

	sv->busy_ms = clock_mono_ms();
	while (!signalled && !sv->stop) {
		if ((np = realloc(p, (sv->n + 1) * sizeof(*p))) == NULL) {
			rc = error_set(PERC_EIO, "out of memory");
			break;
		}
		p = np;
		p[0] = (struct pollfd){ .fd = sv->listen_fd, .events = POLLIN };
		for (i = 0; i < sv->n; i++)
			p[i + 1] = (struct pollfd){ .fd = sv->conns[i].fd,
			    .events = sv->conns[i].out.len > 0 ? POLLOUT :
			    POLLIN };
		polled = sv->n;
		if (poll(p, polled + 1, TICK_MS) < 0 && errno != EINTR) {
			rc = error_set(PERC_EIO, "poll: %s", strerror(errno));
			break;
		}
		if (p[0].revents & POLLIN)
			accept_all(sv);
		if ((rc = round_serve(sv, p, polled)) != 0) {
			rc = rc < 0 ? rc : 0;
			break;
		}
		now = clock_mono_ms();
		if (sv->n > 0)
			sv->busy_ms = now;
		if (now - looked < TICK_MS)
			continue;
		looked = now;
		if (!dir_still_there(sv)) {
			say("the data directory is gone: stopping");
			break;
		}
		if (idle_s > 0 && sv->n == 0 && now - sv->busy_ms >=
		    (int64_t)idle_s * 1000)
			break;
		if (store_waited_for(sv->store) && (rc = hand_over(sv)) < 0)
			break;
	}
	free(p);
	return rc;
}

/* Tell the starter that we serve (0), or why we cannot. */
static void
tell_ready(int *fd, int rc)
{
	const char *msg = rc < 0 ? perc_errmsg() : "";

	if (*fd < 0)
		return;
	if (write(*fd, &rc, sizeof(rc)) == sizeof(rc))
		(void)!write(*fd, msg, strlen(msg));
	close(*fd);
	*fd = -1;
}

int
server_run(const char *dir, const struct store_env *env, int idle_s,
    pid_t *other, int ready_fd)
{
	struct server sv;
	struct sigaction sa;
	char *abs;
	int lockfd, rc;
	size_t i;

	memset(&sv, 0, sizeof(sv));
	sv.listen_fd = -1;
	if ((abs = realpath(dir, NULL)) == NULL || stat(abs, &sv.dir_st)) {
		rc = error_set(PERC_EIO, "cannot find '%s': %s", dir,
		    strerror(errno));
		tell_ready(&ready_fd, rc);
		free(abs);
		return rc;
	}
	sv.dir = abs;
	if ((rc = take_server_lock(&lockfd, abs, other)) != 0) {
		tell_ready(&ready_fd, rc > 0 ? 0 : rc);   /* another serves */
		free(abs);
		return rc;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	sv.env = env;
	if ((rc = open_store(&sv)) == 0 && (rc = listen_on(&sv)) == 0) {
		tell_ready(&ready_fd, 0);
		rc = serve_loop(&sv, idle_s);
	}
	tell_ready(&ready_fd, rc);
	unlisten(&sv);
	for (i = 0; i < sv.n; i++)
		conn_close(&sv.conns[i]);
	free(sv.conns);
	if (sv.store != NULL)
		sv.store->ops->dispose(sv.store);       /* released, settled */
	if (lockfd >= 0)
		close(lockfd);
	free(abs);
	return rc;
}

int
store_server_run(const char *dir, const struct store_env *env, int idle_s,
    long *pid)
{
	pid_t other = 0;
	int rc = server_run(dir, env, idle_s, &other, -1);

	*pid = other;
	return rc;
}

/*
 * lib/server/client.c - the LevelDB store as a process sees it through
 * its data directory's store server: each verb of the seam one request
 * (verbs.h), the server started when none runs, and a server that
 * goes away mid-request replaced and the request sent again (the
 * seam's steps find their work done the second time).
 *
 * What is this process's own stays here, on the directory's LevelDB
 * store opened but never taken (struct store_ops.acquire is never
 * called on it): the timestamp oracle (DIR/oracle, under its own
 * lock), the wakeups (DIR/wake, DIR/wake.log), and whether a lock's
 * owner lives (its journal, on this host).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "codec.h"
#include "error.h"
#include "server.h"
#include "verbs.h"
#include "wire.h"
#include "writeset.h"

struct srv_store {
	struct store      base;     /* first: the seam's view */
	struct store     *local;    /* the directory's LevelDB, not taken */
	struct store_env  env;      /* what the server is started with */
	char             *dir;
	int               fd;       /* the connection, or -1 */
	pid_t             pid;      /* the server's */
	int               turn;     /* acquired, not released since */
	perc_buf          req, reply;
	struct wire_in    in;       /* the reply past its result */
	int               have_reply;
	int64_t           deadline; /* the request's */
};

/*
 * A walk's callback may make requests of its own (a scan's cleaning of
 * the locks it read past): the walk's reply is moved out of their way
 * first, into held, and read through in.
 */
static void
walk_begin(struct srv_store *sv, perc_buf *held, struct wire_in *in)
{
	*held = sv->reply;
	*in = sv->in;
	sv->reply = (perc_buf)PERC_BUF_INIT;
}

static int
walk_end(perc_buf *held, int rc)
{
	perc_buf_dispose(held);
	return rc;
}

static void
hang_up(struct srv_store *sv)
{
	if (sv->fd >= 0)
		close(sv->fd);
	sv->fd = -1;
}

/* Wait for fd to be ready for events until the request's deadline. */
static int
ready(struct srv_store *sv, short events)
{
	struct pollfd p = { .fd = sv->fd, .events = events };
	int64_t left;
	int n;

	for (;;) {
		if ((left = sv->deadline - clock_mono_ms()) <= 0)
			return error_set(PERC_ETIMEOUT, "the store server of "
			    "'%s' (process %ld) did not answer in time: it "
			    "may be stopped or hung; try again, or raise "
			    "PERC_LOCK_TIMEOUT", sv->dir, (long)sv->pid);
		if ((n = poll(&p, 1, left > 1000 ? 1000 : (int)left)) > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return error_set(PERC_EIO, "cannot wait for the store "
			    "server: %s", strerror(errno));
	}
}

/*
 * Send sv->req and read the reply's frame into sv->reply: 0, 1 when the
 * server went away (the request may or may not have been served), or a
 * failure.
 */
static int
exchange(struct srv_store *sv)
{
	size_t off = 0, used;
	ssize_t n;
	int rc;

	while (off < sv->req.len) {
		if ((rc = ready(sv, POLLOUT)) < 0)
			return rc;
		n = send(sv->fd, sv->req.data + off, sv->req.len - off,
		    MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n < 0)
			return 1;
		off += (size_t)n;
	}
	buf_reset(&sv->reply);
	for (;;) {
		rc = wire_frame(sv->reply.data, sv->reply.len, &sv->in, &used);
		if (rc == 0 && used == sv->reply.len)
			return 0;
		if (rc != 1)
			return error_set(PERC_EIO, "the store server of '%s' "
			    "sent a message that is not perc's; stop it "
			    "(perc serve --stop) and retry", sv->dir);
		if ((rc = ready(sv, POLLIN)) < 0 ||
		    (rc = buf_grow(&sv->reply, 65536)) < 0)
			return rc;
		n = recv(sv->fd, sv->reply.data + sv->reply.len,
		    sv->reply.cap - sv->reply.len, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			return 1;
		sv->reply.len += (size_t)n;
	}
}

static int
request_vbegin(struct srv_store *sv, enum server_verb v, va_list ap)
{
	unsigned char verb = (unsigned char)v;
	int rc;

	buf_reset(&sv->req);
	if ((rc = wire_begin(&sv->req)) < 0 ||
	    (rc = buf_add(&sv->req, &verb, 1)) < 0)
		return rc;
	return wire_vpack(&sv->req, server_verbs[v].request, ap);
}

static int
request_begin(struct srv_store *sv, enum server_verb v, ...)
{
	va_list ap;
	int rc;

	va_start(ap, v);
	rc = request_vbegin(sv, v, ap);
	va_end(ap);
	return rc;
}

/* The reply's result, with its message, into sv->in's place. */
static int
result_of(struct srv_store *sv)
{
	perc_bytes msg;
	int result;

	if (wire_unpack(&sv->in, WIRE_RESULT, &result, &msg,
	    &sv->base.read_only, &sv->base.failed) < 0)
		return error_set(PERC_EIO, "the store server of '%s' sent a "
		    "short reply; stop it (perc serve --stop) and retry",
		    sv->dir);
	sv->have_reply = 1;
	if (result < 0 && msg.len > 0)
		return error_set(result, "%.*s", (int)msg.len,
		    (const char *)msg.data);
	return result;
}

static int connect_server(struct srv_store *sv);

/*
 * Send the request begun, a new server's too if need be.  A write that
 * failed in the server (LevelDB's failure sticks until the store is
 * opened again, as after a full disk) stops that server: the request
 * goes once more, to the next one, as a command that opened the store
 * anew would have found it.
 */
static int
request_send(struct srv_store *sv)
{
	int rc, again = 1;

	wire_end(&sv->req, 0);
	sv->deadline = clock_deadline(sv->env.timeout_ms);
	for (;;) {
		sv->have_reply = 0;
		if (sv->fd < 0 && (rc = connect_server(sv)) < 0)
			return rc;
		if ((rc = exchange(sv)) == 0 &&
		    ((rc = result_of(sv)) >= 0 || !sv->base.failed || !again--))
			return rc;
		hang_up(sv);
		if (rc < 0 && !sv->have_reply)
			return rc;
	}
}

/* A request of the verb's fields, sent: its reply's result. */
static int
call(struct srv_store *sv, enum server_verb v, ...)
{
	va_list ap;
	int rc;

	va_start(ap, v);
	rc = request_vbegin(sv, v, ap);
	va_end(ap);
	return rc < 0 ? rc : request_send(sv);
}

static int
garbage(struct srv_store *sv)
{
	return error_set(PERC_EIO, "the store server of '%s' sent a reply "
	    "that does not fit its request; stop it (perc serve --stop) "
	    "and retry", sv->dir);
}

/* The reply's out fields, after its records: rc, or a garbled reply. */
static int
outs(struct srv_store *sv, struct wire_in *in, enum server_verb v, int rc,
    ...)
{
	va_list ap;
	int bad;

	if (!sv->have_reply)
		return rc;
	va_start(ap, rc);
	bad = wire_vunpack(in, server_verbs[v].out, ap);
	va_end(ap);
	return bad < 0 ? garbage(sv) : rc;
}

/* The next record of a walk: 1 with its tag, 0 at the end, or garbage. */
static int
record(struct srv_store *sv, struct wire_in *in, int *tag)
{
	if (wire_u8(in, tag) < 0 || *tag > WIRE_PASSED)
		return garbage(sv);
	return *tag != WIRE_END;
}

/*
 * The handshake: 0, 1 when the server is of another build or format
 * (it is then asked to stop), or 2 when it went away meanwhile.
 */
static int
hello(struct srv_store *sv)
{
	perc_bytes build;
	int rc, pid, format;

	if ((rc = request_begin(sv, V_HELLO, bytes_str(server_build),
	    sv->local->ops->data_format)) < 0)
		return rc;
	wire_end(&sv->req, 0);
	if ((rc = exchange(sv)) != 0)
		return rc < 0 ? rc : 2;
	if ((rc = result_of(sv)) < 0)
		return rc;
	if (wire_unpack(&sv->in, server_verbs[V_HELLO].out, &build, &pid,
	    &format) < 0)
		return garbage(sv);
	sv->pid = pid;
	if (build.len == strlen(server_build) &&
	    memcmp(build.data, server_build, build.len) == 0 &&
	    format == sv->local->ops->data_format)
		return 0;
	/* Not ours: it finishes what it serves, and goes. */
	if ((rc = request_begin(sv, V_STOP)) < 0)
		return rc;
	wire_end(&sv->req, 0);
	(void)exchange(sv);
	return 1;
}

/* 0 connected, 1 no server listens, or a failure. */
static int
connect_once(struct srv_store *sv)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int dirfd, rc, saved;

	if ((rc = server_address(addr.sun_path, sizeof(addr.sun_path),
	    &dirfd, sv->dir)) < 0)
		return rc;
	if ((sv->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0) {
		saved = errno;
		close(dirfd);
		return error_set(PERC_EIO, "cannot make a socket: %s",
		    strerror(saved));
	}
	rc = connect(sv->fd, (struct sockaddr *)&addr, sizeof(addr));
	saved = errno;
	close(dirfd);
	if (rc == 0)
		return 0;
	hang_up(sv);
	if (saved == ENOENT || saved == ECONNREFUSED || saved == EAGAIN)
		return 1;
	return error_set(PERC_EIO, "cannot reach the store server of '%s': "
	    "%s", sv->dir, strerror(saved));
}

/*
 * Connect to the directory's server, starting one when none answers
 * (again every half second, in case the one started lost a race to
 * one that has gone since), and one of our own in place of a server
 * of another build.
 */
static int
connect_server(struct srv_store *sv)
{
	int64_t spawned = 0;
	unsigned delay = 200;
	int rc;

	for (;;) {
		if ((rc = connect_once(sv)) == 0) {
			perc_buf request = sv->req;     /* the one to send */

			sv->req = (perc_buf)PERC_BUF_INIT;
			rc = hello(sv);
			perc_buf_dispose(&sv->req);
			sv->req = request;
			if (rc == 0)
				return 0;
			hang_up(sv);
			if (rc < 0)
				return rc;
			if (rc == 1 && server_stop(sv->dir, sv->deadline) < 0)
				return error_set(PERC_ETIMEOUT, "the store "
				    "server of '%s' (process %ld) is of "
				    "another perc build and did not stop in "
				    "time; stop it (perc serve --stop)",
				    sv->dir, (long)sv->pid);
			continue;
		}
		if (rc < 0)
			return rc;
		/* One started says it serves: straight to it. */
		if (clock_mono_ms() - spawned >= 500) {
			if ((rc = server_spawn(sv->dir, &sv->env,
			    (int)clock_env_ms("PERC_SERVE_IDLE", 10000) /
			    1000, sv->deadline)) < 0)
				return rc;
			spawned = clock_mono_ms();
			continue;
		}
		if (clock_backoff(&delay, 20000, sv->deadline) < 0)
			return error_set(PERC_ETIMEOUT, "no store server of "
			    "'%s' started in time; try again, or run one "
			    "with 'perc serve'", sv->dir);
	}
}

/* The seam's verbs, each one request. */

static int
sv_upgrade(struct store *s, int from)
{
	return call((struct srv_store *)s, V_UPGRADE, from);
}

static int
sv_read(struct store *s, perc_buf *out, perc_bytes row, perc_bytes col,
    perc_ts ts, struct lock_rec *blocker, const struct lock_fate *known)
{
	struct srv_store *sv = (struct srv_store *)s;
	perc_bytes value = { NULL, 0 };
	int rc;

	rc = call(sv, V_READ, row, col, ts, known);
	rc = outs(sv, &sv->in, V_READ, rc, &value, blocker);
	return rc == 0 ? buf_set(out, value.data, value.len) : rc;
}

static int
sv_get_lock(struct store *s, struct lock_rec *out, perc_bytes row,
    perc_bytes col)
{
	struct srv_store *sv = (struct srv_store *)s;

	int rc = call(sv, V_GET_LOCK, row, col);

	return outs(sv, &sv->in, V_GET_LOCK, rc, out);
}

static int
sv_find_commit(struct store *s, perc_ts *commit_ts, int *op, perc_bytes row,
    perc_bytes col, perc_ts start_ts)
{
	struct srv_store *sv = (struct srv_store *)s;

	int rc = call(sv, V_FIND_COMMIT, row, col, start_ts);

	return outs(sv, &sv->in, V_FIND_COMMIT, rc, commit_ts, op);
}

static int
sv_prewrite(struct store *s, perc_ts *committed_at, const struct write *w,
    const struct lock_rec *lock, unsigned flags, struct lock_rec *blocker)
{
	struct srv_store *sv = (struct srv_store *)s;
	perc_ts at = 0;
	int rc;

	rc = call(sv, V_PREWRITE, w, lock, flags);
	rc = outs(sv, &sv->in, V_PREWRITE, rc, &at, blocker);
	if (committed_at != NULL)
		*committed_at = at;
	return rc;
}

static int
sv_commit(struct store *s, perc_bytes row, perc_bytes col, perc_ts start_ts,
    perc_ts commit_ts, unsigned flags)
{
	return call((struct srv_store *)s, V_COMMIT, row, col, start_ts,
	    commit_ts, flags);
}

static int
sv_rollback(struct store *s, perc_bytes row, perc_bytes col,
    perc_ts start_ts, unsigned flags)
{
	return call((struct srv_store *)s, V_ROLLBACK, row, col, start_ts,
	    flags);
}

/* One cell of a request's records, by its verb's layout. */
static int
add_cell(struct srv_store *sv, enum server_verb v, const struct write *w,
    unsigned flags)
{
	unsigned char one = WIRE_RECORD;
	int rc;

	if ((rc = buf_add(&sv->req, &one, 1)) < 0)
		return rc;
	return wire_pack(&sv->req, server_verbs[v].request_record, w, flags);
}

static int
end_cells(struct srv_store *sv)
{
	unsigned char end = WIRE_END;

	return buf_add(&sv->req, &end, 1);
}

static int
sv_commit_at_once(struct store *s, const struct writeset *ws,
    const unsigned *flags, perc_ts start_ts, perc_ts *commit_ts)
{
	struct srv_store *sv = (struct srv_store *)s;
	size_t i;
	int rc;

	if ((rc = request_begin(sv, V_COMMIT_AT_ONCE, start_ts)) < 0)
		return rc;
	for (i = 0; i < ws->n && rc == 0; i++)
		rc = add_cell(sv, V_COMMIT_AT_ONCE, &ws->w[i], flags[i]);
	if (rc < 0 || (rc = end_cells(sv)) < 0)
		return rc;
	rc = request_send(sv);
	return outs(sv, &sv->in, V_COMMIT_AT_ONCE, rc, commit_ts);
}

/* The step on the n cells w[] (begun), sent: which of them it did. */
static int
many(struct srv_store *sv, enum server_verb v, const struct write *const *w,
    const unsigned *flags, size_t n, int *done)
{
	size_t i, got = 0;
	int rc = 0, tag, one;

	for (i = 0; i < n && rc == 0; i++)
		rc = add_cell(sv, v, w[i], flags != NULL ? flags[i] : 0);
	if (rc < 0 || (rc = end_cells(sv)) < 0)
		return rc;
	memset(done, 0, n * sizeof(*done));
	if ((rc = request_send(sv)) < 0)
		return rc;
	while ((rc = record(sv, &sv->in, &tag)) == 1) {
		if (got == n || wire_unpack(&sv->in, server_verbs[v].record,
		    &one) < 0)
			return garbage(sv);
		done[got++] = one;
	}
	return rc < 0 ? rc : got == n ? 0 : garbage(sv);
}

static int
sv_prewrite_many(struct store *s, const struct write *const *w,
    const unsigned *flags, size_t n, const struct lock_rec *lock, int *done)
{
	struct srv_store *sv = (struct srv_store *)s;
	int rc;

	if ((rc = request_begin(sv, V_PREWRITE_MANY, lock)) < 0)
		return rc;
	return many(sv, V_PREWRITE_MANY, w, flags, n, done);
}

static int
sv_commit_many(struct store *s, const struct write *const *w, size_t n,
    perc_ts start_ts, perc_ts commit_ts, int *done)
{
	struct srv_store *sv = (struct srv_store *)s;
	int rc;

	if ((rc = request_begin(sv, V_COMMIT_MANY, start_ts, commit_ts)) < 0)
		return rc;
	return many(sv, V_COMMIT_MANY, w, NULL, n, done);
}

static int
sv_rollback_many(struct store *s, const struct write *const *w, size_t n,
    perc_ts start_ts, int *done)
{
	struct srv_store *sv = (struct srv_store *)s;
	int rc;

	if ((rc = request_begin(sv, V_ROLLBACK_MANY, start_ts)) < 0)
		return rc;
	return many(sv, V_ROLLBACK_MANY, w, NULL, n, done);
}

static int
sv_lease_keep(struct store *s, perc_bytes row, perc_bytes col,
    perc_ts start_ts, uint32_t ttl_ms)
{
	return call((struct srv_store *)s, V_LEASE_KEEP, row, col, start_ts,
	    (unsigned)ttl_ms);
}

static int
sv_push(struct store *s, perc_bytes row, perc_bytes col, perc_ts start_ts,
    perc_ts ts)
{
	return call((struct srv_store *)s, V_PUSH, row, col, start_ts, ts);
}

static int
sv_bulk_done(struct store *s, perc_ts start_ts)
{
	return call((struct srv_store *)s, V_BULK_DONE, start_ts);
}

static int
sv_safe_point(struct store *s, perc_ts *out)
{
	struct srv_store *sv = (struct srv_store *)s;

	int rc = call(sv, V_SAFE_POINT);

	return outs(sv, &sv->in, V_SAFE_POINT, rc, out);
}

static int
sv_safe_point_raise(struct store *s, perc_ts sp)
{
	return call((struct srv_store *)s, V_SAFE_POINT_RAISE, sp);
}

/* gc's state within a cell stays in the server, the connection's. */
static int
sv_gc(struct store *s, struct store_gc *gc)
{
	struct srv_store *sv = (struct srv_store *)s;
	perc_bytes resume = { NULL, 0 };
	size_t removed = 0;
	int rc;

	rc = call(sv, V_GC, gc->bound, gc->dry_run, buf_bytes(&gc->resume));
	rc = outs(sv, &sv->in, V_GC, rc, &removed, &gc->done, &resume);
	if (rc == 0) {
		gc->removed += removed;
		rc = buf_set(&gc->resume, resume.data, resume.len);
	}
	return rc;
}

static int
sv_log_read(struct store *s, struct store_log *lg)
{
	struct srv_store *sv = (struct srv_store *)s;
	perc_bytes row, col, value;
	struct wire_in in;
	perc_buf held;
	perc_ts commit_ts;
	int rc, more, tag, op;

	rc = call(sv, V_LOG_READ, lg->from, lg->to, lg->prefix, lg->column,
	    lg->max);
	if (!sv->have_reply)
		return rc;
	walk_begin(sv, &held, &in);
	while ((more = record(sv, &in, &tag)) == 1) {
		if (wire_unpack(&in, server_verbs[V_LOG_READ].record,
		    &commit_ts, &row, &col, &op, &value) < 0)
			more = garbage(sv);
		else
			more = lg->change(lg->arg, commit_ts, row, col, op,
			    value);
		if (more != 0)
			return walk_end(&held, more);
	}
	if (more == 0)
		more = outs(sv, &in, V_LOG_READ, rc, &lg->upto, &lg->done);
	return walk_end(&held, more);
}

/*
 * A scan's batch, the server's, given to sc->cell and sc->passed in
 * order.  When cell says the batch is full before the server's ends,
 * the rest is dropped: the caller starts its next batch after the last
 * cell it took, as it would have.
 */
static int
sv_scan(struct store *s, struct store_scan *sc)
{
	struct srv_store *sv = (struct srv_store *)s;
	perc_bytes row, col, value, brow = { NULL, 0 }, bcol = { NULL, 0 };
	struct lock_rec lock;
	struct wire_in in;
	perc_buf held;
	int rc, more, tag;

	rc = call(sv, V_SCAN, sc->prefix, sc->column, sc->ts, sc->known,
	    sc->resume, sc->from_row, sc->from_col);
	if (!sv->have_reply)
		return rc;
	walk_begin(sv, &held, &in);
	while ((more = record(sv, &in, &tag)) == 1) {
		if (tag == WIRE_PASSED) {
			memset(&lock, 0, sizeof(lock));
			if (wire_unpack(&in, SERVER_PASSED_RECORD, &row, &col,
			    &lock) < 0)
				more = garbage(sv);
			else if (sc->passed != NULL)
				more = sc->passed(sc->arg, row, col, &lock);
			codec_lock_dispose(&lock);
		} else if (wire_unpack(&in, server_verbs[V_SCAN].record, &row,
		    &col, &value) < 0)
			more = garbage(sv);
		else if ((more = sc->cell(sc->arg, row, col, value)) == 1) {
			sc->done = 0;
			return walk_end(&held, 0);
		}
		if (more < 0)
			return walk_end(&held, more);
	}
	if (more == 0)
		more = outs(sv, &in, V_SCAN, rc, &sc->done, &sc->blocker, &brow,
		    &bcol);
	if (more == PERC_ELOCKED && (buf_set(&sc->brow, brow.data,
	    brow.len) < 0 || buf_set(&sc->bcol, bcol.data, bcol.len) < 0))
		more = PERC_EIO;
	return walk_end(&held, more);
}

typedef int (*lock_fn)(void *arg, perc_bytes row, perc_bytes col,
                       const struct lock_rec *lock);

static int
each_lock(struct srv_store *sv, enum server_verb v, lock_fn fn, void *arg)
{
	struct lock_rec lock;
	struct wire_in in;
	perc_bytes row, col;
	perc_buf held;
	int rc, tag;

	if ((rc = call(sv, v)) < 0)
		return rc;
	walk_begin(sv, &held, &in);
	while ((rc = record(sv, &in, &tag)) == 1) {
		memset(&lock, 0, sizeof(lock));
		if (wire_unpack(&in, server_verbs[v].record, &row, &col,
		    &lock) < 0)
			rc = garbage(sv);
		else
			rc = fn(arg, row, col, &lock);
		codec_lock_dispose(&lock);
		if (rc != 0)
			break;
	}
	return walk_end(&held, rc);
}

static int
sv_locks(struct store *s, lock_fn fn, void *arg)
{
	return each_lock((struct srv_store *)s, V_LOCKS, fn, arg);
}

static int
sv_locks_by_txn(struct store *s, lock_fn fn, void *arg)
{
	return each_lock((struct srv_store *)s, V_LOCKS_BY_TXN, fn, arg);
}

static int
sv_raw(struct store *s, perc_bytes row, const perc_bytes *col,
    store_raw_fn fn, void *arg)
{
	struct srv_store *sv = (struct srv_store *)s;
	perc_bytes c, value;
	struct wire_in in;
	perc_buf held;
	int rc, tag, region, kind;
	perc_ts ts;

	if ((rc = call(sv, V_RAW, row, col)) < 0)
		return rc;
	walk_begin(sv, &held, &in);
	while ((rc = record(sv, &in, &tag)) == 1) {
		if (wire_unpack(&in, server_verbs[V_RAW].record, &region, &c,
		    &kind, &ts, &value) < 0)
			rc = garbage(sv);
		else
			rc = fn(arg, region, c, kind, ts, value);
		if (rc != 0)
			break;
	}
	return walk_end(&held, rc);
}

static int
sv_notify_scan(struct store *s, const perc_bytes *column,
    int (*fn)(void *arg, perc_bytes row, perc_bytes col, perc_bytes failures),
    void *arg)
{
	struct srv_store *sv = (struct srv_store *)s;
	perc_bytes row, col, failures;
	struct wire_in in;
	perc_buf held;
	int rc, tag;

	if ((rc = call(sv, V_NOTIFY_SCAN, column)) < 0)
		return rc;
	walk_begin(sv, &held, &in);
	while ((rc = record(sv, &in, &tag)) == 1) {
		if (wire_unpack(&in, server_verbs[V_NOTIFY_SCAN].record, &row,
		    &col, &failures) < 0)
			rc = garbage(sv);
		else
			rc = fn(arg, row, col, failures);
		if (rc != 0)
			break;
	}
	return walk_end(&held, rc);
}

static int
sv_notify_pending(struct store *s, perc_bytes row, perc_bytes col,
    perc_ts *ts, size_t max, size_t *n)
{
	struct srv_store *sv = (struct srv_store *)s;
	struct wire_in in;
	perc_buf held;
	perc_ts t;
	int rc, tag;

	*n = 0;
	if ((rc = call(sv, V_NOTIFY_PENDING, row, col, max)) < 0)
		return rc;
	walk_begin(sv, &held, &in);
	while ((rc = record(sv, &in, &tag)) == 1) {
		if (wire_unpack(&in, server_verbs[V_NOTIFY_PENDING].record,
		    &t) < 0 || *n >= max) {
			rc = garbage(sv);
			break;
		}
		ts[(*n)++] = t;
	}
	return walk_end(&held, rc);
}

static int
sv_failures_get(struct store *s, perc_buf *out, perc_bytes row,
    perc_bytes col)
{
	struct srv_store *sv = (struct srv_store *)s;
	perc_bytes rec = { NULL, 0 };
	int rc;

	rc = call(sv, V_FAILURES_GET, row, col);
	rc = outs(sv, &sv->in, V_FAILURES_GET, rc, &rec);
	return rc == 0 ? buf_set(out, rec.data, rec.len) : rc;
}

static int
sv_failures_put(struct store *s, perc_bytes row, perc_bytes col,
    perc_bytes rec)
{
	return call((struct srv_store *)s, V_FAILURES_PUT, row, col, rec);
}

static int
sv_weak_pend(struct store *s, perc_bytes row, perc_bytes col,
    perc_ts start_ts, perc_bytes primary)
{
	return call((struct srv_store *)s, V_WEAK_PEND, row, col, start_ts,
	    primary);
}

static int
sv_weak_settle(struct store *s, perc_bytes row, perc_bytes col,
    perc_ts start_ts, perc_ts commit_ts, unsigned flags)
{
	return call((struct srv_store *)s, V_WEAK_SETTLE, row, col, start_ts,
	    commit_ts, flags);
}

static int
sv_weak_clear(struct store *s, perc_bytes row, perc_bytes col, perc_ts upto)
{
	return call((struct srv_store *)s, V_WEAK_CLEAR, row, col, upto);
}

/*
 * Taking the store is connecting to its server (at the first request);
 * a turn still begins and ends with each acquire and release, so that
 * db_acquire looks at the config again at each, as it would.
 */
static int
sv_acquire(struct store *s, int64_t deadline_ms)
{
	(void)deadline_ms;
	((struct srv_store *)s)->turn = 1;
	return 0;
}

static void
sv_release(struct store *s)
{
	((struct srv_store *)s)->turn = 0;
}

static int
sv_held(const struct store *s)
{
	return ((const struct srv_store *)s)->turn;
}

static void
sv_dispose(struct store *s)
{
	struct srv_store *sv = (struct srv_store *)s;

	hang_up(sv);
	sv->local->ops->dispose(sv->local);
	perc_buf_dispose(&sv->req);
	perc_buf_dispose(&sv->reply);
	free(sv->dir);
	free(sv);
}

/* This process's own: on the directory's LevelDB store, not taken. */

static int
sv_ts_next(struct store *s, perc_ts *out, uint64_t n, int64_t deadline_ms)
{
	struct store *l = ((struct srv_store *)s)->local;

	return l->ops->ts_next(l, out, n, deadline_ms);
}

static int
sv_ts_last(struct store *s, perc_ts *out, int64_t deadline_ms)
{
	struct store *l = ((struct srv_store *)s)->local;

	return l->ops->ts_last(l, out, deadline_ms);
}

static int
sv_owner_alive(struct store *s, const struct lock_rec *lock,
    const char *host)
{
	struct store *l = ((struct srv_store *)s)->local;

	return l->ops->owner_alive(l, lock, host);
}

static void
sv_wake(struct store *s, int feed)
{
	struct store *l = ((struct srv_store *)s)->local;

	l->ops->wake(l, feed);
}

static int
sv_wait_wake(struct store *s, int feed, int64_t deadline_ms,
    const sigset_t *mask)
{
	struct store *l = ((struct srv_store *)s)->local;

	return l->ops->wait_wake(l, feed, deadline_ms, mask);
}

static const struct store_ops served_ops = {
	.name           = "leveldb",
	.data_format    = FORMAT_LOG_APART,
	.upgrade        = sv_upgrade,
	.dispose        = sv_dispose,
	.acquire        = sv_acquire,
	.release        = sv_release,
	.held           = sv_held,
	.ts_next        = sv_ts_next,
	.ts_last        = sv_ts_last,
	.owner_alive    = sv_owner_alive,
	.lease_keep     = sv_lease_keep,
	.push           = sv_push,
	.bulk_done      = sv_bulk_done,
	.read           = sv_read,
	.get_lock       = sv_get_lock,
	.find_commit    = sv_find_commit,
	.prewrite       = sv_prewrite,
	.commit         = sv_commit,
	.rollback       = sv_rollback,
	.prewrite_many  = sv_prewrite_many,
	.commit_many    = sv_commit_many,
	.rollback_many  = sv_rollback_many,
	.commit_at_once = sv_commit_at_once,
	.safe_point     = sv_safe_point,
	.safe_point_raise = sv_safe_point_raise,
	.gc             = sv_gc,
	.log_read       = sv_log_read,
	.scan           = sv_scan,
	.locks          = sv_locks,
	.locks_by_txn   = sv_locks_by_txn,
	.raw            = sv_raw,
	.notify_scan    = sv_notify_scan,
	.notify_pending = sv_notify_pending,
	.failures_get   = sv_failures_get,
	.failures_put   = sv_failures_put,
	.weak_pend      = sv_weak_pend,
	.weak_settle    = sv_weak_settle,
	.weak_clear     = sv_weak_clear,
	.wake           = sv_wake,
	.wait_wake      = sv_wait_wake,
};

/*
 * The LevelDB store of a data directory, through its server unless the
 * process is to open it itself (PERC_SERVE=0), cannot write it (a
 * read-only directory is read without a server), or will simulate a
 * power cut of its own (a failpoint's).
 */
int
store_served_open(struct store **out, const char *url,
    const struct store_env *env)
{
	struct store *local;
	struct srv_store *sv;
	int rc;

	if ((rc = store_leveldb_open(&local, url, env)) < 0)
		return rc;
	if (!env->serve || env->power_cuts || local->read_only) {
		*out = local;
		return 0;
	}
	if ((sv = calloc(1, sizeof(*sv))) == NULL ||
	    (sv->dir = strdup(env->dir)) == NULL) {
		free(sv);
		local->ops->dispose(local);
		return error_set(PERC_EIO, "out of memory");
	}
	sv->base.ops = &served_ops;
	sv->local = local;
	sv->env = *env;
	sv->env.dir = sv->dir;
	sv->env.serve = 0;
	sv->fd = -1;
	*out = &sv->base;
	return 0;
}

/*
 * lib/leveldb/store.c - the LevelDB store: made, opened and freed, its
 * release (which settles, then lets go: hold.c), and the seam's table
 * of its verbs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "disk.h"
#include "error.h"
#include "oracle.h"
#include "leveldb.h"

static char *
path_join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);

	if (p != NULL)
		snprintf(p, n, "%s/%s", dir, name);
	return p;
}

/* Prepare s for the data directory env->dir; nothing is opened yet. */
static int
ldb_init(struct ldb_store *s, const struct store_env *env)
{
	const char *dir = env->dir;

	memset(s, 0, sizeof(*s));
	s->lockfd = -1;
	s->power_cuts = env->power_cuts;
	s->timeout_ms = env->timeout_ms;
	s->owner_alive = env->owner_alive;
	s->watch.fd = -1;
	s->path = path_join(dir, "store");
	s->lockpath = path_join(dir, "store.lock");
	s->cleanpath = path_join(dir, "store.clean");
	s->dir = strdup(dir);
	if (s->path == NULL || s->lockpath == NULL || s->cleanpath == NULL ||
	    s->dir == NULL)
		return error_set(PERC_EIO, "out of memory");
	oracle_init(&s->oracle, s->dir);
	/*
	 * A store this process may not write (a read-only mount, or no
	 * write permission) is still read: see readonly_env.cc.
	 */
	if (access(s->path, W_OK) != 0 && (errno == EROFS || errno == EACCES))
		s->base.read_only = errno;
	/*
	 * For benchmarks only: PERC_UNSAFE_NOSYNC=1 makes the commit point
	 * an unsynced write, so a printed commit can be lost to a power cut.
	 */
	s->nosync = env->nosync;
	return 0;
}

static void ldb_release(struct store *base);

static void
ldb_dispose(struct ldb_store *s)
{
	int i;

	ldb_release(&s->base);
	oracle_dispose(&s->oracle);
	dir_watch_close(&s->watch);
	for (i = 0; i < SPANS; i++) {
		perc_buf_dispose(&s->span[i].lo);
		perc_buf_dispose(&s->span[i].hi);
	}
	perc_buf_dispose(&s->cuts);
	perc_buf_dispose(&s->head_key);
	perc_buf_dispose(&s->head_val);
	ldb_log_dispose(&s->group_log);
	free(s->path);
	free(s->lockpath);
	free(s->cleanpath);
	free(s->dir);
	memset(s, 0, sizeof(*s));
	s->lockfd = -1;
	s->oracle.fd = -1;
	s->watch.fd = -1;
}

/* Create an empty store and oracle in the new data directory env->dir. */
int
store_leveldb_create(const char *url, const struct store_env *env)
{
	struct ldb_store s;
	char *err = NULL;
	struct kv *db;
	int rc, fd;

	(void)url;
	if ((rc = ldb_init(&s, env)) < 0)
		goto done;
	/*
	 * Empty, only flocked: not synced itself; its directory entry is,
	 * by init's sync of the new directory (init.c), before init returns.
	 */
	if ((fd = open(s.lockpath, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0) {
		rc = error_set(PERC_EIO, "cannot create '%s': %s", s.lockpath,
		    strerror(errno));
		goto done;
	}
	close(fd);
	if ((db = kv_open(s.path, KV_CREATE, &err)) == NULL)
		rc = ldb_fail(&s, err, "cannot create the store");
	else {
		kv_close(db);
		/* LevelDB renames CURRENT into place without this. */
		if (disk_sync_dir(s.path) != 0)
			rc = error_set(PERC_EIO, "cannot sync '%s': %s", s.path,
			    strerror(errno));
	}
done:
	ldb_dispose(&s);
	return rc < 0 ? rc : oracle_create(env->dir);
}

/*
 * store_ops.waited_for.  Asked after every call of a busy holder, so a
 * system call each would cost a point read a third of its time: the
 * kernel is asked at most once a millisecond, which waiters, polling
 * every 2 ms at most, do not notice.  And a holder has the store for
 * TURN_MS at least before it is asked: a handoff costs a LevelDB close,
 * an open that replays the log, and the waiter's poll, a millisecond
 * or more, which a holder handing over after every call of a batch
 * would spend more time on than on the batch.
 */
#define TURN_MS 10

static int
ldb_waited_for(struct store *base)
{
	struct ldb_store *s = (struct ldb_store *)base;
	int64_t now = clock_coarse_ms();     /* asked after every call */

	if (s->db == NULL || now == s->asked_ms ||
	    now - s->opened_ms < TURN_MS)
		return 0;
	s->asked_ms = now;
	return ldb_others_want_store(s->lockfd);
}

/* Pay what the writes owe (settle.c), and let the next process in. */
static void
ldb_release(struct store *base)
{
	struct ldb_store *s = (struct ldb_store *)base;

	if (s->db != NULL && !s->paused)
		ldb_settle(s);  /* which may hand the store over, and lose it */
	ldb_let_go(s);
}

/* PERC_FAILPOINT=NAME:power-cut, at NAME: see durable_env.cc. */
static void
ldb_power_cut(struct store *base)
{
	struct ldb_store *s = (struct ldb_store *)base;

	if (s->db != NULL && !s->base.read_only)
		kv_cut_power(s->db);
}

static int
ldb_held(const struct store *base)
{
	return ((const struct ldb_store *)base)->db != NULL;
}

static void
ldb_free(struct store *base)
{
	ldb_dispose((struct ldb_store *)base);
	free(base);
}

static int
ldb_ts_next(struct store *base, perc_ts *out, uint64_t n, int64_t deadline_ms)
{
	return oracle_next(out, &((struct ldb_store *)base)->oracle, n,
	    deadline_ms);
}

static int
ldb_ts_last(struct store *base, perc_ts *out, int64_t deadline_ms)
{
	return oracle_last(out, ((struct ldb_store *)base)->dir, deadline_ms);
}

/* Tokens are kernel locks: only this host can ask about them. */
static int
ldb_owner_alive(struct store *base, const struct lock_rec *lock,
    const char *host)
{
	struct ldb_store *s = (struct ldb_store *)base;

	if (lock->host.len != strlen(host) ||
	    memcmp(lock->host.data, host, lock->host.len) != 0)
		return -1;
	return s->owner_alive(s->dir, lock->start_ts, lock->pid,
	    lock->wall_ms);
}

/* The wakeup is the data directory's (lib/wake.c). */
static const char *
wake_file(int feed)
{
	return feed ? "wake.log" : "wake";
}

static void
ldb_wake(struct store *base, int feed)
{
	dir_wake(((struct ldb_store *)base)->dir, wake_file(feed));
}

static int
ldb_wait_wake(struct store *base, int feed, int64_t deadline_ms,
    const sigset_t *mask)
{
	struct ldb_store *s = (struct ldb_store *)base;

	return dir_wait_wake(&s->watch, s->dir, wake_file(feed), deadline_ms,
	    mask);
}

static const struct store_ops ldb_ops = {
	.name           = "leveldb",
	.data_format    = FORMAT_LOG_APART, /* cell heads (2), the lock
	                                       index (4), entries of the
	                                       change log apart (5) */
	.upgrade        = ldb_upgrade,
	.dispose        = ldb_free,
	.acquire        = ldb_acquire,
	.release        = ldb_release,
	.pause          = ldb_pause,
	.waited_for     = ldb_waited_for,
	.held           = ldb_held,
	.sync           = ldb_sync,
	.power_cut      = ldb_power_cut,
	.ts_next        = ldb_ts_next,
	.ts_last        = ldb_ts_last,
	.owner_alive    = ldb_owner_alive,
	.lease_keep     = ldb_lease_keep,
	.push           = ldb_push,
	.group          = ldb_group,
	.bulk_done      = ldb_bulk_done,
	.read           = ldb_read,
	.get_lock       = ldb_get_lock,
	.find_commit    = ldb_find_commit,
	.prewrite       = ldb_prewrite,
	.commit         = ldb_commit,
	.rollback       = ldb_rollback,
	.commit_at_once = ldb_commit_at_once,
	.safe_point     = ldb_safe_point,
	.safe_point_raise = ldb_safe_point_raise,
	.gc             = ldb_gc,
	.log_read       = ldb_log_read,
	.scan           = ldb_scan,
	.locks          = ldb_locks,
	.locks_by_txn   = ldb_locks_by_txn,
	.raw            = ldb_raw,
	.notify_scan    = ldb_notify_scan,
	.notify_pending = ldb_notify_pending,
	.failures_get   = ldb_failures_get,
	.failures_put   = ldb_failures_put,
	.weak_pend      = ldb_weak_pend,
	.weak_settle    = ldb_weak_settle,
	.weak_clear     = ldb_weak_clear,
	.wake           = ldb_wake,
	.wait_wake      = ldb_wait_wake,
};

/* The store of data directory env->dir, not yet acquired. */
int
store_leveldb_open(struct store **out, const char *url,
    const struct store_env *env)
{
	struct ldb_store *s;
	int rc;

	(void)url;
	*out = NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return error_set(PERC_EIO, "out of memory");
	if ((rc = ldb_init(s, env)) < 0) {
		ldb_free(&s->base);
		return rc;
	}
	s->base.ops = &ldb_ops;
	*out = &s->base;
	return 0;
}

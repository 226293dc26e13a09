/*
 * lib/leveldb/hold.c - take the LevelDB store for this process, one
 * process at a time, and let it go: the flock on store.lock, LevelDB
 * opened and closed, and a fair handoff to the processes waiting.
 * What a writer owes before it lets go is settle.c's, above this.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "error.h"
#include "leveldb.h"

/*
 * A fair handoff.  flock keeps no queue: a long writer that lets go of
 * the store for a moment (store_ops.pause) and takes it back at once
 * could keep a waiter out for good on a busy machine, where the waiter
 * may not even run in that moment.  So a process waiting for the store
 * says so with a read lock on byte 1 of store.lock (an OFD lock, which
 * flock does not see, and which goes with the process), held until it
 * has the store; a writer coming back from a pause lets every such
 * waiter go first, for at most HANDOFF_MS, and not past the end its
 * pause was given.
 */
static void
want_store(int fd, int want)
{
	struct flock fl = { .l_type = want ? F_RDLCK : F_UNLCK,
	    .l_whence = SEEK_SET, .l_start = 1, .l_len = 1 };

	(void)fcntl(fd, F_OFD_SETLK, &fl);      /* failed: less fair, no more */
}

int
ldb_others_want_store(int fd)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
	    .l_start = 1, .l_len = 1 };

	return fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
}

static int
lock_store(struct ldb_store *s, int64_t deadline_ms)
{
	int64_t handoff = clock_deadline(HANDOFF_MS);
	unsigned delay = 500;
	int rc, saved;

	if (s->paused && s->pause_until < handoff)
		handoff = s->pause_until;

	while (s->paused && ldb_others_want_store(s->lockfd) &&
	    clock_backoff(&delay, 2000, handoff) == 0)
		;
	if ((rc = flock(s->lockfd, LOCK_EX | LOCK_NB)) == 0)
		return 0;
	want_store(s->lockfd, 1);
	rc = clock_flock(s->lockfd, LOCK_EX, deadline_ms);
	saved = errno;
	want_store(s->lockfd, 0);
	errno = saved;
	return rc;
}

/*
 * Take the store for this process: the flock on store.lock first, so
 * that a second process waits (LevelDB itself would fail at once), then
 * LevelDB.  Waits with backoff until deadline_ms: PERC_ETIMEOUT then.
 */
int
ldb_acquire(struct store *base, int64_t deadline_ms)
{
	struct ldb_store *s = (struct ldb_store *)base;
	char *err = NULL, identity[320];
	int rc, i;

	if (s->db != NULL)
		return 0;
	/* flock needs no write access: a read-only store locks alike. */
	if (s->lockfd < 0 && (s->lockfd = open(s->lockpath,
	    (s->base.read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC)) < 0)
		return error_set(errno == ENOENT ? PERC_ENOTDB : PERC_EIO,
		    "cannot open '%s': %s; is this a perc data directory?",
		    s->lockpath, strerror(errno));
	if (lock_store(s, deadline_ms) < 0) {
		if (errno == ETIMEDOUT)
			return error_set(PERC_ETIMEOUT, "the store stayed busy "
			    "with other perc processes; try again, or raise "
			    "PERC_LOCK_TIMEOUT");
		return error_set(PERC_EIO, "cannot lock '%s': %s",
		    s->lockpath, strerror(errno));
	}
	/* A disk found full is tried again after a second. */
	if (s->base.read_only == ENOSPC && clock_mono_ms() - s->full_at_ms >= 1000)
		s->base.read_only = 0;
	/* Not clean, LevelDB makes the log tables, and starts a new one. */
	s->clean = ldb_marker_matches(s, &s->log_bytes);
	if (s->clean && s->paused && s->log_bytes >= PAUSE_FLUSH_BYTES)
		s->clean = 0;   /* see ldb_pause */
	if (!s->paused) {       /* see ldb_settle */
		s->written = 0;
		for (i = 0; i < SPANS; i++) {
			buf_reset(&s->span[i].lo);
			buf_reset(&s->span[i].hi);
		}
		buf_reset(&s->cuts);
		s->cut_at = 0;
	}
	s->wrote = s->base.failed = s->paused = 0;
	s->db = kv_open(s->path, (s->clean ? KV_REUSE_LOGS : 0) |
	    (s->base.read_only ? KV_READ_ONLY : 0) |
	    (s->base.bulk || s->log_bytes > FLUSH_BYTES ?
	    KV_BIG_BUFFER : 0) |
	    (s->base.sync_later ? KV_KEPT_OPEN : 0) |
	    (s->power_cuts ? KV_SIMULATE_CUTS : 0), &err);
	/*
	 * Opening a store whose log is not clean writes a table: on a full
	 * disk, open it as a read-only one instead, so reads still work
	 * and writes say what is wrong.
	 */
	if (err != NULL && !s->base.read_only && strstr(err, strerror(ENOSPC))) {
		free(err);
		err = NULL;
		s->base.read_only = ENOSPC;
		s->full_at_ms = clock_mono_ms();
		s->db = kv_open(s->path, KV_READ_ONLY, &err);
	}
	if (err != NULL) {
		s->db = NULL;
		flock(s->lockfd, LOCK_UN);
		return ldb_fail(s, err, "cannot open the store");
	}
	/* LevelDB wrote a new manifest: what its growth is measured from. */
	if (!s->clean && !s->base.read_only &&
	    ldb_log_identity(s, identity, sizeof(identity),
	    &s->manifest_fresh) != 0)
		s->manifest_fresh = 0;
	s->opened_ms = clock_mono_ms();
	if ((rc = ldb_load_safe_point(s)) < 0)
		ldb_let_go(s);  /* nothing written: nothing to settle */
	return rc;
}

/* Close LevelDB, which its iterators must not outlive. */
void
ldb_close(struct ldb_store *s)
{
	ldb_reader_drop(s);
	kv_close(s->db);
	s->db = NULL;
}

/*
 * Let go of the store: writes still gathered are dropped, as by a
 * crash before them; LevelDB is closed, its log vouched for
 * (store.clean) when ours to, and the next process let in.
 */
void
ldb_let_go(struct ldb_store *s)
{
	if (s->group != NULL) {
		kv_batch_free(s->group);
		s->group = NULL;
		s->grouped = 0;
	}
	ldb_log_dispose(&s->group_log);
	if (s->db != NULL) {
		ldb_close(s);
		if (!s->base.failed && !s->base.read_only &&
		    (s->wrote || !s->clean))
			ldb_marker_write(s);
	}
	if (s->lockfd >= 0) {
		close(s->lockfd);
		s->lockfd = -1;
	}
}

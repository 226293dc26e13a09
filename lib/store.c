/* lib/store.c - the only user of LevelDB: one process holds it at a time */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "error.h"
#include "store.h"

static char *
path_join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);

	if (p != NULL)
		snprintf(p, n, "%s/%s", dir, name);
	return p;
}

/*
 * LevelDB reports errors as malloc'd strings.  Everything it reports is
 * a storage failure (exit 7); the message keeps LevelDB's own words,
 * which name the damaged file.
 */
static int
store_fail(char *err, const char *doing)
{
	int rc = error_set(PERC_EIO, "%s: %s; check the disk, or restore "
	    "the data directory from a backup", doing, err);

	leveldb_free(err);
	return rc;
}

/* Prepare s for the data directory dir; nothing is opened yet. */
int
store_init(struct store *s, const char *dir)
{
	memset(s, 0, sizeof(*s));
	s->lockfd = -1;
	s->path = path_join(dir, "store");
	s->lockpath = path_join(dir, "store.lock");
	s->cleanpath = path_join(dir, "store.clean");
	s->dir = strdup(dir);
	if (s->path == NULL || s->lockpath == NULL || s->cleanpath == NULL ||
	    s->dir == NULL)
		return error_set(PERC_EIO, "out of memory");
	/*
	 * A store this process may not write (a read-only mount, or no
	 * write permission) is still read: see readonly_env.cc.
	 */
	if (access(s->path, W_OK) != 0 && (errno == EROFS || errno == EACCES))
		s->read_only = errno;
	s->read = leveldb_readoptions_create();
	leveldb_readoptions_set_verify_checksums(s->read, 1);
	s->write_sync = leveldb_writeoptions_create();
	leveldb_writeoptions_set_sync(s->write_sync, 1);
	s->write_nosync = leveldb_writeoptions_create();
	/*
	 * For benchmarks only: PERC_UNSAFE_NOSYNC=1 makes the commit point
	 * an unsynced write, so a printed commit can be lost to a power cut.
	 */
	s->nosync = getenv("PERC_UNSAFE_NOSYNC") != NULL &&
	    strcmp(getenv("PERC_UNSAFE_NOSYNC"), "1") == 0;
	return 0;
}

void
store_dispose(struct store *s)
{
	store_release(s);
	if (s->read != NULL) {
		leveldb_readoptions_destroy(s->read);
		leveldb_writeoptions_destroy(s->write_sync);
		leveldb_writeoptions_destroy(s->write_nosync);
	}
	free(s->path);
	free(s->lockpath);
	free(s->cleanpath);
	free(s->dir);
	memset(s, 0, sizeof(*s));
	s->lockfd = -1;
}

/* Create an empty store in the new data directory dir. */
int
store_create(const char *dir)
{
	struct store s;
	char *err = NULL;
	leveldb_t *db;
	int rc, fd;

	if ((rc = store_init(&s, dir)) < 0)
		goto done;
	if ((fd = open(s.lockpath, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0) {
		rc = error_set(PERC_EIO, "cannot create '%s': %s", s.lockpath,
		    strerror(errno));
		goto done;
	}
	close(fd);
	db = store_open_tuned(s.path, STORE_CREATE, &s.env, &err);
	if (err != NULL)
		rc = store_fail(err, "cannot create the store");
	else
		store_close_tuned(db, s.env);
done:
	store_dispose(&s);
	return rc;
}

/*
 * Take the store for this process: the flock on store.lock first, so
 * that a second process waits (LevelDB itself would fail at once), then
 * LevelDB.  Waits with backoff until deadline_ms: PERC_ETIMEOUT then.
 */
int
store_acquire(struct store *s, int64_t deadline_ms)
{
	char *err = NULL;

	if (s->db != NULL)
		return 0;
	/* flock needs no write access: a read-only store locks alike. */
	if (s->lockfd < 0 && (s->lockfd = open(s->lockpath,
	    (s->read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC)) < 0)
		return error_set(errno == ENOENT ? PERC_ENOTDB : PERC_EIO,
		    "cannot open '%s': %s; is this a perc data directory?",
		    s->lockpath, strerror(errno));
	if (clock_flock(s->lockfd, LOCK_EX, deadline_ms) < 0) {
		if (errno == ETIMEDOUT)
			return error_set(PERC_ETIMEOUT, "the store stayed busy "
			    "with other perc processes; try again, or raise "
			    "PERC_LOCK_TIMEOUT");
		return error_set(PERC_EIO, "cannot lock '%s': %s",
		    s->lockpath, strerror(errno));
	}
	/*
	 * DIR/store.clean says the last session closed the store after
	 * writes that all succeeded, so its log ends in a whole record and
	 * may be appended to.  Otherwise LevelDB turns the log, torn tail
	 * dropped, into a table and starts a new one.
	 */
	s->clean = access(s->cleanpath, F_OK) == 0;
	s->failed = 0;
	s->db = store_open_tuned(s->path, (s->clean ? STORE_REUSE_LOGS : 0) |
	    (s->read_only ? STORE_READ_ONLY : 0), &s->env, &err);
	if (err != NULL) {
		s->db = NULL;
		flock(s->lockfd, LOCK_UN);
		return store_fail(err, "cannot open the store");
	}
	return 0;
}

/* Close LevelDB and let the next process in. */
void
store_release(struct store *s)
{
	int fd;

	if (s->db != NULL) {
		store_close_tuned(s->db, s->env);
		s->db = NULL;
		s->env = NULL;
		/* No fsync: a lost marker only costs the next open a table. */
		if (!s->clean && !s->failed && !s->read_only &&
		    (fd = open(s->cleanpath, O_WRONLY | O_CREAT | O_CLOEXEC,
		    0644)) >= 0)
			close(fd);
	}
	if (s->lockfd >= 0) {
		close(s->lockfd);
		s->lockfd = -1;
	}
}

/* 0 with the value in out, PERC_ENOTFOUND, or PERC_EIO. */
int
store_get(perc_buf *out, struct store *s, perc_bytes key)
{
	char *err = NULL, *v;
	size_t len;
	int rc;

	v = leveldb_get(s->db, s->read, key.data, key.len, &len, &err);
	if (err != NULL)
		return store_fail(err, "cannot read the store");
	if (v == NULL)
		return PERC_ENOTFOUND;
	rc = buf_set(out, v, len);
	leveldb_free(v);
	return rc;
}

/*
 * Apply batch atomically: LevelDB's write batch is the single-row
 * atomicity Percolator assumes of its store.  With sync, the write is
 * on disk when this returns, and so is everything written before it.
 */
/*
 * Before the first write of a session the clean marker goes, durably:
 * a crash of the process or the machine during the writes must leave
 * the next open unwilling to append to a log that may end torn.
 */
static int
mark_dirty(struct store *s)
{
	int fd, rc = 0;

	if (unlink(s->cleanpath) != 0 && errno != ENOENT)
		rc = -1;
	else if ((fd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		rc = -1;
	else {
		rc = fsync(fd);
		close(fd);
	}
	if (rc != 0)
		return error_set(PERC_EIO, "cannot update '%s': %s; check "
		    "that the data directory is writable", s->cleanpath,
		    strerror(errno));
	s->clean = 0;
	return 0;
}

int
store_write(struct store *s, leveldb_writebatch_t *batch, int sync)
{
	char *err = NULL;
	int rc;

	if (s->read_only)
		return error_set(PERC_EIO, "cannot write the store '%s': %s; "
		    "perc may not write this data directory (read-only or "
		    "no permission); run this where it can write it", s->path, strerror(s->read_only));
	if (s->clean && (rc = mark_dirty(s)) < 0)
		return rc;
	leveldb_write(s->db, sync && !s->nosync ? s->write_sync :
	    s->write_nosync, batch, &err);
	if (err != NULL) {
		s->failed = 1;
		return store_fail(err, "cannot write the store");
	}
	return 0;
}

leveldb_iterator_t *
store_iter(struct store *s)
{
	return leveldb_create_iterator(s->db, s->read);
}

/* After an iterator stops being valid: 0, or PERC_EIO if it failed. */
int
store_iter_error(leveldb_iterator_t *it)
{
	char *err = NULL;

	leveldb_iter_get_error(it, &err);
	if (err != NULL)
		return store_fail(err, "cannot read the store");
	return 0;
}

/*
 * lib/leveldb/store.c - the LevelDB store: open and close it, one
 * process at a time, and the seam's table of its verbs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <dirent.h>
#include <inttypes.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "codec.h"
#include "disk.h"
#include "error.h"
#include "failpoint.h"
#include "journal.h"
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

/*
 * LevelDB reports errors as malloc'd strings that name the file.  All
 * are storage failures (exit 7), but only a corruption may call for a
 * backup: a full disk or another I/O error leaves the data as it was.
 */
static int
ldb_fail(const struct ldb_store *s, char *err, const char *doing)
{
	int rc;

	if (strstr(err, strerror(ENOSPC)) != NULL)
		rc = disk_full_error(s != NULL ? s->dir : ".", doing);
	else if (strncmp(err, "Corruption:", 11) == 0)
		rc = error_set(PERC_EIO, "%s: %s; the store is damaged: "
		    "restore the data directory from a backup", doing, err);
	else
		rc = error_set(PERC_EIO, "%s: %s; check the disk and retry",
		    doing, err);
	free(err);
	return rc;
}

/*
 * A read that failed: LevelDB's corruption text does not name the table
 * whose block failed its checksum, so name the one this thread read last.
 */
static int
ldb_read_fail(const struct ldb_store *s, char *err)
{
	const char *table = kv_last_read();
	char *named;

	if (strncmp(err, "Corruption:", 11) == 0 && table != NULL &&
	    strstr(err, table) == NULL &&
	    asprintf(&named, "%s in %s", err, table) >= 0) {
		free(err);
		err = named;
	}
	return ldb_fail(s, err, "cannot read the store");
}

/* Prepare s for the data directory dir; nothing is opened yet. */
static int
ldb_init(struct ldb_store *s, const char *dir)
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
	s->nosync = getenv("PERC_UNSAFE_NOSYNC") != NULL &&
	    strcmp(getenv("PERC_UNSAFE_NOSYNC"), "1") == 0;
	return 0;
}

static void
ldb_dispose(struct ldb_store *s)
{
	ldb_release(&s->base);
	oracle_dispose(&s->oracle);
	perc_buf_dispose(&s->lo);
	perc_buf_dispose(&s->hi);
	perc_buf_dispose(&s->cuts);
	perc_buf_dispose(&s->head_key);
	perc_buf_dispose(&s->head_val);
	free(s->path);
	free(s->lockpath);
	free(s->cleanpath);
	free(s->dir);
	memset(s, 0, sizeof(*s));
	s->lockfd = -1;
	s->oracle.fd = -1;
}

/* Create an empty store and oracle in the new data directory dir. */
int
store_leveldb_create(const char *dir)
{
	struct ldb_store s;
	char *err = NULL;
	struct kv *db;
	int rc, fd;

	if ((rc = ldb_init(&s, dir)) < 0)
		goto done;
	/*
	 * Empty, only flocked: not synced itself; its directory entry is,
	 * by init's sync of the new directory (db.c), before init returns.
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
	return rc < 0 ? rc : oracle_create(dir);
}

/*
 * DIR/store.clean vouches for the store's newest log: its name, size
 * and the CRC of its last bytes, as the last session that changed the
 * store left them when it closed cleanly.  Only a log that still
 * matches may be appended to (reuse_logs): one a power cut tore, cut
 * short or left older fails the match, and LevelDB turns it, torn
 * tail dropped, into a table instead of appending after the torn bytes
 * (google/leveldb#1287).  So neither the marker nor the log's tail
 * needs an fsync: any state a cut leaves them in is told apart.
 */
#define CLEAN_TAIL 4096

/* A small writer's write buffer, and the most of a log it leaves: see
   ldb_settle, and STORE_BIG_BUFFER for a longer one. */
#define FLUSH_BYTES ((uint64_t)64 << 10)

/*
 * With reuse_logs LevelDB also appends to the manifest it finds, until
 * it is as big as a table (2 MB), and every open replays it whole: an
 * edit for each table a writer made and each compaction removed.  So
 * the marker also keeps the manifest's size when LevelDB last wrote a
 * new one (an open not clean does); past that by MANIFEST_SLACK, the
 * store is opened as not clean, and LevelDB writes a new one (and a
 * table of the log): a few milliseconds, once in some MB written, where
 * replaying 80 KB of edits cost each open half of one.
 */
#define MANIFEST_SLACK ((off_t)4 << 10)

/*
 * The newest log's identity into out, "NAME SIZE CRC"; with
 * manifest_bytes, the size of the newest manifest too.
 */
static int
log_identity(const struct ldb_store *s, char *out, size_t size,
    off_t *manifest_bytes)
{
	unsigned char tail[CLEAN_TAIL];
	char name[256] = "", manifest[256] = "", path[4096];
	unsigned long long num, best = 0, best_manifest = 0;
	struct dirent *e;
	struct stat st;
	ssize_t n;
	size_t len;
	DIR *d;
	int fd, end;

	if ((d = opendir(s->path)) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		end = 0;
		if (sscanf(e->d_name, "%llu.log%n", &num, &end) == 1 &&
		    end > 0 && e->d_name[end] == '\0' && num >= best) {
			best = num;
			memcpy(name, e->d_name, strlen(e->d_name) + 1);
		} else if (sscanf(e->d_name, "MANIFEST-%llu%n", &num,
		    &end) == 1 && end > 0 && e->d_name[end] == '\0' &&
		    num >= best_manifest) {
			best_manifest = num;
			memcpy(manifest, e->d_name, strlen(e->d_name) + 1);
		}
	}
	closedir(d);
	if (manifest_bytes != NULL) {
		*manifest_bytes = 0;
		snprintf(path, sizeof(path), "%s/%s", s->path, manifest);
		if (manifest[0] != '\0' && stat(path, &st) == 0)
			*manifest_bytes = st.st_size;
	}
	snprintf(path, sizeof(path), "%s/%s", s->path, name);
	if (name[0] == '\0' || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	len = 0;
	n = -1;
	if (fstat(fd, &st) == 0) {
		len = st.st_size < CLEAN_TAIL ? (size_t)st.st_size : CLEAN_TAIL;
		n = pread(fd, tail, len, st.st_size - (off_t)len);
	}
	close(fd);
	if (n != (ssize_t)len)
		return -1;
	snprintf(out, size, "%s %jd %08" PRIx32, name,
	    (intmax_t)st.st_size, codec_crc32(0, tail, len));
	return 0;
}

/*
 * Does the marker, "IDENTITY FRESH", vouch for the log?  Then
 * *log_bytes is its size.  And has the manifest grown by at most
 * MANIFEST_SLACK since LevelDB wrote it, FRESH bytes long?
 */
static int
marker_matches(struct ldb_store *s, uint64_t *log_bytes)
{
	char want[320], have[320], *end;
	long long fresh;
	off_t manifest;
	size_t len;
	ssize_t n;
	int fd;

	*log_bytes = 0;
	if ((fd = open(s->cleanpath, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, have, sizeof(have) - 1);
	close(fd);
	if (n <= 0 || log_identity(s, want, sizeof(want), &manifest) != 0)
		return 0;
	have[n] = '\0';
	len = strlen(want);
	if (strncmp(have, want, len) != 0 || have[len] != ' ')
		return 0;
	fresh = strtoll(have + len + 1, &end, 10);
	if (end == have + len + 1 || strcmp(end, "\n") != 0 || fresh < 0 ||
	    manifest > (off_t)fresh + MANIFEST_SLACK)
		return 0;
	s->manifest_fresh = (off_t)fresh;
	(void)sscanf(want, "%*s %" SCNu64, log_bytes);
	return 1;
}

/* No fsync: a marker a cut tears or loses only costs an open a table. */
static void
marker_write(const struct ldb_store *s)
{
	char text[320];
	size_t len;
	int fd;

	if (log_identity(s, text, sizeof(text), NULL) != 0)
		return;
	len = strlen(text);
	snprintf(text + len, sizeof(text) - len, " %jd\n",
	    (intmax_t)s->manifest_fresh);
	if ((fd = open(s->cleanpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644)) < 0)
		return;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		unlink(s->cleanpath);   /* half a marker vouches for nothing */
	close(fd);
}

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
#define HANDOFF_MS 500

static void
want_store(int fd, int want)
{
	struct flock fl = { .l_type = want ? F_RDLCK : F_UNLCK,
	    .l_whence = SEEK_SET, .l_start = 1, .l_len = 1 };

	(void)fcntl(fd, F_OFD_SETLK, &fl);      /* failed: less fair, no more */
}

static int
others_want_store(int fd)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
	    .l_start = 1, .l_len = 1 };

	return fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
}

/*
 * store_ops.waited_for.  Asked after every call of a busy holder, so a
 * system call each would cost a point read a third of its time: the
 * kernel is asked at most once a millisecond, which waiters, polling
 * every 2 ms at most, do not notice.  And a holder has the store for
 * TURN_MS at least before it is asked: a handoff costs a LevelDB close,
 * an open that replays the log, and the waiter's poll, a millisecond
 * or more, which four busy coprocesses handing over after every
 * transaction spent more time on than on their transactions.
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
	return others_want_store(s->lockfd);
}

static int
lock_store(struct ldb_store *s, int64_t deadline_ms)
{
	int64_t handoff = clock_deadline(HANDOFF_MS);
	unsigned delay = 500;
	int rc, saved;

	if (s->paused && s->pause_until < handoff)
		handoff = s->pause_until;

	while (s->paused && others_want_store(s->lockfd) &&
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
	int rc;

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
	s->clean = marker_matches(s, &s->log_bytes);
	if (!s->paused) {       /* see ldb_settle */
		s->written = 0;
		buf_reset(&s->lo);
		buf_reset(&s->hi);
		buf_reset(&s->cuts);
		s->cut_at = 0;
	}
	s->wrote = s->base.failed = s->paused = 0;
	s->db = kv_open(s->path, (s->clean ? KV_REUSE_LOGS : 0) |
	    (s->base.read_only ? KV_READ_ONLY : 0) |
	    (s->base.bulk || s->log_bytes > FLUSH_BYTES ?
	    KV_BIG_BUFFER : 0) |
	    (failpoint_cuts_power() ? KV_SIMULATE_CUTS : 0), &err);
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
	    log_identity(s, identity, sizeof(identity), &s->manifest_fresh) != 0)
		s->manifest_fresh = 0;
	s->opened_ms = clock_mono_ms();
	if ((rc = ldb_load_safe_point(s)) < 0)
		ldb_release(base);
	return rc;
}

/*
 * Does LevelDB owe compactions, by its own scoring: level 0 at 4
 * files, level L >= 1 above 10^L MB?  Sizes come rounded to the MB,
 * so a level is owed only when it is surely above: never wait for a
 * compaction LevelDB would not do.  *l0: the files at level 0; *files
 * and *mb: the table files and their MB in all.
 */
static int
compaction_owed(struct kv *db, int *l0, int *files, double *mb)
{
	char *v, *line, *next;
	double size, limit;
	int level, n, owed = 0;

	*l0 = *files = 0;
	*mb = 0;
	if ((v = kv_property(db, "leveldb.stats")) == NULL)
		return 0;
	for (line = v; line != NULL; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if (sscanf(line, "%d %d %lf", &level, &n, &size) != 3)
			continue;
		*files += n;
		*mb += size;
		if (level == 0)
			*l0 = n;
		for (limit = 1; level > 0; level--)
			limit *= 10;
		owed |= limit == 1 ? n >= 4 : size > limit;
	}
	free(v);
	return owed;
}

/*
 * Leave the store healthy after a session that wrote a lot.  LevelDB
 * compacts only in the background of an open DB, and closing it waits
 * for no more than the compaction under way (abandoning it half done),
 * while every perc command is a short process: a bulk writer would
 * leave hundreds of small level-0 tables and overfull levels behind,
 * which each later open, get and scan pays for, and which short
 * processes never get to compact.  So, as git gc --auto does, the
 * process that made the debt pays it:
 *
 *  - when the log holds FLUSH_BYTES or more, what this process
 *    replayed from it when it opened the store and what it wrote
 *    since, its memtable is made a table, so that the next open
 *    replays an empty log, not megabytes of it (LevelDB itself would
 *    do so only at 8 MB: see kv.cc); but a small writer that
 *    others wait for leaves a log mostly written by others (a big
 *    commit that paused) to them: replaying it costs each open some
 *    milliseconds, making it a table costs the waiters hundreds;
 *  - after RANGE_BYTES written, it compacts the range of keys it wrote
 *    down to where nothing is below it: a bulk load's locks, put by
 *    its prewrites and deleted by its commits, would otherwise stay
 *    as dead keys in the upper levels, which every scan steps over;
 *  - after SETTLE_BYTES written, it waits until LevelDB owes no
 *    compaction (its background thread is at work on them meanwhile);
 *    after fewer, only while level 0 is at LevelDB's slowdown mark (8
 *    files), which small writers alone seldom reach; at most SETTLE_MS
 *    either way, since others may be waiting for the store (a
 *    PERC_LOCK_TIMEOUT of 2 s must do beside a big commit): past
 *    that, the close abandons the compaction under way, and the next
 *    processes go on with the debt, LevelDB compacting it in their
 *    background;
 *  - any writer that finds more than FILES_SLACK table files plus
 *    FILES_PER_MB a MB of them compacts the whole store.  LevelDB
 *    never merges tables that do not overlap, and keys written in
 *    order by small writers go straight to level 2 as tables of a few
 *    KB each, without bound; this rewrites them as tables of 2 MB, at
 *    a cost that grows with the store, paid once in many thousands of
 *    such commands (as git gc --auto's).
 *
 * A command that wrote a few cells pays nothing: its writes go to the
 * log, and level 0 grows by a table only every 64 KB of them, which
 * LevelDB compacts in the background of later commands.  The durability
 * design is untouched: a memtable switch syncs the old log
 * (durable_env.cc), LevelDB syncs its tables and manifest, and
 * store.clean then vouches for the new, empty log.  With simulated
 * power cuts the background work is held, and nothing is waited for.
 */
#define RANGE_BYTES  ((uint64_t)4 << 20)
#define SETTLE_BYTES ((uint64_t)256 << 10)
#define SETTLE_MS    1000
#define SLICE_BYTES  ((uint64_t)8 << 20)
#define RESUME_MS    2000
#define FILES_SLACK  64
#define FILES_PER_MB 2

/* Make the memtable a table: LevelDB starts a new, empty log. */
static void
flush_memtable(struct ldb_store *s)
{
	kv_compact(s->db, "\xff", 1, "\xff", 1); /* no key's */
	s->log_bytes = 0;
}

/*
 * Wait until LevelDB owes no compaction (all), or only while level 0
 * is at its slowdown mark; with yield, no longer than no one waits for
 * the store.  1 if the table files are too many.
 */
static int
settle_wait(struct ldb_store *s, int all, int yield, int64_t deadline)
{
	unsigned delay = 1000;
	int l0, files;
	double mb;

	while (compaction_owed(s->db, &l0, &files, &mb) && (all || l0 >= 8) &&
	    !(yield && others_want_store(s->lockfd)) &&
	    clock_backoff(&delay, 20000, deadline) == 0)
		;
	return files > FILES_SLACK + FILES_PER_MB * mb;
}

static void
reader_drop(struct ldb_store *s)
{
	if (s->reader != NULL)
		kv_iter_free(s->reader);
	s->reader = NULL;
}

/* Close LevelDB, which its iterators must not outlive. */
static void
ldb_close(struct ldb_store *s)
{
	reader_drop(s);
	kv_close(s->db);
	s->db = NULL;
}

/*
 * Between two slices of a release's compaction: close the store and
 * let the processes that wait for it go first (lock_store), then take
 * it back, for at most RESUME_MS.  -1: not back, the store closed.
 */
static int
hand_over(struct ldb_store *s)
{
	ldb_close(s);
	marker_write(s);
	s->paused = 1;          /* keeps the range and its cuts */
	s->pause_until = clock_deadline(HANDOFF_MS);
	flock(s->lockfd, LOCK_UN);
	if (ldb_acquire(&s->base, clock_deadline(RESUME_MS)) < 0)
		return -1;      /* the rest is LevelDB's, in later processes */
	s->wrote = 1;           /* compactions make a new log: a new marker */
	return 0;
}

static int
cut_cmp(const void *a, const void *b)
{
	return bytes_cmp(*(const perc_bytes *)a, *(const perc_bytes *)b);
}

/*
 * Compact the range written, lo to hi, down to where nothing is below
 * it: a slice between two of its cuts at a time, in key order, handing
 * the store over between two slices to whoever waits for it.  A whole
 * range a big writer wrote takes seconds, which no waiter may be kept
 * out for; a slice, some SLICE_BYTES of writes, a tenth of one.
 */
static void
compact_written(struct ldb_store *s)
{
	perc_bytes from = buf_bytes(&s->lo), to, *cut;
	size_t n = 0, i, len, at;

	cut = malloc((s->cuts.len / sizeof(size_t) + 1) * sizeof(*cut));
	for (at = 0; cut != NULL && at < s->cuts.len; at += len) {
		memcpy(&len, s->cuts.data + at, sizeof(len));
		at += sizeof(len);
		cut[n++] = bytes_of(s->cuts.data + at, len);
	}
	qsort(cut, n, sizeof(*cut), cut_cmp);   /* none: one slice */
	for (i = 0; i <= n; i++) {
		to = i < n ? cut[i] : buf_bytes(&s->hi);
		kv_compact(s->db, from.data, from.len, to.data,
		    to.len);          /* the memtable first */
		s->log_bytes = 0;
		from = to;
		if (i < n && others_want_store(s->lockfd) && hand_over(s) < 0)
			break;
	}
	free(cut);
}

/*
 * Compact the whole store, its deepest level too.  LevelDB compacts a
 * range only down into the deepest level with tables, never merging
 * that level's own tables, and never merges tables that do not overlap:
 * the small tables that writers of keys in order leave there would stay
 * as they are.  So the store's first and last keys are written again,
 * as they are: the table they make spans every key, and each of its
 * compactions on the way down takes in every table of the level below.
 */
static int ldb_write_now(struct ldb_store *s, struct kv_batch *batch,
    int sync);

static void
compact_all(struct ldb_store *s)
{
	struct kv_iter *it = kv_iter_new(s->db);
	struct kv_batch *batch = kv_batch_new();
	const char *k, *v;
	size_t klen, vlen;
	int end;

	for (end = 0; end < 2; end++) {
		if (end == 0)
			kv_iter_seek_first(it);
		else
			kv_iter_seek_last(it);
		if (!kv_iter_valid(it))
			break;
		k = kv_iter_key(it, &klen);
		v = kv_iter_value(it, &vlen);
		kv_batch_put(batch, k, klen, v, vlen);
	}
	kv_iter_free(it);
	if (ldb_write_now(s, batch, 0) == 0)
		kv_compact(s->db, NULL, 0, NULL, 0);
	kv_batch_free(batch);
}

static void
ldb_settle(struct ldb_store *s)
{
	if (!s->wrote || s->base.failed || s->base.read_only ||
	    failpoint_cuts_power())
		return;
	/*
	 * The reader pins the tables of the version it was made on: those
	 * the compactions below make obsolete would stay on disk until the
	 * next open deletes them (a long commit's, some 20 MB of them).
	 */
	reader_drop(s);
	if (s->written >= RANGE_BYTES)
		compact_written(s);
	else if (s->log_bytes >= FLUSH_BYTES && (s->written >= FLUSH_BYTES ||
	    !others_want_store(s->lockfd)))
		flush_memtable(s);
	if (s->db != NULL && settle_wait(s, s->written >= SETTLE_BYTES, 1,
	    clock_deadline(SETTLE_MS)))
		compact_all(s);
}

/*
 * store_ops.pause: a lighter settling than a release's, bounded by
 * deadline_ms, and the handoff to waiters (lock_store) by the same.  A
 * big commit pauses every YIELD_MS: were each pause to make its
 * memtable a table, level 0 would fill with small tables faster than
 * LevelDB merges them, and LevelDB stops writes at 12 of them.  So the
 * memtable becomes a table only once it holds PAUSE_FLUSH_BYTES, what
 * the next process replays from the log meanwhile (some 30 ms at
 * most); and the pause waits for owed compactions only while level 0
 * is at the slowdown mark, as a small writer's release does.
 */
#define PAUSE_FLUSH_BYTES ((uint64_t)4 << 20)

void
ldb_pause(struct store *base, int64_t deadline_ms)
{
	struct ldb_store *s = (struct ldb_store *)base;
	int64_t settle = clock_deadline(SETTLE_MS);

	if (s->db == NULL)
		return;
	s->paused = 1;
	s->pause_until = deadline_ms;
	if (!s->wrote || s->base.failed || s->base.read_only ||
	    failpoint_cuts_power())
		return;
	if (s->log_bytes >= PAUSE_FLUSH_BYTES)
		flush_memtable(s);
	settle_wait(s, 0, 0, deadline_ms < settle ? deadline_ms : settle);
}

/* Close LevelDB and let the next process in. */
void
ldb_release(struct store *base)
{
	struct ldb_store *s = (struct ldb_store *)base;

	/* Writes still gathered are dropped, as by a crash before them. */
	if (s->group != NULL) {
		kv_batch_free(s->group);
		s->group = NULL;
		s->grouped = 0;
	}
	if (s->db != NULL && !s->paused)
		ldb_settle(s);  /* which may hand the store over, and lose it */
	if (s->db != NULL) {
		ldb_close(s);
		if (!s->base.failed && !s->base.read_only && (s->wrote || !s->clean))
			marker_write(s);
	}
	if (s->lockfd >= 0) {
		close(s->lockfd);
		s->lockfd = -1;
	}
}

/* 0 with the value in out, PERC_ENOTFOUND, or PERC_EIO. */
int
ldb_get(perc_buf *out, struct ldb_store *s, perc_bytes key)
{
	char *err = NULL;
	int rc;

	rc = kv_get(s->db, out, key.data, key.len, &err);
	if (err != NULL)
		return ldb_read_fail(s, err);
	if (rc < 0)
		return PERC_EIO;        /* out of memory, said */
	return rc == 1 ? PERC_ENOTFOUND : 0;
}

/* Widen the range of keys written in this session to take in key. */
static void
range_add(struct ldb_store *s, const char *k, size_t klen)
{
	perc_bytes key = bytes_of(k, klen);

	/* Out of memory: a narrower range is only compacted less. */
	if (s->lo.len == 0 || bytes_cmp(key, buf_bytes(&s->lo)) < 0)
		(void)buf_set(&s->lo, k, klen);
	if (bytes_cmp(key, buf_bytes(&s->hi)) > 0)
		(void)buf_set(&s->hi, k, klen);
	if (s->cut_next) {
		s->cut_next = 0;
		s->cut_at = s->written + SLICE_BYTES;
		if (buf_add(&s->cuts, &klen, sizeof(klen)) == 0 &&
		    buf_add(&s->cuts, k, klen) < 0)
			s->cuts.len -= sizeof(klen);
	}
}

static void
range_put(void *arg, const char *k, size_t klen, const char *v, size_t vlen)
{
	(void)v;
	(void)vlen;
	range_add(arg, k, klen);
}

static void
range_del(void *arg, const char *k, size_t klen)
{
	range_add(arg, k, klen);
}

/*
 * Apply batch atomically: LevelDB's write batch is the single-row
 * atomicity Percolator assumes of its store.  With sync, the write is
 * on disk when this returns, and so is everything written before it
 * (durable_env.cc makes that hold across LevelDB's logs).  After a
 * failed write LevelDB's log may end in a torn record, so no more
 * writes go in until the store is opened again.
 */
static int
ldb_write_now(struct ldb_store *s, struct kv_batch *batch, int sync)
{
	size_t size = kv_batch_size(batch);
	char *err = NULL;

	s->cut_next = s->written >= s->cut_at;
	s->reader_old = 1;
	kv_batch_each(batch, s, range_put, range_del);
	(void)kv_write(s->db, batch, sync && !s->nosync, &err);
	if (batch == s->group) {
		kv_batch_clear(s->group);
		s->grouped = 0;
	}
	if (err != NULL) {
		s->base.failed = 1;
		return ldb_fail(s, err, "cannot write the store");
	}
	s->wrote = 1;
	s->written += size;
	s->log_bytes += size;
	return 0;
}

int
ldb_write(struct ldb_store *s, struct kv_batch *batch, int sync)
{
	int rc;

	if (s->base.read_only == ENOSPC)
		return disk_full_error(s->dir, "cannot write the store");
	if (s->base.read_only)
		return error_set(PERC_EIO, "cannot write the store '%s': %s; "
		    "perc may not write this data directory (read-only or "
		    "no permission); run this where it can write it", s->path, strerror(s->base.read_only));
	if (s->base.failed)
		return error_set(PERC_EIO, "cannot write the store: an "
		    "earlier write failed; retry: nothing committed was lost");
	if (s->group != NULL && !sync) {
		kv_batch_append(s->group, batch);
		s->grouped++;
		return 0;
	}
	if (s->group != NULL && s->grouped > 0 &&
	    (rc = ldb_write_now(s, s->group, 0)) < 0)
		return rc;
	return ldb_write_now(s, batch, sync);
}

/*
 * store_ops.group: gather the writes of the steps that follow into one
 * batch (on), or write what was gathered and stop (off).  A synced
 * write, a commit point, writes the gathered ones before it.  Steps
 * read the store without what is gathered: the caller groups steps on
 * different cells only, and ends a group before it reads a cell that
 * the group wrote.  A group is one batch: a crash keeps all of it or
 * none, each cell's step atomic as ever.
 */
static int
ldb_group(struct store *base, int on)
{
	struct ldb_store *s = (struct ldb_store *)base;
	int rc = 0;

	if (s->group != NULL && s->grouped > 0)
		rc = ldb_write_now(s, s->group, 0);
	if (s->group != NULL && !on) {
		kv_batch_free(s->group);
		s->group = NULL;
	} else if (s->group == NULL && on)
		s->group = kv_batch_new();
	return rc;
}

struct kv_iter *
ldb_iter(struct ldb_store *s)
{
	return kv_iter_new(s->db);
}

/*
 * The iterator that the steps on one cell share, which they position
 * with a seek and do not destroy.  Making an iterator costs about what
 * a get does (a merging one over the memtable and the tables), so a
 * point read that made its own paid that each time.  One made after
 * this process's last write sees what a new one would: no one else
 * writes while we hold the store.
 */
struct kv_iter *
ldb_reader(struct ldb_store *s)
{
	if (s->reader != NULL && s->reader_old)
		reader_drop(s);
	if (s->reader == NULL) {
		s->reader = ldb_iter(s);
		s->reader_old = 0;
	}
	return s->reader;
}

/* After an iterator stops being valid: 0, or PERC_EIO if it failed. */
int
ldb_iter_error(struct kv_iter *it)
{
	char *err = NULL;

	if (kv_iter_error(it, &err) < 0)
		return ldb_read_fail(NULL, err);
	return 0;
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
	if (lock->host.len != strlen(host) ||
	    memcmp(lock->host.data, host, lock->host.len) != 0)
		return -1;
	return journal_owner_alive(((struct ldb_store *)base)->dir,
	    lock->start_ts, lock->pid, lock->wall_ms);
}

static const struct store_ops ldb_ops = {
	.name           = "leveldb",
	.data_format    = 2,            /* cell heads */
	.dispose        = ldb_free,
	.acquire        = ldb_acquire,
	.release        = ldb_release,
	.pause          = ldb_pause,
	.waited_for     = ldb_waited_for,
	.held           = ldb_held,
	.power_cut      = ldb_power_cut,
	.ts_next        = ldb_ts_next,
	.ts_last        = ldb_ts_last,
	.owner_alive    = ldb_owner_alive,
	.lease_keep     = ldb_lease_keep,
	.push           = ldb_push,
	.group          = ldb_group,
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
	.scan           = ldb_scan,
	.locks          = ldb_locks,
	.raw            = ldb_raw,
	.notify_scan    = ldb_notify_scan,
	.notify_pending = ldb_notify_pending,
	.failures_get   = ldb_failures_get,
	.failures_put   = ldb_failures_put,
};

/* The store of data directory dir, not yet acquired. */
int
store_leveldb_open(struct store **out, const char *dir)
{
	struct ldb_store *s;
	int rc;

	*out = NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return error_set(PERC_EIO, "out of memory");
	if ((rc = ldb_init(s, dir)) < 0) {
		ldb_free(&s->base);
		return rc;
	}
	s->base.ops = &ldb_ops;
	*out = &s->base;
	return 0;
}

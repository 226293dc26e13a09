/*
 * lib/leveldb/settle.c - a writer leaves the store healthy: it pays
 * the compactions its writes made owed before it lets go.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>

#include "buf.h"
#include "clock.h"
#include "leveldb.h"

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
 *    as dead keys in the upper levels, which every scan steps over.
 *    Not while others wait for the store, though: the first slice of
 *    that compaction merges every level-0 table with level 1 (a
 *    writer's tables each span its cells, writes and locks, so each
 *    overlaps every slice), one unit of work LevelDB cannot split
 *    and a close abandons, which took 0.7 to 1.5 s here beside a
 *    400,000-cell commit; the dead keys then go down with LevelDB's
 *    own compactions, in later processes;
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
#define RESUME_MS    2000
#define FILES_SLACK  64
#define FILES_PER_MB 2

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
	    !(yield && ldb_others_want_store(s->lockfd)) &&
	    clock_backoff(&delay, 20000, deadline) == 0)
		;
	return files > FILES_SLACK + FILES_PER_MB * mb;
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
	ldb_marker_write(s);
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
 * Compact lo to hi, a slice between two of the sorted cuts at a time,
 * handing the store over to whoever waits for it before each slice but
 * the session's first (*sliced).  -1: the store was not had back.
 */
static int
compact_span(struct ldb_store *s, perc_bytes lo, perc_bytes hi,
    const perc_bytes *cut, size_t n, int *sliced)
{
	perc_bytes from = lo, to;
	size_t i = 0;
	int last = 0;

	while (!last) {
		while (i < n && bytes_cmp(cut[i], from) <= 0)
			i++;
		last = i == n || bytes_cmp(cut[i], hi) >= 0;
		to = last ? hi : cut[i];
		if (*sliced && ldb_others_want_store(s->lockfd) &&
		    hand_over(s) < 0)
			return -1;
		*sliced = 1;
		kv_compact(s->db, from.data, from.len, to.data,
		    to.len);          /* the memtable first */
		s->log_bytes = 0;
		from = to;
	}
	return 0;
}

/*
 * Compact the range written in each key region down to where nothing
 * is below it, in slices (compact_span).  A whole range a big writer
 * wrote takes seconds, which no waiter may be kept out for; a slice,
 * some SLICE_BYTES of writes, a tenth of one.
 */
static void
compact_written(struct ldb_store *s)
{
	perc_bytes *cut;
	size_t n = 0, len, at;
	int r, sliced = 0;

	cut = malloc((s->cuts.len / sizeof(size_t) + 1) * sizeof(*cut));
	for (at = 0; cut != NULL && at < s->cuts.len; at += len) {
		memcpy(&len, s->cuts.data + at, sizeof(len));
		at += sizeof(len);
		cut[n++] = bytes_of(s->cuts.data + at, len);
	}
	qsort(cut, n, sizeof(*cut), cut_cmp);   /* none: one slice */
	for (r = 0; r < SPANS; r++)
		if (s->span[r].lo.len > 0 && compact_span(s,
		    buf_bytes(&s->span[r].lo), buf_bytes(&s->span[r].hi), cut,
		    n, &sliced) < 0)
			break;
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

void
ldb_settle(struct ldb_store *s)
{
	if (!s->wrote || s->base.failed || s->base.read_only ||
	    s->power_cuts)
		return;
	/*
	 * The reader pins the tables of the version it was made on: those
	 * the compactions below make obsolete would stay on disk until the
	 * next open deletes them (a long commit's, some 20 MB of them).
	 */
	ldb_reader_drop(s);
	if (s->written >= RANGE_BYTES && ldb_others_want_store(s->lockfd))
		;               /* see above: no unit of a second for them */
	else if (s->written >= RANGE_BYTES)
		compact_written(s);
	else if (s->log_bytes >= FLUSH_BYTES && (s->written >= FLUSH_BYTES ||
	    !ldb_others_want_store(s->lockfd)))
		ldb_flush_memtable(s);
	if (s->db != NULL && settle_wait(s, s->written >= SETTLE_BYTES, 1,
	    clock_deadline(SETTLE_MS)))
		compact_all(s);
}

/*
 * store_ops.pause: a lighter settling than a release's, bounded by
 * deadline_ms and SETTLE_MS, and the handoff to waiters
 * (lock_store) by the same.  Every part of it is bounded by time, since
 * the processes waiting meanwhile have PERC_LOCK_TIMEOUT, as short as
 * 2 s, for all of their turn:
 *
 *  - the memtable is not made a table here: LevelDB does that in the
 *    background thread, after the compaction under way, which took up
 *    to 470 ms; the processes in between replay the log instead (some
 *    30 ms per 4 MB), and once it holds PAUSE_FLUSH_BYTES the writer
 *    back from the pause opens it as not clean, and LevelDB makes it a
 *    table as it opens, with no queue (ldb_acquire);
 *  - owed compactions are waited for only while level 0 is at the
 *    slowdown mark, as a small writer's release does, and only until
 *    the turn is SETTLE_MS old, counted from its open, when LevelDB
 *    began the compaction: a level-0 compaction of four tables of
 *    KV_BIG_BUFFER's size and level 1 takes 300 to 500 ms here, and a
 *    shorter bound is worse, not better: it abandons that compaction
 *    at the close, level 0 grows to LevelDB's write stop (12 tables),
 *    and a write then waits for a bigger one (a bound of 400 ms made
 *    the longest hold 0.8 to 1.1 s).
 */
void
ldb_pause(struct store *base, int64_t deadline_ms)
{
	struct ldb_store *s = (struct ldb_store *)base;
	int64_t settle = s->opened_ms + SETTLE_MS;

	if (s->db == NULL)
		return;
	s->paused = 1;
	s->pause_until = deadline_ms;
	if (!s->wrote || s->base.failed || s->base.read_only ||
	    s->power_cuts)
		return;
	settle_wait(s, 0, 0, deadline_ms < settle ? deadline_ms : settle);
}

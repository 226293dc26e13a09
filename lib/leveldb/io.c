/*
 * lib/leveldb/io.c - reads and writes of the held LevelDB store: gets,
 * iterators, batches (grouped, and the keys they cover noted for
 * settle.c), and LevelDB's errors told as perc's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "disk.h"
#include "error.h"
#include "leveldb.h"

/*
 * LevelDB reports errors as malloc'd strings that name the file.  All
 * are storage failures (exit 7), but only a corruption may call for a
 * backup: a full disk or another I/O error leaves the data as it was.
 */
int
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

static struct ldb_span *
span_of(struct ldb_store *s, perc_bytes key)
{
	switch (key.len > 0 ? ((const char *)key.data)[0] : 0) {
	case REGION_CELL:   return &s->span[SPAN_CELLS];
	case REGION_NOTIFY: return &s->span[SPAN_NOTIFY];
	case REGION_LOG:    return &s->span[SPAN_LOG];
	case REGION_LOCKS:  return &s->span[SPAN_LOCKS];
	default:            return &s->span[SPAN_OTHER];
	}
}

/* Widen the range of keys written in key's region to take it in. */
static void
range_add(struct ldb_store *s, const char *k, size_t klen)
{
	perc_bytes key = bytes_of(k, klen);
	struct ldb_span *sp = span_of(s, key);

	/* Out of memory: a narrower range is only compacted less. */
	if (sp->lo.len == 0 || bytes_cmp(key, buf_bytes(&sp->lo)) < 0)
		(void)buf_set(&sp->lo, k, klen);
	if (bytes_cmp(key, buf_bytes(&sp->hi)) > 0)
		(void)buf_set(&sp->hi, k, klen);
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
int
ldb_write_now(struct ldb_store *s, struct kv_batch *batch, int sync)
{
	char *err = NULL;
	size_t size;

	if (batch == s->group)
		ldb_log_flush(&s->group_log, s->group);
	if (sync && s->base.sync_later) {
		s->base.sync_owed = 1;  /* the server's round syncs it */
		sync = 0;
	}
	size = kv_batch_size(batch);
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

/*
 * store_ops.sync: the syncs that sync_later kept back, as one synced
 * write of nothing, which makes what went before it durable too.
 */
int
ldb_sync(struct store *base)
{
	struct ldb_store *s = (struct ldb_store *)base;
	struct kv_batch *none;
	int rc;

	if (!base->sync_owed)
		return 0;
	base->sync_owed = 0;
	if ((none = kv_batch_new()) == NULL)
		return error_set(PERC_EIO, "out of memory");
	base->sync_later = 0;
	rc = ldb_write_now(s, none, 1);
	base->sync_later = 1;
	kv_batch_free(none);
	return rc;
}

/*
 * ldb_write, of a batch that commits cell c (when not NULL): the change
 * log's entry of c goes in with it, alone, or in a group with the
 * others of the group's entry, added once the batch is sure to go in
 * with the group.
 */
int
ldb_write_logged(struct ldb_store *s, struct kv_batch *batch, int sync,
    const struct ldb_log_cell *c)
{
	struct ldb_log_entry alone;
	int rc;

	if (s->base.read_only == ENOSPC)
		return disk_full_error(s->dir, "cannot write the store");
	if (s->base.read_only)
		return error_set(PERC_EIO, "cannot write the store '%s': %s; "
		    "perc may not write this data directory (read-only or "
		    "no permission); run this where it can write it", s->path,
		    strerror(s->base.read_only));
	if (s->base.failed)
		return error_set(PERC_EIO, "cannot write the store: an "
		    "earlier write failed; retry: nothing committed was lost");
	if (s->group != NULL && !sync) {
		if (c != NULL &&
		    (rc = ldb_log_add(&s->group_log, s->group, c)) < 0)
			return rc;
		kv_batch_append(s->group, batch);
		s->grouped++;
		return 0;
	}
	if (s->group != NULL && s->grouped > 0 &&
	    (rc = ldb_write_now(s, s->group, 0)) < 0)
		return rc;
	if (c != NULL) {
		memset(&alone, 0, sizeof(alone));
		if ((rc = ldb_log_add(&alone, batch, c)) == 0)
			ldb_log_flush(&alone, batch);
		ldb_log_dispose(&alone);
		if (rc < 0)
			return rc;
	}
	return ldb_write_now(s, batch, sync);
}

int
ldb_write(struct ldb_store *s, struct kv_batch *batch, int sync)
{
	return ldb_write_logged(s, batch, sync, NULL);
}

/* Make the memtable a table: LevelDB starts a new, empty log. */
void
ldb_flush_memtable(struct ldb_store *s)
{
	kv_compact(s->db, "\xff", 1, "\xff", 1); /* no key's */
	s->log_bytes = 0;
}

/*
 * Write batch, change log entries of a big commit that follows at once
 * (LOG_OP_APART), then make the memtable a table, so that the commit's
 * cells go into one of their own.  Not synced: the commit's synced
 * write makes it durable too.  With simulated power cuts LevelDB's
 * background work is held, and the memtable stays as it is.
 */
int
ldb_write_apart(struct ldb_store *s, struct kv_batch *batch)
{
	int rc;

	if ((rc = ldb_write(s, batch, 0)) == 0 && !s->power_cuts)
		ldb_flush_memtable(s);
	return rc;
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
int
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

void
ldb_reader_drop(struct ldb_store *s)
{
	if (s->reader != NULL)
		kv_iter_free(s->reader);
	s->reader = NULL;
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
		ldb_reader_drop(s);
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

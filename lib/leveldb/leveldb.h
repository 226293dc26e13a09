/*
 * lib/leveldb/leveldb.h - the LevelDB store, inside the data directory:
 * one process holds it at a time, under a file lock.
 */
#ifndef STORE_LEVELDB_H
#define STORE_LEVELDB_H

#include "codec.h"
#include "kv.h"
#include "oracle.h"
#include "perc.h"
#include "store.h"
#include "dirwake.h"

/*
 * The change log (log_entry.c, log.c): a batch that commits cells of a
 * transaction carries one entry for them.  Each cell is added as its
 * write record goes into the batch (ldb_log_add), and the entry goes in
 * last (ldb_log_flush); in a group, when the group is written (io.c).
 */
/* The head of an entry's value: the first cell's op, then start_ts. */
#define LOG_HEAD_LEN 9
/*
 * A flag on the head's op: an entry written ahead of its commit, in a
 * batch of its own (ldb_write_apart), which stands for a commit only if
 * its first cell's write record at its commit_ts, of its start_ts, is
 * there.  A big one-step commit writes its entries so: in its own
 * batch, the entries (keys in REGION_LOG) and the cells would make one
 * table of LevelDB's that spans every cell between the two, which each
 * later compaction of cells would rewrite with it.
 */
#define LOG_OP_APART 0x80
/* A further cell, before its row and column: op, two lengths. */
#define LOG_CELL_LEN 9
/* Whether a write of op is in the log: puts and deletes. */
static inline int
ldb_log_changes(int op)
{
	return op == OP_PUT || op == OP_DELETE;
}
struct ldb_log_cell {
	perc_bytes row, col;
	int        op;
	perc_ts    start_ts, commit_ts;
};
struct ldb_log_entry {
	perc_ts    start_ts, commit_ts;
	size_t     cells;           /* 0: empty */
	int        apart;           /* written so: LOG_OP_APART */
	perc_buf   key, value;      /* as stored */
};

/*
 * The keys a session wrote in one key region (codec.h): the range its
 * settling compacts (settle.c).  One range per region, since a range
 * across two takes in every key between them: a load's cells and its
 * change log entries would make each load compact the whole store.
 */
enum ldb_span_region { SPAN_CELLS, SPAN_NOTIFY, SPAN_LOG, SPAN_LOCKS,
    SPAN_OTHER, SPANS };
struct ldb_span {
	perc_buf lo, hi;        /* empty: nothing written there */
};

struct ldb_store {
	struct store            base;     /* first: the seam's view */
	char                   *path;     /* DIR/store */
	char                   *lockpath; /* DIR/store.lock */
	char                   *dir;      /* DIR */
	struct oracle           oracle;   /* DIR/oracle's, kept open */
	int                     lockfd;   /* flock held while open; else -1 */
	struct kv              *db;       /* NULL while released */
	int                     nosync;   /* PERC_UNSAFE_NOSYNC=1 */
	int64_t                 timeout_ms; /* store_env's */
	int                     power_cuts; /* store_env's (store.h) */
	int                   (*owner_alive)(const char *dir, perc_ts start_ts,
	                                     uint32_t pid, uint64_t wall_ms);
	char                   *cleanpath; /* DIR/store.clean */
	int                     clean;    /* opened on a log it vouched for */
	off_t                   manifest_fresh; /* its size when LevelDB
	                                           last wrote it anew */
	int                     wrote;    /* a write went in this session */
	uint64_t                written;  /* bytes of batches it wrote */
	uint64_t                log_bytes; /* in the log the next open
	                                      replays: what this open
	                                      replayed, and wrote since */
	struct ldb_span         span[SPANS]; /* the keys it wrote lie within */
	perc_buf                cuts;     /* a key written every SLICE_BYTES,
	                                     each after its length (size_t):
	                                     the slices compacted in turn */
	uint64_t                cut_at;   /* written at which the next is */
	int                     cut_next; /* range_add takes the next key */
	int                     paused;   /* ldb_pause: settled already */
	int64_t                 pause_until; /* and the pause's deadline */
	int64_t                 full_at_ms; /* when an open found the disk full */
	struct kv_batch        *group;    /* ldb_group's gathered writes */
	struct ldb_log_entry    group_log; /* and the change log's entry of
	                                      the cells they commit */
	struct dir_watch        watch;    /* wait_wake's (dirwake.c) */
	size_t                  grouped;  /* batches gathered in it */
	perc_ts                 safe_point; /* gc's, as of the acquire */
	int64_t                 asked_ms; /* ldb_waited_for's last look */
	int64_t                 opened_ms; /* when this turn began */
	struct kv_iter         *reader;   /* ldb_reader's, or NULL */
	int                     reader_old; /* a write went in after it */
	perc_buf                head_key, head_val; /* ldb_get_head's scratch:
	                                     a read allocates nothing */
};

/* A small writer's write buffer, and the most of a log it leaves: see
   ldb_settle, and KV_BIG_BUFFER for a longer one. */
#define FLUSH_BYTES ((uint64_t)64 << 10)
/* The writes between two cuts of the range compacted: see settle.c. */
#define SLICE_BYTES ((uint64_t)8 << 20)
/* The longest a writer back from a pause lets waiters go first. */
#define HANDOFF_MS  500
/* A log this long, left by a paused writer, is made a table when that
   writer opens the store again: see ldb_pause. */
#define PAUSE_FLUSH_BYTES ((uint64_t)4 << 20)

/* hold.c: take the store, let it go, and hand it over. */
int  ldb_acquire(struct store *base, int64_t deadline_ms);
void ldb_close(struct ldb_store *s);
void ldb_let_go(struct ldb_store *s);
int  ldb_others_want_store(int fd);

/* clean.c: DIR/store.clean. */
int  ldb_log_identity(const struct ldb_store *s, char *out, size_t size,
                      off_t *manifest_bytes);
int  ldb_marker_matches(struct ldb_store *s, uint64_t *log_bytes);
void ldb_marker_write(const struct ldb_store *s);

/* settle.c: the compactions a writer owes, at a release or a pause. */
void ldb_settle(struct ldb_store *s);
void ldb_pause(struct store *base, int64_t deadline_ms);

/* io.c: reads and writes of the held store. */
int  ldb_fail(const struct ldb_store *s, char *err, const char *doing);
int  ldb_get(perc_buf *out, struct ldb_store *s, perc_bytes key);
int  ldb_write(struct ldb_store *s, struct kv_batch *batch, int sync);
int  ldb_write_logged(struct ldb_store *s, struct kv_batch *batch, int sync,
                      const struct ldb_log_cell *c);
int  ldb_write_now(struct ldb_store *s, struct kv_batch *batch, int sync);
int  ldb_write_apart(struct ldb_store *s, struct kv_batch *batch);
int  ldb_sync(struct store *base);
void ldb_flush_memtable(struct ldb_store *s);
int  ldb_group(struct store *base, int on);
struct kv_iter *ldb_iter(struct ldb_store *s);
struct kv_iter *ldb_reader(struct ldb_store *s);
void ldb_reader_drop(struct ldb_store *s);
int  ldb_iter_error(struct kv_iter *it);

/*
 * read.c: a walk over the keys of one cell, in their order
 * (its lock, write records newest first, data newest first), on an
 * iterator that it moves mostly forward; and what a snapshot sees of
 * the cell, decided on such a walk for a read and a scan alike.
 */
struct cell_walk {
	struct kv_iter     *it;
	perc_bytes          row, col;   /* the cell, for messages */
	perc_bytes          prefix;     /* codec_cell_prefix(row, col) */
	perc_buf            key;        /* scratch for seeks */
};
int  ldb_visible(struct cell_walk *w, perc_bytes *value, perc_ts ts,
                 const struct lock_rec *lock, const struct lock_fate *known);
int  ldb_walk_seek(struct cell_walk *w, int kind, perc_ts ts);
int  ldb_walk_past(struct cell_walk *w);
void ldb_walk_dispose(struct cell_walk *w);

/* head.c: a cursor over the versions of one kind within one cell. */
struct cell {
	perc_buf            prefix;  /* codec_cell_prefix(row, col) */
	perc_buf            key;     /* scratch */
	struct kv_iter     *it;      /* the store's reader */
	perc_bytes          row, col;
};
int  ldb_cell_open(struct cell *c, struct ldb_store *s, perc_bytes row,
                   perc_bytes col);
int  ldb_cell_seek(struct cell *c, int kind, perc_ts ts);
int  ldb_cell_at(struct cell *c, int kind, perc_ts *ts, perc_bytes *value);
void ldb_cell_close(struct cell *c);

/* head.c: the cell's head (codec.h), its lock and newest write. */
int  ldb_get_head(struct ldb_store *s, struct cell_head *head,
                  struct lock_rec *lock, perc_bytes row, perc_bytes col);
int  ldb_get_own_lock(struct ldb_store *s, struct cell_head *head,
                      struct lock_rec *lock, perc_bytes row, perc_bytes col,
                      perc_ts start_ts);
int  ldb_put_head(struct kv_batch *b, perc_buf *key, perc_bytes row,
                  perc_bytes col, struct cell_head *head,
                  const struct lock_rec *lock, int had_newest,
                  unsigned flags);
void ldb_head_newest(struct cell_head *head, int op, perc_ts start_ts,
                     perc_ts commit_ts, const perc_bytes *value);

/* read.c: the Percolator steps that read one cell. */
int  ldb_read(struct store *s, perc_buf *out, perc_bytes row, perc_bytes col,
              perc_ts ts, struct lock_rec *blocker,
              const struct lock_fate *known);
int  ldb_get_lock(struct store *s, struct lock_rec *out, perc_bytes row,
                  perc_bytes col);
int  ldb_find_commit(struct store *s, perc_ts *commit_ts, int *op,
                     perc_bytes row, perc_bytes col, perc_ts start_ts);

/* mvcc.c: the Percolator steps that write one cell. */
int  ldb_prewrite(struct store *s, perc_ts *committed_at,
                  const struct write *w, const struct lock_rec *lock,
                  unsigned flags, struct lock_rec *blocker);
int  ldb_commit(struct store *s, perc_bytes row, perc_bytes col,
                perc_ts start_ts, perc_ts commit_ts, unsigned flags);
int  ldb_rollback(struct store *s, perc_bytes row, perc_bytes col,
                  perc_ts start_ts, unsigned flags);
int  ldb_commit_at_once(struct store *s, const struct writeset *ws,
                        const unsigned *flags, perc_ts start_ts,
                        perc_ts *commit_ts);
int  ldb_lease_keep(struct store *s, perc_bytes row, perc_bytes col,
                    perc_ts start_ts, uint32_t ttl_ms);
int  ldb_push(struct store *s, perc_bytes row, perc_bytes col,
              perc_ts start_ts, perc_ts ts);

/* gc.c: gc's safe point and pass. */
int  ldb_load_safe_point(struct ldb_store *s);
int  ldb_safe_point(struct store *s, perc_ts *out);
int  ldb_safe_point_raise(struct store *s, perc_ts sp);
int  ldb_gc(struct store *s, struct store_gc *gc);

/* walk.c: scans, and the notify region. */
int  ldb_scan(struct store *s, struct store_scan *sc);
int  ldb_locks(struct store *s, int (*fn)(void *arg, perc_bytes row,
               perc_bytes col, const struct lock_rec *lock), void *arg);
int  ldb_locks_by_txn(struct store *s, int (*fn)(void *arg,
               perc_bytes row, perc_bytes col, const struct lock_rec *lock),
               void *arg);
int  ldb_bulk_done(struct store *s, perc_ts start_ts);
int  ldb_marker_key(perc_buf *out, perc_ts start_ts);
int  ldb_upgrade(struct store *s, int from);
int  ldb_raw(struct store *s, perc_bytes row, const perc_bytes *col,
             store_raw_fn fn, void *arg);
int  ldb_notify_clear(struct kv_batch *batch, struct ldb_store *s,
                      perc_bytes row, perc_bytes col, perc_ts start_ts);
int  ldb_notify_scan(struct store *s, const perc_bytes *column,
                     int (*fn)(void *arg, perc_bytes row, perc_bytes col,
                     perc_bytes failures), void *arg);
int  ldb_notify_pending(struct store *s, perc_bytes row, perc_bytes col,
                        perc_ts *ts, size_t max, size_t *n);
int  ldb_failures_get(struct store *s, perc_buf *out, perc_bytes row,
                      perc_bytes col);
int  ldb_failures_put(struct store *s, perc_bytes row, perc_bytes col,
                      perc_bytes rec);

/* log_entry.c: the change log's entries, made beside a batch. */
int  ldb_log_add(struct ldb_log_entry *e, struct kv_batch *b,
                 const struct ldb_log_cell *c);
void ldb_log_flush(struct ldb_log_entry *e, struct kv_batch *b);
void ldb_log_dispose(struct ldb_log_entry *e);

/* log.c: the change log read (perc log), and trimmed by gc. */
int  ldb_log_read(struct store *s, struct store_log *lg);
int  ldb_log_trim(struct ldb_store *s, struct kv_batch *b, perc_ts sp);

/* weak.c: weak notifications. */
int  ldb_weak_pend(struct store *s, perc_bytes row, perc_bytes col,
                   perc_ts start_ts, perc_bytes primary);
int  ldb_weak_settle(struct store *s, perc_bytes row, perc_bytes col,
                     perc_ts start_ts, perc_ts commit_ts, unsigned flags);
int  ldb_weak_clear(struct store *s, perc_bytes row, perc_bytes col,
                    perc_ts upto);
#endif

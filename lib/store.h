/*
 * lib/store.h - the seam between Percolator and the store under it.
 *
 * Percolator needs of its store only single-row transactions: each verb
 * below reads and writes the lock, write and data columns of one cell
 * (and its notify cells) atomically, checking everything before its
 * first write.  The LevelDB store does it under its file lock with one
 * write batch; the Redis Cluster store with one server-side script on
 * the row's slot.  The 2PC coordination above (commit.c, lock.c,
 * txn.c, scan.c) is one code path for both.
 *
 * Keys of a cell, in the order every walk below reports them, are those
 * of codec.h: a lock first, then write records newest first, then data
 * newest first.  Rows and columns come in byte order.
 */
#ifndef STORE_H
#define STORE_H

#include <signal.h>
#include <stdint.h>

#include "cell.h"
#include "codec.h"
#include "perc.h"
#include "writeset.h"

/* Internal results, never returned to a library user. */
#define PERC_ELOCKED    (-50)   /* a lock is in the way: see *blocker */
#define PERC_ECOMMITTED (-51)   /* this start_ts is already committed */
#define PERC_EPUSHED    (-52)   /* commit: readers pushed the primary
                                   above commit_ts; take a later one */

/* A transaction whose fate a reader learned without writing it down. */
struct lock_fate {
	perc_ts start_ts;       /* 0: none known */
	perc_ts commit_ts;      /* 0: it never commits */
};

/* Flags of prewrite, commit and rollback. */
#define STORE_NOTIFY       0x1u /* prewrite: an observed column changes */
#define STORE_SYNC         0x2u /* commit: the commit point, made durable */
#define STORE_CLEAR_NOTIFY 0x4u /* commit: an observer's ack clears the
                                   notifications its snapshot saw */
#define STORE_PRIMARY      0x8u /* prewrite, commit, rollback: the
                                   transaction's primary cell, which keeps
                                   (prewrite) or drops (commit, rollback)
                                   its owner's lease with the lock, where
                                   the store has leases (Redis) */
#define STORE_BULK        0x20u /* prewrite, commit, commit_at_once: a
                                   cell of a bulk load (perc_load),
                                   where the store adds nothing it can
                                   do without (the LevelDB store starts
                                   no cell head, codec.h) */

/*
 * One batch of a scan: the visible cells of snapshot ts whose row
 * starts with prefix (and whose column is *column), from the first
 * cell, or from the cell (from_row, from_col) (resume SCAN_AT) or the
 * first after it (SCAN_AFTER).  The store calls cell for each in
 * order, until cell returns 1 (the batch is full) or a failure (which
 * the scan returns), or none is left (done is set).  A lock that may
 * still commit below ts ends the batch with PERC_ELOCKED, the lock in
 * blocker and its cell in brow, bcol; cells before it were given.  The
 * locks of the transaction known are read past (as read does), and
 * each is given to passed, when not NULL, before its cell, so that the
 * caller may clean them; a failure it returns ends the scan.
 */
#define SCAN_AFTER 1
#define SCAN_AT    2

struct store_scan {
	perc_bytes              prefix;
	const perc_bytes       *column;
	perc_ts                 ts;
	const struct lock_fate *known;
	int                     resume;
	perc_bytes              from_row, from_col;
	int                   (*cell)(void *arg, perc_bytes row,
	                              perc_bytes col, perc_bytes value);
	int                   (*passed)(void *arg, perc_bytes row,
	                                perc_bytes col,
	                                const struct lock_rec *lock);
	void                   *arg;
	int                     done;
	struct lock_rec         blocker;
	perc_buf                brow, bcol;
};

/*
 * One batch of gc's pass over every cell (gc.c): the store walks the
 * cells after its own resume point, asks cell_gc_drops of each key, and
 * removes the keys it drops (counting the write records among them in
 * removed), unless dry_run; done is set after the last cell.
 */
struct store_gc {
	perc_ts        bound;
	int            dry_run;
	uint64_t       removed;
	int            done;
	struct gc_cell cell;
	perc_buf       resume;  /* the store's: where the next batch starts */
};

/*
 * One batch of a read of the change log (perc log): the puts and
 * deletes committed at a commit_ts in (from, to], whose row starts
 * with prefix (and whose column is *column), in order of commit_ts,
 * then row, then column, each given to change with its op (OP_PUT or
 * OP_DELETE) and a put's value.  The store stops at the end of a
 * commit_ts once it has given about max entries (it may give more, a
 * transaction is never cut), and says in *upto that every entry at or
 * below upto was given: to, and done, at the end; the caller starts
 * the next batch from upto.  The entries are written in the atomic
 * step that writes each cell's write record at commit_ts (commit,
 * commit_many, commit_at_once), and dropped below gc's safe point.
 */
struct store_log {
	perc_ts           from, to;
	perc_bytes        prefix;
	const perc_bytes *column;
	size_t            max;
	int             (*change)(void *arg, perc_ts commit_ts, perc_bytes row,
	                          perc_bytes col, int op, perc_bytes value);
	void             *arg;
	perc_ts           upto;
	int               done;
};

/* What show prints: one raw key of a cell, as the store keeps it. */
typedef int (*store_raw_fn)(void *arg, int region, perc_bytes col,
                            int kind, perc_ts ts, perc_bytes value);

/*
 * The config format (lib/config.c) from which a LevelDB store keeps its
 * lock index (codec.h's REGION_LOCKS): a perc of an older format would
 * write locks without it, so it must refuse the directory, and the
 * index of a directory of an older format is built before the config
 * is marked (store_ops.upgrade).  Below it the walk of the locks reads
 * the whole cell region, as it always can.
 */
#define FORMAT_LOCK_INDEX 4
/*
 * 5: a LevelDB store whose change log may hold entries written apart
 * from their commit (lib/leveldb/leveldb.h's LOG_OP_APART), which a
 * perc of format 4 would take for damage.  A store of format 4 holds
 * none, so it is only marked up.  The newest format.
 */
#define FORMAT_LOG_APART  5

/*
 * owner_alive's answer for an owner at work on a commit that waits for
 * a store others hold (the LevelDB store, one process's at a time,
 * while a long commit lets them in): its heartbeat is late only because
 * they keep it out, and its locks are not taken for expired for that.
 */
#define TOKEN_WAITING 2

struct store;

struct store_ops {
	const char *name;       /* "leveldb" or "redis": backend.c's table,
	                           and what status shows for LevelDB */
	/* The oldest config format (lib/config.c) that tells this store's
	   data apart: an older config is marked up before a write. */
	int         data_format;
	/* Bring the store's data up to data_format from a directory of
	   format from, before its config is marked up (db_acquire).
	   NULL: there is nothing to bring. */
	int  (*upgrade)(struct store *s, int from);
	/* Release it if held, and free it; what open returned is gone. */
	void (*dispose)(struct store *s);

	/*
	 * The LevelDB store is one process's at a time: acquire takes it
	 * until release.  The Redis store has nothing to take: its acquire
	 * makes sure, once, that the cluster answers and the table is
	 * there, and from then on held is true of it.
	 */
	int  (*acquire)(struct store *s, int64_t deadline_ms);
	void (*release)(struct store *s);
	/*
	 * A long writer's pause (a big commit letting the others in): the
	 * upkeep of the release that follows (LevelDB's settling) is done
	 * now, and the next acquire lets the processes that were waiting
	 * go first, all of it by deadline_ms, so that the writer's locks
	 * do not age past their TTL meanwhile.  NULL: nothing to do.
	 */
	void (*pause)(struct store *s, int64_t deadline_ms);
	/* Is another process waiting for the store this one holds?  NULL:
	   no one ever waits (the Redis store). */
	int  (*waited_for)(struct store *s);
	/* Is it acquired, and not released since? */
	int  (*held)(const struct store *s);
	/* Make durable, in one sync, every write that sync_later kept
	   from syncing (the store server's group commit, lib/server/).
	   NULL: the store never defers a sync. */
	int  (*sync)(struct store *s);
	/* A failpoint's power cut (store_env's power_cuts): put the store
	   back to what a cut now would leave.  NULL: nothing to lose. */
	void (*power_cut)(struct store *s);

	/* The timestamp oracle: n fresh ones (the first in *out), or the
	   last handed out. */
	int  (*ts_next)(struct store *s, perc_ts *out, uint64_t n,
	                int64_t deadline_ms);
	int  (*ts_last)(struct store *s, perc_ts *out, int64_t deadline_ms);
	/*
	 * Where data directories other than this one share the store (the
	 * Redis store), gc must hear of their open transactions: ts_begin
	 * is a transaction's start, which the store notes as this
	 * directory's in the same step; open_publish says that this
	 * directory's transactions that started below at are all among its
	 * journals, the oldest at oldest_here (UINT64_MAX: none), and the
	 * rest are above at; *oldest_all becomes the oldest start any
	 * directory may have open, 0 when none may (see lib/gc.c).  Both
	 * NULL: a store of this directory alone, whose journals say it
	 * all, and a start is one of ts_next.
	 */
	int  (*ts_begin)(struct store *s, perc_ts *out, int64_t deadline_ms);
	int  (*open_publish)(struct store *s, perc_ts at, perc_ts oldest_here,
	                     perc_ts *oldest_all, int64_t deadline_ms);

	/* Is the owner of lock known to be alive (1), alive and waiting
	   for the store (TOKEN_WAITING), or gone (0)?  -1: this store
	   cannot tell, and only the lock's TTL decides. */
	int  (*owner_alive)(struct store *s, const struct lock_rec *lock,
	                    const char *host);
	/*
	 * The heartbeat of a long commit, the paper's: the wall time of
	 * its primary's lock becomes now, while that lock is still its
	 * own, so that readers do not take it for expired; and where the
	 * store has leases (Redis), the lease lives ttl_ms more (plus the
	 * store's slack).  Nothing when the lock is gone.
	 */
	int  (*lease_keep)(struct store *s, perc_bytes primary_row,
	                   perc_bytes primary_col, perc_ts start_ts,
	                   uint32_t ttl_ms);
	/*
	 * A reader at snapshot ts met a live lock of large transaction
	 * start_ts, whose primary is (primary_row, primary_col): rather
	 * than wait, it makes the transaction commit above ts, as TiDB's
	 * readers of large transactions do, by raising the mark
	 * (min_commit_ts) on the primary's lock, which the commit point
	 * then respects (PERC_EPUSHED).  0: pushed, and the reader may read past the
	 * transaction's locks; PERC_ENOTFOUND: the primary is no longer
	 * locked by it (committed or rolled back: look again).
	 */
	int  (*push)(struct store *s, perc_bytes primary_row,
	             perc_bytes primary_col, perc_ts start_ts, perc_ts ts);
	/* Gather the writes of the steps that follow, on cells each
	   different, into one batch of the store (on), or write what was
	   gathered and stop (off); a synced write writes them first.  A
	   bulk commit's (perc_load) saving; NULL: each step writes alone. */
	int  (*group)(struct store *s, int on);
	/* Transaction start_ts, a bulk commit's (STORE_BULK), holds no
	   lock any more: its commit or rollback is finished, by the caller,
	   the process that wrote its locks.  NULL: nothing to do. */
	int  (*bulk_done)(struct store *s, perc_ts start_ts);

	/*
	 * The Percolator steps on one cell, each one atomic step of the
	 * store on the cell (and its notify cells), checking everything
	 * before its first write.  The caller holds the store.
	 *
	 * read: the value of (row, col) that snapshot ts sees, the newest
	 * put or delete committed at or below ts, into out; PERC_ENOTFOUND
	 * for none or a delete.  A lock that began at or below ts and may
	 * change the value (not a lock-only one) may yet commit below ts:
	 * PERC_ELOCKED, the lock in *blocker, unless its transaction is
	 * known's, which is read as committed at known->commit_ts (absent
	 * when 0).  PERC_ETOOOLD below the safe point (cell_too_old).
	 */
	int  (*read)(struct store *s, perc_buf *out, perc_bytes row,
	             perc_bytes col, perc_ts ts, struct lock_rec *blocker,
	             const struct lock_fate *known);
	/* The lock on (row, col), whoever holds it: 0 or PERC_ENOTFOUND. */
	int  (*get_lock)(struct store *s, struct lock_rec *out,
	                 perc_bytes row, perc_bytes col);
	/*
	 * The write record of transaction start_ts in (row, col), looked
	 * for at or above start_ts only: 0 with its commit timestamp and
	 * op (OP_ROLLBACK for a rollback), or PERC_ENOTFOUND.
	 */
	int  (*find_commit)(struct store *s, perc_ts *commit_ts, int *op,
	                    perc_bytes row, perc_bytes col, perc_ts start_ts);
	/*
	 * Lock w's cell for the transaction of lock (lock->start_ts) and
	 * write its data at start_ts, and with STORE_NOTIFY the notify
	 * cell, in one step: after a crash, a roll forward notifies too.
	 * The transaction's own record decides first (after a crash past
	 * the commit point others may have written since); then a lock in
	 * the way, then a write committed after start_ts.  0 (also when
	 * the transaction's own lock is there already: a retry),
	 * PERC_ECONFLICT, PERC_ELOCKED with the other lock in *blocker,
	 * PERC_ECOMMITTED with *committed_at when this transaction already
	 * committed here, or PERC_ETOOOLD below the safe point.
	 */
	int  (*prewrite)(struct store *s, perc_ts *committed_at,
	                 const struct write *w, const struct lock_rec *lock,
	                 unsigned flags, struct lock_rec *blocker);
	/*
	 * Commit transaction start_ts on (row, col) at commit_ts: its lock
	 * becomes a write record, in one step.  With the lock gone, the
	 * records answer: committed already is success, anything else
	 * means it was rolled back (PERC_ECONFLICT).  STORE_SYNC makes it
	 * durable before it returns (the commit point); STORE_CLEAR_NOTIFY
	 * clears, in the same step, the notifications whose writes the
	 * observer's snapshot saw (write_seen); PERC_EPUSHED when a
	 * reader raised the primary's lock above commit_ts (push).
	 */
	int  (*commit)(struct store *s, perc_bytes row, perc_bytes col,
	               perc_ts start_ts, perc_ts commit_ts, unsigned flags);
	/*
	 * Roll transaction start_ts back on (row, col): drop its lock and
	 * data and leave a rollback record at start_ts, so that a late or
	 * retried prewrite of it never succeeds here; others' locks stay.
	 * PERC_ECONFLICT when it committed here already.
	 */
	int  (*rollback)(struct store *s, perc_bytes row, perc_bytes col,
	                 perc_ts start_ts, unsigned flags);
	/*
	 * The same steps on the n cells w[], all at once, where a store
	 * can send them together (Redis: pipelined, one round trip and one
	 * WAIT per master): prewrite (flags[i] prewrite's for w[i]) or a
	 * secondary's commit (lock's op is taken from each w[i]).  done[i]
	 * is 1 when w[i]'s step is done and
	 * as durable as prewrite or commit would have made it; 0 when it
	 * met anything else (a lock, a conflict, no replica in time), and
	 * the caller takes that cell's step again, alone, which finds its
	 * work done or says what is wrong.  NULL: one cell at a time.
	 */
	int  (*prewrite_many)(struct store *s, const struct write *const *w,
	                      const unsigned *flags, size_t n,
	                      const struct lock_rec *lock, int *done);
	int  (*commit_many)(struct store *s, const struct write *const *w,
	                    size_t n, perc_ts start_ts, perc_ts commit_ts,
	                    int *done);
	/* And a secondary's rollback, as rollback without STORE_PRIMARY
	   (resolving a dead transaction's many locks). */
	int  (*rollback_many)(struct store *s, const struct write *const *w,
	                      size_t n, perc_ts start_ts, int *done);
	/*
	 * A whole transaction in one step, where the store can write every
	 * cell of it atomically (the LevelDB store, under its lock): each
	 * cell checked as prewrite checks it (flags[i] are prewrite's for
	 * ws->w[i]), then its data and write record at *commit_ts,
	 * durable, and no lock.  The store takes *commit_ts from the oracle
	 * within the step, before its checks: no locks stand for the cells
	 * meanwhile, so a reader whose snapshot is above the commit must
	 * not read any of them between the two (the store server serves
	 * other processes between one process's requests); PERC_ECONFLICT
	 * when it cannot take one.  PERC_ELOCKED: something is in the way
	 * that the two steps go through.  NULL: cells are atomic one row at
	 * a time.
	 */
	int  (*commit_at_once)(struct store *s, const struct writeset *ws,
	                       const unsigned *flags, perc_ts start_ts,
	                       perc_ts *commit_ts);

	/*
	 * gc: the safe point readers are held to, raised (never lowered;
	 * durably, before anything below it is removed), and one batch of
	 * the pass that removes what is below it.  The store refuses a read
	 * or prewrite below its safe point with PERC_ETOOOLD.
	 */
	int  (*safe_point)(struct store *s, perc_ts *out);
	int  (*safe_point_raise)(struct store *s, perc_ts sp);
	int  (*gc)(struct store *s, struct store_gc *gc);
	/* The change log: one batch (struct store_log). */
	int  (*log_read)(struct store *s, struct store_log *lg);

	/*
	 * Walks.  scan: one batch of struct store_scan's.  locks: fn for
	 * every lock, in key order, until it returns other than 0 (which
	 * locks returns).  raw: fn for every key that the store keeps of
	 * row (of column *col only, when not NULL), as show prints them.
	 */
	int  (*scan)(struct store *s, struct store_scan *sc);
	int  (*locks)(struct store *s, int (*fn)(void *arg, perc_bytes row,
	              perc_bytes col, const struct lock_rec *lock), void *arg);
	/* As locks, for a caller that needs each live transaction once,
	   not each of its locks (perc log's resolved timestamp): a live
	   bulk commit's secondaries may be left out, its primary's lock
	   standing for them all.  NULL: locks. */
	int  (*locks_by_txn)(struct store *s, int (*fn)(void *arg,
	              perc_bytes row, perc_bytes col,
	              const struct lock_rec *lock), void *arg);
	int  (*raw)(struct store *s, perc_bytes row, const perc_bytes *col,
	            store_raw_fn fn, void *arg);

	/* Notifications: the dirty cells (with their failure records; a
	   cell with a weak pending record only is one too), is
	   one still dirty (0, with the start_ts of its notifications'
	   writes, newest first, up to max of them in ts[] and their
	   number in *n; or PERC_ENOTFOUND), and a failed observer run's
	   record. */
	int  (*notify_scan)(struct store *s, const perc_bytes *column,
	                    int (*fn)(void *arg, perc_bytes row,
	                    perc_bytes col, perc_bytes failures), void *arg);
	int  (*notify_pending)(struct store *s, perc_bytes row,
	                       perc_bytes col, perc_ts *ts, size_t max,
	                       size_t *n);
	int  (*failures_get)(struct store *s, perc_buf *out, perc_bytes row,
	                     perc_bytes col);
	int  (*failures_put)(struct store *s, perc_bytes row, perc_bytes col,
	                     perc_bytes rec);

	/*
	 * Weak notifications (lib/weak.c), in the notify region of (row,
	 * col), each one step of that row, which takes no lock and checks
	 * nothing but what it names, so that no two ever conflict:
	 *
	 * weak_pend: the pending record of transaction start_ts
	 * (KIND_PENDING at start_ts), holding primary, written before that
	 * transaction's commit point, so that a crash after it loses no
	 * notification: whoever meets the record settles it by the
	 * primary's fate.  Durable with the commit point that follows.
	 *
	 * weak_settle: the notification at commit_ts (KIND_NOTIFY), unless
	 * commit_ts is 0 (a rollback); and with start_ts, the pending
	 * record of transaction start_ts goes with it, and the notification
	 * is written only if that record was still there (settled once).
	 * STORE_SYNC: durable before it returns (a notify-only commit).
	 *
	 * weak_clear: the notifications (KIND_NOTIFY) at or below upto,
	 * and the failure record, go; newer ones and pending records stay.
	 */
	int  (*weak_pend)(struct store *s, perc_bytes row, perc_bytes col,
	                  perc_ts start_ts, perc_bytes primary);
	int  (*weak_settle)(struct store *s, perc_bytes row, perc_bytes col,
	                    perc_ts start_ts, perc_ts commit_ts,
	                    unsigned flags);
	int  (*weak_clear)(struct store *s, perc_bytes row, perc_bytes col,
	                   perc_ts upto);

	/*
	 * The wakeup of those who wait for notifications (runners, perc
	 * wait, a follower of the log), so that none has to poll.  wake
	 * is the writer's, once a commit that set or cleared a
	 * notification is over (the store released): it tells every
	 * waiter of the table, at a cost of microseconds; best effort, a
	 * wakeup lost is found by the waiters' slow fallback poll.
	 * wait_wake is the waiter's: it blocks until a wake that came
	 * after its previous call (or a signal not in mask, ppoll(2)'s
	 * way: NULL keeps the process's mask), or deadline_ms.  1: look
	 * again, a wake came, or the watch was (re)armed, which the first
	 * call does, so that a look after it misses no wake; 0: deadline
	 * or signal; a failure: the caller naps instead (db_wait_wake).
	 * Watches are the process's own, even after fork(2).  NULL: no
	 * wakeup, the waiters poll.  There are two wakeups, apart so
	 * that neither wakes the other's waiters for nothing: the
	 * notifications' (feed 0), and the change log's (feed 1), which
	 * every commit that wrote calls for the followers of perc log; a
	 * process waits for one of them only.
	 */
	void (*wake)(struct store *s, int feed);
	int  (*wait_wake)(struct store *s, int feed, int64_t deadline_ms,
	                  const sigset_t *mask);
	/*
	 * An opaque mark, equal at two reads only when no notify cell
	 * changed in between: for perc wait, whose walk of the notify
	 * cells (notify_scan) is then as good as atomic (lib/wait.c).
	 * Every write or removal of a notify cell, in the same atomic
	 * step, changes it.  NULL: notify_scan is atomic already (the
	 * LevelDB store: one iterator, under the store's lock).
	 */
	int  (*notify_epoch)(struct store *s, perc_buf *out);
};

/*
 * The verbs that a store may leave NULL, called through lib/store.c,
 * which stands for a NULL one as its comment above says: no file but
 * store.c tests a pointer of the table.  The verbs every store has
 * are called through the table itself (s->ops->get_lock(s, ...)).
 */
/* Is the store one process's at a time, so that others may wait for
   it (waited_for is there)? */
int  store_exclusive(const struct store *s);
/* Do other data directories share the store (open_publish)? */
int  store_shared(const struct store *s);
/* Can it gather steps into one batch (group)? */
int  store_groups(const struct store *s);
/* Does it take a step on many cells at once (prewrite_many,
   commit_many and rollback_many, which a store has all or none of)? */
int  store_batches(const struct store *s);
/* Can it write a whole transaction in one step (commit_at_once)? */
int  store_commits_at_once(const struct store *s);
void store_pause(struct store *s, int64_t deadline_ms);
int  store_waited_for(struct store *s);
void store_power_cut(struct store *s);
int  store_ts_begin(struct store *s, perc_ts *out, int64_t deadline_ms);
int  store_open_publish(struct store *s, perc_ts at, perc_ts oldest_here,
                        perc_ts *oldest_all, int64_t deadline_ms);
int  store_group(struct store *s, int on);
int  store_bulk_done(struct store *s, perc_ts start_ts);
int  store_locks_by_txn(struct store *s, int (*fn)(void *arg,
                        perc_bytes row, perc_bytes col,
                        const struct lock_rec *lock), void *arg);
int  store_prewrite_many(struct store *s, const struct write *const *w,
                         const unsigned *flags, size_t n,
                         const struct lock_rec *lock, int *done);
int  store_commit_many(struct store *s, const struct write *const *w,
                       size_t n, perc_ts start_ts, perc_ts commit_ts,
                       int *done);
int  store_rollback_many(struct store *s, const struct write *const *w,
                         size_t n, perc_ts start_ts, int *done);
int  store_commit_at_once(struct store *s, const struct writeset *ws,
                          const unsigned *flags, perc_ts start_ts,
                          perc_ts *commit_ts);
void store_wake(struct store *s, int feed);
int  store_wait_wake(struct store *s, int feed, int64_t deadline_ms,
                     const sigset_t *mask);
int  store_notify_epoch(struct store *s, perc_buf *out);

/* Every store's state begins with this. */
struct store {
	const struct store_ops *ops;
	int format;             /* the data directory's config format
	                           (lib/config.c), as of the last acquire */
	int read_only;          /* errno that forbids writes, or 0 */
	int failed;             /* a write failed: release before going on */
	int bulk;               /* the next holder will write a lot: a
	                           hint to acquire (a large perc_load batch) */
	int sync_later;         /* the store server's group commit: a write
	                           that would sync does not, and sets
	                           sync_owed, until store_ops.sync */
	int sync_owed;
};

/*
 * What a store needs from the layers above it, handed down at create
 * and open, as LevelDB is handed its Env (Options::env): the store
 * reads no setting of its own that a test or the directory decides,
 * and calls nothing above the seam.  The store copies what it keeps.
 */
struct store_env {
	const char *dir;        /* the data directory */
	int64_t     timeout_ms; /* PERC_LOCK_TIMEOUT: a verb's bound, where
	                           the store sets one (Redis) */
	int         power_cuts; /* a failpoint will cut the power
	                           (PERC_FAILPOINT=NAME:power-cut): open so
	                           that power_cut can simulate one */
	int         nosync;     /* PERC_UNSAFE_NOSYNC=1, for benchmarks
	                           only: the commit point need not be
	                           synced (the LevelDB store's choice) */
	int         serve;      /* not PERC_SERVE=0: the LevelDB store
	                           through its server (lib/server/) */
	/* Does the owner of transaction start_ts, process pid that stamped
	   its lock at wall_ms, still hold its token in data directory dir
	   (journal.c)?  What owner_alive asks on this host. */
	int       (*owner_alive)(const char *dir, perc_ts start_ts,
	                         uint32_t pid, uint64_t wall_ms);
};

/*
 * The two stores.  create makes an empty one for a new data directory
 * (env->dir), open returns one not yet acquired; url is the config's
 * store URL (NULL for LevelDB, which keeps its cells in the directory).
 * lib/backend.c picks them by the URL's scheme.
 */
int  store_leveldb_create(const char *url, const struct store_env *env);
int  store_leveldb_open(struct store **out, const char *url,
                        const struct store_env *env);
/* The LevelDB store through the directory's store server, or opened
   here when env->serve is 0 or it cannot be served (lib/server/). */
int  store_served_open(struct store **out, const char *url,
                       const struct store_env *env);
/* A LevelDB directory's store server (lib/server/server.h): run here
   (1 when another runs, *pid its id), its process id (1, or 0 when
   none runs), and stopped (waiting until deadline_ms). */
int  store_server_run(const char *dir, const struct store_env *env,
                      int idle_s, long *pid);
int  store_server_pid(const char *dir, long *pid);
int  store_server_stop(const char *dir, int64_t deadline_ms);

/* url: redis://[USER:PASSWORD@]HOST[:PORT][,HOST[:PORT]]...[/TABLE];
   store_url_public is url without its password, for any message. */
int  store_url_public(perc_buf *out, const char *url);
int  store_redis_create(const char *url, const struct store_env *env);
int  store_redis_open(struct store **out, const char *url,
                      const struct store_env *env);
#endif

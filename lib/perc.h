/*
 * perc.h - Percolator-style transactions over a LevelDB store in the
 * data directory or a shared Redis Cluster.
 *
 * Conventions (read these once, they hold for every function below):
 *  - Functions that can fail return int: 0 on success, a negative
 *    PERC_E* code on failure; perc_errmsg() then describes it in one
 *    line.  -code is the exit status perc(1) uses for the same failure.
 *  - Output parameters come first and are named out.  An object
 *    returned through a pointer-to-pointer belongs to the caller and
 *    is released with the matching *_free or *_close function, each
 *    of which accepts NULL.
 *  - Pointers returned directly (getters) are borrowed: they live as
 *    long as the object they came from.
 *  - Rows, columns and values are byte strings (perc_bytes): they may
 *    hold NUL bytes and are never assumed to be NUL-terminated.
 *  - Thread safety: a perc_db and everything opened from it belong to
 *    one thread at a time.  Different threads may use different
 *    perc_db handles on the same directory; they exclude each other
 *    exactly as separate processes do.  perc_errmsg() is per thread.
 *  - The store is opened lazily and held only while a call needs it,
 *    so other processes can work on the directory between calls.
 */
#ifndef PERC_H
#define PERC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PERC_VERSION "0.1.0"

typedef struct perc_db   perc_db;   /* an open data directory */
typedef struct perc_txn  perc_txn;  /* one transaction and its journal */
typedef struct perc_iter perc_iter; /* a cursor over visible cells */

typedef uint64_t perc_ts;           /* oracle timestamp; 0 is never issued */

/* Return codes.  -code is the exit status perc(1) uses for each. */
enum perc_error {
	PERC_OK        =  0,
	PERC_ENOTFOUND = -1,   /* no value at that snapshot */
	PERC_EUSAGE    = -2,   /* an argument the caller should not pass */
	PERC_ECONFLICT = -3,   /* conflict or uncleanable lock; txn is over */
	PERC_ETIMEOUT  = -4,   /* a live lock or the store stayed busy */
	PERC_ENOTXN    = -5,   /* unknown or already finished transaction */
	PERC_ENOTDB    = -6,   /* not a perc data dir, or an unknown format */
	PERC_EIO       = -7,   /* storage or I/O error, corruption */
	PERC_ETOOOLD   = -8,   /* a snapshot below gc's safe point */
	PERC_ITEROVER  = -100  /* not a failure: the iterator is exhausted */
};

/* A borrowed byte string. */
typedef struct {
	const void *data;
	size_t len;
} perc_bytes;

/*
 * An owned byte buffer: start it with PERC_BUF_INIT, end it with
 * perc_buf_dispose().  data[len] is a NUL for convenience only; the
 * contents may hold NULs of their own.
 */
typedef struct {
	char *data;
	size_t len;
	size_t cap;
} perc_buf;
#define PERC_BUF_INIT { NULL, 0, 0 }

/* Release buf's memory and reset it to PERC_BUF_INIT.  NULL is fine. */
void perc_buf_dispose(perc_buf *buf);

/* Text of the last failure in this thread.  Never NULL; one line. */
const char *perc_errmsg(void);

/*
 * What this perc reads and writes (perc --version): the oldest and the
 * newest format of a data directory's config that it reads (it writes
 * the newest one a directory needs), and its stores by name, the i-th
 * one, NULL past the last.
 */
void perc_formats(int *oldest, int *newest);
const char *perc_store_name(size_t i);

/*
 * The TSV escaping of perc(1): perc_escape appends field to out with
 * tab, newline and backslash as \t, \n and \\ and every other byte
 * outside 0x20..0x7e as \xhh.  perc_unescape appends the bytes that the
 * escaped text (len bytes) stands for; PERC_EUSAGE on a bad escape.
 * Both leave out->data non-NULL and NUL-terminated.
 */
int  perc_escape(perc_buf *out, perc_bytes field);
int  perc_unescape(perc_buf *out, const char *text, size_t len);

/*
 * Data directory.
 *
 * perc_db_init creates path (and missing parents) as a data directory,
 * or, when path already is one, only adds the n columns in observe to
 * its observed set.  Fails with PERC_ENOTDB when path is a non-empty
 * directory that is not a perc data directory.  perc_db_init_store
 * does the same with the cells in the store store_url names
 * (redis://HOST:PORT[,HOST:PORT]...[/TABLE]); NULL is the LevelDB
 * store inside path.
 *
 * perc_db_init_observed is perc_db_init_store that also names the
 * nweak columns of weak as weakly observed (see perc_notify below); a
 * column named both ways, here or by an earlier init, is PERC_EUSAGE.
 *
 * perc_db_open opens an existing data directory; it does not touch the
 * store yet.  Fails with PERC_ENOTDB when path is not a data directory
 * or has a format this version does not know.
 */
int  perc_db_init(const char *path, const perc_bytes *observe, size_t n);
int  perc_db_init_store(const char *path, const char *store_url,
                        const perc_bytes *observe, size_t n);
int  perc_db_init_observed(const char *path, const char *store_url,
                           const perc_bytes *strong, size_t n,
                           const perc_bytes *weak, size_t nweak);
int  perc_db_open(perc_db **out, const char *path);
void perc_db_close(perc_db *db);

/*
 * perc_db_hold opens the store now and keeps it open across the calls
 * that follow, until perc_db_release, which saves opening it for each:
 * for a batch of reads in one go.  Another process that waits for the
 * store meanwhile (one that opens it itself, PERC_SERVE=0) gets it at
 * the end of the call under way once this one has had it for 10 ms
 * (or between two batches of a scan, two steps of a long commit), and
 * the next call takes it back only after the waiting ones had their
 * turn, 0.5 s at most.  A wait for a live lock still lets go of the
 * store while it sleeps.  Let go with perc_db_release when done.
 */
int  perc_db_hold(perc_db *db);
void perc_db_release(perc_db *db);

/*
 * Progress of long work, for a user who watches (perc(1) shows it on a
 * terminal, as git does): while perc_txn_commit or perc_gc runs, fn
 * hears what is being counted ("cells locked", "cells committed",
 * "versions removed") and how many so far, every 1,024 cells and after
 * each batch.  fn NULL: nobody hears.
 */
typedef void (*perc_progress_fn)(const char *counted, uint64_t n, void *arg);
void perc_db_progress(perc_db *db, perc_progress_fn fn, void *arg);

/*
 * Timestamp oracle: hands out n >= 1 consecutive fresh timestamps, the
 * first of them in *out.  They are greater than every timestamp handed
 * out before, by any process, across process and machine crashes.
 * Fails with PERC_ETIMEOUT when the oracle stays locked, PERC_EIO when
 * its file is damaged.
 */
int  perc_ts_next(perc_ts *out, perc_db *db, size_t n);

/*
 * The timestamp of the newest snapshot, for reads outside a
 * transaction: a fresh one from perc_ts_next, or, in a data directory
 * this process may not write (a read-only mount, no permission), the
 * last one handed out, read without writing the oracle.
 */
int  perc_snapshot_ts(perc_ts *out, perc_db *db);

/*
 * Transactions.
 *
 * perc_txn_begin takes a start timestamp and creates the journal; the
 * handle (perc_txn_handle) is the decimal start timestamp.
 * perc_txn_begin_local is the same for a transaction that only this
 * perc_db uses: its writes stay in memory, no file is created for it,
 * and its handle means nothing to another process (perc_txn_open there
 * is PERC_ENOTXN); perc_txn_free of it unfinished discards it, and so
 * does the end of the process.  It costs a commit one synced write and
 * no more.  Free such transactions before perc_db_close.
 * perc_txn_open reopens a transaction by its handle; PERC_ENOTXN when
 * it was never issued or is finished, PERC_EIO when its journal is
 * damaged.
 *
 * perc_txn_get reads the transaction's snapshot and its own buffered
 * writes: PERC_ENOTFOUND when there is no value.  With PERC_GET_LOCK
 * the cell joins the write set as a lock-only write.
 * perc_txn_set and perc_txn_del append to the journal; nothing reaches
 * the store before perc_txn_commit.  A cell of a weakly observed column
 * holds no value: writing one is PERC_EUSAGE, and reading one is
 * PERC_ENOTFOUND.  perc_txn_notify buffers a weak notification of such
 * a cell (PERC_EUSAGE on any other column), which the commit writes at
 * its commit timestamp, with no lock and no conflict check.
 *
 * perc_txn_commit runs Percolator's two-phase commit.  *out is the
 * commit timestamp, or 0 when there was nothing to write.  Fails with
 * PERC_ECONFLICT (the transaction is finished) or PERC_ETIMEOUT
 * (nothing was written; the transaction stays open).
 * perc_txn_abort discards the transaction and rolls back any lock it
 * already wrote.  After a commit, a conflict or an abort the handle is
 * finished; the perc_txn must still be released with perc_txn_free.
 */
#define PERC_GET_LOCK 0x1u

int  perc_txn_begin(perc_txn **out, perc_db *db);
int  perc_txn_begin_local(perc_txn **out, perc_db *db);
int  perc_txn_open(perc_txn **out, perc_db *db, const char *handle);
const char *perc_txn_handle(const perc_txn *txn);
perc_ts perc_txn_start_ts(const perc_txn *txn);
int  perc_txn_get(perc_buf *out, perc_txn *txn,
                  perc_bytes row, perc_bytes col, unsigned flags);
int  perc_txn_set(perc_txn *txn, perc_bytes row, perc_bytes col,
                  perc_bytes value);
int  perc_txn_del(perc_txn *txn, perc_bytes row, perc_bytes col);
int  perc_txn_notify(perc_txn *txn, perc_bytes row, perc_bytes col);
int  perc_txn_commit(perc_ts *out, perc_txn *txn);
int  perc_txn_abort(perc_txn *txn);
void perc_txn_free(perc_txn *txn);

/*
 * One write as a transaction of its own: begin, set or delete, commit.
 * *out is the commit timestamp.  On any failure nothing was written
 * and no transaction is left open.
 */
int  perc_set(perc_ts *out, perc_db *db, perc_bytes row, perc_bytes col,
              perc_bytes value);
int  perc_del(perc_ts *out, perc_db *db, perc_bytes row, perc_bytes col);
/* A weak notification as a transaction of its own (perc_txn_notify). */
int  perc_weak_notify(perc_ts *out, perc_db *db, perc_bytes row,
                      perc_bytes col);

/*
 * Bulk load: perc_load reads cells from in, in the form perc_iter_next
 * cells take in scan's output, ROW<TAB>COLUMN<TAB>VALUE a line, each
 * field escaped as perc_escape writes it (hex digits in either case; a
 * last line may lack its newline), and writes them as puts in
 * transactions of batch lines each, or all in one when batch is 0.  A
 * cell given twice in one transaction keeps its last value.  Each
 * transaction is parsed whole before it begins, so a malformed line is
 * PERC_EUSAGE, whose message names the line, with nothing of its
 * transaction written; the transactions before it stay committed.
 * Only one transaction's cells are in memory at a time.
 *
 * committed, if not NULL, hears of each commit, in order, with its
 * timestamp and the number of the last line it holds; a non-zero
 * return stops the load and is returned.  progress, if not NULL, hears
 * now and then how many lines were read and how many committed.  A
 * commit fails as perc_txn_commit does (PERC_ECONFLICT, PERC_ETIMEOUT,
 * ...), and the load stops there, no transaction left open.
 *
 * stop, if not NULL, is looked at before each line is read: once it is
 * non-zero, the transaction being read is dropped and the load returns
 * 1, having committed only the transactions committed already (each
 * told to committed); a commit under way when it turns non-zero
 * finishes first.  A signal handler sets it: a read of in that the
 * signal cuts short (EINTR, without SA_RESTART) ends the load the
 * same way.  Version 1 of the options has no stop.
 */
typedef struct {
	unsigned  version;         /* PERC_LOAD_OPTIONS_VERSION */
	uint64_t  batch;           /* lines per transaction; 0: one for all */
	int     (*committed)(perc_ts commit_ts, uint64_t last_line,
	                     void *arg);
	void    (*progress)(uint64_t read, uint64_t committed, void *arg);
	void     *arg;             /* passed to both */
	volatile int *stop;        /* version 2 */
} perc_load_options;
#define PERC_LOAD_OPTIONS_VERSION 2
#define PERC_LOAD_OPTIONS_INIT \
	{ PERC_LOAD_OPTIONS_VERSION, 0, NULL, NULL, NULL, NULL }

int  perc_load(perc_db *db, FILE *in, const perc_load_options *opts);

/*
 * Snapshot read outside a transaction; at == 0 means the newest
 * snapshot, as perc_snapshot_ts gives.
 * PERC_ENOTFOUND when there is no value, PERC_ETIMEOUT when a live lock
 * below the snapshot did not go away in time, PERC_EUSAGE when at is
 * above every timestamp handed out (a snapshot there could change).
 */
int  perc_snapshot_get(perc_buf *out, perc_db *db, perc_ts at,
                       perc_bytes row, perc_bytes col);

/*
 * The newest snapshot, held for reads of several cells: *ts, and in
 * *out a transaction that only reads it (perc_txn_get, perc_iter_scan),
 * whose start gc does not pass until perc_txn_free, so that no read of
 * it is ever too old (PERC_ETOOOLD).  *out is NULL where this process
 * can write nothing to show it open (a read-only data directory, a full
 * disk): then read at *ts with perc_snapshot_get.
 */
int  perc_snapshot_begin(perc_txn **out, perc_ts *ts, perc_db *db);

/* Scans of the visible cells, in byte order of row, then column. */
typedef struct {
	unsigned   version;        /* PERC_SCAN_OPTIONS_VERSION */
	perc_bytes prefix;         /* rows must start with this; len 0: all */
	perc_bytes column;         /* only this column; data NULL: all */
	perc_ts    at;             /* snapshot; 0: fresh (ignored with a txn) */
} perc_scan_options;
#define PERC_SCAN_OPTIONS_VERSION 1
#define PERC_SCAN_OPTIONS_INIT \
	{ PERC_SCAN_OPTIONS_VERSION, { NULL, 0 }, { NULL, 0 }, 0 }

/*
 * perc_iter_scan starts a scan of db, or of txn's view when txn is not
 * NULL.  perc_iter_next yields one cell at a time; the bytes it points
 * to are valid until the next call.  It returns PERC_ITEROVER at the
 * end, or a negative PERC_E* code (PERC_ETIMEOUT on a live lock).
 * An opts->at above every timestamp handed out is PERC_EUSAGE, as for
 * perc_snapshot_get.
 */
int  perc_iter_scan(perc_iter **out, perc_db *db, perc_txn *txn,
                    const perc_scan_options *opts);
int  perc_iter_next(perc_bytes *row, perc_bytes *col, perc_bytes *value,
                    perc_iter *it);
void perc_iter_free(perc_iter *it);

/*
 * Inspection and repair.
 *
 * perc_show calls fn once for every raw cell of row (of column col
 * only, when col is not NULL): data, lock, write and ack cells column
 * by column in byte order, each kind newest first, then notify cells.
 * kind is "data", "lock", "write", "notify" or "ack"; detail is one
 * line of space-separated key=value pairs, escaped (see perc-show(1)).
 * A non-zero return from fn stops the walk and is returned.
 *
 * perc_resolve_locks finds every lock in the store and rolls it
 * forward or back by its primary; a lock whose owner is alive is left
 * alone unless PERC_RESOLVE_ALL.  With PERC_RESOLVE_DRY_RUN nothing
 * changes.  Locks younger than older_than_ms are not considered.  fn
 * hears of every lock met, with action "rolled-forward", "rolled-back"
 * or "alive".
 */
typedef struct {
	perc_bytes  column;
	const char *kind;
	perc_ts     ts;
	const char *detail;
} perc_raw_cell;

typedef struct {
	perc_bytes  row;
	perc_bytes  column;
	perc_ts     start_ts;
	const char *action;
} perc_resolved;

#define PERC_RESOLVE_ALL     0x1u
#define PERC_RESOLVE_DRY_RUN 0x2u

int  perc_show(perc_db *db, perc_bytes row, const perc_bytes *col,
               int (*fn)(const perc_raw_cell *cell, void *arg), void *arg);
int  perc_resolve_locks(perc_db *db, unsigned flags, int64_t older_than_ms,
                        int (*fn)(const perc_resolved *lock, void *arg),
                        void *arg);

/*
 * Garbage collection: remove the versions no snapshot at or above the
 * safe point can read.  The safe point is the older of the oldest open
 * transaction's start (its journal in this data directory) and the
 * newest timestamp handed out more than retain_ms ago (0: now), and
 * never moves back; locks below it are resolved first.  A read at a
 * snapshot below it fails with PERC_ETOOOLD.  *safe_point and *removed
 * (write records removed, the data of puts with them) tell what was
 * done, or with PERC_GC_DRY_RUN what would be, removing nothing.
 */
#define PERC_GC_DRY_RUN 0x1u

int  perc_gc(perc_ts *safe_point, uint64_t *removed, perc_db *db,
             int64_t retain_ms, unsigned flags);

/*
 * The change log (perc log): the committed puts and deletes above a
 * timestamp, in commit order, a transaction's together in byte order
 * of row, then column.  perc_log_open starts at since (with has_since;
 * else at a fresh timestamp): PERC_EUSAGE above the newest timestamp
 * handed out.  Each perc_log_round gives fn every change (is_put 0: a
 * delete, value empty) committed above the last round's end and at or
 * below a fresh resolved timestamp, *resolved: no transaction will
 * ever commit at or below it, and it never goes down; PERC_ETOOOLD,
 * before it gives anything, when gc's safe point has passed where it
 * starts.  A lock whose owner is gone is
 * cleaned as a reader cleans it; a live one holds *resolved below its
 * start, and perc_log_blocker tells which.  Each round holds gc at
 * *resolved for PERC_LOG_HOLD seconds (perc-log(1)).
 */
typedef struct perc_log perc_log;
typedef int (*perc_log_fn)(void *arg, perc_ts commit_ts, perc_bytes row,
                           perc_bytes col, int is_put, perc_bytes value);

int  perc_log_open(perc_log **out, perc_db *db, int has_since, perc_ts since,
                   perc_bytes prefix, const perc_bytes *column);
int  perc_log_round(perc_log *lg, perc_ts *resolved, perc_log_fn fn,
                    void *arg);
/* The live lock that holds the resolved timestamp back, if any: 1 with
   its cell and start_ts (views valid until the next round), else 0. */
int  perc_log_blocker(const perc_log *lg, perc_bytes *row, perc_bytes *col,
                      perc_ts *start_ts);
/*
 * Between rounds of a follower: block until a commit that wrote wakes
 * it, a signal not in mask (a sigset_t *, ppoll(2)'s way; NULL keeps the
 * process's mask) comes, or timeout_ms pass; 1: run a round, which the
 * first call says at once, having armed the wakeup.  perc_log_poll_ms
 * is the fallback timeout, PERC_LOG_POLL seconds (default 1), which
 * finds what a lost wakeup left.
 */
int     perc_log_wait(perc_log *lg, int64_t timeout_ms, const void *mask);
int64_t perc_log_poll_ms(void);
/* How long a live lock holds a follower back before it says so on
   stderr (and between two sayings): PERC_LOG_STUCK seconds, default 5. */
int64_t perc_log_stuck_ms(void);
void perc_log_free(perc_log *lg);

/*
 * Automatic gc, as git gc --auto: after PERC_GC_AUTO commits through
 * this data directory (default 10,000; 0: never) perc_gc_due returns 1,
 * once, to one of the processes that committed; that process should
 * run perc_gc, or have it run, away from its own work (perc(1) starts
 * a detached "perc gc").  The retention perc_gc_retain_ms gives,
 * PERC_GC_RETAIN seconds or 600, is what such a gc should keep.
 */
int     perc_gc_due(perc_db *db);
int64_t perc_gc_retain_ms(void);

/*
 * Observers.
 *
 * perc_notify_scan calls fn for every dirty observed cell (of column
 * only, when not NULL) in byte order, with how often an observer has
 * failed on it and the wall time in ms before which it should not be
 * retried.  A non-zero return from fn stops the walk and is returned.
 *
 * perc_observer_begin starts the transaction of one observer run on
 * dirty cell (row, col); committing it with perc_txn_commit clears the
 * notifications its snapshot saw.  Of two observer transactions on one
 * notification at most one commits; the other gets PERC_ECONFLICT.
 * PERC_ENOTFOUND when the cell is no longer dirty.  A weakly observed
 * column's runs carry no ack and clear their notifications after the
 * commit: perc_observer_pass runs them, and perc_observer_begin refuses
 * one (PERC_EUSAGE).
 *
 * perc_observer_failed counts a failed run on (row, col), sets its
 * backoff, and returns the number of failures so far in *count.
 *
 * perc_observer_check is 0 when column is observed, else PERC_EUSAGE
 * with a message that names the observed columns: no notification ever
 * comes to a column that is not.
 */
typedef struct {
	perc_bytes row;
	perc_bytes column;
	uint32_t   failures;
	int64_t    retry_at_ms;
} perc_notify;

int  perc_notify_scan(perc_db *db, const perc_bytes *column,
                      int (*fn)(const perc_notify *n, void *arg), void *arg);
int  perc_observer_begin(perc_txn **out, perc_db *db, perc_bytes row,
                         perc_bytes col);
int  perc_observer_failed(uint32_t *count, perc_db *db, perc_bytes row,
                          perc_bytes col);
int  perc_observer_check(perc_db *db, perc_bytes column);

/*
 * perc_observer_pass makes one pass over the cells of column dirty when
 * it starts, from a random cell, skipping rows another runner holds.
 * For each it begins an observer transaction and calls observe, whose
 * return is the observer's exit status: 0 commits the transaction, any
 * other value aborts it and counts a failure.  On a weakly observed
 * column a run is at least once: it carries no ack, and once committed
 * (or with nothing to commit) it clears the cell's notifications
 * committed at or below its start.  A commit that loses a
 * conflict is "taken" when another runner handled the cell, else
 * "conflicted": the cell stays dirty, and the pass returns 1.  report, if not NULL,
 * hears of every run.  Without once, cells still in their failure
 * backoff are skipped; a non-zero *stop ends the pass after a run.
 * For an observe that does its work in this process, local makes each
 * run's transaction a local one (perc_txn_begin_local), which no other
 * process can open, and done, if not NULL, hears how each run that
 * observe returned from ended, before report: rc 0 (run->outcome says
 * how), or the PERC_E* code of a commit or a failure count that failed
 * (perc_errmsg() says why), with which the pass then stops.
 * *ran counts the runs.  When retry_at_ms is not NULL, the pass sets
 * *retry_at_ms to the wall time in ms at which the first cell it left
 * for its backoff may run, 0 when it left none: a runner that waits
 * for notifications wakes then too.
 * An observer that runs elsewhere (a long-running COMMAND) may keep
 * several runs in flight, each with its own transaction, in this one
 * process: instead of observe, start (which returns at once) hands
 * slot (below slots) the run of a cell, and wait blocks until a run
 * ends, returning its slot and the observer's status in *status; up to
 * slots runs are in flight at once, on different rows.
 * Returns 0, 1 when an observer failed, or a
 * negative PERC_E* code (PERC_EUSAGE for a column that is not
 * observed: perc_observer_check).
 */
typedef struct {
	perc_bytes  row;
	perc_bytes  column;
	int         status;     /* what observe returned */
	const char *outcome;    /* "committed", "taken", "conflicted", "failed" */
	perc_ts     commit_ts;  /* when committed */
	uint32_t    failures;   /* when failed: failures so far */
	size_t      slot;       /* with start: the slot it ran in */
} perc_observer_run;

typedef struct {
	int  (*observe)(perc_txn *txn, perc_bytes row, perc_bytes col,
	                void *arg);
	void (*report)(const perc_observer_run *run, void *arg);
	void  *arg;
	int    once;
	volatile int *stop;
	int    local;
	void (*done)(const perc_observer_run *run, int rc, void *arg);
	int64_t *retry_at_ms;   /* out, when not NULL: see above */
	void   (*start)(size_t slot, perc_txn *txn, perc_bytes row,
	                perc_bytes col, void *arg);
	size_t (*wait)(int *status, void *arg);
	size_t   slots;
} perc_observer;

int  perc_observer_pass(size_t *ran, perc_db *db, perc_bytes column,
                        const perc_observer *obs);

/*
 * perc_runner_announce says, for as long as db is open, that this
 * process runs the observers of column: perc_wait counts such runners
 * on this machine, to show a person at a terminal whether any runs.
 */
int  perc_runner_announce(perc_db *db, perc_bytes column);

/*
 * Waiting for notifications, without polling (perc-run-observer(1)).
 *
 * perc_notify_wait blocks until a commit that set or cleared a
 * notification wakes it, or timeout_ms pass, or a signal not in mask
 * comes (mask, when not NULL, a const sigset_t *: the signal mask
 * while it waits, as ppoll(2)'s; NULL keeps the process's; a void *
 * here, which C99 without POSIX, as this header is, lacks).  1: look again; 0: the time ran out or a signal
 * came.  The first call only starts to watch and returns 1 at once, so
 * a caller that looks after it misses no wake.  A wake may be lost (a
 * Redis failover); wait at most perc_notify_poll_ms(), the fallback
 * poll (PERC_OBSERVER_POLL seconds, default 5), before looking again.
 *
 * perc_notify_wake wakes every waiter of the store, as a commit that
 * sets or clears a notification does (perc_txn_commit calls it then).
 *
 * perc_wait waits until no cell of the observed columns (of the n
 * columns named, when n > 0) is dirty, at an instant when no commit
 * that has locked a cell of an observed column is unfinished and no
 * observer's run may still commit (perc-wait(1) says why it cannot
 * return early): 0.  PERC_ETIMEOUT when timeout_ms (< 0: none) run
 * out, *dirty the number of cells still dirty; PERC_EUSAGE for a
 * column that is not observed (perc_observer_check).
 */
int     perc_notify_wait(perc_db *db, int64_t timeout_ms,
                         const void *mask);
int64_t perc_notify_poll_ms(void);
void    perc_notify_wake(perc_db *db);
int     perc_wait(uint64_t *dirty, perc_db *db, const perc_bytes *columns,
                  size_t n, int64_t timeout_ms);

/*
 * The state of a data directory, as perc status prints it.
 *
 * perc_status calls fn once for each line, KEY and VALUE (see
 * perc-status(1)): "store" (leveldb, or the store's URL without its
 * password), "open_transactions", "oldest_open_start" ("none" when
 * none holds gc back), "locks" (in the whole store), "safe_point", and
 * "observed" once for each observed column, VALUE
 * "COLUMN<TAB>strong|weak<TAB>DIRTY_CELLS" with COLUMN escaped.  Keys may
 * be added.  A non-zero return from fn stops it and is returned.
 *
 * perc_status_transactions calls fn for each open transaction with a
 * journal in the directory, oldest first: its handle, start, age, the
 * number of cells in its write set (-1: its journal is damaged) and
 * whether its process still lives.  That is the process given to
 * perc_db_begun_by when it began, else the one that began it; a
 * transaction whose commit was cut short is gone whatever its process.
 */
typedef struct {
	const char *handle;
	perc_ts     start_ts;
	int64_t     age_ms;     /* by the wall clock its start_ts tells */
	int         alive;
	int64_t     writes;
} perc_open_txn;

/*
 * The store server of a LevelDB data directory (perc-serve(1)), which a
 * process that needs the store starts by itself unless PERC_SERVE=0.
 * perc_serve runs it in this process until SIGINT or SIGTERM, a stop
 * (perc_serve_stop), the directory's removal, or, with idle_s > 0,
 * idle_s seconds without a process to serve: 0, or 1 when a server
 * runs already (*pid its process id), or PERC_EUSAGE for a directory
 * whose store is not LevelDB.  perc_serve_pid: 1 with the running
 * server's process id, 0 when none runs.  perc_serve_stop has it
 * finish what it serves and exit, and returns once it has (within
 * PERC_LOCK_TIMEOUT, else PERC_ETIMEOUT); 0 also when none ran.
 */
int  perc_serve(const char *dir, int idle_s, long *pid);
int  perc_serve_pid(const char *dir, long *pid);
int  perc_serve_stop(const char *dir);

int  perc_status(perc_db *db, int (*fn)(const char *key, const char *value,
                 void *arg), void *arg);
int  perc_status_transactions(perc_db *db,
                              int (*fn)(const perc_open_txn *txn, void *arg),
                              void *arg);

/*
 * The process that the transactions perc_txn_begin starts from now on
 * belong to, for perc_status_transactions: pid, or 0 for this one.
 * perc begin names its parent, the shell that goes on to use the
 * handle it prints.
 */
void perc_db_begun_by(perc_db *db, long pid);

#ifdef __cplusplus
}
#endif
#endif /* PERC_H */

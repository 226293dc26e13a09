/* lib/gc.h - gc's horizon in the data directory: fence, count, open starts */
#ifndef GC_H
#define GC_H

#include "perc.h"

/*
 * DIR/gc.fence: the safe point a gc of this data directory is about to
 * take.  A transaction that began below it, and whose journal gc may
 * have missed, takes a new start timestamp (perc_txn_begin): so every
 * transaction of the directory is either seen open by gc or starts
 * above its safe point.  0 when there is none.
 */
int gc_fence(perc_ts *out, const char *dir);
/* Raise it to ts, unless it is there already; it never goes down. */
int gc_fence_raise(const char *dir, perc_ts ts);
/* Open transactions that started below it no longer hold gc back
   (PERC_TXN_MAX_AGE); journal_oldest's floor. */
perc_ts gc_open_floor(void);

/*
 * Count a commit towards the next automatic gc (DIR/gc.count, a byte a
 * commit); sets db->gc_due when PERC_GC_AUTO commits (default 10,000;
 * 0: never) have gone by since the last gc.  gc_count_flush writes the
 * commits a busy process has not counted yet.
 */
void gc_count_commit(perc_db *db);
/* A gc begins: the commits counted so far are its to collect. */
void gc_count_reset(const char *dir);

/*
 * Where other data directories share the store: publish what this one
 * has open (see store.h's open_publish), and gc_open_note's upkeep of
 * it after a transaction and as the directory closes.
 */
int  gc_open_publish(perc_db *db, perc_ts at, perc_ts *oldest_all);
void gc_open_note(perc_db *db, int closing);
void gc_count_flush(perc_db *db);

/*
 * Holds on gc (perc log): DIR/holds/NAME says that gc keeps history
 * above ts until the wall time it names, ttl_ms from now (at most
 * GC_HOLD_MAX_MS).  gc_hold_oldest: the oldest hold still in force
 * (*ts UINT64_MAX: none), and the milliseconds it has left; holds past
 * their time are removed.  gc_hold_drop: NAME's hold, gone.
 */
#define GC_HOLD_MAX_MS ((int64_t)86400 * 1000)
int  gc_hold_set(const char *dir, const char *name, perc_ts ts,
                 int64_t ttl_ms);
int  gc_hold_oldest(perc_ts *ts, int64_t *left_ms, const char *dir);
void gc_hold_drop(const char *dir, const char *name);
#endif

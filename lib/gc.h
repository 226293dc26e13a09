/* lib/gc.h - gc's horizon in the data directory: fence, count, open starts */
#ifndef GC_H
#define GC_H

#include <stddef.h>

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
 * Count n commits, at most GC_COUNT_BATCH, towards the next automatic
 * gc (DIR/gc.count, a byte a commit): 1 when PERC_GC_AUTO commits
 * (default 10,000; 0: never) have gone by since the last gc, which is
 * then due.
 */
#define GC_COUNT_BATCH 64
int  gc_count_add(const char *dir, size_t n);
/* A gc begins: the commits counted so far are its to collect. */
void gc_count_reset(const char *dir);

/*
 * Where other data directories share the store, what this one has open
 * (see store.h's open_publish): the fence raised to at, then *oldest,
 * the oldest start of its journals and holds.
 */
int  gc_open_oldest(perc_ts *oldest, const char *dir, perc_ts at);

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

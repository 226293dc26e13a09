/* lib/gc.h - garbage collection's fence, which begin respects */
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

/*
 * Count a commit towards the next automatic gc (DIR/gc.count, a byte a
 * commit); sets db->gc_due when PERC_GC_AUTO commits (default 10,000;
 * 0: never) have gone by since the last gc.  gc_count_flush writes the
 * commits a busy process has not counted yet.
 */
void gc_count_commit(perc_db *db);
void gc_count_flush(perc_db *db);
#endif

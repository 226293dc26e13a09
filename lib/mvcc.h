/* lib/mvcc.h - Percolator's operations on one cell of the held store */
#ifndef MVCC_H
#define MVCC_H

#include "codec.h"
#include "db.h"
#include "journal.h"

/* Internal results, never returned to a library user. */
#define PERC_ELOCKED    (-50)   /* a lock is in the way: see *blocker */
#define PERC_ECOMMITTED (-51)   /* this start_ts is already committed */

/* A transaction whose fate a reader learned without writing it down. */
struct lock_fate {
	perc_ts start_ts;       /* 0: none known */
	perc_ts commit_ts;      /* 0: it never commits */
};

int mvcc_read(perc_buf *out, perc_db *db, leveldb_iterator_t *it,
              perc_bytes row, perc_bytes col, perc_ts ts,
              struct lock_rec *blocker, const struct lock_fate *known);
int mvcc_get_lock(struct lock_rec *out, perc_db *db, perc_bytes row,
                  perc_bytes col);
int mvcc_find_commit(perc_ts *commit_ts, int *op, perc_db *db,
                     perc_bytes row, perc_bytes col, perc_ts start_ts);
int mvcc_prewrite(perc_ts *committed_at, perc_db *db, const struct write *w,
                  const struct lock_rec *lock, struct lock_rec *blocker);
int mvcc_commit_cell(perc_db *db, perc_bytes row, perc_bytes col,
                     perc_ts start_ts, perc_ts commit_ts, int sync,
                     leveldb_writebatch_t *also);
int mvcc_rollback_cell(perc_db *db, perc_bytes row, perc_bytes col,
                       perc_ts start_ts);
#endif

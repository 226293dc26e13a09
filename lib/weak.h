/* lib/weak.h - weak notifications: written, settled, run and cleared */
#ifndef WEAK_H
#define WEAK_H

#include "db.h"
#include "txn.h"

/* PERC_EUSAGE, saying why, unless col is weakly observed. */
int weak_check(perc_db *db, perc_bytes col);

/* commit.c's steps: the pending records before the commit point, and
   the notifications at commit_ts after it (flags: weak_settle's). */
int weak_pend_all(perc_txn *txn);
int weak_settle_all(perc_txn *txn, perc_ts commit_ts, unsigned flags);
/* The commit of a transaction whose only writes are notifications. */
int weak_commit_notes(perc_ts *out, perc_txn *txn);

/* An observer run on weak cell (row, col): its transaction, and once
   that committed, the clearing of what it ran for. */
int weak_observer_begin(perc_txn **out, perc_db *db, perc_bytes row,
                        perc_bytes col, int local);
int weak_observer_clear(perc_db *db, perc_bytes row, perc_bytes col,
                        perc_ts start_ts);

/* gc: settle the pending records of transactions that began below
   bound, before the records of their primaries may go. */
int weak_gc(perc_db *db, perc_ts bound, int dry_run);
#endif

/* lib/weak_run.h - the runs of weak cells, and their pending records
   settled */
#ifndef WEAK_RUN_H
#define WEAK_RUN_H

#include "db.h"

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

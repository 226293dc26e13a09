/* lib/weak.h - weak notifications as a commit writes them */
#ifndef WEAK_H
#define WEAK_H

#include "db.h"
#include "txn.h"

/* commit.c's steps: the pending records before the commit point, and
   the notifications at commit_ts after it (flags: weak_settle's). */
int weak_pend_all(perc_txn *txn);
int weak_settle_all(perc_txn *txn, perc_ts commit_ts, unsigned flags);
/* The commit of a transaction whose only writes are notifications. */
int weak_commit_notes(perc_ts *out, perc_txn *txn);
#endif

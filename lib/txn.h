/* lib/txn.h - the transaction object shared by txn.c and scan.c */
#ifndef TXN_H
#define TXN_H

#include "db.h"
#include "journal.h"

struct perc_txn {
	perc_db        *db;
	struct journal  journal;
	struct writeset writes;      /* loaded on first need */
	int             loaded;
	int             bulk;        /* perc_load's: writes given in memory,
	                                not in the journal; store groups */
};

int txn_writes(struct perc_txn *txn);
/* Remove the journals of crashed commits that are decided (the caller
   holds the store). */
int txn_remove_finished(perc_db *db);
#endif

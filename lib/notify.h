/* lib/notify.h - notifications of observed cells, for observers */
#ifndef NOTIFY_H
#define NOTIFY_H

#include "db.h"

int notify_pending(perc_db *db, perc_bytes row, perc_bytes col);
int notify_observer_begin(perc_txn **out, perc_db *db, perc_bytes row,
                          perc_bytes col, int local);
#endif

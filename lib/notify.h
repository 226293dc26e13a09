/* lib/notify.h - notifications of observed cells, for observers */
#ifndef NOTIFY_H
#define NOTIFY_H

#include <leveldb/c.h>

#include "db.h"

int notify_pending(perc_db *db, perc_bytes row, perc_bytes col);
int notify_clear(leveldb_writebatch_t *batch, perc_db *db, perc_bytes row,
                 perc_bytes col, perc_ts start_ts);
#endif

/* lib/failpoint.h - PERC_FAILPOINT: stop a commit dead at a named point */
#ifndef FAILPOINT_H
#define FAILPOINT_H

#include "db.h"

int failpoint_check(void);
int failpoint(perc_db *db, const char *name);
int failpoint_armed(void);
#endif

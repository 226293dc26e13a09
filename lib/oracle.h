/* lib/oracle.h - the timestamp oracle of one data directory */
#ifndef ORACLE_H
#define ORACLE_H

#include <stdint.h>

#include "perc.h"

int oracle_create(const char *dir);
int oracle_next(perc_ts *out, const char *dir, uint64_t n,
                int64_t deadline_ms);
int oracle_last(perc_ts *out, const char *dir, int64_t deadline_ms);
#endif

/* lib/leveldb/oracle.h - the timestamp oracle of one data directory */
#ifndef ORACLE_H
#define ORACLE_H

#include <stdint.h>

#include "perc.h"

#define ORACLE_BOOT_ID_SIZE 36

/* The oracle of one data directory, as one process uses it. */
struct oracle {
	const char *dir;
	int         fd;         /* DIR/oracle.lock, open from the first use */
	char        boot[ORACLE_BOOT_ID_SIZE]; /* the kernel's, read with fd */
	int         checked;    /* DIR/oracle read whole once */
};

int  oracle_create(const char *dir);
void oracle_init(struct oracle *o, const char *dir);
void oracle_dispose(struct oracle *o);
int  oracle_next(perc_ts *out, struct oracle *o, uint64_t n,
                 int64_t deadline_ms);
int  oracle_last(perc_ts *out, const char *dir, int64_t deadline_ms);
#endif

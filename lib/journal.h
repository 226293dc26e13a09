/*
 * lib/journal.h - an open transaction's buffered writes: a file of its
 * own, or for a transaction only its process uses, memory (owner.h)
 */
#ifndef JOURNAL_H
#define JOURNAL_H

#include <stdint.h>

#include "owner.h"
#include "perc.h"
#include "writeset.h"

struct journal {
	char    *path;          /* DIR/txn/START_TS */
	int      fd;            /* -1 when local */
	int      token;         /* 1 while this process holds the flock */
	int      read_only;     /* errno that forbids appends, or 0 */
	perc_ts  start_ts;
	char     handle[24];    /* START_TS in decimal */
	struct owner *local;    /* in memory only: whose it is, else NULL */
	perc_buf mem;           /* local: the bytes the file would hold */
	int      done;          /* local: finished */
};

#define JOURNAL_COMMIT_BEGUN 'C'

int  journal_create(struct journal *j, const char *dir, perc_ts start_ts);
int  journal_create_local(struct journal *j, const char *dir,
                          perc_ts start_ts, struct owner *owner);
int  journal_open(struct journal *j, const char *dir, const char *handle);
void journal_close(struct journal *j);
int  journal_append(struct journal *j, int op, perc_bytes row,
                    perc_bytes col, perc_bytes value, int64_t deadline_ms);
int  journal_load(struct writeset *out, struct journal *j);
int  journal_take_token(struct journal *j, int64_t deadline_ms);
int  journal_finish(struct journal *j);
int  journal_owner_alive(const char *dir, perc_ts start_ts, uint32_t pid,
                         uint64_t wall_ms);
void journal_mark_waiting(struct journal *j, int on);
int  journal_oldest(perc_ts *out, const char *dir, perc_ts floor);
int  journal_each_abandoned(const char *dir,
                            int (*fn)(struct journal *j, void *arg),
                            void *arg);

#endif

/* lib/lock.h - whose lock is this, and cleaning up after a dead owner */
#ifndef LOCK_H
#define LOCK_H

#include "codec.h"
#include "db.h"
#include "journal.h"
#include "store.h"

enum owner_state {
	OWNER_ALIVE,            /* holds its token, within its TTL, or
	                           waits for the store (TOKEN_WAITING) */
	OWNER_DEAD,             /* its token is gone */
	OWNER_EXPIRED           /* alive, perhaps, but past its TTL */
};

enum resolve_action {
	RESOLVE_ALIVE,          /* left alone: its owner lives */
	RESOLVE_FORWARD,        /* the primary committed: committed here too */
	RESOLVE_BACK            /* the primary did not commit: rolled back */
};

#define RESOLVE_FORCE   0x1u    /* clean even a live owner's lock */
#define RESOLVE_DRY_RUN 0x2u    /* decide, change nothing */

int  lock_owner_state(perc_db *db, const struct lock_rec *lock);
const char *lock_owner_state_name(int state);
int  lock_resolve(int *action, perc_db *db, perc_bytes row, perc_bytes col,
                  const struct lock_rec *lock, unsigned flags,
                  struct lock_fate *decided);
/*
 * A walk's resolution of many locks (resolve-locks, gc): as
 * lock_resolve's, but the other locks of a transaction already
 * settled are put off and then committed or rolled back together,
 * BATCH_CELLS at a time (batch.h), where the store can (commit_many,
 * rollback_many).  report, when not NULL, hears of each lock once it
 * is done, in the order they came; a non-zero return stops the walk.
 * Finish with lock_batch_flush, then lock_batch_dispose.
 */
struct lock_batch {
	perc_db         *db;
	unsigned         flags;
	int            (*report)(void *arg, perc_bytes row, perc_bytes col,
	                         perc_ts start_ts, int action);
	void            *arg;
	struct lock_fate decided;       /* lock_resolve's */
	struct writeset  held;          /* put-off locks of decided */
	size_t           cap;
};

int  lock_batch_add(struct lock_batch *b, perc_bytes row, perc_bytes col,
                    const struct lock_rec *lock);
int  lock_batch_flush(struct lock_batch *b);
void lock_batch_dispose(struct lock_batch *b);
int  lock_wait_or_clean(perc_db *db, perc_bytes row, perc_bytes col,
                        const struct lock_rec *lock, perc_ts ts,
                        struct lock_fate *known, struct lock_fate *decided,
                        unsigned *delay_us, int64_t deadline_ms);
const char *action_name(int action);
#endif

/* lib/lock.h - whose lock is this, and cleaning up after a dead owner */
#ifndef LOCK_H
#define LOCK_H

#include "codec.h"
#include "db.h"
#include "store.h"

enum owner_state {
	OWNER_ALIVE,            /* holds its token, within its TTL */
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
                  const struct lock_rec *lock, unsigned flags);
int  lock_wait_or_clean(perc_db *db, perc_bytes row, perc_bytes col,
                        const struct lock_rec *lock, perc_ts ts,
                        struct lock_fate *known, unsigned *delay_us,
                        int64_t deadline_ms);
const char *action_name(int action);
#endif

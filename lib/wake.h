/*
 * lib/wake.h - waking those who wait for notifications (runners, perc
 * wait) instead of having them poll, through the store's wake and
 * wait_wake (store.h).
 */
#ifndef WAKE_H
#define WAKE_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "perc.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * How long a waiter sleeps at most when no wake comes: the fallback
 * poll that finds what a lost wakeup left, PERC_OBSERVER_POLL seconds
 * (default 5).
 */
int64_t wake_poll_ms(void);

/* After a commit that set or cleared a notification (feed 0), or after
   any commit that wrote (feed 1: the change log's): tell the waiters. */
void db_wake(perc_db *db, int feed);

/*
 * Wait for a wake, a signal not in mask, or deadline_ms (the store's
 * wait_wake); where the store has no wakeup, or its watch fails, nap
 * until deadline_ms instead.  1: look again; 0: deadline or signal.
 */
int  db_wait_wake(perc_db *db, int feed, int64_t deadline_ms,
                  const sigset_t *mask);

#ifdef __cplusplus
}
#endif
#endif

/*
 * lib/wake.h - waking those who wait for notifications (runners, perc
 * wait) instead of having them poll: the store's wake and wait_wake
 * (store.h), and the data directory's wakeup that the LevelDB store
 * uses.
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

/* After a commit that set or cleared a notification: tell the waiters. */
void db_wake(perc_db *db);

/*
 * Wait for a wake, a signal not in mask, or deadline_ms (the store's
 * wait_wake); where the store has no wakeup, or its watch fails, nap
 * until deadline_ms instead.  1: look again; 0: deadline or signal.
 */
int  db_wait_wake(perc_db *db, int64_t deadline_ms, const sigset_t *mask);

/*
 * The data directory's wakeup: a writer opens DIR/wake, and every
 * waiter's inotify(7) watch on it hears of the open.  A dir_watch is
 * one waiter's, {-1, 0} until its first wait.
 */
struct dir_watch {
	int   fd;               /* the inotify instance, or -1 */
	pid_t pid;              /* whose it is: a fork starts its own */
};

void dir_wake(const char *dir);
int  dir_wait_wake(struct dir_watch *w, const char *dir, int64_t deadline_ms,
                   const sigset_t *mask);
void dir_watch_close(struct dir_watch *w);

#ifdef __cplusplus
}
#endif
#endif

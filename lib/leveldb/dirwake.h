/* lib/leveldb/dirwake.h - the LevelDB store's wakeup, on DIR/wake */
#ifndef LEVELDB_DIRWAKE_H
#define LEVELDB_DIRWAKE_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * The data directory's wakeup: a writer opens DIR/wake, and every
 * waiter's inotify(7) watch on it hears of the open.  A dir_watch is
 * one waiter's, {-1, 0} until its first wait.
 */
struct dir_watch {
	int   fd;               /* the inotify instance, or -1 */
	pid_t pid;              /* whose it is: a fork starts its own */
};

/* name: the file in DIR, "wake" (notifications) or "wake.log" (the
   change log's followers). */
void dir_wake(const char *dir, const char *name);
int  dir_wait_wake(struct dir_watch *w, const char *dir, const char *name,
                   int64_t deadline_ms, const sigset_t *mask);
void dir_watch_close(struct dir_watch *w);

#endif

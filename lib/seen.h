/*
 * lib/seen.h - whether a notification's write is seen by a snapshot,
 * a rule on one cell that both stores and the core apply (the Redis
 * store's scripts apply it too: lib/redis/lua/commit.lua).
 */
#ifndef SEEN_H
#define SEEN_H

#include "store.h"

/*
 * Did the write behind a notification at ts land in snapshot snap: is
 * it committed at or below snap, or rolled back?  Not while still
 * locked, nor when it began at or after snap.  One whose record gc has
 * removed (ts at or below the safe point, and no lock) is settled, and
 * seen.  Sets *seen; 0 or a failure.  It asks the cell through s's own
 * verbs (get_lock, find_commit, safe_point): an ack's clearing inside
 * the LevelDB store's commit and an observer's start both ask.
 */
int  write_seen(int *seen, struct store *s, perc_bytes row, perc_bytes col,
                perc_ts ts, perc_ts snap);
#endif

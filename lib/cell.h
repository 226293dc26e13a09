/*
 * lib/cell.h - the rules on one cell's records that both stores apply
 * (the LevelDB store in C, the Redis store in C and in its scripts):
 * gc's drop rule, the too-old refusal, and whether a notification's
 * write is seen.
 */
#ifndef CELL_H
#define CELL_H

#include <stddef.h>

#include "perc.h"

/*
 * What gc's pass has learned of the cell it is in, key by key (see
 * cell_gc_drops); the store keeps it across a batch's keys.
 */
struct gc_cell {
	perc_ts  bound;         /* the safe point */
	int      skip;          /* a lock below bound: the cell is left */
	int      have_version;  /* the newest put or delete at or below */
	int      have_ack;      /* the newest ack at or below */
	perc_ts *puts;          /* start_ts of the puts dropped: their data */
	size_t   nputs, cap;
	int      sorted;
	perc_buf prefix;        /* the cell these are about */
};

/* Does the key (kind, ts, value) of the cell whose codec_cell_prefix is
   prefix go?  1 yes, 0 no, or a failure (a damaged record). */
int  cell_gc_drops(struct gc_cell *c, perc_bytes prefix, int kind,
                   perc_ts ts, perc_bytes value);

/* PERC_ETOOOLD, saying why: a snapshot below safe point sp. */
int  cell_too_old(perc_ts sp);

struct store;

/*
 * Did the write behind a notification at ts land in snapshot snap: is
 * it committed at or below snap, or rolled back?  Not while still
 * locked, nor when it began at or after snap.  One whose record gc has
 * removed (ts at or below the safe point, and no lock) is settled, and
 * seen.  Sets *seen; 0 or a failure.  It asks the cell through s's own
 * verbs (get_lock, find_commit, safe_point): an ack's clearing inside
 * the LevelDB store's commit and an observer's start both ask
 * (lib/redis/lua/commit.lua asks the same).
 */
int  cell_write_seen(int *seen, struct store *s, perc_bytes row,
                     perc_bytes col, perc_ts ts, perc_ts snap);
#endif

/*
 * lib/cell.h - the rules on one cell's records that both stores apply
 * (the LevelDB store in C, the Redis store in C and in its scripts):
 * gc's drop rule and the too-old refusal.
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
#endif

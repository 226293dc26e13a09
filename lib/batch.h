/* lib/batch.h - one driver for a step taken over many cells */
#ifndef BATCH_H
#define BATCH_H

#include <stddef.h>

#include "db.h"

/* Cells sent together at most (store_ops.prewrite_many, commit_many,
   rollback_many). */
#define BATCH_CELLS 1024

/*
 * A run of one step (prewrite, commit, roll back, a dead transaction's
 * resolution) over cells k in [from, to).  Where the store can send
 * cells together (many), they go BATCH_CELLS at a time, and a cell the
 * store did not do then takes the step again alone (one), which finds
 * its work done or deals with what is in the way; elsewhere each cell
 * takes it alone.  The hooks are called with arg.
 */
struct batch {
	/* The k-th cell of the run. */
	const struct write *(*cell)(void *arg, size_t k);
	/* The step on the n cells w[] together, done[i] set for each it
	   did (store_ops.prewrite_many's contract); NULL: none. */
	int  (*many)(void *arg, const struct write *const *w, size_t n,
	             int *done);
	/* The step on one cell. */
	int  (*one)(void *arg, const struct write *w);
	/* NULL, or after each cell's step: a lock resolved is reported. */
	int  (*each)(void *arg, const struct write *w);
	/* NULL, or between two steps, once a cell alone (w) or a batch (w
	   NULL) is done; first: the run's first cell. */
	int  (*after)(void *arg, const struct write *w, int first);
	void *arg;
	/* The first cell takes its step alone, before the others (a
	   failpoint or the store's grouping may start after it). */
	int   first_alone;
	/* When not NULL, db_progress hears of done as it grows, under
	   this name. */
	perc_db    *db;
	const char *counted;
	/* Out: the cells done, a batch counted whole, failed or not. */
	size_t done;
};

int batch_run(struct batch *b, size_t from, size_t to);
#endif

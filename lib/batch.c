/*
 * lib/batch.c - one driver for a step taken over many cells.
 *
 * A commit prewrites its cells, then commits them, or rolls them back;
 * a walk over a dead transaction's locks commits or rolls them back
 * too.  Each is the same loop over cells, with the step its own: the
 * first cell alone where it must come first, then the others sent
 * together where the store can (a round trip a master for them all,
 * where one each made a Redis load of 100,000 cells take minutes), and
 * what a long run keeps up between steps (the caller's after hook).
 */
#include "batch.h"

static void
tell_progress(const struct batch *b)
{
	if (b->counted != NULL)
		db_progress(b->db, b->counted, b->done);
}

/* The cells [k, k + n) sent together; those the store did not do then
   take the step alone. */
static int
run_many(struct batch *b, size_t k, size_t n)
{
	/* Zeroed: gcc -O1 cannot tell that n > 0 fills it. */
	const struct write *w[BATCH_CELLS] = { NULL };
	int done[BATCH_CELLS];
	size_t i;
	int rc;

	for (i = 0; i < n; i++)
		w[i] = b->cell(b->arg, k + i);
	rc = b->many(b->arg, w, n, done);
	for (i = 0; i < n && rc == 0; i++) {
		if (!done[i])
			rc = b->one(b->arg, w[i]);
		if (rc == 0 && b->each != NULL)
			rc = b->each(b->arg, w[i]);
	}
	return rc;
}

static int
run_one(struct batch *b, size_t k, int first)
{
	const struct write *w = b->cell(b->arg, k);
	int rc;

	rc = b->one(b->arg, w);
	if (rc == 0 && b->each != NULL)
		rc = b->each(b->arg, w);
	if (rc == 0 && b->after != NULL)
		rc = b->after(b->arg, w, first);
	return rc;
}

/*
 * 0 when every cell of [from, to) took the step, else the first
 * failure; b->done tells how far it got.  A cell alone counts once its
 * step and what follows it succeeded; a batch counts whole, failed or
 * not: undoing a step that was not taken changes nothing.
 */
int
batch_run(struct batch *b, size_t from, size_t to)
{
	size_t n;
	int rc = 0;

	for (b->done = from; b->done < to && rc == 0; ) {
		if (b->many == NULL || (b->first_alone && b->done == from)) {
			if ((rc = run_one(b, b->done, b->done == from)) == 0 &&
			    (++b->done & 1023) == 0)
				tell_progress(b);
			continue;
		}
		n = to - b->done < BATCH_CELLS ? to - b->done : BATCH_CELLS;
		rc = run_many(b, b->done, n);
		b->done += n;
		if (rc == 0 && b->after != NULL)
			rc = b->after(b->arg, NULL, 0);
		tell_progress(b);
	}
	return rc;
}

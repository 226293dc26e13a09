/*
 * lib/seen.c - did the write behind a notification land in a snapshot?
 * Asked of the cell through its store's own verbs, by the core (a
 * runner's choice of a dirty cell) and by the LevelDB store (the
 * clearing of an observer's acks within its commit).
 */
#include <string.h>

#include "codec.h"
#include "seen.h"

/*
 * A notification at ts whose write has neither a lock nor a record:
 * gc removed the record, a commit at or below its safe point or a
 * rollback at ts, which it removes from the safe point on (gc.c).  A
 * write that began at or below the safe point and committed above it
 * keeps its record, so none missing there can be newer than any
 * snapshot still open, all of which start at or above the safe point:
 * every one sees it.  The safe point is read after the record was
 * looked for, and gc raises it before it removes anything.
 */
static int
settled_by_gc(int *seen, struct store *s, perc_ts ts)
{
	perc_ts sp;
	int rc;

	if ((rc = s->ops->safe_point(s, &sp)) == 0)
		*seen = ts <= sp;
	return rc;
}

int
write_seen(int *seen, struct store *s, perc_bytes row, perc_bytes col,
    perc_ts ts, perc_ts snap)
{
	struct lock_rec lock;
	perc_ts at;
	int rc, op;

	*seen = 0;
	if (ts >= snap)
		return 0;       /* began after us: a later run's business */
	memset(&lock, 0, sizeof(lock));
	rc = s->ops->get_lock(s, &lock, row, col);
	if (rc == 0 && lock.start_ts == ts)
		goto done;      /* still locked: its fate is open */
	if (rc < 0 && rc != PERC_ENOTFOUND)
		goto done;
	rc = s->ops->find_commit(s, &at, &op, row, col, ts);
	if (rc == 0)
		*seen = op == OP_ROLLBACK || at <= snap;
	else if (rc == PERC_ENOTFOUND)
		rc = settled_by_gc(seen, s, ts);
done:
	codec_lock_dispose(&lock);
	return rc;
}

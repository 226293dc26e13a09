/*
 * lib/store.c - the seam's optional verbs, with their defaults.
 *
 * A store leaves NULL in its table the verbs it has no use for; the
 * core calls these wrappers instead, which do what store.h says a NULL
 * verb means, so no caller above tests a pointer (as SQLite's os.c
 * stands for its VFS's missing methods).
 */
#include <stddef.h>

#include "buf.h"
#include "clock.h"
#include "store.h"

int
store_exclusive(const struct store *s)
{
	return s->ops->waited_for != NULL;
}

int
store_shared(const struct store *s)
{
	return s->ops->open_publish != NULL;
}

int
store_groups(const struct store *s)
{
	return s->ops->group != NULL;
}

int
store_batches(const struct store *s)
{
	return s->ops->prewrite_many != NULL && s->ops->commit_many != NULL &&
	    s->ops->rollback_many != NULL;
}

int
store_commits_at_once(const struct store *s)
{
	return s->ops->commit_at_once != NULL;
}

void
store_pause(struct store *s, int64_t deadline_ms)
{
	if (s->ops->pause != NULL)
		s->ops->pause(s, deadline_ms);
}

int
store_waited_for(struct store *s)
{
	return s->ops->waited_for != NULL && s->ops->waited_for(s);
}

void
store_power_cut(struct store *s)
{
	if (s->ops->power_cut != NULL)
		s->ops->power_cut(s);
}

int
store_ts_begin(struct store *s, perc_ts *out, int64_t deadline_ms)
{
	if (s->ops->ts_begin == NULL)
		return s->ops->ts_next(s, out, 1, deadline_ms);
	return s->ops->ts_begin(s, out, deadline_ms);
}

int
store_open_publish(struct store *s, perc_ts at, perc_ts oldest_here,
    perc_ts *oldest_all, int64_t deadline_ms)
{
	if (s->ops->open_publish == NULL) {
		*oldest_all = 0;        /* the journals say it all */
		return 0;
	}
	return s->ops->open_publish(s, at, oldest_here, oldest_all,
	    deadline_ms);
}

int
store_group(struct store *s, int on)
{
	return s->ops->group != NULL ? s->ops->group(s, on) : 0;
}

int
store_bulk_done(struct store *s, perc_ts start_ts)
{
	return s->ops->bulk_done != NULL ? s->ops->bulk_done(s, start_ts) : 0;
}

int
store_locks_by_txn(struct store *s, int (*fn)(void *arg, perc_bytes row,
    perc_bytes col, const struct lock_rec *lock), void *arg)
{
	if (s->ops->locks_by_txn != NULL)
		return s->ops->locks_by_txn(s, fn, arg);
	return s->ops->locks(s, fn, arg);
}

/* Done with none of them: the caller steps through them one by one. */
static int
none_done(int *done, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		done[i] = 0;
	return 0;
}

int
store_prewrite_many(struct store *s, const struct write *const *w,
    const unsigned *flags, size_t n, const struct lock_rec *lock, int *done)
{
	if (s->ops->prewrite_many == NULL)
		return none_done(done, n);
	return s->ops->prewrite_many(s, w, flags, n, lock, done);
}

int
store_commit_many(struct store *s, const struct write *const *w, size_t n,
    perc_ts start_ts, perc_ts commit_ts, int *done)
{
	if (s->ops->commit_many == NULL)
		return none_done(done, n);
	return s->ops->commit_many(s, w, n, start_ts, commit_ts, done);
}

int
store_rollback_many(struct store *s, const struct write *const *w,
    size_t n, perc_ts start_ts, int *done)
{
	if (s->ops->rollback_many == NULL)
		return none_done(done, n);
	return s->ops->rollback_many(s, w, n, start_ts, done);
}

int
store_commit_at_once(struct store *s, const struct writeset *ws,
    const unsigned *flags, perc_ts start_ts, perc_ts *commit_ts)
{
	if (s->ops->commit_at_once == NULL)
		return PERC_ELOCKED;    /* the two steps, a cell at a time */
	return s->ops->commit_at_once(s, ws, flags, start_ts, commit_ts);
}

void
store_wake(struct store *s, int feed)
{
	if (s->ops->wake != NULL)
		s->ops->wake(s, feed);
}

int
store_wait_wake(struct store *s, int feed, int64_t deadline_ms,
    const sigset_t *mask)
{
	if (s->ops->wait_wake == NULL) {
		clock_pause_on(-1, deadline_ms, mask);  /* a poll's nap */
		return 0;
	}
	return s->ops->wait_wake(s, feed, deadline_ms, mask);
}

int
store_notify_epoch(struct store *s, perc_buf *out)
{
	if (s->ops->notify_epoch == NULL) {
		buf_reset(out);         /* one that never changes */
		return 0;
	}
	return s->ops->notify_epoch(s, out);
}

/*
 * lib/weak.c - weak notifications (the paper's, section 2.4), as they
 * are written: many writers notify one cell without conflicting, and
 * its observer runs at least once for each notification (their runs:
 * weak_run.c).
 *
 * A notification is a key of the notify region at its transaction's
 * commit timestamp.  It is written with no lock and checked against
 * nothing, so notifiers never conflict.  A transaction whose only
 * writes are notifications takes a commit timestamp and writes them at
 * it, each durable before the commit returns; cut short, it may have
 * written some of them, which is a run too many at worst (at least
 * once allows it), never a notification lost of a commit that said so.
 *
 * A transaction that also writes cells has its commit point in its
 * primary, and a notification must not be lost when it dies just past
 * that point.  So before the commit point each notified cell gets a
 * pending record at the transaction's start_ts, naming the primary, and
 * after it the record becomes the notification at commit_ts, in one
 * step of that row.  Whoever meets a pending record before that settles
 * it by its primary (weak_run.c).
 */
#include "buf.h"
#include "clock.h"
#include "codec.h"
#include "error.h"
#include "store.h"
#include "weak.h"

/* A pending record's value: the primary's row (its length first) and
   column. */
static int
primary_encode(perc_buf *out, const struct write *p)
{
	unsigned char len[4];
	int rc;

	codec_put_u32(len, (uint32_t)p->row.len);
	buf_reset(out);
	if ((rc = buf_add(out, len, 4)) == 0 &&
	    (rc = buf_addb(out, buf_bytes(&p->row))) == 0)
		rc = buf_addb(out, buf_bytes(&p->col));
	return rc;
}

int
weak_pend_all(perc_txn *txn)
{
	const struct writeset *ws = &txn->writes;
	struct store *s = txn->db->store;
	perc_buf primary = PERC_BUF_INIT;
	size_t i;
	int rc;

	if (ws->nnotes == 0)
		return 0;
	rc = primary_encode(&primary, &ws->w[ws->primary]);
	for (i = 0; i < ws->nnotes && rc == 0; i++)
		rc = s->ops->weak_pend(s, buf_bytes(&ws->notes[i].row),
		    buf_bytes(&ws->notes[i].col), txn->journal.start_ts,
		    buf_bytes(&primary));
	perc_buf_dispose(&primary);
	return rc;
}

/* With writes that take locks, the notifications were pending. */
int
weak_settle_all(perc_txn *txn, perc_ts commit_ts, unsigned flags)
{
	const struct writeset *ws = &txn->writes;
	struct store *s = txn->db->store;
	perc_ts pended = ws->n > 0 ? txn->journal.start_ts : 0;
	size_t i;
	int rc = 0;

	for (i = 0; i < ws->nnotes && rc == 0; i++)
		rc = s->ops->weak_settle(s, buf_bytes(&ws->notes[i].row),
		    buf_bytes(&ws->notes[i].col), pended, commit_ts, flags);
	return rc;
}

int
weak_commit_notes(perc_ts *out, perc_txn *txn)
{
	perc_ts commit_ts;
	int rc;

	if ((rc = perc_ts_next(&commit_ts, txn->db, 1)) < 0 ||
	    (rc = weak_settle_all(txn, commit_ts, STORE_SYNC)) < 0)
		return rc;
	*out = commit_ts;
	return journal_finish(&txn->journal);
}

int
perc_weak_notify(perc_ts *out, perc_db *db, perc_bytes row, perc_bytes col)
{
	struct store *s = db->store;
	int rc;

	*out = 0;
	if ((rc = db_require_weak(db, col)) < 0 ||
	    (rc = perc_ts_next(out, db, 1)) < 0 ||
	    (rc = db_acquire(db, clock_deadline(db->timeout_ms))) < 0)
		return rc;
	rc = s->ops->weak_settle(s, row, col, 0, *out, STORE_SYNC);
	db_release(db);
	if (rc == 0)
		db_count_commit(db);
	else
		*out = 0;
	return rc;
}

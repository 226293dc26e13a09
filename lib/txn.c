/*
 * lib/txn.c - transactions: a journal of buffered writes until commit,
 * then Percolator's two-phase commit on the store.
 *
 * Commit holds the transaction's token and the store from the first
 * prewrite to the last secondary, so other processes see its locks
 * only if it dies (or pauses at a failpoint) in between.  The protocol
 * is still the paper's, one cell a batch, because a crash can stop it
 * between any two batches.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "error.h"
#include "failpoint.h"
#include "gc.h"
#include "lock.h"
#include "txn.h"

static int
txn_new(perc_txn **out, perc_db *db)
{
	if ((*out = calloc(1, sizeof(**out))) == NULL)
		return error_set(PERC_EIO, "out of memory");
	(*out)->db = db;
	(*out)->journal.fd = -1;
	return 0;
}

/*
 * A start timestamp, and a journal that makes the transaction open to
 * gc (for a local one, its owner file does); a start below gc's fence
 * may have been missed by a gc running now (gc.h), and is taken again.
 */
static int
txn_begin(perc_txn **out, perc_db *db, int local)
{
	perc_ts start, fence;
	int rc;

	*out = NULL;
	if ((rc = txn_new(out, db)) < 0)
		return rc;
	for (;;) {
		if ((rc = db_begin_ts(&start, db)) < 0 ||
		    (rc = local ? journal_create_local(&(*out)->journal,
		    db->dir, start, &db->owner) : journal_create(
		    &(*out)->journal, db->dir, start)) < 0)
			break;
		if ((rc = gc_fence(&fence, db->dir)) == 0 && fence <= start)
			break;
		journal_finish(&(*out)->journal);
		journal_close(&(*out)->journal);
		if (rc < 0)
			break;
	}
	if (rc == 0 && !local)
		owner_note_begun((*out)->journal.path, db->begun_by > 0 ?
		    db->begun_by : (long)getpid());
	if (rc < 0) {
		perc_txn_free(*out);
		*out = NULL;
	}
	return rc;
}

int
perc_txn_begin(perc_txn **out, perc_db *db)
{
	return txn_begin(out, db, 0);
}

/*
 * Local, without a file, when this process's owner file is ours; when
 * another perc_db of the process has it, a journal as perc_txn_begin's.
 */
int
perc_txn_begin_local(perc_txn **out, perc_db *db)
{
	int local = db->owner.fd >= 0 || (!db->store->read_only &&
	    owner_register(&db->owner, db->dir) == 0);

	return txn_begin(out, db, local);
}

int
perc_txn_open(perc_txn **out, perc_db *db, const char *handle)
{
	int rc;

	*out = NULL;
	if ((rc = txn_new(out, db)) < 0 ||
	    (rc = journal_open(&(*out)->journal, db->dir, handle)) < 0) {
		perc_txn_free(*out);
		*out = NULL;
	}
	return rc;
}

const char *
perc_txn_handle(const perc_txn *txn)
{
	return txn->journal.handle;
}

perc_ts
perc_txn_start_ts(const perc_txn *txn)
{
	return txn->journal.start_ts;
}

void
perc_txn_free(perc_txn *txn)
{
	if (txn == NULL)
		return;
	/*
	 * A transaction this process finished, or ended with it, as a
	 * local one does: the store must hear (gc.h).
	 */
	if (store_shared(txn->db->store) &&
	    (txn->journal.local != NULL || (txn->journal.path != NULL &&
	    access(txn->journal.path, F_OK) != 0 && errno == ENOENT)))
		txn->db->open_unpublished = 1;
	writeset_dispose(&txn->writes);
	journal_close(&txn->journal);
	db_open_note(txn->db, 0);
	free(txn);
}

/*
 * Load the write set, under a shared flock so that a record another
 * process is appending is never read half-written (a local journal has
 * no other process).
 */
int
txn_writes(perc_txn *txn)
{
	struct journal *j = &txn->journal;
	int shared = !j->token && j->local == NULL, rc;

	if (txn->loaded || txn->bulk)
		return 0;
	if (shared && clock_flock(j->fd, LOCK_SH,
	    clock_deadline(txn->db->timeout_ms)) < 0)
		return error_set(PERC_ETIMEOUT, "transaction '%s' stayed busy "
		    "in another process; try again", j->handle);
	rc = journal_load(&txn->writes, j);
	if (shared)
		flock(j->fd, LOCK_UN);
	txn->loaded = rc == 0;
	return rc;
}

/*
 * Read (row, col) at snapshot ts on the store, waiting for live locks
 * below ts and cleaning up dead ones, until PERC_LOCK_TIMEOUT.
 */
static int
db_snapshot_read(perc_buf *out, perc_db *db, perc_bytes row, perc_bytes col,
    perc_ts ts)
{
	int64_t deadline = clock_deadline(db->timeout_ms);
	struct lock_rec blocker;
	struct lock_fate known = { 0, 0 };
	unsigned delay = 1000;
	int rc;

	memset(&blocker, 0, sizeof(blocker));
	if ((rc = db_acquire(db, deadline)) < 0)
		return rc;
	while ((rc = db->store->ops->read(db->store, out, row, col, ts,
	    &blocker, &known)) == PERC_ELOCKED) {
		if ((rc = lock_wait_or_clean(db, row, col, &blocker, ts,
		    &known, NULL, &delay, deadline)) < 0)
			break;
	}
	codec_lock_dispose(&blocker);
	return rc;
}

/*
 * A fresh snapshot of one cell without a timestamp: when the cell has
 * no lock, every commit below a timestamp taken now is in it already,
 * and every commit to come takes its timestamp after this read, so its
 * newest version is what a read at now would give.  Only a lock needs
 * the timestamp, to tell whether its commit comes before the snapshot:
 * PERC_ELOCKED then, and the caller takes one.  One store step, where
 * a timestamp costs the oracle's lock (LevelDB) or a round trip (Redis).
 */
static int
read_newest(perc_buf *out, perc_db *db, perc_bytes row, perc_bytes col)
{
	static const struct lock_fate none = { 0, 0 };
	struct lock_rec blocker;
	int rc;

	memset(&blocker, 0, sizeof(blocker));
	/* A held store needs no deadline: the fast path reads no clock. */
	if (db->store->ops->held(db->store) ||
	    (rc = db_acquire(db, clock_deadline(db->timeout_ms))) == 0)
		rc = db->store->ops->read(db->store, out, row, col, UINT64_MAX,
		    &blocker, &none);
	codec_lock_dispose(&blocker);
	return rc;
}

/*
 * A fresh snapshot is read as a transaction that only reads: its start
 * is open to gc, which does not pass it until perc_txn_free, however
 * often a gc that keeps nothing (--retain 0) runs meanwhile.  Where
 * this process can write nothing (no start can be shown open), the
 * newest snapshot it can read is all there is.
 */
int
perc_snapshot_begin(perc_txn **out, perc_ts *ts, perc_db *db)
{
	int rc;

	*out = NULL;
	if (!db->store->read_only) {
		if ((rc = perc_txn_begin_local(out, db)) == 0) {
			*ts = (*out)->journal.start_ts;
			return 0;
		}
		if (rc != PERC_EIO)
			return rc;
	}
	return perc_snapshot_ts(ts, db);   /* a full disk, say */
}

int
perc_snapshot_get(perc_buf *out, perc_db *db, perc_ts at, perc_bytes row,
    perc_bytes col)
{
	perc_txn *snap = NULL;
	int rc, tries = 0, fresh = at == 0;

	if (db_is_weak(db, col))
		return PERC_ENOTFOUND;  /* it holds no values */
	if (fresh && (rc = read_newest(out, db, row, col)) != PERC_ELOCKED) {
		db_release(db);
		return rc;
	}
	if (!fresh && (rc = db_check_at(db, at)) < 0)
		return rc;
	/*
	 * Only a snapshot gc was not told of (perc_snapshot_begin without
	 * a transaction) can be passed by a gc meanwhile: take a newer.
	 */
	do {
		perc_txn_free(snap);
		rc = fresh ? perc_snapshot_begin(&snap, &at, db) : 0;
		if (rc == 0)
			rc = db_snapshot_read(out, db, row, col, at);
	} while (rc == PERC_ETOOOLD && fresh && snap == NULL && ++tries < 10);
	db_release(db);
	perc_txn_free(snap);
	return rc;
}

int
perc_txn_get(perc_buf *out, perc_txn *txn, perc_bytes row, perc_bytes col,
    unsigned flags)
{
	static const perc_bytes none = { "", 0 };
	struct write *w;
	int rc;

	if ((rc = txn_writes(txn)) < 0)
		return rc;
	w = writeset_find(&txn->writes, row, col);
	if (w != NULL && w->op == OP_PUT)
		return buf_set(out, w->value.data, w->value.len);
	if (w != NULL && w->op == OP_DELETE)
		return PERC_ENOTFOUND;
	if (db_is_weak(txn->db, col)) {
		rc = PERC_ENOTFOUND;    /* it holds no values */
	} else {
		rc = db_snapshot_read(out, txn->db, row, col,
		    txn->journal.start_ts);
		db_release(txn->db);
	}
	if (rc == PERC_ETOOOLD)
		journal_finish(&txn->journal);  /* SPEC: it is finished */
	if ((flags & PERC_GET_LOCK) && w == NULL &&
	    (rc == 0 || rc == PERC_ENOTFOUND)) {
		int lrc = journal_append(&txn->journal, OP_LOCK, row, col,
		    none, clock_deadline(txn->db->timeout_ms));

		if (lrc < 0)
			return lrc;
		txn->loaded = 0;
		writeset_dispose(&txn->writes);
	}
	return rc;
}

static int
txn_append(perc_txn *txn, int op, perc_bytes row, perc_bytes col,
    perc_bytes value)
{
	int rc;

	rc = journal_append(&txn->journal, op, row, col, value,
	    clock_deadline(txn->db->timeout_ms));
	txn->loaded = 0;
	writeset_dispose(&txn->writes);
	return rc;
}

int
perc_txn_set(perc_txn *txn, perc_bytes row, perc_bytes col, perc_bytes value)
{
	int rc;

	if ((rc = db_refuse_weak(txn->db, col, "set")) < 0)
		return rc;
	return txn_append(txn, OP_PUT, row, col, value);
}

int
perc_txn_del(perc_txn *txn, perc_bytes row, perc_bytes col)
{
	static const perc_bytes none = { "", 0 };
	int rc;

	if ((rc = db_refuse_weak(txn->db, col, "deleted")) < 0)
		return rc;
	return txn_append(txn, OP_DELETE, row, col, none);
}

/* A weak notification, which the commit writes (lib/weak.c). */
int
perc_txn_notify(perc_txn *txn, perc_bytes row, perc_bytes col)
{
	static const perc_bytes none = { "", 0 };
	int rc;

	if ((rc = db_require_weak(txn->db, col)) < 0)
		return rc;
	return txn_append(txn, OP_NOTIFY, row, col, none);
}

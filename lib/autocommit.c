/* lib/autocommit.c - one write as a transaction of its own */
#include "perc.h"

static int
write_one(perc_ts *out, perc_db *db, perc_bytes row, perc_bytes col,
    const perc_bytes *value)
{
	perc_txn *txn = NULL;
	int rc;

	*out = 0;
	if ((rc = perc_txn_begin_local(&txn, db)) < 0)
		return rc;
	rc = value ? perc_txn_set(txn, row, col, *value) :
	    perc_txn_del(txn, row, col);
	if (rc == 0)
		rc = perc_txn_commit(out, txn);
	/* Nothing of it may stay open behind the caller's back. */
	if (rc == PERC_ETIMEOUT || (rc < 0 && rc != PERC_ECONFLICT &&
	    rc != PERC_ENOTXN))
		perc_txn_abort(txn);
	perc_txn_free(txn);
	return rc;
}

int
perc_set(perc_ts *out, perc_db *db, perc_bytes row, perc_bytes col,
    perc_bytes value)
{
	return write_one(out, db, row, col, &value);
}

int
perc_del(perc_ts *out, perc_db *db, perc_bytes row, perc_bytes col)
{
	return write_one(out, db, row, col, NULL);
}

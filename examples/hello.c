/*
 * examples/hello.c - a first program against libperc, using only the
 * public API in <perc.h>: create (or reuse) a data directory, run one
 * transaction that writes two cells and reads one back, commit it and
 * print the commit timestamp.
 *
 *   cc hello.c $(pkg-config --cflags --libs --static perc) -o hello
 *   ./hello DIR
 *
 * Every call that can fail returns 0 or a negative PERC_E* code; the
 * exit status is the one perc(1) would use for the same failure, and
 * perc_errmsg() says what went wrong in one line.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <perc.h>

static perc_bytes
str(const char *s)
{
	perc_bytes b = { s, strlen(s) };
	return b;
}

/* Report a failure of what, and return the exit status perc(1) uses. */
static int
fail(const char *what, int rc)
{
	fprintf(stderr, "hello: %s: %s\n", what, perc_errmsg());
	return rc < 0 ? -rc : 1;
}

int
main(int argc, char **argv)
{
	perc_db *db = NULL;
	perc_txn *txn = NULL;
	perc_buf value = PERC_BUF_INIT;
	perc_ts commit_ts = 0;
	int rc, status = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: hello DIR\n");
		return 2;
	}

	/* Create the data directory, or leave an existing one as it is. */
	if ((rc = perc_db_init(argv[1], NULL, 0)) < 0)
		return fail("init", rc);
	if ((rc = perc_db_open(&db, argv[1])) < 0)
		return fail("open", rc);

	if ((rc = perc_txn_begin(&txn, db)) < 0) {
		status = fail("begin", rc);
		goto out;
	}
	printf("began transaction %s\n", perc_txn_handle(txn));

	if ((rc = perc_txn_set(txn, str("alice"), str("greeting"),
	    str("hello"))) < 0 ||
	    (rc = perc_txn_set(txn, str("bob"), str("greeting"),
	    str("world"))) < 0) {
		status = fail("set", rc);
		goto out;
	}

	/* The transaction reads its own buffered writes. */
	if ((rc = perc_txn_get(&value, txn, str("bob"), str("greeting"),
	    0)) < 0) {
		status = fail("get", rc);
		goto out;
	}
	printf("bob greeting = %.*s\n", (int)value.len, value.data);

	if ((rc = perc_txn_commit(&commit_ts, txn)) < 0) {
		status = fail("commit", rc);
		goto out;
	}
	printf("committed at %" PRIu64 "\n", commit_ts);

out:
	if (status != 0 && txn != NULL)
		perc_txn_abort(txn);    /* a no-op once the txn is finished */
	perc_buf_dispose(&value);
	perc_txn_free(txn);
	perc_db_close(db);
	return status;
}

/*
 * lib/serve.c - running a request of perc-shell(1)'s language, parsed
 * by lib/request.c, against a perc_db, and writing its answer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "error.h"
#include "escape.h"
#include "serve.h"

/* A scan's cell lines go out whenever this many bytes are waiting. */
#define SERVE_FLUSH_AT 65536

void
serve_init(struct serve *s, perc_db *db, serve_write_fn write, void *arg)
{
	memset(s, 0, sizeof(*s));
	s->db = db;
	s->write = write;
	s->arg = arg;
	request_init(&s->req);
}

void
serve_drop_open(struct serve *s)
{
	while (s->n > 0)
		perc_txn_free(s->txns[--s->n]);
}

void
serve_dispose(struct serve *s)
{
	serve_drop_open(s);
	free(s->txns);
	s->txns = NULL;
	s->cap = 0;
	request_dispose(&s->req);
	perc_buf_dispose(&s->out);
}

/* Write what the answer holds so far. */
static int
flush(struct serve *s)
{
	int rc = 0;

	if (s->out.len > 0)
		rc = s->write(s->out.data, s->out.len, s->arg);
	buf_reset(&s->out);
	return rc;
}

/* Finish the answer with its last line, status and result, and write it. */
static int
answer(struct serve *s, const char *status, perc_bytes result)
{
	int rc;

	if ((rc = buf_addf(&s->out, "%s", status)) == 0 &&
	    result.data != NULL && (rc = buf_add(&s->out, " ", 1)) == 0)
		rc = escape_field(&s->out, result);
	if (rc == 0)
		rc = buf_add(&s->out, "\n", 1);
	if (rc < 0) {
		buf_reset(&s->out);
		return rc;
	}
	return flush(s);
}

int
serve_ok(struct serve *s, perc_bytes result)
{
	return answer(s, "ok", result);
}

/* "ok N", or "ok" alone when n is 0 and zero_empty says so. */
static int
answer_num(struct serve *s, unsigned long long n, int zero_empty)
{
	char num[24];

	snprintf(num, sizeof(num), "%llu", n);
	return serve_ok(s, n || !zero_empty ? bytes_str(num) :
	    bytes_of(NULL, 0));
}

int
serve_error(struct serve *s, int rc)
{
	int wrc;

	if (rc == PERC_ENOTFOUND)
		return answer(s, "none", bytes_of(NULL, 0));
	if ((wrc = buf_addf(&s->out, "err %d %s\n", -rc, perc_errmsg())) < 0)
		return wrc;
	return flush(s);
}

static int
session_add(struct serve *s, perc_txn *txn)
{
	perc_txn **grown;

	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 8;
		if ((grown = realloc(s->txns, s->cap * sizeof(*grown))) == NULL)
			return error_set(PERC_EIO, "out of memory");
		s->txns = grown;
	}
	s->txns[s->n++] = txn;
	return 0;
}

static void
session_drop(struct serve *s, size_t i)
{
	perc_txn_free(s->txns[i]);
	s->txns[i] = s->txns[--s->n];
}

/*
 * Each run_* answers success itself and returns 0, or returns the
 * failure code for run to answer; *wrc is the code of a failed write.
 */
static int
run_get(struct serve *s, perc_txn *txn, const struct request *r, int *wrc)
{
	perc_buf val = PERC_BUF_INIT;
	int rc;

	if (txn != NULL)
		rc = perc_txn_get(&val, txn, r->arg[0], r->arg[1],
		    (r->given & REQ_LOCK) ? PERC_GET_LOCK : 0);
	else
		rc = perc_snapshot_get(&val, s->db, (r->given & REQ_AT) ?
		    r->at : 0, r->arg[0], r->arg[1]);
	if (rc == 0)
		*wrc = serve_ok(s, bytes_of(val.data ? val.data : "", val.len));
	perc_buf_dispose(&val);
	return rc;
}

static int
run_set(struct serve *s, perc_txn *txn, const struct request *r, int *wrc)
{
	perc_ts ts;
	int rc;

	if (txn != NULL)
		rc = perc_txn_set(txn, r->arg[0], r->arg[1], r->arg[2]);
	else
		rc = perc_set(&ts, s->db, r->arg[0], r->arg[1], r->arg[2]);
	if (rc == 0)
		*wrc = serve_ok(s, bytes_of(NULL, 0));
	return rc;
}

static int
run_del(struct serve *s, perc_txn *txn, const struct request *r, int *wrc)
{
	perc_ts ts;
	int rc;

	if (txn != NULL)
		rc = perc_txn_del(txn, r->arg[0], r->arg[1]);
	else
		rc = perc_del(&ts, s->db, r->arg[0], r->arg[1]);
	if (rc == 0)
		*wrc = serve_ok(s, bytes_of(NULL, 0));
	return rc;
}

/* notify prints nothing, as perc notify does: "ok". */
static int
run_notify(struct serve *s, perc_txn *txn, const struct request *r,
    int *wrc)
{
	perc_ts ts;
	int rc;

	if (txn != NULL)
		rc = perc_txn_notify(txn, r->arg[0], r->arg[1]);
	else
		rc = perc_weak_notify(&ts, s->db, r->arg[0], r->arg[1]);
	if (rc == 0)
		*wrc = serve_ok(s, bytes_of(NULL, 0));
	return rc;
}

/* A cell line, "cell ROW<TAB>COLUMN<TAB>VALUE", escaped as scan prints. */
static int
add_cell(perc_buf *out, perc_bytes row, perc_bytes col, perc_bytes val)
{
	int rc;

	if ((rc = buf_add(out, "cell ", 5)) == 0 &&
	    (rc = escape_field(out, row)) == 0 &&
	    (rc = buf_add(out, "\t", 1)) == 0 &&
	    (rc = escape_field(out, col)) == 0 &&
	    (rc = buf_add(out, "\t", 1)) == 0 &&
	    (rc = escape_field(out, val)) == 0)
		rc = buf_add(out, "\n", 1);
	return rc;
}

/*
 * A cell line for each cell, written as the scan goes: the library
 * reads the store in batches, so a scan of any size takes no more
 * memory than a batch and SERVE_FLUSH_AT.  "ok COUNT" ends the answer;
 * a failure met midway ends it with its err line instead, after the
 * cells already sent.
 */
static int
run_scan(struct serve *s, perc_txn *txn, const struct request *r, int *wrc)
{
	perc_scan_options opts = PERC_SCAN_OPTIONS_INIT;
	perc_bytes row, col, val;
	perc_iter *it = NULL;
	unsigned long long n = 0;
	size_t mark;
	int rc;

	if (r->given & REQ_AT)
		opts.at = r->at;
	if (r->given & REQ_PREFIX)
		opts.prefix = r->prefix;
	if (r->given & REQ_COLUMN)
		opts.column = r->column;
	if ((rc = perc_iter_scan(&it, s->db, txn, &opts)) == 0) {
		while ((rc = perc_iter_next(&row, &col, &val, it)) == 0) {
			mark = s->out.len;
			if ((rc = add_cell(&s->out, row, col, val)) < 0) {
				s->out.len = mark;      /* whole lines only */
				s->out.data[mark] = '\0';
				break;
			}
			n++;
			if (s->out.len >= SERVE_FLUSH_AT &&
			    (*wrc = flush(s)) < 0)
				break;
		}
	}
	perc_iter_free(it);
	if (*wrc < 0)
		return 0;
	if (rc != PERC_ITEROVER)
		return rc;
	*wrc = answer_num(s, n, 0);
	return 0;
}

static int
run_commit(struct serve *s, perc_txn *txn, const struct request *r, int *wrc)
{
	perc_ts ts;
	int rc;

	(void)r;
	if ((rc = perc_txn_commit(&ts, txn)) == 0)
		*wrc = answer_num(s, ts, 1);
	return rc;
}

static int
run_abort(struct serve *s, perc_txn *txn, const struct request *r, int *wrc)
{
	int rc;

	(void)r;
	if ((rc = perc_txn_abort(txn)) == 0)
		*wrc = serve_ok(s, bytes_of(NULL, 0));
	return rc;
}

static int
run_begin(struct serve *s, perc_txn *none, const struct request *r, int *wrc)
{
	perc_txn *txn;
	int rc;

	(void)none;
	(void)r;
	if ((rc = perc_txn_begin_local(&txn, s->db)) < 0)
		return rc;
	if ((rc = session_add(s, txn)) < 0) {
		perc_txn_free(txn);
		return rc;
	}
	*wrc = serve_ok(s, bytes_str(perc_txn_handle(txn)));
	return 0;
}

static int
run_ts(struct serve *s, perc_txn *txn, const struct request *r, int *wrc)
{
	perc_ts ts;
	int rc;

	(void)txn;
	(void)r;
	if ((rc = perc_ts_next(&ts, s->db, 1)) == 0)
		*wrc = answer_num(s, ts, 0);
	return rc;
}

/* What runs each request, by its verb (request.h). */
static int (*const runs[])(struct serve *s, perc_txn *txn,
    const struct request *r, int *wrc) = {
	[REQ_ABORT]  = run_abort,
	[REQ_BEGIN]  = run_begin,
	[REQ_COMMIT] = run_commit,
	[REQ_DEL]    = run_del,
	[REQ_GET]    = run_get,
	[REQ_NOTIFY] = run_notify,
	[REQ_SCAN]   = run_scan,
	[REQ_SET]    = run_set,
	[REQ_TS]     = run_ts,
};

/*
 * Run one parsed request.  A usage error was found by request_parse,
 * before the transaction is opened, so it is exit 2 whatever the
 * handle, as for perc's commands.  The run's transaction and the ones
 * this session began are its own; any other handle is opened from its
 * journal, as perc's commands do.
 */
static int
run(struct serve *s, const struct request *r, int *wrc)
{
	perc_txn *txn = NULL;
	size_t own = s->n;
	int rc, ends = r->verb == REQ_COMMIT || r->verb == REQ_ABORT;

	if (s->run_txn != NULL && (r->given & REQ_TXN) &&
	    strcmp(perc_txn_handle(s->run_txn), r->txn) == 0) {
		if (ends)
			return error_set(PERC_EUSAGE, "the observer's "
			    "transaction %s ends with done STATUS, not with "
			    "%s", r->txn, r->verb == REQ_COMMIT ? "commit" :
			    "abort");
		return runs[r->verb](s, s->run_txn, r, wrc);
	}
	if (r->given & REQ_TXN) {
		for (own = 0; own < s->n && strcmp(perc_txn_handle(
		    s->txns[own]), r->txn) != 0; own++)
			;
		if (own < s->n)
			txn = s->txns[own];
		else if ((rc = perc_txn_open(&txn, s->db, r->txn)) < 0)
			return rc;
	}
	rc = runs[r->verb](s, txn, r, wrc);
	if (own == s->n)
		perc_txn_free(txn);
	else if (ends && rc != PERC_ETIMEOUT && rc != PERC_EIO)
		session_drop(s, own);   /* committed or aborted: finished */
	return rc;
}

int
serve_line(struct serve *s, const char *line, size_t len)
{
	int rc, wrc = 0;

	if (len == 0)
		return 0;
	if ((rc = request_parse(&s->req, line, len)) < 0 ||
	    (rc = run(s, &s->req, &wrc)) < 0)
		return serve_error(s, rc);  /* after a scan's cells */
	return wrc;
}

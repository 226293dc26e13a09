/*
 * cmd/shell.c - perc shell: a coprocess that runs commands read from
 * standard input, one line each, and answers each, so a script can run
 * whole transactions through one perc process.
 *
 * A request is words separated by spaces, each in the escaped TSV form
 * (a space inside a word is \x20, \e the empty word), which
 * lib/request.c parses; this file runs it.  The answer is "ok", "ok RESULT"
 * (RESULT escaped), "none" when get finds no value, or "err N MESSAGE"
 * with N the exit status the command would have had.  scan alone
 * answers in many lines: "cell ROW<TAB>COLUMN<TAB>VALUE" for each cell,
 * streamed as it is read, then "ok COUNT" (or an err line).  The store
 * stays open from one request to the next while requests keep coming,
 * and is handed to any other process that waits for it in between
 * (perc_db_keep); an idle shell lets it go.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "request.h"

static const char usage[] = "usage: perc shell";

static void
answer(const char *status, perc_bytes result)
{
	perc_buf esc = PERC_BUF_INIT;

	fputs(status, stdout);
	if (result.data != NULL && perc_escape(&esc, result) == 0) {
		putchar(' ');
		if (esc.len > 0)
			fwrite(esc.data, 1, esc.len, stdout);
	}
	putchar('\n');
	fflush(stdout);
	perc_buf_dispose(&esc);
}

/* "ok N", or "ok" alone when n is 0 and zero_empty says so. */
static void
answer_num(unsigned long long n, int zero_empty)
{
	char num[24];

	snprintf(num, sizeof(num), "%llu", n);
	answer("ok", n || !zero_empty ? (perc_bytes){ num, strlen(num) } :
	    (perc_bytes){ NULL, 0 });
}

static void
answer_rc(int rc)
{
	if (rc == PERC_ENOTFOUND)
		fputs("none\n", stdout);
	else
		printf("err %d %s\n", -rc, perc_errmsg());
	fflush(stdout);
}

/*
 * The transactions this shell began: local ones (perc_txn_begin_local),
 * which need no journal file, kept until they are committed or aborted,
 * or the shell ends.  Still open after a commit or an abort that timed
 * out or failed on I/O, since it may be tried again.
 */
struct session {
	perc_db   *db;
	perc_txn **txns;
	size_t     n, cap;
};

static int
session_add(struct session *s, perc_txn *txn)
{
	perc_txn **grown;

	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 8;
		if ((grown = realloc(s->txns, s->cap * sizeof(*grown))) == NULL)
			return PERC_EIO;
		s->txns = grown;
	}
	s->txns[s->n++] = txn;
	return 0;
}

static void
session_drop(struct session *s, size_t i)
{
	perc_txn_free(s->txns[i]);
	s->txns[i] = s->txns[--s->n];
}

static int
run_get(struct session *s, perc_txn *txn, const struct request *r)
{
	perc_buf val = PERC_BUF_INIT;
	int rc;

	if (txn != NULL)
		rc = perc_txn_get(&val, txn, r->arg[0], r->arg[1],
		    (r->given & REQ_LOCK) ? PERC_GET_LOCK : 0);
	else
		rc = perc_snapshot_get(&val, s->db, (r->given & REQ_AT) ? r->at : 0,
		    r->arg[0], r->arg[1]);
	if (rc == 0)
		answer("ok", (perc_bytes){ val.data ? val.data : "", val.len });
	perc_buf_dispose(&val);
	return rc;
}

static int
run_set(struct session *s, perc_txn *txn, const struct request *r)
{
	perc_ts ts;
	int rc;

	if (txn != NULL)
		rc = perc_txn_set(txn, r->arg[0], r->arg[1], r->arg[2]);
	else
		rc = perc_set(&ts, s->db, r->arg[0], r->arg[1], r->arg[2]);
	if (rc == 0)
		answer("ok", (perc_bytes){ NULL, 0 });
	return rc;
}

static int
run_del(struct session *s, perc_txn *txn, const struct request *r)
{
	perc_ts ts;
	int rc;

	if (txn != NULL)
		rc = perc_txn_del(txn, r->arg[0], r->arg[1]);
	else
		rc = perc_del(&ts, s->db, r->arg[0], r->arg[1]);
	if (rc == 0)
		answer("ok", (perc_bytes){ NULL, 0 });
	return rc;
}

/*
 * One "cell ROW<TAB>COLUMN<TAB>VALUE" line for each cell, escaped as
 * perc scan prints it, written as the scan goes: the library reads the
 * store in batches, so a scan of any size takes no more memory than a
 * batch.  "ok COUNT" ends the answer; a failure met midway ends it with
 * its err line instead, after the cells already sent.
 */
static int
run_scan(struct session *s, perc_txn *txn, const struct request *r)
{
	perc_scan_options opts = PERC_SCAN_OPTIONS_INIT;
	perc_bytes row, col, val;
	perc_iter *it = NULL;
	unsigned long long n = 0;
	int rc;

	if (r->given & REQ_AT)
		opts.at = r->at;
	if (r->given & REQ_PREFIX)
		opts.prefix = r->prefix;
	if (r->given & REQ_COLUMN)
		opts.column = r->column;
	if ((rc = perc_iter_scan(&it, s->db, txn, &opts)) == 0) {
		while ((rc = perc_iter_next(&row, &col, &val, it)) == 0) {
			fputs("cell ", stdout);
			cmd_print_cell(row, col, val);
			n++;
		}
	}
	perc_iter_free(it);
	if (rc != PERC_ITEROVER)
		return rc;
	answer_num(n, 0);
	return 0;
}

static int
run_commit(struct session *s, perc_txn *txn, const struct request *r)
{
	perc_ts ts;
	int rc;

	(void)s;
	(void)r;
	if ((rc = perc_txn_commit(&ts, txn)) == 0)
		answer_num(ts, 1);
	return rc;
}

static int
run_abort(struct session *s, perc_txn *txn, const struct request *r)
{
	int rc;

	(void)s;
	(void)r;
	if ((rc = perc_txn_abort(txn)) == 0)
		answer("ok", (perc_bytes){ NULL, 0 });
	return rc;
}

static int
run_begin(struct session *s, perc_txn *none, const struct request *r)
{
	perc_txn *txn;
	const char *handle;
	int rc;

	(void)none;
	(void)r;
	if ((rc = perc_txn_begin_local(&txn, s->db)) < 0)
		return rc;
	if ((rc = session_add(s, txn)) < 0) {
		perc_txn_free(txn);
		return rc;
	}
	handle = perc_txn_handle(txn);
	answer("ok", (perc_bytes){ handle, strlen(handle) });
	return 0;
}

static int
run_ts(struct session *s, perc_txn *txn, const struct request *r)
{
	perc_ts ts;
	int rc;

	(void)txn;
	(void)r;
	if ((rc = perc_ts_next(&ts, s->db, 1)) == 0)
		answer_num(ts, 0);
	return rc;
}

/* What runs each request, by its verb (request.h). */
static int (*const runs[])(struct session *s, perc_txn *txn,
    const struct request *r) = {
	[REQ_ABORT]  = run_abort,
	[REQ_BEGIN]  = run_begin,
	[REQ_COMMIT] = run_commit,
	[REQ_DEL]    = run_del,
	[REQ_GET]    = run_get,
	[REQ_SCAN]   = run_scan,
	[REQ_SET]    = run_set,
	[REQ_TS]     = run_ts,
};

/*
 * Run one request; each run_* answers success itself, and run returns
 * a failure code.  A usage error was found by request_parse, before
 * the transaction is opened, so it is exit 2 whatever the handle, as
 * for perc's commands.  A handle this shell began is one of its own;
 * any other is opened from its journal, as perc's commands do.
 */
static int
run(struct session *s, const struct request *r)
{
	perc_txn *txn = NULL;
	size_t own = s->n;
	int rc;

	if (r->given & REQ_TXN) {
		for (own = 0; own < s->n && strcmp(perc_txn_handle(
		    s->txns[own]), r->txn) != 0; own++)
			;
		if (own < s->n)
			txn = s->txns[own];
		else if ((rc = perc_txn_open(&txn, s->db, r->txn)) < 0)
			return rc;
	}
	rc = runs[r->verb](s, txn, r);
	if (own == s->n)
		perc_txn_free(txn);
	else if ((r->verb == REQ_COMMIT || r->verb == REQ_ABORT) &&
	    rc != PERC_ETIMEOUT && rc != PERC_EIO)
		session_drop(s, own);   /* committed or aborted: finished */
	return rc;
}

/*
 * Standard input, read with read(2) rather than stdio, so that the
 * shell knows when nothing is buffered: then it may be idle.
 */
struct input {
	char   *buf;
	size_t  off, len, cap;  /* unread bytes: buf[off, len) */
};

/*
 * The next request line, without its newline, in *line (valid until
 * the next call); its length, or -1 at the end of input.  A script
 * that runs a job sends its next request within moments of reading an
 * answer; one that sends none for IDLE_MS is idle, and the store is
 * let go before the shell waits on.
 */
#define IDLE_MS 2

static ssize_t
next_request(char **line, struct input *in, perc_db *db)
{
	struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
	char *nl, *grown;
	size_t scanned = 0, n;
	ssize_t got;

	for (;;) {
		nl = in->len > in->off + scanned ? memchr(in->buf + in->off +
		    scanned, '\n', in->len - in->off - scanned) : NULL;
		if (nl != NULL) {
			*nl = '\0';
			*line = in->buf + in->off;
			n = (size_t)(nl - *line);
			in->off += n + 1;
			return (ssize_t)n;
		}
		scanned = in->len - in->off;
		if (in->off > 0)
			memmove(in->buf, in->buf + in->off, scanned);
		in->len = scanned;
		in->off = 0;
		if (in->cap - in->len < 4096) {
			if ((grown = realloc(in->buf, in->cap * 2 + 65536)) ==
			    NULL)
				return -1;
			in->buf = grown;
			in->cap = in->cap * 2 + 65536;
		}
		if (scanned == 0 && poll(&pfd, 1, IDLE_MS) == 0)
			perc_db_release(db);
		got = read(STDIN_FILENO, in->buf + in->len,
		    in->cap - in->len - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {         /* a last line without its newline */
			if (scanned == 0)
				return -1;
			in->buf[in->len] = '\0';
			*line = in->buf;
			in->off = in->len;
			return (ssize_t)scanned;
		}
		in->len += (size_t)got;
	}
}

int
cmd_shell(int argc, char **argv, struct perc_ctx *ctx)
{
	static const struct option longopts[] = {
		CMD_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct session sess = { NULL, NULL, 0, 0 };
	struct request r;
	struct input in = { NULL, 0, 0, 0 };
	char *line;
	ssize_t len;
	int ch, rc;

	while ((ch = getopt_long(argc, argv, CMD_COMMON_SHORTOPTS, longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'd':
			ctx->dir = optarg;
			break;
		case 'h':
			return cmd_help_text(usage);
		default:
			return cmd_bad_option(usage, ch, argv);
		}
	}
	if (optind != argc)
		return cmd_usage(usage);
	if ((rc = cmd_open_db(ctx)) < 0)
		return cmd_fail(rc);
	request_init(&r);
	sess.db = ctx->db;
	while ((len = next_request(&line, &in, ctx->db)) >= 0) {
		if (len == 0)
			continue;
		/* Busy: the store stays open from request to request. */
		perc_db_keep(ctx->db);
		if ((rc = request_parse(&r, line, (size_t)len)) < 0 ||
		    (rc = run(&sess, &r)) < 0)
			answer_rc(rc);
		if (perc_gc_due(ctx->db))
			cmd_gc_auto(ctx);
	}
	while (sess.n > 0)      /* left open: discarded, as by a crash */
		session_drop(&sess, sess.n - 1);
	free(sess.txns);
	perc_db_release(ctx->db);
	request_dispose(&r);
	free(in.buf);
	return 0;
}

/*
 * cmd/shell.c - perc shell: a coprocess that runs commands read from
 * standard input, one line each, and answers each, so a script can run
 * whole transactions through one perc process.
 *
 * A request is words separated by spaces, each in the escaped TSV form
 * (a space inside a word is \x20).  The answer is "ok", "ok RESULT"
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

static const char usage[] = "usage: perc shell";

#define MAX_WORDS 8

/* The options of a request, as bits: which ones it has, or takes. */
enum {
	O_TXN    = 0x01,        /* -t TXN */
	O_AT     = 0x02,        /* --at TS */
	O_LOCK   = 0x04,        /* --lock */
	O_PREFIX = 0x08,        /* --prefix P */
	O_COLUMN = 0x10         /* --column C */
};

struct request {
	perc_buf    words[MAX_WORDS];
	size_t      n;
	unsigned    given;      /* the O_* options it has */
	const char *txn;        /* -t */
	perc_ts     at;         /* --at */
	perc_bytes  prefix;     /* --prefix */
	perc_bytes  column;     /* --column */
	perc_bytes  arg[3];     /* the operands */
	size_t      nargs;
};

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
	else if (rc == PERC_EUSAGE)
		fputs("err 2 cannot understand the request; see "
		    "perc-shell(1)\n", stdout);
	else
		printf("err %d %s\n", -rc, perc_errmsg());
	fflush(stdout);
}

/* Whether word w is name, all of it: a NUL byte in w ends no match. */
static int
is_word(const perc_buf *w, const char *name)
{
	return w->len == strlen(name) && memcmp(w->data, name, w->len) == 0;
}

/*
 * If words[*i] is the option name and a value follows it, step *i onto
 * the value, point *val at it and return 1; else 0.
 */
static int
option(perc_bytes *val, const struct request *r, size_t *i,
    const char *name)
{
	const perc_buf *w;

	if (!is_word(&r->words[*i], name) || *i + 1 == r->n)
		return 0;
	w = &r->words[++*i];
	*val = (perc_bytes){ w->data, w->len };
	return 1;
}

/* Split line into unescaped words and sort out options from operands. */
static int
parse(struct request *r, char *line)
{
	char *word, *save = NULL;
	perc_bytes v;
	size_t i;

	for (r->n = 0, word = strtok_r(line, " ", &save); word != NULL;
	    word = strtok_r(NULL, " ", &save)) {
		if (r->n == MAX_WORDS)
			return PERC_EUSAGE;
		r->words[r->n].len = 0;
		if (perc_unescape(&r->words[r->n], word, strlen(word)) < 0)
			return PERC_EUSAGE;
		r->n++;
	}
	r->given = 0;
	r->nargs = 0;
	for (i = 1; i < r->n; i++) {
		/* A handle or a timestamp is a C string: no NUL in it. */
		if (option(&v, r, &i, "-t")) {
			r->given |= O_TXN;
			r->txn = v.data;
			if (strlen(r->txn) != v.len)
				return PERC_EUSAGE;
		} else if (option(&v, r, &i, "--at")) {
			r->given |= O_AT;
			if (strlen(v.data) != v.len ||
			    cmd_parse_ts(&r->at, v.data) < 0)
				return PERC_EUSAGE;
		} else if (option(&v, r, &i, "--prefix")) {
			r->given |= O_PREFIX;
			r->prefix = v;
		} else if (option(&v, r, &i, "--column")) {
			r->given |= O_COLUMN;
			r->column = v;
		} else if (is_word(&r->words[i], "--lock")) {
			r->given |= O_LOCK;
		} else if (is_word(&r->words[i], "--") || r->nargs == 3) {
			return PERC_EUSAGE;
		} else {
			r->arg[r->nargs++] = (perc_bytes){ r->words[i].data,
			    r->words[i].len };
		}
	}
	return r->n > 0 ? 0 : PERC_EUSAGE;
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

	if ((r->given & O_LOCK) && txn == NULL)
		return PERC_EUSAGE;
	if (txn != NULL)
		rc = perc_txn_get(&val, txn, r->arg[0], r->arg[1],
		    (r->given & O_LOCK) ? PERC_GET_LOCK : 0);
	else
		rc = perc_snapshot_get(&val, s->db, (r->given & O_AT) ? r->at : 0,
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

	if (r->given & O_AT)
		opts.at = r->at;
	if (r->given & O_PREFIX)
		opts.prefix = r->prefix;
	if (r->given & O_COLUMN)
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

/* The requests, with the options each takes and its operand count. */
static const struct verb {
	const char *name;
	unsigned    takes;      /* the O_* options it takes ... */
	unsigned    needs;      /* ... and of those, the ones it needs */
	size_t      nargs;      /* its operands */
	int       (*fn)(struct session *s, perc_txn *txn, const struct request *r);
} verbs[] = {
	{ "abort",  O_TXN, O_TXN, 0, run_abort },
	{ "begin",  0, 0, 0, run_begin },
	{ "commit", O_TXN, O_TXN, 0, run_commit },
	{ "del",    O_TXN, 0, 2, run_del },
	{ "get",    O_TXN | O_AT | O_LOCK, 0, 2, run_get },
	{ "scan",   O_TXN | O_AT | O_PREFIX | O_COLUMN, 0, 0, run_scan },
	{ "set",    O_TXN, 0, 3, run_set },
	{ "ts",     0, 0, 0, run_ts },
};

/*
 * Run one request; each run_* answers success itself, and run returns
 * a failure code.  A usage error is found before the transaction is
 * opened, so it is exit 2 whatever the handle, as for perc's commands.
 * A handle this shell began is one of its own; any other is opened
 * from its journal, as perc's commands do.
 */
static int
run(struct session *s, const struct request *r)
{
	const struct verb *v = NULL;
	perc_txn *txn = NULL;
	size_t i, own = s->n;
	int rc;

	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]) && !v; i++)
		if (is_word(&r->words[0], verbs[i].name))
			v = &verbs[i];
	if (v == NULL || (r->given & ~v->takes) ||
	    (r->given & v->needs) != v->needs || r->nargs != v->nargs ||
	    ((r->given & O_TXN) && (r->given & O_AT)))
		return PERC_EUSAGE;
	if (r->given & O_TXN) {
		for (own = 0; own < s->n && strcmp(perc_txn_handle(
		    s->txns[own]), r->txn) != 0; own++)
			;
		if (own < s->n)
			txn = s->txns[own];
		else if ((rc = perc_txn_open(&txn, s->db, r->txn)) < 0)
			return rc;
	}
	rc = v->fn(s, txn, r);
	if (own == s->n)
		perc_txn_free(txn);
	else if ((v->needs & O_TXN) && rc != PERC_ETIMEOUT && rc != PERC_EIO)
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
	size_t i;
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
	memset(&r, 0, sizeof(r));
	sess.db = ctx->db;
	while ((len = next_request(&line, &in, ctx->db)) >= 0) {
		if (len == 0)
			continue;
		/* Busy: the store stays open from request to request. */
		perc_db_keep(ctx->db);
		if ((rc = parse(&r, line)) < 0 || (rc = run(&sess, &r)) < 0)
			answer_rc(rc);
		if (perc_gc_due(ctx->db))
			cmd_gc_auto(ctx);
	}
	while (sess.n > 0)      /* left open: discarded, as by a crash */
		session_drop(&sess, sess.n - 1);
	free(sess.txns);
	perc_db_release(ctx->db);
	for (i = 0; i < MAX_WORDS; i++)
		perc_buf_dispose(&r.words[i]);
	free(in.buf);
	return 0;
}

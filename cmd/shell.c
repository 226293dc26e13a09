/*
 * cmd/shell.c - perc shell: a coprocess that runs commands read from
 * standard input, one line each, and answers each with one line, so a
 * script can run whole transactions through one perc process.
 *
 * A request is words separated by spaces, each in the escaped TSV form
 * (a space inside a word is \x20).  The answer is "ok", "ok RESULT"
 * (RESULT escaped), "none" when get finds no value, or "err N MESSAGE"
 * with N the exit status the command would have had.  The store is
 * open only while a request runs, never while the shell waits.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

static const char usage[] = "usage: perc shell";

#define MAX_WORDS 8

struct request {
	perc_buf    words[MAX_WORDS];
	size_t      n;
	const char *txn;        /* -t */
	const char *at;         /* --at */
	int         lock;       /* --lock */
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

/* Split line into unescaped words and sort out options from operands. */
static int
parse(struct request *r, char *line)
{
	char *word, *save = NULL;
	const char *w;
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
	r->txn = r->at = NULL;
	r->lock = 0;
	r->nargs = 0;
	for (i = 1; i < r->n; i++) {
		w = r->words[i].data;
		if (strcmp(w, "-t") == 0 && i + 1 < r->n)
			r->txn = r->words[++i].data;
		else if (strcmp(w, "--at") == 0 && i + 1 < r->n)
			r->at = r->words[++i].data;
		else if (strcmp(w, "--lock") == 0)
			r->lock = 1;
		else if (strcmp(w, "--") == 0 || r->nargs == 3)
			return PERC_EUSAGE;
		else
			r->arg[r->nargs++] = (perc_bytes){ w, r->words[i].len };
	}
	return r->n > 0 ? 0 : PERC_EUSAGE;
}

static int
run_get(perc_db *db, perc_txn *txn, const struct request *r)
{
	perc_buf val = PERC_BUF_INIT;
	perc_ts ts = 0;
	int rc;

	if (r->nargs != 2 || (r->at && (txn || cmd_parse_ts(&ts, r->at))))
		return PERC_EUSAGE;
	if (txn != NULL)
		rc = perc_txn_get(&val, txn, r->arg[0], r->arg[1],
		    r->lock ? PERC_GET_LOCK : 0);
	else
		rc = perc_snapshot_get(&val, db, ts, r->arg[0], r->arg[1]);
	if (rc == 0)
		answer("ok", (perc_bytes){ val.data ? val.data : "", val.len });
	perc_buf_dispose(&val);
	return rc;
}

static int
run_write(perc_db *db, perc_txn *txn, const struct request *r, int del)
{
	perc_ts ts;
	int rc;

	if (r->nargs != (del ? 2u : 3u))
		return PERC_EUSAGE;
	if (txn != NULL)
		rc = del ? perc_txn_del(txn, r->arg[0], r->arg[1]) :
		    perc_txn_set(txn, r->arg[0], r->arg[1], r->arg[2]);
	else
		rc = del ? perc_del(&ts, db, r->arg[0], r->arg[1]) :
		    perc_set(&ts, db, r->arg[0], r->arg[1], r->arg[2]);
	if (rc == 0)
		answer("ok", (perc_bytes){ NULL, 0 });
	return rc;
}

/* Run one request; answers success itself, returns a failure code. */
static int
run(perc_db *db, const struct request *r)
{
	const char *cmd = r->words[0].data;
	perc_txn *txn = NULL;
	char num[24];
	perc_ts ts = 0;
	int rc;

	if (r->txn && (rc = perc_txn_open(&txn, db, r->txn)) < 0)
		return rc;
	if (strcmp(cmd, "get") == 0)
		rc = run_get(db, txn, r);
	else if (strcmp(cmd, "set") == 0 || strcmp(cmd, "del") == 0)
		rc = run_write(db, txn, r, cmd[0] == 'd');
	else if (strcmp(cmd, "commit") == 0 && txn && r->nargs == 0)
		rc = perc_txn_commit(&ts, txn);
	else if (strcmp(cmd, "abort") == 0 && txn && r->nargs == 0)
		rc = perc_txn_abort(txn);
	else if (strcmp(cmd, "begin") == 0 && !txn && r->nargs == 0) {
		perc_txn_free(txn);
		if ((rc = perc_txn_begin(&txn, db)) == 0)
			answer("ok", (perc_bytes){ perc_txn_handle(txn),
			    strlen(perc_txn_handle(txn)) });
	} else if (strcmp(cmd, "ts") == 0 && !txn && r->nargs == 0)
		rc = perc_ts_next(&ts, db, 1);
	else
		rc = PERC_EUSAGE;
	perc_txn_free(txn);
	if (rc == 0 && (strcmp(cmd, "commit") == 0 ||
	    strcmp(cmd, "ts") == 0 || strcmp(cmd, "abort") == 0)) {
		snprintf(num, sizeof(num), "%" PRIu64, ts);
		answer("ok", ts ? (perc_bytes){ num, strlen(num) } :
		    (perc_bytes){ NULL, 0 });
	}
	return rc;
}

int
cmd_shell(int argc, char **argv, struct perc_ctx *ctx)
{
	static const struct option longopts[] = {
		CMD_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct request r;
	char *line = NULL;
	size_t cap = 0, i;
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
			return cmd_usage(usage);
		}
	}
	if (optind != argc)
		return cmd_usage(usage);
	if ((rc = cmd_open_db(ctx)) < 0)
		return cmd_fail(rc);
	memset(&r, 0, sizeof(r));
	while ((len = getline(&line, &cap, stdin)) > 0) {
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		if (len == 0)
			continue;
		if ((rc = parse(&r, line)) < 0 || (rc = run(ctx->db, &r)) < 0)
			answer_rc(rc);
	}
	for (i = 0; i < MAX_WORDS; i++)
		perc_buf_dispose(&r.words[i]);
	free(line);
	return 0;
}

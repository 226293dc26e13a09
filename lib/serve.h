/*
 * lib/serve.h - running requests of perc-shell(1)'s language against a
 * perc_db and writing their answers: the engine of perc shell, and of
 * a long-running observer (perc run-observer --coprocess), which
 * speaks the same language over its pipes.
 *
 * Each request gets one answer line: "ok", "ok RESULT" (RESULT
 * escaped), "none" when get finds no value, or "err STATUS MESSAGE"
 * with STATUS the exit status the command would have had.  scan alone
 * answers in many lines: "cell ROW<TAB>COLUMN<TAB>VALUE" for each cell,
 * streamed as it is read, then "ok COUNT" (or an err line).
 */
#ifndef SERVE_H
#define SERVE_H

#include "request.h"

/*
 * Where the answers go: write gets whole lines, an answer at a time (a
 * long scan in several pieces), and returns 0, or a negative PERC_E*
 * code that stops the answer under way; serve_line returns that code.
 */
typedef int (*serve_write_fn)(const char *data, size_t len, void *arg);

/*
 * A session: the transactions its begin requests started, local ones
 * (perc_txn_begin_local) kept until committed or aborted, or until
 * serve_dispose; and, while an observer runs, the transaction of the
 * run, which its caller owns and ends: a request may read and write
 * through it, never commit or abort it.
 */
struct serve {
	perc_db        *db;
	perc_txn      **txns;
	size_t          n, cap;
	perc_txn       *run_txn;        /* the observer run's, or NULL */
	struct request  req;
	perc_buf        out;            /* the answer being written */
	serve_write_fn  write;
	void           *arg;
};

void serve_init(struct serve *s, perc_db *db, serve_write_fn write,
                void *arg);

/*
 * Discard the transactions the session began and left open, as a
 * crash would: its client has gone.  serve_dispose does that too, and
 * frees s.
 */
void serve_drop_open(struct serve *s);
void serve_dispose(struct serve *s);

/*
 * Run the request on line (len bytes, no newline) and write its answer;
 * an empty line is no request and gets none.  A request refused or
 * failed is answered with its err line; the return is 0, or the code of
 * a write that failed.
 */
int  serve_line(struct serve *s, const char *line, size_t len);

/* Answer "err STATUS MESSAGE" for code rc, the message perc_errmsg(). */
int  serve_error(struct serve *s, int rc);

/* Answer "ok", or "ok RESULT" with result escaped when result.data. */
int  serve_ok(struct serve *s, perc_bytes result);
#endif

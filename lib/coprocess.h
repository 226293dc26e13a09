/*
 * lib/coprocess.h - a long-running observer, perc run-observer
 * --coprocess: COMMAND starts once and serves cell after cell.  For
 * each the runner writes "run TXN ROW COLUMN" to COMMAND's standard
 * input; COMMAND writes requests of perc-shell(1)'s language to its
 * standard output, reads each answer, and ends the cell with "done
 * STATUS", whose answer tells how the run's commit went.  A COMMAND
 * that exits, writes a line that is neither a request nor done, or
 * has not said done within PERC_LOCK_TTL fails the cell, is stopped,
 * and starts again for the next one.
 *
 * The runner must ignore SIGPIPE, so that a COMMAND gone is a failed
 * write; COMMAND starts with SIGPIPE, SIGINT and SIGTERM at their
 * defaults.
 */
#ifndef COPROCESS_H
#define COPROCESS_H

#include <sys/types.h>

#include "serve.h"

/*
 * The COMMAND a runner drives, serving one cell at a time (runners run
 * at once, each with a COMMAND of its own: perc run-observer --workers).
 */
struct coprocess {
	perc_db       *db;
	char *const   *argv;            /* COMMAND and its arguments */
	char         **envp;            /* COMMAND's: PERC_DIR set */
	pid_t          pid;             /* 0: not running */
	int            to, from;        /* its standard input, output */
	perc_buf       in;              /* read from it, not yet used */
	size_t         in_off;
	int64_t        deadline_ms;     /* of the exchange under way */
	int            failed;          /* the run failed before it began */
	int            said_done;       /* its done awaits an answer */
	struct serve   serve;
	char           why[320];        /* how the last run failed */
};

/*
 * Make co ready to run argv (NULL-terminated, kept) on db, with
 * PERC_DIR set to dir in its environment, and point obs's start, wait,
 * done, local, slots and arg at it.  COMMAND is started for its first
 * cell, so each runner forked after this starts its own.  0, or
 * PERC_EIO.
 */
int  coprocess_init(struct coprocess *co, perc_observer *obs, perc_db *db,
                    char *const *argv, const char *dir);

/* Why the last run failed, as "said done 1": for a report. */
const char *coprocess_failure(const struct coprocess *co);

/*
 * The end of work: close COMMAND's standard input, give it until
 * PERC_LOCK_TTL to exit, then kill it; free what co holds.
 */
void coprocess_end(struct coprocess *co);
#endif

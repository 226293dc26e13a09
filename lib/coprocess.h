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

/* The most COMMANDs one runner drives. */
#define COPROCESS_MAX 64

/* One COMMAND process; coprocess.c has its state. */
struct coprocess_child;

/*
 * The COMMANDs one runner drives: one, or several, each serving a cell
 * of its own at a time (perc_observer's slots).
 */
struct coprocess {
	perc_db                *db;
	char *const            *argv;   /* COMMAND and its arguments */
	char                  **envp;   /* COMMAND's: PERC_DIR set */
	struct coprocess_child *child;
	size_t                  n;
};

/*
 * Make co ready to run n copies of argv (NULL-terminated, kept) on db,
 * with PERC_DIR set to dir in their environment, and point obs's
 * start, wait, done, local, slots and arg at it.  Each COMMAND is
 * started for its first cell, so each runner forked after this starts
 * its own.  0, or PERC_EIO.
 */
int  coprocess_init(struct coprocess *co, perc_observer *obs, perc_db *db,
                    char *const *argv, const char *dir, size_t n);

/*
 * How many COMMANDs each of workers runners should drive: all of them
 * in one runner on a store that one process has open at a time (the
 * LevelDB store), where runner processes would hand the store to each
 * other after each turn; else one each.
 */
size_t coprocess_per_runner(perc_db *db, size_t workers);

/* Why run failed, as "said done 1": for a report. */
const char *coprocess_failure(const struct coprocess *co,
                              const perc_observer_run *run);

/*
 * The end of work: close each COMMAND's standard input, give it until
 * PERC_LOCK_TTL to exit, then kill it; free what co holds.
 */
void coprocess_end(struct coprocess *co);
#endif

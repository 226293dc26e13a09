/* cmd/load.c - perc load: write the cells of scan's output, in batches */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"

static const char usage[] =
    "usage: perc load [--batch N]\n"
    "    --batch N            commit every N lines, printing each timestamp\n";

enum { OPT_BATCH = 256 };

/* The signals that end a load between two batches: the last seen, and
   those caught (catch_stop_signals). */
static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP };
static volatile int stop_signal;
static sigset_t caught;

struct loaded {
	struct cmd_progress shown;
	uint64_t            batches;    /* committed, timestamps printed */
	uint64_t            last_line;  /* of the last one */
};

static void
on_stop_signal(int sig)
{
	stop_signal = sig;
}

/*
 * Catch the stop signals, but for one ignored when perc started (nohup,
 * a background job of a shell without job control), which stays so;
 * without SA_RESTART, so that a wait for input ends at once.
 */
static void
catch_stop_signals(sigset_t *caught)
{
	struct sigaction sa, old;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigemptyset(caught);
	for (i = 0; i < sizeof(stop_signals) / sizeof(*stop_signals); i++)
		if (sigaction(stop_signals[i], NULL, &old) == 0 &&
		    old.sa_handler != SIG_IGN &&
		    sigaction(stop_signals[i], &sa, NULL) == 0)
			sigaddset(caught, stop_signals[i]);
}

/* Each commit's timestamp at once, so a later failure loses none; a
   stop signal waits until it is written whole. */
static int
committed(perc_ts ts, uint64_t last_line, void *arg)
{
	struct loaded *ld = arg;
	sigset_t old;
	int rc = 0;

	sigprocmask(SIG_BLOCK, &caught, &old);
	printf("%" PRIu64 "\n", ts);
	if (fflush(stdout) != 0)
		rc = PERC_EIO;          /* perc.c says why */
	sigprocmask(SIG_SETMASK, &old, NULL);
	ld->batches++;
	ld->last_line = last_line;
	return rc;
}

/* The lines read, on a terminal (cmd_progress). */
static void
progress(uint64_t read, uint64_t done, void *arg)
{
	struct loaded *ld = arg;

	(void)done;
	cmd_progress_heard("lines read", read, &ld->shown);
}

/*
 * Say what a stop signal left (perc-load(1)), close the data directory,
 * and end as the signal would have ended perc, so that a shell sees
 * 128 + its number and a script stops as it would.
 */
static int
stopped_by_signal(struct perc_ctx *ctx, const struct loaded *ld)
{
	int sig = stop_signal;

	if (ld->batches == 0)
		fprintf(stderr, "perc: interrupted: nothing was committed; "
		    "load again from line 1\n");
	else
		fprintf(stderr, "perc: interrupted: %" PRIu64 " batch%s "
		    "committed (timestamp%s printed), lines 1-%" PRIu64 "; the "
		    "rest was not loaded; load again from line %" PRIu64 "\n",
		    ld->batches, ld->batches == 1 ? "" : "es",
		    ld->batches == 1 ? "" : "s", ld->last_line,
		    ld->last_line + 1);
	perc_db_close(ctx->db);
	ctx->db = NULL;
	fflush(stdout);
	signal(sig, SIG_DFL);
	raise(sig);
	return 128 + sig;       /* not reached: the signal ends perc */
}

int
cmd_load(int argc, char **argv, struct perc_ctx *ctx)
{
	static const struct option longopts[] = {
		CMD_COMMON_LONGOPTS,
		{ "batch", required_argument, NULL, OPT_BATCH },
		{ NULL, 0, NULL, 0 }
	};
	perc_load_options opts = PERC_LOAD_OPTIONS_INIT;
	struct loaded ld;
	const char *batch = NULL;
	int ch, rc;

	while ((ch = getopt_long(argc, argv, CMD_COMMON_SHORTOPTS, longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'd':
			ctx->dir = optarg;
			break;
		case 'h':
			return cmd_help_text(usage);
		case OPT_BATCH:
			batch = optarg;
			break;
		default:
			return cmd_bad_option(usage, ch, argv);
		}
	}
	/* N as strict as a timestamp: decimal, no sign, not 0. */
	if (optind != argc)
		return cmd_usage_error(usage, "unexpected argument '%s' (load "
		    "reads its cells from standard input)", argv[optind]);
	if (batch && cmd_parse_ts(&opts.batch, batch) < 0)
		return cmd_usage_error(usage, "--batch takes a count of "
		    "lines, at least 1, not '%s'", batch);
	memset(&ld, 0, sizeof(ld));
	opts.committed = committed;
	opts.progress = progress;
	opts.arg = &ld;
	opts.stop = &stop_signal;
	catch_stop_signals(&caught);
	cmd_progress_start(&ld.shown, "perc load", "lines read");
	if ((rc = cmd_open_db(ctx)) == 0) {
		/* A big commit's cells too, as perc commit shows them. */
		perc_db_progress(ctx->db, cmd_progress_heard, &ld.shown);
		cmd_stdin_hint("cells, ROW<TAB>COLUMN<TAB>VALUE a line,");
		rc = perc_load(ctx->db, stdin, &opts);
		cmd_progress_summary(&ld.shown, "%" PRIu64 " lines committed "
		    "in %" PRIu64 " transaction%s", ld.last_line, ld.batches,
		    ld.batches == 1 ? "" : "s");
	}
	if (rc == 1)
		return stopped_by_signal(ctx, &ld);
	return rc < 0 ? cmd_fail(rc) : 0;
}

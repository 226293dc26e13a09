/*
 * cmd/run-observer.c - perc run-observer: run a command per dirty cell,
 * or with --coprocess one command per runner that serves cell after
 * cell (lib/coprocess.c)
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "cmd.h"
#include "coprocess.h"

static const char usage[] =
    "usage: perc run-observer [--once] [--quiet] [--workers N] [--coprocess]"
    " COLUMN -- COMMAND [ARG]...\n"
    "    --once               one pass over the cells dirty now, then exit\n"
    "    --quiet              no line on stderr for each run\n"
    "    --workers N          run N runners at once (1 to 64)\n"
    "    --coprocess          start COMMAND once per runner; it serves "
    "cell after cell\n";

enum { OPT_ONCE = 256, OPT_QUIET, OPT_WORKERS, OPT_COPROCESS };

struct runner {
	char      **command;
	const char *dir;        /* absolute, for the command's PERC_DIR */
};

static volatile int stopping;

static void
on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static void
set_escaped(const char *name, perc_bytes bytes)
{
	perc_buf esc = PERC_BUF_INIT;

	if (perc_escape(&esc, bytes) == 0)
		setenv(name, esc.data, 1);
	perc_buf_dispose(&esc);
}

/* The raw bytes up to the first NUL: all an environment can carry. */
static void
set_raw(const char *name, perc_bytes bytes)
{
	char *s = strndup(bytes.data ? bytes.data : "", bytes.len);

	if (s != NULL)
		setenv(name, s, 1);
	free(s);
}

/* Run the command for one dirty cell; its exit status decides. */
static int
observe(perc_txn *txn, perc_bytes row, perc_bytes col, void *arg)
{
	const struct runner *r = arg;
	int status;
	pid_t pid;

	fflush(stdout);
	if ((pid = fork()) < 0)
		return 126;
	if (pid == 0) {
		setenv("PERC_DIR", r->dir, 1);
		setenv("PERC_TXN", perc_txn_handle(txn), 1);
		set_raw("PERC_ROW", row);
		set_raw("PERC_COLUMN", col);
		set_escaped("PERC_ROW_ESCAPED", row);
		set_escaped("PERC_COLUMN_ESCAPED", col);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(r->command[0], r->command);
		fprintf(stderr, "perc: cannot run '%s': %s\n", r->command[0],
		    strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 126;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

/* One line on stderr for a run; failure says how a failed one ended. */
/*
 * One line a run, written whole by one fprintf: a runner's workers are
 * processes that share its standard error, and lines written in pieces
 * would interleave.
 */
static void
report(const perc_observer_run *run, const char *failure)
{
	perc_buf row = PERC_BUF_INIT, col = PERC_BUF_INIT;
	char what[512];

	if (perc_escape(&row, run->row) < 0 ||
	    perc_escape(&col, run->column) < 0)
		goto done;
	if (run->status != 0)
		snprintf(what, sizeof(what), "%s; failure %" PRIu32 ", the "
		    "cell stays dirty and is retried later", failure,
		    run->failures);
	else if (run->commit_ts != 0)
		snprintf(what, sizeof(what), "committed at %" PRIu64,
		    run->commit_ts);
	else if (strcmp(run->outcome, "conflicted") == 0)
		snprintf(what, sizeof(what), "lost a conflict; the cell stays "
		    "dirty and runs again");
	else
		snprintf(what, sizeof(what), "%s", strcmp(run->outcome,
		    "taken") == 0 ? "was taken by another runner" :
		    "had nothing to commit");
	fprintf(stderr, "perc: observer on '%s' '%s' %s\n", row.data, col.data,
	    what);
done:
	perc_buf_dispose(&row);
	perc_buf_dispose(&col);
}

static void
report_command(const perc_observer_run *run, void *arg)
{
	char failure[32];

	(void)arg;
	snprintf(failure, sizeof(failure), "exited %d", run->status);
	report(run, failure);
}

static void
report_coprocess(const perc_observer_run *run, void *arg)
{
	report(run, coprocess_failure(arg));
}

/*
 * How long an idle runner sleeps at most: the fallback poll, or less
 * when a cell left for its backoff (retry_at, wall ms) is due sooner.
 */
static int64_t
idle_ms(int64_t retry_at)
{
	int64_t ms = perc_notify_poll_ms(), due;

	if (retry_at != 0) {
		due = retry_at - clock_wall_ms();
		due = due < 0 ? 0 : due;
		ms = due < ms ? due : ms;
	}
	return ms;
}

/*
 * One runner: one pass with --once, else passes until a signal.  Idle,
 * it sleeps until a commit that set or cleared a notification wakes it
 * (perc_notify_wait), using no CPU.  SIGINT and SIGTERM stay blocked
 * but while it sleeps, so one that comes after the look for stopping
 * still ends the sleep at once.  A runner lives long, so it starts the
 * automatic gc its commits made due after each pass, not only when it
 * exits (perc.c).
 */
static int
run_loop(struct perc_ctx *ctx, perc_bytes column, perc_observer *obs)
{
	sigset_t asleep;
	int64_t retry_at = 0;
	size_t ran;
	int rc;

	obs->retry_at_ms = &retry_at;
	/* For perc wait to show a person that a runner is there. */
	if ((rc = perc_runner_announce(ctx->db, column)) < 0)
		return cmd_fail(rc);
	for (;;) {
		rc = perc_observer_pass(&ran, ctx->db, column, obs);
		if (rc < 0)
			return cmd_fail(rc);
		if (obs->once)
			return rc;
		if (perc_gc_due(ctx->db))
			cmd_gc_auto(ctx);
		if (stopping)
			return 0;
		if (ran > 0)
			continue;       /* more may have come meanwhile */
		cmd_block_stop_signals(&asleep);
		if (!stopping)
			perc_notify_wait(ctx->db, idle_ms(retry_at), &asleep);
		sigprocmask(SIG_SETMASK, &asleep, NULL);
		if (stopping)
			return 0;
	}
}

/* --workers N: N runners as child processes; the worst status wins. */
static int
run_workers(long workers, struct perc_ctx *ctx, perc_bytes column,
    perc_observer *obs, struct coprocess *co)
{
	pid_t pids[64];
	long i, started = 0;
	int status, rc, worst = 0;

	for (i = 0; i < workers; i++) {
		if ((pids[i] = fork()) == 0) {
			/* Workers end with their parent, even by kill -9. */
			prctl(PR_SET_PDEATHSIG, SIGTERM);
			if (getppid() == 1)
				_exit(0);
			srand((unsigned)getpid());
			rc = run_loop(ctx, column, obs);
			if (co != NULL)
				coprocess_end(co);
			_exit(rc);
		}
		if (pids[i] > 0)
			started++;
	}
	while (started > 0) {
		if (wait(&status) < 0) {
			if (errno != EINTR)
				break;
			for (i = 0; stopping && i < workers; i++)
				kill(pids[i], SIGTERM);
			continue;
		}
		started--;
		if (!WIFEXITED(status) || WEXITSTATUS(status) > worst)
			worst = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	}
	return worst;
}

int
cmd_run_observer(int argc, char **argv, struct perc_ctx *ctx)
{
	static const struct option longopts[] = {
		CMD_COMMON_LONGOPTS,
		{ "once",    no_argument,       NULL, OPT_ONCE },
		{ "quiet",   no_argument,       NULL, OPT_QUIET },
		{ "workers", required_argument, NULL, OPT_WORKERS },
		{ "coprocess", no_argument,     NULL, OPT_COPROCESS },
		{ NULL, 0, NULL, 0 }
	};
	struct runner r = { NULL, NULL };
	perc_observer obs = { observe, report_command, &r, 0, &stopping, 0,
	    NULL, NULL, NULL, NULL, 0 };
	struct coprocess co, *cop = NULL;
	struct sigaction sa;
	char dir[PATH_MAX];
	perc_bytes column;
	long workers = 1;
	char *end;
	int ch, rc, quiet = 0;

	while ((ch = getopt_long(argc, argv, CMD_COMMON_SHORTOPTS, longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'd':
			ctx->dir = optarg;
			break;
		case 'h':
			return cmd_help_text(usage);
		case OPT_ONCE:
			obs.once = 1;
			break;
		case OPT_QUIET:
			quiet = 1;
			break;
		case OPT_COPROCESS:
			cop = &co;
			break;
		case OPT_WORKERS:
			workers = strtol(optarg, &end, 10);
			if (*end != '\0' || workers < 1 || workers > 64)
				return cmd_usage_error(usage, "--workers takes "
				    "a count from 1 to 64, not '%s'", optarg);
			break;
		default:
			return cmd_bad_option(usage, ch, argv);
		}
	}
	/* COLUMN, then "--", then the command and its arguments. */
	if (optind == argc)
		return cmd_usage_error(usage, "which column? name one that "
		    "perc init --observe made");
	if (argc - optind < 3 || strcmp(argv[optind + 1], "--") != 0)
		return cmd_usage_error(usage, "the command goes after '--': "
		    "perc run-observer %s -- COMMAND", argv[optind]);
	column.data = argv[optind];
	column.len = strlen(argv[optind]);
	r.command = argv + optind + 2;
	/* Checked once here, before the runners fork, for one message. */
	if ((rc = cmd_open_db(ctx)) < 0 ||
	    (rc = perc_observer_check(ctx->db, column)) < 0)
		return cmd_fail(rc);
	r.dir = realpath(ctx->dir, dir) ? dir : ctx->dir;
	if (cop != NULL) {
		if ((rc = coprocess_init(cop, &obs, ctx->db, r.command,
		    r.dir)) < 0)
			return cmd_fail(rc);
		obs.report = report_coprocess;
		/* A COMMAND gone is a failed write, not our death. */
		signal(SIGPIPE, SIG_IGN);
	}
	if (quiet)
		obs.report = NULL;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;     /* no SA_RESTART: waits end at once */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	srand((unsigned)getpid());
	rc = workers > 1 ? run_workers(workers, ctx, column, &obs, cop) :
	    run_loop(ctx, column, &obs);
	if (cop != NULL)
		coprocess_end(cop);
	return rc;
}

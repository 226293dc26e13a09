/* cmd/log.c - perc log: the committed writes in commit order */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"

static const char usage[] =
    "usage: perc log [--since TS] [--follow] [--prefix P] [--column C] "
    "[--json]\n"
    "    --since TS           the writes committed above TS (default: a\n"
    "                         fresh timestamp)\n"
    "    -f, --follow         keep printing as transactions commit\n"
    "    --prefix P           only rows that begin with P\n"
    "    --column C           only column C\n"
    CMD_JSON_HELP;

enum { OPT_SINCE = 256, OPT_PREFIX, OPT_COLUMN };

/* --follow says where it is at least this often, while the resolved
   timestamp moves */
#define RESOLVED_EVERY_MS  1000

static volatile sig_atomic_t stop;

static void
on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

struct printer {
	perc_ts last;           /* the commit_ts of the lines before */
	int     closed;         /* the output is gone */
};

/* A closed output ends the log, exit 0: what was printed stands. */
static int
output_failed(struct printer *p)
{
	int fd;

	if (errno != EPIPE)
		return -1;
	p->closed = 1;
	/* Nothing more can go out: let the buffered rest fall away. */
	if ((fd = open("/dev/null", O_WRONLY | O_CLOEXEC)) >= 0) {
		dup2(fd, STDOUT_FILENO);
		close(fd);
	}
	clearerr(stdout);
	return 1;
}

/* A transaction's lines go out together: flushed as the next begins. */
static int
print_change(void *arg, perc_ts commit_ts, perc_bytes row, perc_bytes col,
    int is_put, perc_bytes value)
{
	struct printer *p = arg;
	const perc_bytes v = is_put ? value : (perc_bytes){ NULL, 0 };
	const struct out_field f[] = { OUT_TS_("commit_ts", commit_ts),
	    OUT_B("row", row), OUT_B("column", col),
	    OUT_W("op", is_put ? "put" : "del"), OUT_B("value", v) };

	if (p->last != 0 && p->last != commit_ts && fflush(stdout) != 0)
		return output_failed(p) < 0 ? -PERC_EIO : 1;
	p->last = commit_ts;
	/* A delete's value: the empty field, or in JSON none. */
	return cmd_out_row(f, is_put || !cmd_json ? 5 : 4);
}

static int
print_resolved(struct printer *p, perc_ts r)
{
	const perc_bytes none = { NULL, 0 };
	const struct out_field tsv[] = { OUT_TS_("commit_ts", r),
	    OUT_B("row", none), OUT_B("column", none), OUT_W("op", "resolved"),
	    OUT_B("value", none) };
	const struct out_field json = OUT_TS_("resolved", r);

	cmd_out_row(cmd_json ? &json : tsv, cmd_json ? 1 : 5);
	if (fflush(stdout) != 0 && output_failed(p) < 0)
		return -1;
	return 0;
}

/* A live lock that holds the feed back for long, named on stderr. */
struct stuck {
	perc_ts start;
	int64_t since_ms, said_ms;
	int64_t say_ms;         /* PERC_LOG_STUCK */
};

static void
say_stuck(struct stuck *st, perc_log *lg, perc_ts resolved)
{
	perc_bytes row, col;
	perc_ts start;
	int64_t now = cmd_now_ms();

	if (!perc_log_blocker(lg, &row, &col, &start) || start > resolved + 1) {
		st->start = 0;
		return;
	}
	if (start != st->start) {
		st->start = start;
		st->since_ms = st->said_ms = now;
		return;
	}
	if (now - st->since_ms < st->say_ms ||
	    now - st->said_ms < st->say_ms)
		return;
	st->said_ms = now;
	fputs("perc log: a live lock on row ", stderr);
	fwrite(row.data, 1, row.len, stderr);
	fputs(" column ", stderr);
	fwrite(col.data, 1, col.len, stderr);
	fprintf(stderr, " of transaction %" PRIu64 " has held the feed at "
	    "%" PRIu64 " for %" PRId64 " s; 'perc status --transactions' "
	    "tells whose\n", start, resolved,
	    (now - st->since_ms) / 1000);
}

/*
 * Rounds until a signal or a closed output, each after a commit woke
 * the follower (perc_log_wait), or its fallback poll.  SIGINT and
 * SIGTERM stay blocked but while it sleeps, so one that comes after
 * the look for stopping still ends the sleep at once.
 */
static int
follow(perc_log *lg, struct printer *p, perc_ts *resolved)
{
	struct stuck st = { 0, 0, 0, 0 };
	perc_ts r, shown = *resolved;
	int64_t shown_ms = cmd_now_ms(), poll_ms = perc_log_poll_ms();
	sigset_t asleep;
	int rc = 0;

	st.say_ms = perc_log_stuck_ms();
	while (!stop && !p->closed) {
		p->last = 0;
		if ((rc = perc_log_round(lg, &r, print_change, p)) < 0)
			break;
		if (p->closed)
			break;
		if (r > shown && (p->last != 0 ||
		    cmd_now_ms() - shown_ms >= RESOLVED_EVERY_MS)) {
			if (print_resolved(p, r) < 0) {
				rc = PERC_EIO;
				break;
			}
			shown = r;
			shown_ms = cmd_now_ms();
		}
		*resolved = r;
		say_stuck(&st, lg, r);
		cmd_block_stop_signals(&asleep);
		if (!stop)
			perc_log_wait(lg, poll_ms, &asleep);
		sigprocmask(SIG_SETMASK, &asleep, NULL);
	}
	if (rc > 0)
		rc = 0;
	return rc;
}

int
cmd_log(int argc, char **argv, struct perc_ctx *ctx)
{
	static const struct option longopts[] = {
		CMD_COMMON_LONGOPTS,
		CMD_JSON_LONGOPT,
		{ "since",  required_argument, NULL, OPT_SINCE },
		{ "follow", no_argument,       NULL, 'f' },
		{ "prefix", required_argument, NULL, OPT_PREFIX },
		{ "column", required_argument, NULL, OPT_COLUMN },
		{ NULL, 0, NULL, 0 }
	};
	perc_bytes prefix = { "", 0 }, column = { NULL, 0 };
	const char *since = NULL;
	struct printer p = { 0, 0 };
	perc_log *lg = NULL;
	perc_ts ts = 0, r = 0;
	int ch, rc, following = 0;

	while ((ch = getopt_long(argc, argv, CMD_COMMON_SHORTOPTS "f",
	    longopts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			ctx->dir = optarg;
			break;
		case CMD_OPT_JSON:
			cmd_json = 1;
			break;
		case 'h':
			return cmd_help_text(usage);
		case 'f':
			following = 1;
			break;
		case OPT_SINCE:
			since = optarg;
			break;
		case OPT_PREFIX:
			prefix = (perc_bytes){ optarg, strlen(optarg) };
			break;
		case OPT_COLUMN:
			column = (perc_bytes){ optarg, strlen(optarg) };
			break;
		default:
			return cmd_bad_option(usage, ch, argv);
		}
	}
	if (optind != argc)
		return cmd_usage_error(usage, "unexpected argument '%s'",
		    argv[optind]);
	/* 0: from the start of history, as long as gc has kept it all. */
	if (since && strcmp(since, "0") != 0 && cmd_parse_ts(&ts, since) < 0)
		return cmd_usage_error(usage, "--since takes a timestamp "
		    "(from perc ts, a commit or a resolved line), not '%s'",
		    since);
	signal(SIGPIPE, SIG_IGN);
	if ((rc = cmd_open_db(ctx)) < 0 ||
	    (rc = perc_log_open(&lg, ctx->db, since != NULL, ts, prefix,
	    column.data != NULL ? &column : NULL)) < 0)
		goto done;
	if (following) {
		signal(SIGINT, on_stop);
		signal(SIGTERM, on_stop);
	}
	if ((rc = perc_log_round(lg, &r, print_change, &p)) < 0 || p.closed)
		goto done;
	if (print_resolved(&p, r) < 0) {
		rc = PERC_EIO;
		goto done;
	}
	if (following && !p.closed && (rc = follow(lg, &p, &r)) == 0 &&
	    !p.closed)
		print_resolved(&p, r);
done:
	perc_log_free(lg);
	if (p.closed)
		return 0;
	return rc < 0 ? cmd_fail(rc) : 0;
}

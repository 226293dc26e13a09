/* cmd/resolve-locks.c - perc resolve-locks: clean up abandoned locks */
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "cmd.h"

static const char usage[] =
    "usage: perc resolve-locks [--dry-run] [--all] [--older-than"
    " SECONDS] [--json]\n"
    "    --dry-run            change nothing; print the action for each lock\n"
    "    --all                every lock, even one whose owner is alive\n"
    "    --older-than SECONDS only locks written more than SECONDS ago\n"
    CMD_JSON_HELP;

enum { OPT_DRY_RUN = 256, OPT_ALL, OPT_OLDER_THAN };

/* Each lock a line; on a terminal, the count on stderr when stdout is not. */
static int
print_lock(const perc_resolved *lock, void *arg)
{
	struct cmd_progress *progress = arg;
	const struct out_field f[] = { OUT_B("row", lock->row),
	    OUT_B("column", lock->column), OUT_TS_("start_ts", lock->start_ts),
	    OUT_W("action", lock->action) };
	int rc = cmd_out_row(f, 4);

	cmd_progress_tick(progress, progress->n + 1);
	return rc;
}

int
cmd_resolve_locks(int argc, char **argv, struct perc_ctx *ctx)
{
	static const struct option longopts[] = {
		CMD_COMMON_LONGOPTS,
		CMD_JSON_LONGOPT,
		{ "dry-run",    no_argument,       NULL, OPT_DRY_RUN },
		{ "all",        no_argument,       NULL, OPT_ALL },
		{ "older-than", required_argument, NULL, OPT_OLDER_THAN },
		{ NULL, 0, NULL, 0 }
	};
	int64_t older_than_ms = 0;
	unsigned flags = 0;
	struct cmd_progress progress;
	int ch, rc;

	while ((ch = getopt_long(argc, argv, CMD_COMMON_SHORTOPTS, longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'd':
			ctx->dir = optarg;
			break;
		case CMD_OPT_JSON:
			cmd_json = 1;
			break;
		case 'h':
			return cmd_help_text(usage);
		case OPT_DRY_RUN:
			flags |= PERC_RESOLVE_DRY_RUN;
			break;
		case OPT_ALL:
			flags |= PERC_RESOLVE_ALL;
			break;
		case OPT_OLDER_THAN:
			if (cmd_parse_seconds(&older_than_ms, optarg) < 0)
				return cmd_usage_error(usage, "--older-than "
				    "takes seconds, not '%s'", optarg);
			break;
		default:
			return cmd_bad_option(usage, ch, argv);
		}
	}
	if (optind != argc)
		return cmd_usage_error(usage, "unexpected argument '%s'",
		    argv[optind]);
	cmd_progress_start(&progress, "perc resolve-locks", "locks met");
	progress.on = progress.on && !isatty(STDOUT_FILENO);
	if ((rc = cmd_open_db(ctx)) == 0)
		rc = perc_resolve_locks(ctx->db, flags, older_than_ms,
		    print_lock, &progress);
	cmd_progress_done(&progress);
	return rc < 0 ? cmd_fail(rc) : 0;
}

/*
 * cmd/wait.c - perc wait: wait until the observers are done, the
 * chains they start included (lib/wait.c)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

static const char usage[] =
    "usage: perc wait [--timeout SECONDS] [--column C]...\n"
    "    --timeout SECONDS    give up after SECONDS (exit 4)\n"
    "    --column C           only the dirty cells of column C "
    "(repeatable)\n";

enum { OPT_TIMEOUT = 256, OPT_COLUMN };

int
cmd_wait(int argc, char **argv, struct perc_ctx *ctx)
{
	static const struct option longopts[] = {
		CMD_COMMON_LONGOPTS,
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "column",  required_argument, NULL, OPT_COLUMN },
		{ NULL, 0, NULL, 0 }
	};
	struct cmd_progress progress;
	perc_bytes *cols;
	int64_t timeout_ms = -1;
	uint64_t dirty;
	size_t ncols = 0;
	int ch, rc;

	/* At most one column an argument. */
	if ((cols = calloc((size_t)argc, sizeof(*cols))) == NULL)
		return cmd_out_of_memory();
	while ((ch = getopt_long(argc, argv, CMD_COMMON_SHORTOPTS, longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'd':
			ctx->dir = optarg;
			break;
		case 'h':
			free(cols);
			return cmd_help_text(usage);
		case OPT_TIMEOUT:
			if (cmd_parse_seconds(&timeout_ms, optarg) < 0) {
				free(cols);
				return cmd_usage_error(usage, "--timeout takes "
				    "a number of seconds, not '%s'", optarg);
			}
			break;
		case OPT_COLUMN:
			cols[ncols].data = optarg;
			cols[ncols++].len = strlen(optarg);
			break;
		default:
			free(cols);
			return cmd_bad_option(usage, ch, argv);
		}
	}
	if (optind != argc) {
		free(cols);
		return cmd_usage_error(usage, "unexpected argument '%s'",
		    argv[optind]);
	}
	/* What it waits for, on a terminal, as git shows progress. */
	cmd_progress_start(&progress, "perc wait", "dirty cells left");
	if ((rc = cmd_open_db(ctx)) == 0) {
		perc_db_progress(ctx->db, cmd_progress_heard, &progress);
		rc = perc_wait(&dirty, ctx->db, cols, ncols, timeout_ms);
	}
	cmd_progress_done(&progress);
	free(cols);
	return rc < 0 ? cmd_fail(rc) : 0;
}

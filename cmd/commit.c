/* cmd/commit.c - perc commit: two-phase commit, print the commit time */
#include <inttypes.h>
#include <stdio.h>

#include "cmd.h"

static const char usage[] =
    "usage: perc commit -t TXN\n"
    "    -t, --txn TXN        the transaction to commit (from perc begin)\n";

int
cmd_commit(int argc, char **argv, struct perc_ctx *ctx)
{
	static const struct option longopts[] = {
		CMD_COMMON_LONGOPTS,
		{ "txn", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 }
	};
	const char *handle = NULL;
	perc_txn *txn = NULL;
	perc_ts commit_ts = 0;
	struct cmd_progress progress;
	int ch, rc;

	while ((ch = getopt_long(argc, argv, CMD_COMMON_SHORTOPTS "t:",
	    longopts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			ctx->dir = optarg;
			break;
		case 'h':
			return cmd_help_text(usage);
		case 't':
			handle = optarg;
			break;
		default:
			return cmd_bad_option(usage, ch, argv);
		}
	}
	if (handle == NULL && optind == argc - 1)
		return cmd_usage_error(usage, "a handle goes after -t: "
		    "perc %s -t %s", "commit", argv[optind]);
	if (optind != argc)
		return cmd_usage_error(usage, "unexpected argument '%s'",
		    argv[optind]);
	if (handle == NULL)
		return cmd_usage_error(usage, "which transaction? "
		    "-t TXN names it");

	cmd_progress_start(&progress, "perc commit", "cells locked");
	if ((rc = cmd_open_db(ctx)) == 0 &&
	    (rc = perc_txn_open(&txn, ctx->db, handle)) == 0) {
		perc_db_progress(ctx->db, cmd_progress_heard, &progress);
		rc = perc_txn_commit(&commit_ts, txn);
		cmd_progress_done(&progress);
	}
	perc_txn_free(txn);
	if (rc < 0)
		return cmd_fail(rc);
	if (commit_ts != 0)
		printf("%" PRIu64 "\n", commit_ts);
	return 0;
}

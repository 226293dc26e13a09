/* cmd/begin.c - perc begin: start a transaction and print its handle */
#include <stdio.h>
#include <unistd.h>

#include "cmd.h"

static const char usage[] =
    "usage: perc begin";

int
cmd_begin(int argc, char **argv, struct perc_ctx *ctx)
{
	static const struct option longopts[] = {
		CMD_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	perc_txn *txn = NULL;
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
			return cmd_bad_option(usage, ch, argv);
		}
	}
	if (optind != argc)
		return cmd_usage_error(usage, "unexpected argument '%s'",
		    argv[optind]);

	/* The handle outlives us: it is the shell's that runs us. */
	if ((rc = cmd_open_db(ctx)) == 0)
		perc_db_begun_by(ctx->db, (long)getppid());
	if (rc == 0 && (rc = perc_txn_begin(&txn, ctx->db)) == 0)
		printf("%s\n", perc_txn_handle(txn));
	perc_txn_free(txn);
	return rc < 0 ? cmd_fail(rc) : 0;
}

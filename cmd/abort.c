/* cmd/abort.c - perc abort: discard a transaction, rolling back its locks */
#include "cmd.h"

static const char usage[] =
    "usage: perc abort -t TXN\n"
    "    -t, --txn TXN        the transaction to discard (from perc begin)\n";

int
cmd_abort(int argc, char **argv, struct perc_ctx *ctx)
{
	static const struct option longopts[] = {
		CMD_COMMON_LONGOPTS,
		{ "txn", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 }
	};
	const char *handle = NULL;
	perc_txn *txn = NULL;
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
		    "perc %s -t %s", "abort", argv[optind]);
	if (optind != argc)
		return cmd_usage_error(usage, "unexpected argument '%s'",
		    argv[optind]);
	if (handle == NULL)
		return cmd_usage_error(usage, "which transaction? "
		    "-t TXN names it");

	if ((rc = cmd_open_db(ctx)) == 0 &&
	    (rc = perc_txn_open(&txn, ctx->db, handle)) == 0)
		rc = perc_txn_abort(txn);
	perc_txn_free(txn);
	return rc < 0 ? cmd_fail(rc) : 0;
}

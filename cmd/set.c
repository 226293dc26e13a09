/* cmd/set.c - perc set: write a cell, buffered or as its own transaction */
#include "cmd.h"

static const char usage[] =
    "usage: perc set [-e] [-t TXN] ROW COLUMN [VALUE] [ROW"
    " COLUMN VALUE]...\n"
    "    -e, --escaped        ROW and COLUMN in the escaped form scan prints\n"
    "    -t, --txn TXN        buffer it in TXN (else: commit it alone)\n";

int
cmd_set(int argc, char **argv, struct perc_ctx *ctx)
{
	static const struct option longopts[] = {
		CMD_COMMON_LONGOPTS,
		{ "escaped", no_argument,       NULL, 'e' },
		{ "txn",     required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 }
	};
	perc_buf rowbuf = PERC_BUF_INIT, colbuf = PERC_BUF_INIT,
	    valbuf = PERC_BUF_INIT;
	perc_bytes row, col, val;
	const char *handle = NULL;
	perc_txn *txn = NULL;
	perc_ts ts;
	int ch, i, rc = 0, escaped = 0;

	while ((ch = getopt_long(argc, argv, CMD_COMMON_SHORTOPTS "et:",
	    longopts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			ctx->dir = optarg;
			break;
		case 'h':
			return cmd_help_text(usage);
		case 'e':
			escaped = 1;
			break;
		case 't':
			handle = optarg;
			break;
		default:
			return cmd_bad_option(usage, ch, argv);
		}
	}
	if (cmd_check_operands(usage, argc, argv, 3) != 0)
		return 2;
	argc -= optind;
	argv += optind;
	/* One cell (VALUE from stdin when left out), or -t and triples. */
	if (argc < 2)
		return cmd_usage_error(usage, "a cell is a ROW and a COLUMN; "
		    "%d given", argc);
	if (argc > 3 && argc % 3 != 0)
		return cmd_usage_error(usage, "%d arguments: several cells "
		    "are ROW COLUMN VALUE triples (options go before them)",
		    argc);
	if (argc > 3 && handle == NULL)
		return cmd_usage_error(usage, "several cells need a "
		    "transaction: perc begin, then set -t TXN");
	if (argc == 2) {
		cmd_stdin_hint("the value");
		if (cmd_read_stdin(&valbuf) < 0) {
			perc_buf_dispose(&valbuf);
			return 7;       /* cmd_read_stdin said why */
		}
		val.data = valbuf.data ? valbuf.data : "";
		val.len = valbuf.len;
	}
	if ((rc = cmd_open_db(ctx)) < 0 || (handle &&
	    (rc = perc_txn_open(&txn, ctx->db, handle)) < 0))
		goto done;
	for (i = 0; i + 1 < argc && rc == 0; i += 3) {
		if ((rc = cmd_arg(&row, &rowbuf, argv[i], escaped)) < 0 ||
		    (rc = cmd_arg(&col, &colbuf, argv[i + 1], escaped)) < 0)
			break;
		/* VALUE is taken as it is, even with -e: stdin carries bytes. */
		if (argc > 2)
			cmd_arg(&val, &valbuf, argv[i + 2], 0);
		if (txn == NULL)
			rc = perc_set(&ts, ctx->db, row, col, val);
		else
			rc = perc_txn_set(txn, row, col, val);
	}
done:
	perc_txn_free(txn);
	perc_buf_dispose(&rowbuf);
	perc_buf_dispose(&colbuf);
	perc_buf_dispose(&valbuf);
	return rc < 0 ? cmd_fail(rc) : 0;
}

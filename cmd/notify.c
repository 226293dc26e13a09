/* cmd/notify.c - perc notify: a weak notification, buffered or alone */
#include "cmd.h"

static const char usage[] =
    "usage: perc notify [-e] [-t TXN] ROW COLUMN\n"
    "    -e, --escaped        ROW and COLUMN in the escaped form scan prints\n"
    "    -t, --txn TXN        write it with TXN's commit (else: commit it "
    "alone)\n";

int
cmd_notify(int argc, char **argv, struct perc_ctx *ctx)
{
	static const struct option longopts[] = {
		CMD_COMMON_LONGOPTS,
		{ "escaped", no_argument,       NULL, 'e' },
		{ "txn",     required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 }
	};
	perc_buf rowbuf = PERC_BUF_INIT, colbuf = PERC_BUF_INIT;
	perc_bytes row, col;
	const char *handle = NULL;
	perc_txn *txn = NULL;
	perc_ts ts;
	int ch, rc, escaped = 0;

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
	if (cmd_check_operands(usage, argc, argv, 0) != 0)
		return 2;
	argc -= optind;
	argv += optind;
	if (argc != 2)
		return cmd_usage_error(usage, argc < 2 ? "a cell is a ROW "
		    "and a COLUMN; %d given" : "%d arguments where a cell is "
		    "a ROW and a COLUMN (options go before them)", argc);
	if ((rc = cmd_arg(&row, &rowbuf, argv[0], escaped)) < 0 ||
	    (rc = cmd_arg(&col, &colbuf, argv[1], escaped)) < 0 ||
	    (rc = cmd_open_db(ctx)) < 0)
		goto done;
	if (handle == NULL)
		rc = perc_weak_notify(&ts, ctx->db, row, col);
	else if ((rc = perc_txn_open(&txn, ctx->db, handle)) == 0)
		rc = perc_txn_notify(txn, row, col);
done:
	perc_txn_free(txn);
	perc_buf_dispose(&rowbuf);
	perc_buf_dispose(&colbuf);
	return rc < 0 ? cmd_fail(rc) : 0;
}

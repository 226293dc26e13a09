/* cmd/set.c - perc set: write a cell, buffered or as its own transaction */
#include "cmd.h"

static const char usage[] =
    "usage: perc set [-e] [-t TXN] ROW COLUMN [VALUE]";

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
			return cmd_usage(usage);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc != 2 && argc != 3)
		return cmd_usage(usage);
	if ((rc = cmd_arg(&row, &rowbuf, argv[0], escaped)) < 0 ||
	    (rc = cmd_arg(&col, &colbuf, argv[1], escaped)) < 0)
		goto done;
	if (argc == 3) {
		/* VALUE is taken as it is, even with -e: stdin carries bytes. */
		cmd_arg(&val, &valbuf, argv[2], 0);
	} else {
		if (cmd_read_stdin(&valbuf) < 0) {
			rc = -PERC_EIO;
			goto done;
		}
		val.data = valbuf.data ? valbuf.data : "";
		val.len = valbuf.len;
	}
	if ((rc = cmd_open_db(ctx)) < 0)
		goto done;
	if (handle == NULL)
		rc = perc_set(&ts, ctx->db, row, col, val);
	else if ((rc = perc_txn_open(&txn, ctx->db, handle)) == 0)
		rc = perc_txn_set(txn, row, col, val);
done:
	perc_txn_free(txn);
	perc_buf_dispose(&rowbuf);
	perc_buf_dispose(&colbuf);
	perc_buf_dispose(&valbuf);
	if (rc == -PERC_EIO)
		return 7;               /* cmd_read_stdin said why */
	return rc < 0 ? cmd_fail(rc) : 0;
}

/* cmd/get.c - perc get: print one cell's value, byte for byte */
#include <stdio.h>

#include "cmd.h"

static const char usage[] =
    "usage: perc get [-e] [-t TXN | --at TS] [--lock] [--json] ROW COLUMN "
    "[ROW COLUMN]...\n"
    "    -e, --escaped        ROW and COLUMN in the escaped form scan prints\n"
    "    -t, --txn TXN        the snapshot of TXN, with its buffered writes\n"
    "    --at TS              the snapshot at timestamp TS\n"
    "    --lock               lock the cell at commit (with -t), as a write\n"
    CMD_JSON_HELP;

enum { OPT_AT = 256, OPT_LOCK };       /* long-only options */

/*
 * With several cells, or --json, each value is one line, escaped as in
 * TSV output, and a cell with no value is the line \N, which escaping
 * never makes (null in JSON).
 */
static void
print_line(const perc_buf *val)
{
	perc_bytes v = { NULL, 0 };
	struct out_field f = OUT_NULL("value");

	if (val != NULL) {
		v.data = val->data;
		v.len = val->len;
		f = (struct out_field)OUT_B("value", v);
	}
	cmd_out_row(&f, 1);
}

int
cmd_get(int argc, char **argv, struct perc_ctx *ctx)
{
	static const struct option longopts[] = {
		CMD_COMMON_LONGOPTS,
		CMD_JSON_LONGOPT,
		{ "escaped", no_argument,      NULL, 'e' },
		{ "txn",  required_argument, NULL, 't' },
		{ "at",   required_argument, NULL, OPT_AT },
		{ "lock", no_argument,       NULL, OPT_LOCK },
		{ NULL, 0, NULL, 0 }
	};
	perc_buf val = PERC_BUF_INIT, rowbuf = PERC_BUF_INIT,
	    colbuf = PERC_BUF_INIT;
	perc_bytes row, col;
	perc_txn *txn = NULL;
	const char *handle = NULL, *at = NULL;
	perc_ts ts = 0;
	unsigned flags = 0;
	int ch, i, rc = 0, escaped = 0, missing = 0;

	while ((ch = getopt_long(argc, argv, CMD_COMMON_SHORTOPTS "et:",
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
		case 'e':
			escaped = 1;
			break;
		case 't':
			handle = optarg;
			break;
		case OPT_AT:
			at = optarg;
			break;
		case OPT_LOCK:
			flags |= PERC_GET_LOCK;
			break;
		default:
			return cmd_bad_option(usage, ch, argv);
		}
	}
	if (cmd_check_operands(usage, argc, argv, 0) != 0)
		return 2;
	argc -= optind;
	argv += optind;
	if (argc < 2 || argc % 2 != 0)
		return cmd_usage_error(usage, "%d arguments: a cell is a ROW "
		    "and a COLUMN, several cells are pairs", argc);
	if (handle && at)
		return cmd_usage_error(usage, "-t and --at both name a "
		    "snapshot; give one");
	if (flags && !handle)
		return cmd_usage_error(usage, "--lock locks the cell at a "
		    "transaction's commit: give -t TXN");
	if (at && cmd_parse_ts(&ts, at) < 0)
		return cmd_usage_error(usage, "--at takes a timestamp (from "
		    "perc ts or a commit), not '%s'", at);
	if ((rc = cmd_open_db(ctx)) < 0 || (handle &&
	    (rc = perc_txn_open(&txn, ctx->db, handle)) < 0))
		goto done;
	/* Several cells: one snapshot, gc held off it, the store opened
	   once. */
	if (argc > 2 && ((!handle && !at && (rc = perc_snapshot_begin(&txn,
	    &ts, ctx->db)) < 0) || (rc = perc_db_hold(ctx->db)) < 0))
		goto done;
	for (i = 0; i < argc; i += 2) {
		if ((rc = cmd_arg(&row, &rowbuf, argv[i], escaped)) < 0 ||
		    (rc = cmd_arg(&col, &colbuf, argv[i + 1], escaped)) < 0)
			break;
		if (txn == NULL)
			rc = perc_snapshot_get(&val, ctx->db, ts, row, col);
		else
			rc = perc_txn_get(&val, txn, row, col, flags);
		if (rc < 0 && rc != PERC_ENOTFOUND)
			break;
		missing |= rc == PERC_ENOTFOUND;
		if (argc == 2 && !cmd_json && rc == 0 && cmd_people) {
			/* At a prompt: a line, escaped unless printable. */
			cmd_print_field((perc_bytes){ val.data, val.len });
			putchar('\n');
		} else if (argc == 2 && !cmd_json && rc == 0 && val.len > 0)
			fwrite(val.data, 1, val.len, stdout);
		else if (argc > 2 || cmd_json)
			print_line(rc == 0 ? &val : NULL);
		rc = 0;
	}
done:
	perc_buf_dispose(&val);
	perc_buf_dispose(&rowbuf);
	perc_buf_dispose(&colbuf);
	perc_txn_free(txn);
	if (rc < 0)
		return cmd_fail(rc);
	return missing;                 /* 1, not an error: no value */
}

/* cmd/scan.c - perc scan: list the visible cells as escaped TSV */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"

static const char usage[] =
    "usage: perc scan [-t TXN | --at TS] [--prefix P] [--column C] [--json]\n"
    "    -t, --txn TXN        the snapshot of TXN, with its buffered writes\n"
    "    --at TS              the snapshot at timestamp TS\n"
    "    --prefix P           only rows that begin with P\n"
    "    --column C           only column C\n"
    CMD_JSON_HELP;

enum { OPT_AT = 256, OPT_PREFIX, OPT_COLUMN };

int
cmd_scan(int argc, char **argv, struct perc_ctx *ctx)
{
	static const struct option longopts[] = {
		CMD_COMMON_LONGOPTS,
		CMD_JSON_LONGOPT,
		{ "txn",    required_argument, NULL, 't' },
		{ "at",     required_argument, NULL, OPT_AT },
		{ "prefix", required_argument, NULL, OPT_PREFIX },
		{ "column", required_argument, NULL, OPT_COLUMN },
		{ NULL, 0, NULL, 0 }
	};
	perc_scan_options opts = PERC_SCAN_OPTIONS_INIT;
	const char *handle = NULL, *at = NULL;
	perc_bytes row, col, val;
	perc_txn *txn = NULL;
	perc_iter *it = NULL;
	struct cmd_progress progress, cleaning;
	uint64_t n = 0;
	int ch, rc;

	while ((ch = getopt_long(argc, argv, CMD_COMMON_SHORTOPTS "t:",
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
		case 't':
			handle = optarg;
			break;
		case OPT_AT:
			at = optarg;
			break;
		case OPT_PREFIX:
			opts.prefix.data = optarg;
			opts.prefix.len = strlen(optarg);
			break;
		case OPT_COLUMN:
			opts.column.data = optarg;
			opts.column.len = strlen(optarg);
			break;
		default:
			return cmd_bad_option(usage, ch, argv);
		}
	}
	if (optind != argc)
		return cmd_usage_error(usage, "unexpected argument '%s'",
		    argv[optind]);
	if (handle && at)
		return cmd_usage_error(usage, "-t and --at both name a "
		    "snapshot; give one");
	if (at && cmd_parse_ts(&opts.at, at) < 0)
		return cmd_usage_error(usage, "--at takes a timestamp "
		    "(from perc ts or a commit), not '%s'", at);
	/*
	 * A dead transaction's locks that the scan cleans on its way, a
	 * line of their own, ended before the next cell comes out.
	 */
	cmd_progress_start(&cleaning, "perc scan", "locks cleaned");
	if ((rc = cmd_open_db(ctx)) < 0 || (handle &&
	    (rc = perc_txn_open(&txn, ctx->db, handle)) < 0))
		goto done;
	perc_db_progress(ctx->db, cmd_progress_heard, &cleaning);
	if ((rc = perc_iter_scan(&it, ctx->db, txn, &opts)) < 0)
		goto done;
	/* The cells are the progress when they go to the terminal too. */
	cmd_progress_start(&progress, "perc scan", "cells");
	progress.on = progress.on && !isatty(STDOUT_FILENO);
	while ((rc = perc_iter_next(&row, &col, &val, it)) == 0) {
		if (cleaning.width > 0) {
			cmd_progress_done(&cleaning);
			cleaning.width = 0;
		}
		cmd_print_cell(row, col, val);
		if ((++n & 1023) == 0)
			cmd_progress_tick(&progress, n);
	}
	progress.n = n;
	cmd_progress_done(&progress);
	if (rc == PERC_ITEROVER)
		rc = 0;
done:
	cmd_progress_done(&cleaning);
	perc_iter_free(it);
	perc_txn_free(txn);
	return rc < 0 ? cmd_fail(rc) : 0;
}

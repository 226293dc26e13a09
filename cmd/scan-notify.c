/* cmd/scan-notify.c - perc scan-notify: list the dirty observed cells */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"

static const char usage[] =
    "usage: perc scan-notify [--failures] [--column C] [--json]\n"
    "    --column C           only the dirty cells of column C\n"
    "    --failures           also how often each cell's observer failed\n"
    CMD_JSON_HELP;

enum { OPT_COLUMN = 256, OPT_FAILURES };

static int
print_cell(const perc_notify *n, void *arg)
{
	const int *failures = arg;
	const struct out_field f[] = { OUT_B("row", n->row),
	    OUT_B("column", n->column), OUT_N("failures", n->failures) };

	return cmd_out_row(f, *failures ? 3 : 2);
}

int
cmd_scan_notify(int argc, char **argv, struct perc_ctx *ctx)
{
	static const struct option longopts[] = {
		CMD_COMMON_LONGOPTS,
		CMD_JSON_LONGOPT,
		{ "column",   required_argument, NULL, OPT_COLUMN },
		{ "failures", no_argument,       NULL, OPT_FAILURES },
		{ NULL, 0, NULL, 0 }
	};
	perc_bytes column = { NULL, 0 };
	int ch, rc, failures = 0;

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
		case OPT_COLUMN:
			column.data = optarg;
			column.len = strlen(optarg);
			break;
		case OPT_FAILURES:
			failures = 1;
			break;
		default:
			return cmd_bad_option(usage, ch, argv);
		}
	}
	if (optind != argc)
		return cmd_usage_error(usage, "unexpected argument '%s'",
		    argv[optind]);
	if ((rc = cmd_open_db(ctx)) == 0)
		rc = perc_notify_scan(ctx->db, column.data ? &column : NULL,
		    print_cell, &failures);
	return rc < 0 ? cmd_fail(rc) : 0;
}

/* cmd/show.c - perc show: every raw cell of a row, one line each */
#include <inttypes.h>
#include <stdio.h>

#include "cmd.h"

static const char usage[] =
    "usage: perc show [-e] [--json] ROW [COLUMN]\n"
    "    -e, --escaped        ROW and COLUMN in the escaped form scan prints\n"
    CMD_JSON_HELP;

static int
print_cell(const perc_raw_cell *cell, void *arg)
{
	const struct out_field f[] = { OUT_B("column", cell->column),
	    OUT_W("kind", cell->kind), OUT_TS_("ts", cell->ts),
	    OUT_W("detail", cell->detail) };

	(void)arg;
	return cmd_out_row(f, 4);
}

int
cmd_show(int argc, char **argv, struct perc_ctx *ctx)
{
	static const struct option longopts[] = {
		CMD_COMMON_LONGOPTS,
		CMD_JSON_LONGOPT,
		{ "escaped", no_argument, NULL, 'e' },
		{ NULL, 0, NULL, 0 }
	};
	perc_buf rowbuf = PERC_BUF_INIT, colbuf = PERC_BUF_INIT;
	perc_bytes row, col;
	int ch, rc, escaped = 0;

	while ((ch = getopt_long(argc, argv, CMD_COMMON_SHORTOPTS "e",
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
		default:
			return cmd_bad_option(usage, ch, argv);
		}
	}
	if (cmd_check_operands(usage, argc, argv, 0) != 0)
		return 2;
	argc -= optind;
	argv += optind;
	if (argc != 1 && argc != 2)
		return cmd_usage_error(usage, "%d arguments: show takes a ROW "
		    "and maybe a COLUMN", argc);
	if ((rc = cmd_arg(&row, &rowbuf, argv[0], escaped)) == 0 &&
	    (argc == 1 || (rc = cmd_arg(&col, &colbuf, argv[1],
	    escaped)) == 0) && (rc = cmd_open_db(ctx)) == 0)
		rc = perc_show(ctx->db, row, argc == 2 ? &col : NULL,
		    print_cell, NULL);
	perc_buf_dispose(&rowbuf);
	perc_buf_dispose(&colbuf);
	return rc < 0 ? cmd_fail(rc) : 0;
}

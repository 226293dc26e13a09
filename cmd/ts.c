/* cmd/ts.c - perc ts: print fresh timestamps from the oracle */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"

static const char usage[] =
    "usage: perc ts [-n COUNT]\n"
    "    -n COUNT             print COUNT timestamps (default 1)\n";

/* Print count consecutive timestamps from first, fast: ts -n 1000000. */
static void
print_range(perc_ts first, perc_ts count)
{
	perc_ts t;

	for (t = first; t < first + count; t++)
		printf("%" PRIu64 "\n", t);
}

int
cmd_ts(int argc, char **argv, struct perc_ctx *ctx)
{
	static const struct option longopts[] = {
		CMD_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	perc_ts count = 1, first;
	int ch, rc;

	while ((ch = getopt_long(argc, argv, CMD_COMMON_SHORTOPTS "n:",
	    longopts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			ctx->dir = optarg;
			break;
		case 'h':
			return cmd_help_text(usage);
		case 'n':
			if (cmd_parse_ts(&count, optarg) < 0 ||
			    count > ((perc_ts)1 << 40))
				return cmd_usage_error(usage, "-n takes a "
				    "count from 1 to 2^40, not '%s'", optarg);
			break;
		default:
			return cmd_bad_option(usage, ch, argv);
		}
	}
	if (optind != argc)
		return cmd_usage_error(usage, "unexpected argument '%s'",
		    argv[optind]);
	if ((rc = cmd_open_db(ctx)) < 0 ||
	    (rc = perc_ts_next(&first, ctx->db, count)) < 0)
		return cmd_fail(rc);
	print_range(first, count);
	return 0;
}

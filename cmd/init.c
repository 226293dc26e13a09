/* cmd/init.c - perc init: create a data directory, add observed columns */
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

static const char usage[] =
    "usage: perc init [--store URL] [--observe COLUMN]... "
    "[--observe-weak COLUMN]... [DIR]\n"
    "    --store URL          keep the cells in the Redis Cluster at URL\n"
    "    --observe COLUMN     run-observer then runs on its changes\n"
    "    --observe-weak COLUMN  run-observer runs on its perc notify\n";

enum { OPT_OBSERVE = 256, OPT_OBSERVE_WEAK, OPT_STORE };

int
cmd_init(int argc, char **argv, struct perc_ctx *ctx)
{
	static const struct option longopts[] = {
		CMD_COMMON_LONGOPTS,
		{ "observe", required_argument, NULL, OPT_OBSERVE },
		{ "observe-weak", required_argument, NULL, OPT_OBSERVE_WEAK },
		{ "store", required_argument, NULL, OPT_STORE },
		{ NULL, 0, NULL, 0 }
	};
	perc_bytes *observe, *weak;
	const char *store = NULL;
	size_t n = 0, nweak = 0;
	int ch, rc;

	/* Each list is never longer than the arguments: two halves. */
	if ((observe = calloc(2 * (size_t)argc, sizeof(*observe))) == NULL)
		return cmd_out_of_memory();
	weak = observe + argc;
	while ((ch = getopt_long(argc, argv, CMD_COMMON_SHORTOPTS, longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'd':
			ctx->dir = optarg;
			break;
		case 'h':
			free(observe);
			return cmd_help_text(usage);
		case OPT_STORE:
			store = optarg;
			break;
		case OPT_OBSERVE:
			observe[n].data = optarg;
			observe[n++].len = strlen(optarg);
			break;
		case OPT_OBSERVE_WEAK:
			weak[nweak].data = optarg;
			weak[nweak++].len = strlen(optarg);
			break;
		default:
			free(observe);
			return cmd_bad_option(usage, ch, argv);
		}
	}
	if (optind < argc - 1) {
		free(observe);
		return cmd_usage_error(usage, "one directory at a time, not "
		    "'%s' and '%s'", argv[optind], argv[optind + 1]);
	}
	if (optind == argc - 1)
		ctx->dir = argv[optind];
	rc = perc_db_init_observed(ctx->dir, store, observe, n, weak, nweak);
	free(observe);
	return rc < 0 ? cmd_fail(rc) : 0;
}

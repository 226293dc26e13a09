/* cmd/status.c - perc status: the state of a data directory */
#include <inttypes.h>
#include <stdio.h>

#include "cmd.h"

static const char usage[] =
    "usage: perc status [--transactions]\n"
    "    --transactions       list the open transactions instead\n";

enum { OPT_TRANSACTIONS = 256 };

static int
print_line(const char *key, const char *value, void *arg)
{
	(void)arg;
	printf("%s\t%s\n", key, value);
	return 0;
}

static int
print_txn(const perc_open_txn *t, void *arg)
{
	(void)arg;
	printf("%s\t%" PRIu64 "\t%" PRId64 "\t%s\t", t->handle, t->start_ts,
	    t->age_ms > 0 ? t->age_ms / 1000 : 0, t->alive ? "alive" : "gone");
	if (t->writes >= 0)
		printf("%" PRId64 "\n", t->writes);
	else
		printf("damaged\n");
	return 0;
}

int
cmd_status(int argc, char **argv, struct perc_ctx *ctx)
{
	static const struct option longopts[] = {
		CMD_COMMON_LONGOPTS,
		{ "transactions", no_argument, NULL, OPT_TRANSACTIONS },
		{ NULL, 0, NULL, 0 }
	};
	int ch, rc, transactions = 0;

	while ((ch = getopt_long(argc, argv, CMD_COMMON_SHORTOPTS, longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'd':
			ctx->dir = optarg;
			break;
		case 'h':
			return cmd_help_text(usage);
		case OPT_TRANSACTIONS:
			transactions = 1;
			break;
		default:
			return cmd_bad_option(usage, ch, argv);
		}
	}
	if (optind != argc)
		return cmd_usage_error(usage, "unexpected argument '%s'",
		    argv[optind]);
	if ((rc = cmd_open_db(ctx)) == 0)
		rc = transactions ? perc_status_transactions(ctx->db,
		    print_txn, NULL) : perc_status(ctx->db, print_line, NULL);
	return rc < 0 ? cmd_fail(rc) : 0;
}

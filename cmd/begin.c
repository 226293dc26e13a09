/* cmd/begin.c - perc begin: start a transaction and print its handle */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"

static const char usage[] =
    "usage: perc begin";

/*
 * A handle that could not be written names a transaction no one can
 * finish, which would hold gc back: it is aborted (a closed pipe is a
 * write error here, not the end of perc).
 */
static int
print_handle(perc_txn *txn)
{
	int saved;

	signal(SIGPIPE, SIG_IGN);
	if (printf("%s\n", perc_txn_handle(txn)) > 0 && fflush(stdout) == 0)
		return 0;
	saved = errno;
	fprintf(stderr, "perc: cannot write the handle to standard output: "
	    "%s; transaction %s was aborted\n", strerror(saved),
	    perc_txn_handle(txn));
	perc_txn_abort(txn);
	return -PERC_EIO;
}

int
cmd_begin(int argc, char **argv, struct perc_ctx *ctx)
{
	static const struct option longopts[] = {
		CMD_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	perc_txn *txn = NULL;
	int ch, rc;

	while ((ch = getopt_long(argc, argv, CMD_COMMON_SHORTOPTS, longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'd':
			ctx->dir = optarg;
			break;
		case 'h':
			return cmd_help_text(usage);
		default:
			return cmd_bad_option(usage, ch, argv);
		}
	}
	if (optind != argc)
		return cmd_usage_error(usage, "unexpected argument '%s'",
		    argv[optind]);

	/* The handle outlives us: it is the shell's that runs us. */
	if ((rc = cmd_open_db(ctx)) < 0)
		return cmd_fail(rc);
	perc_db_begun_by(ctx->db, (long)getppid());
	if ((rc = perc_txn_begin(&txn, ctx->db)) < 0)
		return cmd_fail(rc);
	rc = print_handle(txn);
	perc_txn_free(txn);
	return rc;
}

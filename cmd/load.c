/* cmd/load.c - perc load: write the cells of scan's output, in batches */
#include <inttypes.h>
#include <stdio.h>

#include "cmd.h"

static const char usage[] =
    "usage: perc load [--batch N]\n"
    "    --batch N            commit every N lines, printing each timestamp\n";

enum { OPT_BATCH = 256 };

/* Each commit's timestamp at once, so a later failure loses none. */
static int
committed(perc_ts ts, uint64_t last_line, void *arg)
{
	(void)last_line;
	(void)arg;
	printf("%" PRIu64 "\n", ts);
	if (fflush(stdout) != 0)
		return PERC_EIO;        /* perc.c says why */
	return 0;
}

/* The lines read, on a terminal (cmd_progress). */
static void
progress(uint64_t read, uint64_t done, void *arg)
{
	(void)done;
	cmd_progress_heard("lines read", read, arg);
}

int
cmd_load(int argc, char **argv, struct perc_ctx *ctx)
{
	static const struct option longopts[] = {
		CMD_COMMON_LONGOPTS,
		{ "batch", required_argument, NULL, OPT_BATCH },
		{ NULL, 0, NULL, 0 }
	};
	perc_load_options opts = PERC_LOAD_OPTIONS_INIT;
	struct cmd_progress shown;
	const char *batch = NULL;
	int ch, rc;

	while ((ch = getopt_long(argc, argv, CMD_COMMON_SHORTOPTS, longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'd':
			ctx->dir = optarg;
			break;
		case 'h':
			return cmd_help_text(usage);
		case OPT_BATCH:
			batch = optarg;
			break;
		default:
			return cmd_bad_option(usage, ch, argv);
		}
	}
	/* N as strict as a timestamp: decimal, no sign, not 0. */
	if (optind != argc)
		return cmd_usage_error(usage, "unexpected argument '%s' (load "
		    "reads its cells from standard input)", argv[optind]);
	if (batch && cmd_parse_ts(&opts.batch, batch) < 0)
		return cmd_usage_error(usage, "--batch takes a count of "
		    "lines, at least 1, not '%s'", batch);
	opts.committed = committed;
	opts.progress = progress;
	opts.arg = &shown;
	cmd_progress_start(&shown, "perc load", "lines read");
	if ((rc = cmd_open_db(ctx)) == 0) {
		/* A big commit's cells too, as perc commit shows them. */
		perc_db_progress(ctx->db, cmd_progress_heard, &shown);
		cmd_stdin_hint("cells, ROW<TAB>COLUMN<TAB>VALUE a line,");
		rc = perc_load(ctx->db, stdin, &opts);
		cmd_progress_done(&shown);
	}
	return rc < 0 ? cmd_fail(rc) : 0;
}

/*
 * cmd/serve.c - perc serve: run the data directory's store server in
 * the foreground, or ask after the running one, or stop it
 * (lib/server/, perc-serve(1))
 */
#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"

static const char usage[] =
    "usage: perc serve [--status | --stop] [--idle SECONDS]\n"
    "    --status             print the running server's process id "
    "(exit 1: none runs)\n"
    "    --stop               have the running server finish and exit, "
    "and wait until it has\n"
    "    --idle SECONDS       exit once no process has been served for "
    "SECONDS\n";

enum { OPT_STATUS = 256, OPT_STOP, OPT_IDLE };

int
cmd_serve(int argc, char **argv, struct perc_ctx *ctx)
{
	static const struct option longopts[] = {
		CMD_COMMON_LONGOPTS,
		{ "status", no_argument,       NULL, OPT_STATUS },
		{ "stop",   no_argument,       NULL, OPT_STOP },
		{ "idle",   required_argument, NULL, OPT_IDLE },
		{ NULL, 0, NULL, 0 }
	};
	int64_t idle_ms = 0;
	int ch, rc, status = 0, stop = 0;
	long pid;

	while ((ch = getopt_long(argc, argv, CMD_COMMON_SHORTOPTS, longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'd':
			ctx->dir = optarg;
			break;
		case 'h':
			return cmd_help_text(usage);
		case OPT_STATUS:
			status = 1;
			break;
		case OPT_STOP:
			stop = 1;
			break;
		case OPT_IDLE:
			if (cmd_parse_seconds(&idle_ms, optarg) < 0 ||
			    idle_ms < 1000)
				return cmd_usage_error(usage, "--idle takes a "
				    "number of seconds from 1, not '%s'",
				    optarg);
			break;
		default:
			return cmd_bad_option(usage, ch, argv);
		}
	}
	if (optind != argc)
		return cmd_usage_error(usage, "unexpected argument '%s'",
		    argv[optind]);
	if (status + stop > 1 || ((status || stop) && idle_ms > 0))
		return cmd_usage_error(usage, "--status, --stop and --idle "
		    "go one at a time");
	if (status) {
		if ((rc = perc_serve_pid(ctx->dir, &pid)) < 0)
			return cmd_fail(rc);
		if (rc == 0) {
			fprintf(stderr, "perc: no store server runs for '%s'; "
			    "'perc serve' runs one, and so does any command "
			    "that needs the store (unless PERC_SERVE=0)\n",
			    ctx->dir);
			return 1;
		}
		printf("%ld\n", pid);
		return 0;
	}
	if (stop)
		return (rc = perc_serve_stop(ctx->dir)) < 0 ? cmd_fail(rc) : 0;
	if ((rc = perc_serve(ctx->dir, (int)(idle_ms / 1000), &pid)) < 0)
		return cmd_fail(rc);
	if (rc == 1) {
		fprintf(stderr, "perc: a store server runs for '%s' already: "
		    "process %ld; 'perc serve --stop' stops it\n", ctx->dir,
		    pid);
		return 1;
	}
	return 0;
}

/* cmd/perc.c - the multi-call entry point: find the command, run it */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "describe.h"

/* Sorted by name; "perc help" prints it in this order. */
const struct cmd cmd_table[] = {
	{ "abort",         cmd_abort,         "discard a transaction",
	    "Discard transaction TXN and roll back any locks it already "
	    "wrote; prints nothing." },
	{ "begin",         cmd_begin,         "start a transaction",
	    "Start a transaction and print its handle, for the -t of the "
	    "commands that follow." },
	{ "commit",        cmd_commit,        "two-phase commit a transaction",
	    "Commit transaction TXN in two phases and print its commit "
	    "timestamp (nothing when it wrote nothing)." },
	{ "del",           cmd_del,           "delete a cell",
	    "Delete a cell, in TXN or in a transaction of its own; prints "
	    "nothing." },
	{ "gc",            cmd_gc,            "remove versions no snapshot reads",
	    "Remove the versions no snapshot can read any more; prints "
	    "SAFE_POINT<TAB>VERSIONS_REMOVED." },
	{ "get",           cmd_get,           "print one value",
	    "Print a cell's value as it is (several cells, or --json: a "
	    "line each, escaped); exit 1 when it has none." },
	{ "help",          cmd_help,          "show a command's manual",
	    "Show the manual page of a command or a topic; with none, list "
	    "the commands and topics." },
	{ "init",          cmd_init,          "create a data directory",
	    "Create a data directory, or join a table of a Redis store, and "
	    "name its observed columns." },
	{ "load",          cmd_load,          "write cells read from stdin",
	    "Write the cells read from standard input "
	    "(ROW<TAB>COLUMN<TAB>VALUE, escaped); prints each commit "
	    "timestamp." },
	{ "log",           cmd_log,           "print committed writes in commit order",
	    "Print committed writes in commit order, "
	    "COMMIT_TS<TAB>ROW<TAB>COLUMN<TAB>OP<TAB>VALUE a line." },
	{ "notify",        cmd_notify,        "weakly notify a cell",
	    "Weakly notify a cell of a weakly observed column, so that its "
	    "observer runs; prints nothing." },
	{ "resolve-locks", cmd_resolve_locks, "clean up abandoned locks",
	    "Roll the locks of gone owners forward or back; prints "
	    "ROW<TAB>COLUMN<TAB>START_TS<TAB>ACTION for each." },
	{ "run-observer",  cmd_run_observer,  "run a command per dirty cell",
	    "Run COMMAND in a transaction for each dirty cell of the "
	    "observed columns, until stopped or --once done." },
	{ "scan",          cmd_scan,          "list visible cells",
	    "Print the visible cells in byte order, "
	    "ROW<TAB>COLUMN<TAB>VALUE a line, escaped." },
	{ "scan-notify",   cmd_scan_notify,   "list dirty observed cells",
	    "Print the dirty cells of the observed columns, ROW<TAB>COLUMN "
	    "a line." },
	{ "serve",         cmd_serve,         "run the store server",
	    "Run the data directory's store server in the foreground, or "
	    "print the running one's process id, or stop it." },
	{ "set",           cmd_set,           "write a cell",
	    "Write a cell, in TXN or in a transaction of its own; a missing "
	    "VALUE is read from standard input; prints nothing." },
	{ "shell",         cmd_shell,         "run commands from stdin, one a line",
	    "Answer requests read from standard input, one a line (see "
	    "perc-shell(1)); on a terminal, a prompt for people." },
	{ "show",          cmd_show,          "dump the raw cells of a row",
	    "Print every raw record of a row, locks included, "
	    "COLUMN<TAB>KIND<TAB>TS<TAB>DETAIL a line." },
	{ "status",        cmd_status,        "show the state of the directory",
	    "Print the state of the data directory, KEY<TAB>VALUE a line, "
	    "or its open transactions." },
	{ "ts",            cmd_ts,            "print fresh timestamps",
	    "Print fresh timestamps from the oracle, one a line." },
	{ "wait",          cmd_wait,          "wait until the observers are done",
	    "Wait until no observed cell is dirty and no observer run is in "
	    "flight; prints nothing." },
};
const size_t cmd_count = sizeof(cmd_table) / sizeof(cmd_table[0]);

static const char usage[] = "usage: perc [-d DIR] COMMAND [ARG]...";

static const struct cmd *
find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < cmd_count; i++)
		if (strcmp(cmd_table[i].name, name) == 0)
			return &cmd_table[i];
	return NULL;
}

static int
run_cmd(const struct cmd *c, int argc, char **argv, struct perc_ctx *ctx)
{
	int rc, due;

	rc = c->fn(argc, argv, ctx);
	due = ctx->db != NULL && perc_gc_due(ctx->db);
	perc_db_close(ctx->db);
	if (due)
		cmd_gc_auto(ctx);

	/*
	 * A full disk or a closed pipe shows up here, not at printf(),
	 * unless the command said so itself.
	 */
	if ((fflush(stdout) != 0 || ferror(stdout)) && rc == 0) {
		fprintf(stderr, "perc: cannot write standard output\n");
		rc = -PERC_EIO;
	}
	return rc;
}

/*
 * A standard descriptor the caller closed would go to the first file
 * perc opens (a journal, the oracle), and what is printed would land
 * there: /dev/null holds it instead, read-only, so that a write to it
 * fails as one to a closed descriptor does.
 */
static void
hold_std_fds(void)
{
	int fd;

	while ((fd = open("/dev/null", O_RDONLY)) >= 0 && fd <= 2)
		;
	if (fd > 2)
		close(fd);
}

/* A mistyped command: name the nearest one, as git does. */
static int
unknown(const char *name)
{
	const char *names[64], *nearest;
	size_t i;

	for (i = 0; i < cmd_count && i < 64; i++)
		names[i] = cmd_table[i].name;
	if ((nearest = cmd_nearest(name, names, i)) != NULL)
		fprintf(stderr, "perc: '%s' is not a perc command; did you "
		    "mean '%s'? (see 'perc help')\n", name, nearest);
	else
		fprintf(stderr, "perc: '%s' is not a perc command; see "
		    "'perc help'\n", name);
	return 2;
}

/* perc --version: the version, then what built it and what it reads. */
static int
version(void)
{
	const char *name;
	int oldest, newest;
	size_t i;

	perc_formats(&oldest, &newest);
	printf("perc %s\nbuild %s\ndata formats %d to %d\nstores", PERC_VERSION,
	    PERC_DESCRIBE, oldest, newest);
	for (i = 0; (name = perc_store_name(i)) != NULL; i++)
		printf(" %s", name);
	printf("\n");
	return 0;
}

int
main(int argc, char **argv)
{
	struct perc_ctx ctx = { ".", NULL };
	const struct cmd *c;
	const char *base;

	hold_std_fds();
	if ((base = strrchr(argv[0], '/')) != NULL)
		base++;
	else
		base = argv[0];
	if (getenv("PERC_DIR") != NULL && *getenv("PERC_DIR") != '\0')
		ctx.dir = getenv("PERC_DIR");

	opterr = 0;             /* commands print their own one-line usage */

	/* Called through a link named perc-COMMAND: same as perc COMMAND. */
	if (strncmp(base, "perc-", 5) == 0) {
		if ((c = find_cmd(base + 5)) == NULL)
			return unknown(base + 5);
		return run_cmd(c, argc, argv, &ctx);
	}

	/* Options before the command name, parsed by hand as git.c does. */
	while (argc > 1 && argv[1][0] == '-') {
		if (strcmp(argv[1], "--version") == 0) {
			return version();
		} else if (strcmp(argv[1], "-h") == 0 ||
		    strcmp(argv[1], "--help") == 0) {
			return cmd_help(1, argv, &ctx);
		} else if (strcmp(argv[1], "-d") == 0 ||
		    strcmp(argv[1], "--dir") == 0) {
			if (argc < 3)
				return cmd_usage_error(usage, "'%s' needs a "
				    "directory", argv[1]);
			ctx.dir = argv[2];
			argc -= 2;
			argv += 2;
		} else if (strncmp(argv[1], "--dir=", 6) == 0) {
			ctx.dir = argv[1] + 6;
			argc--;
			argv++;
		} else if (strncmp(argv[1], "-d", 2) == 0) {   /* -dDIR */
			ctx.dir = argv[1] + 2;
			argc--;
			argv++;
		} else
			return cmd_usage_error(usage, "unknown option '%s'",
			    argv[1]);
	}
	if (argc < 2)
		return cmd_usage_error(usage, "which command? 'perc help' "
		    "lists them");
	if ((c = find_cmd(argv[1])) == NULL)
		return unknown(argv[1]);
	return run_cmd(c, argc - 1, argv + 1, &ctx);
}

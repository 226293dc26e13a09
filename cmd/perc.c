/* cmd/perc.c - the multi-call entry point: find the command, run it */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"

/* Sorted by name; "perc help" prints it in this order. */
const struct cmd cmd_table[] = {
	{ "abort",         cmd_abort,         "discard a transaction" },
	{ "begin",         cmd_begin,         "start a transaction" },
	{ "commit",        cmd_commit,        "two-phase commit a transaction" },
	{ "del",           cmd_del,           "delete a cell" },
	{ "gc",            cmd_gc,            "remove versions no snapshot reads" },
	{ "get",           cmd_get,           "print one value" },
	{ "help",          cmd_help,          "show a command's manual" },
	{ "init",          cmd_init,          "create a data directory" },
	{ "load",          cmd_load,          "write cells read from stdin" },
	{ "log",           cmd_log,           "print committed writes in commit order" },
	{ "notify",        cmd_notify,        "weakly notify a cell" },
	{ "resolve-locks", cmd_resolve_locks, "clean up abandoned locks" },
	{ "run-observer",  cmd_run_observer,  "run a command per dirty cell" },
	{ "scan",          cmd_scan,          "list visible cells" },
	{ "scan-notify",   cmd_scan_notify,   "list dirty observed cells" },
	{ "set",           cmd_set,           "write a cell" },
	{ "shell",         cmd_shell,         "run commands from stdin, one a line" },
	{ "show",          cmd_show,          "dump the raw cells of a row" },
	{ "status",        cmd_status,        "show the state of the directory" },
	{ "ts",            cmd_ts,            "print fresh timestamps" },
	{ "wait",          cmd_wait,          "wait until the observers are done" },
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
 * Edits (insert, delete, substitute, swap two neighbours) from a to b,
 * the restricted Damerau-Levenshtein distance, for "did you mean".
 */
static size_t
edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, d[32][32];

	if (la >= 32 || lb >= 32)
		return (size_t)-1;
	for (i = 0; i <= la; i++)
		d[i][0] = i;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++)
		for (j = 1; j <= lb; j++) {
			size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[la][lb];
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
	size_t i, dist, best = (size_t)-1;
	const char *nearest = NULL;

	for (i = 0; i < cmd_count; i++)
		if ((dist = edit_distance(name, cmd_table[i].name)) < best) {
			best = dist;
			nearest = cmd_table[i].name;
		}
	if (nearest != NULL && best <= 2 && best < strlen(name))
		fprintf(stderr, "perc: '%s' is not a perc command; did you "
		    "mean '%s'? (see 'perc help')\n", name, nearest);
	else
		fprintf(stderr, "perc: '%s' is not a perc command; see "
		    "'perc help'\n", name);
	return 2;
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
			printf("perc %s\n", PERC_VERSION);
			return 0;
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

/*
 * tests/fuzz/fuzz_cli.c - libFuzzer target: the command line.  The
 * input, split at NUL bytes, becomes the arguments of one perc command
 * (chosen by the first byte among those that only touch the data
 * directory) run against a scratch data directory.  Whatever the
 * arguments, the command must return an exit status from SPEC.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"

static char dir[64];

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	strcpy(dir, "/tmp/perc-fuzz-cli.XXXXXX");
	if (mkdtemp(dir) == NULL || perc_db_init(dir, NULL, 0) != 0 ||
	    freopen("/dev/null", "r", stdin) == NULL ||
	    freopen("/dev/null", "w", stdout) == NULL)
		abort();
	setenv("PERC_LOCK_TIMEOUT", "0.1", 1);
	/* the commands run in this process, which opens the store itself,
	   rather than fork a store server from the fuzzer */
	setenv("PERC_SERVE", "0", 1);
	return 0;
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static const struct { const char *name; int (*fn)(int, char **,
	    struct perc_ctx *); } cmds[] = {
		{ "abort", cmd_abort }, { "begin", cmd_begin },
		{ "commit", cmd_commit }, { "del", cmd_del },
		{ "get", cmd_get }, { "resolve-locks", cmd_resolve_locks },
		{ "scan", cmd_scan }, { "scan-notify", cmd_scan_notify },
		{ "set", cmd_set }, { "show", cmd_show }, { "ts", cmd_ts },
	};
	struct perc_ctx ctx = { dir, NULL };
	char *copy, *argv[18], *p, *end;
	int argc = 1, rc;

	if (size == 0)
		return 0;
	if ((copy = malloc(size)) == NULL)
		abort();
	memcpy(copy, data + 1, size - 1);
	copy[size - 1] = '\0';
	argv[0] = (char *)cmds[data[0] % (sizeof(cmds) / sizeof(cmds[0]))]
	    .name;
	for (p = copy, end = copy + size - 1; p < end && argc < 17;
	    p += strlen(p) + 1)
		argv[argc++] = p;
	argv[argc] = NULL;
	optind = 0;             /* GNU getopt: start afresh */
	opterr = 0;
	rc = cmds[data[0] % (sizeof(cmds) / sizeof(cmds[0]))].fn(argc, argv,
	    &ctx);
	perc_db_close(ctx.db);
	fflush(stdout);
	if (rc < 0 || rc > 7)
		abort();
	free(copy);
	return 0;
}

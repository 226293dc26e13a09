/* cmd/help.c - perc help: list the commands, or open one's manual */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"

#ifndef PERC_MANDIR
#define PERC_MANDIR "/usr/local/share/man"
#endif

static const char usage[] = "usage: perc help [COMMAND]";

static void
list_commands(void)
{
	size_t i;

	printf("usage: perc [-d DIR] COMMAND [ARG]...\n\ncommands:\n");
	for (i = 0; i < cmd_count; i++)
		printf("   %-14s %s\n", cmd_table[i].name,
		    cmd_table[i].summary);
	printf("\nSee 'perc help COMMAND' for the manual of one command.\n");
}

/*
 * Like git help: the installed page through man(1) with the compiled-in
 * MANDIR first on MANPATH, or, run from the build tree, the page beside
 * the binary through man -l.
 */
static int
show_page(const char *name)
{
	char page[PATH_MAX + 64], exe[PATH_MAX], mp[PATH_MAX + 8], *slash;
	const char *old = getenv("MANPATH");
	ssize_t n;

	snprintf(page, sizeof(page), "perc-%s", name);
	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) > 0) {
		exe[n] = '\0';
		if ((slash = strrchr(exe, '/')) != NULL) {
			*slash = '\0';
			snprintf(page, sizeof(page), "%s/man/perc-%s.1", exe,
			    name);
			if (access(page, R_OK) == 0) {
				execlp("man", "man", "-l", page, (char *)NULL);
				goto fail;
			}
			snprintf(page, sizeof(page), "perc-%s", name);
		}
	}
	snprintf(mp, sizeof(mp), "%s:%s", PERC_MANDIR, old ? old : "");
	setenv("MANPATH", mp, 1);
	execlp("man", "man", page, (char *)NULL);
fail:
	fprintf(stderr, "perc: cannot run man(1) for '%s'; install man-db, "
	    "or read %s/man1/perc-%s.1\n", name, PERC_MANDIR, name);
	return 7;
}

int
cmd_help(int argc, char **argv, struct perc_ctx *ctx)
{
	static const struct option longopts[] = {
		CMD_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	size_t i;
	int ch;

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
	if (optind == argc) {
		list_commands();
		return 0;
	}
	if (optind != argc - 1)
		return cmd_usage_error(usage, "one command at a time");
	for (i = 0; i < cmd_count; i++)
		if (strcmp(cmd_table[i].name, argv[optind]) == 0) {
			fflush(stdout);
			return show_page(argv[optind]);
		}
	fprintf(stderr, "perc: '%s' is not a perc command; see 'perc help'\n",
	    argv[optind]);
	return 2;
}

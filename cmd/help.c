/* cmd/help.c - perc help: list the commands and topics, or open a manual */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"

#ifndef PERC_MANDIR
#define PERC_MANDIR "/usr/local/share/man"
#endif

static const char usage[] = "usage: perc help [COMMAND | TOPIC]";

/* The topics of perc(1), each opened at its section when a pager shows
   it (less, through LESS). */
static const struct topic {
	const char *name, *section, *summary;
} topics[] = {
	{ "perc",        NULL,          "the overview: data directory, "
	                                "transactions, stores" },
	{ "environment", "ENVIRONMENT", "the variables perc reads" },
	{ "exit-status", "EXIT STATUS", "what each exit status means" },
	{ "escaping",    "Output format", "how bytes are written and read "
	                                "back (-e)" },
	{ "stores",      "STORES",      "LevelDB and Redis Cluster, and "
	                                "what each promises" },
	{ "files",       "FILES",       "what a data directory holds" },
};
#define NTOPICS (sizeof(topics) / sizeof(topics[0]))

static void
list_commands(void)
{
	size_t i;

	printf("usage: perc [-d DIR] COMMAND [ARG]...\n\ncommands:\n");
	for (i = 0; i < cmd_count; i++)
		printf("   %-14s %s\n", cmd_table[i].name,
		    cmd_table[i].summary);
	printf("\ntopics, in perc(1):\n");
	for (i = 0; i < NTOPICS; i++)
		printf("   %-14s %s\n", topics[i].name, topics[i].summary);
	printf("\nSee 'perc help COMMAND' for the manual of one command,\n"
	    "and 'perc help TOPIC' for perc(1) at that topic.\n");
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

	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) > 0) {
		exe[n] = '\0';
		if ((slash = strrchr(exe, '/')) != NULL) {
			*slash = '\0';
			snprintf(page, sizeof(page), "%s/man/%s.1", exe, name);
			if (access(page, R_OK) == 0) {
				execlp("man", "man", "-l", page, (char *)NULL);
				goto fail;
			}
		}
	}
	snprintf(mp, sizeof(mp), "%s:%s", PERC_MANDIR, old ? old : "");
	setenv("MANPATH", mp, 1);
	execlp("man", "man", name, (char *)NULL);
fail:
	fprintf(stderr, "perc: cannot run man(1) for '%s'; install man-db, "
	    "or read %s/man1/%s.1\n", name, PERC_MANDIR, name);
	return 7;
}

/* perc(1), at the topic's section where less shows it. */
static int
show_topic(const struct topic *t)
{
	char less[512];
	const char *old = getenv("LESS");

	if (t->section != NULL) {
		snprintf(less, sizeof(less), "%s%s+/^%s", old ? old : "",
		    old ? " " : "", t->section);
		setenv("LESS", less, 1);
	}
	return show_page("perc");
}

int
cmd_help(int argc, char **argv, struct perc_ctx *ctx)
{
	static const struct option longopts[] = {
		CMD_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	const char *names[128], *nearest;
	char page[64];
	size_t i, n = 0;
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
	fflush(stdout);
	for (i = 0; i < NTOPICS; i++)
		if (strcmp(topics[i].name, argv[optind]) == 0)
			return show_topic(&topics[i]);
	for (i = 0; i < cmd_count; i++)
		if (strcmp(cmd_table[i].name, argv[optind]) == 0) {
			snprintf(page, sizeof(page), "perc-%s", argv[optind]);
			return show_page(page);
		}
	for (i = 0; i < cmd_count && n < 64; i++)
		names[n++] = cmd_table[i].name;
	for (i = 0; i < NTOPICS && n < 64; i++)
		names[n++] = topics[i].name;
	if ((nearest = cmd_nearest(argv[optind], names, n)) != NULL)
		fprintf(stderr, "perc: '%s' is neither a perc command nor a "
		    "topic; did you mean '%s'? (see 'perc help')\n",
		    argv[optind], nearest);
	else
		fprintf(stderr, "perc: '%s' is neither a perc command nor a "
		    "topic; see 'perc help'\n", argv[optind]);
	return 2;
}

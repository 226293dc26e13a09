/* cmd/gc.c - perc gc: remove the versions no snapshot can read any more */
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"

static const char usage[] =
    "usage: perc gc [--dry-run] [--retain SECONDS]\n"
    "    --dry-run            remove nothing; print what would be removed\n"
    "    --retain SECONDS     what the last SECONDS of snapshots read (600)\n";

enum { OPT_DRY_RUN = 256, OPT_RETAIN };

int
cmd_gc(int argc, char **argv, struct perc_ctx *ctx)
{
	static const struct option longopts[] = {
		CMD_COMMON_LONGOPTS,
		{ "dry-run", no_argument,       NULL, OPT_DRY_RUN },
		{ "retain",  required_argument, NULL, OPT_RETAIN },
		{ NULL, 0, NULL, 0 }
	};
	int64_t retain_ms = perc_gc_retain_ms();
	uint64_t removed;
	unsigned flags = 0;
	perc_ts sp;
	struct cmd_progress progress;
	int ch, rc;

	while ((ch = getopt_long(argc, argv, CMD_COMMON_SHORTOPTS, longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'd':
			ctx->dir = optarg;
			break;
		case 'h':
			return cmd_help_text(usage);
		case OPT_DRY_RUN:
			flags |= PERC_GC_DRY_RUN;
			break;
		case OPT_RETAIN:
			if (cmd_parse_seconds(&retain_ms, optarg) < 0)
				return cmd_usage_error(usage, "--retain takes "
				    "seconds, not '%s'", optarg);
			break;
		default:
			return cmd_bad_option(usage, ch, argv);
		}
	}
	if (optind != argc)
		return cmd_usage_error(usage, "unexpected argument '%s'",
		    argv[optind]);
	cmd_progress_start(&progress, "perc gc", "versions removed");
	if ((rc = cmd_open_db(ctx)) == 0) {
		perc_db_progress(ctx->db, cmd_progress_heard, &progress);
		rc = perc_gc(&sp, &removed, ctx->db, retain_ms, flags);
		cmd_progress_done(&progress);
	}
	if (rc == 0)
		printf("%" PRIu64 "\t%" PRIu64 "\n", sp, removed);
	return rc < 0 ? cmd_fail(rc) : 0;
}

/*
 * Automatic gc, after a command that found it due (perc_gc_due): a
 * "perc gc" of its own, detached (its own session, no terminal, its
 * parent gone at once) so that the command that noticed returns now,
 * as git gc --auto does.  Its failures are its own: the next gc due
 * tries again.
 */
void
cmd_gc_auto(struct perc_ctx *ctx)
{
	char self[PATH_MAX];
	ssize_t n;
	pid_t pid;
	int fd;

	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) != 0) {
		if (pid > 0)
			waitpid(pid, NULL, 0);
		return;
	}
	if (fork() != 0)
		_exit(0);
	setsid();
	if ((fd = open("/dev/null", O_RDWR)) >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
	}
	/*
	 * This binary by the path the kernel gives: valgrind reports it for
	 * a perc under memcheck, where an exec of /proc/self/exe itself runs
	 * valgrind's tool.  That exec is the fallback, for a binary replaced
	 * since it started.
	 */
	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) > 0) {
		self[n] = '\0';
		execl(self, "perc", "-d", ctx->dir, "gc", (char *)NULL);
	}
	execl("/proc/self/exe", "perc", "-d", ctx->dir, "gc", (char *)NULL);
	_exit(127);
}

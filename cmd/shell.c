/*
 * cmd/shell.c - perc shell: a coprocess that runs commands read from
 * standard input, one line each, and answers each, so a script can run
 * whole transactions through one perc process.
 *
 * A request is words separated by spaces, each in the escaped TSV form
 * (a space inside a word is \x20, \e the empty word), which
 * lib/request.c parses and lib/serve.c runs and answers.  Each request
 * takes the store and lets it go, as a command does, so that a shell
 * that waits for its script keeps no other process from the store.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "serve.h"

static const char usage[] =
    "usage: perc shell [-i]\n"
    "    -i, --interactive    for people, whatever standard input is: a prompt,\n"
    "                         the commands as requests, help (the default on a\n"
    "                         terminal)\n";

/* Each answer goes out at once: the script waits for it. */
static int
write_answer(const char *data, size_t len, void *arg)
{
	(void)arg;
	fwrite(data, 1, len, stdout);
	fflush(stdout);
	return 0;
}

/* Standard input, and the part of it read but not yet used. */
struct input {
	char   *buf;
	size_t  off, len, cap;  /* unread bytes: buf[off, len) */
};

/*
 * The next request line, without its newline, in *line (valid until
 * the next call); its length, or -1 at the end of input.
 */
static ssize_t
next_request(char **line, struct input *in)
{
	char *nl, *grown;
	size_t scanned = 0, n;
	ssize_t got;

	for (;;) {
		nl = in->len > in->off + scanned ? memchr(in->buf + in->off +
		    scanned, '\n', in->len - in->off - scanned) : NULL;
		if (nl != NULL) {
			*nl = '\0';
			*line = in->buf + in->off;
			n = (size_t)(nl - *line);
			in->off += n + 1;
			return (ssize_t)n;
		}
		scanned = in->len - in->off;
		if (in->off > 0)
			memmove(in->buf, in->buf + in->off, scanned);
		in->len = scanned;
		in->off = 0;
		if (in->cap - in->len < 4096) {
			if ((grown = realloc(in->buf, in->cap * 2 + 65536)) ==
			    NULL)
				return -1;
			in->buf = grown;
			in->cap = in->cap * 2 + 65536;
		}
		got = read(STDIN_FILENO, in->buf + in->len,
		    in->cap - in->len - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {         /* a last line without its newline */
			if (scanned == 0)
				return -1;
			in->buf[in->len] = '\0';
			*line = in->buf;
			in->off = in->len;
			return (ssize_t)scanned;
		}
		in->len += (size_t)got;
	}
}

int
cmd_shell(int argc, char **argv, struct perc_ctx *ctx)
{
	static const struct option longopts[] = {
		CMD_COMMON_LONGOPTS,
		{ "interactive", no_argument, NULL, 'i' },
		{ NULL, 0, NULL, 0 }
	};
	struct serve sess;
	struct input in = { NULL, 0, 0, 0 };
	char *line;
	ssize_t len;
	int ch, rc, people = isatty(STDIN_FILENO);

	while ((ch = getopt_long(argc, argv, CMD_COMMON_SHORTOPTS "i", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'd':
			ctx->dir = optarg;
			break;
		case 'h':
			return cmd_help_text(usage);
		case 'i':
			people = 1;
			break;
		default:
			return cmd_bad_option(usage, ch, argv);
		}
	}
	if (optind != argc)
		return cmd_usage_error(usage, "unexpected argument '%s' (the "
		    "shell reads its requests from standard input)",
		    argv[optind]);
	if ((rc = cmd_open_db(ctx)) < 0)
		return cmd_fail(rc);
	if (people) {
		perc_db_close(ctx->db);
		ctx->db = NULL;
		return cmd_repl(ctx);
	}
	serve_init(&sess, ctx->db, write_answer, NULL);
	while ((len = next_request(&line, &in)) >= 0) {
		serve_line(&sess, line, (size_t)len);
		if (perc_gc_due(ctx->db))
			cmd_gc_auto(ctx);
	}
	serve_dispose(&sess);   /* left open: discarded, as by a crash */
	free(in.buf);
	return 0;
}

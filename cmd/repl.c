/*
 * cmd/repl.c - perc shell for people (a terminal on standard input, or
 * -i): a prompt that names the open transaction, line editing and a
 * history through libedit, words split and quoted as sh(1) does, and
 * the commands themselves as requests, each run in this process as
 * perc COMMAND would run it, so that what it prints, its errors and its
 * help are the command's own.  After begin, the requests that take -t
 * use the open transaction, until commit or abort ends it; one still
 * open at the end is aborted, with a warning.
 */
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <editline/readline.h>

#include "cmd.h"

#define HISTORY_LINES 1000

int cmd_people;

/* The requests that take -t and use the open transaction. */
static const char *const with_txn[] = {
	"abort", "commit", "del", "get", "load", "notify", "scan", "set",
};

/* Not requests: the shell itself, and what runs on without end. */
static const char *const refused[] = { "init", "run-observer", "shell" };

static int
listed(const char *name, const char *const *names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(name, names[i]) == 0)
			return 1;
	return 0;
}

#define LISTED(name, a) listed((name), (a), sizeof(a) / sizeof((a)[0]))

struct words {
	char  **v;
	int     n, cap;
};

static void
words_free(struct words *w)
{
	int i;

	for (i = 0; i < w->n; i++)
		free(w->v[i]);
	free(w->v);
	memset(w, 0, sizeof(*w));
}

static int
words_add(struct words *w, const char *text, size_t len)
{
	char **v;
	int cap;

	if (w->n + 2 > w->cap) {
		cap = w->cap ? 2 * w->cap : 16;
		if ((v = realloc(w->v, (size_t)cap * sizeof(*v))) == NULL)
			return -1;
		w->v = v;
		w->cap = cap;
	}
	if ((w->v[w->n] = strndup(text, len)) == NULL)
		return -1;
	w->v[++w->n] = NULL;
	return 0;
}

/*
 * Split line into words as sh(1) does: blanks separate words; '...'
 * keeps everything; "..." keeps everything but \ before \ " $ `, which
 * it takes as the character; elsewhere \ takes the next character as
 * it is.  (No expansions.)  0, -1 when memory ran out, or 1 with *why
 * set for a line that is not whole.
 */
static int
split_words(struct words *w, const char *line, const char **why)
{
	size_t len = strlen(line), i = 0, n;
	char *word;
	int in_word, rc = 0;

	if ((word = malloc(len + 1)) == NULL)
		return -1;
	while (i < len && rc == 0) {
		while (i < len && (line[i] == ' ' || line[i] == '\t'))
			i++;
		if (i == len)
			break;
		n = 0, in_word = 1;
		while (i < len && in_word && rc == 0) {
			switch (line[i]) {
			case ' ':
			case '\t':
				in_word = 0;
				break;
			case '\'':
				while (++i < len && line[i] != '\'')
					word[n++] = line[i];
				if (i++ == len)
					*why = "a quote (') is not closed", rc = 1;
				break;
			case '"':
				while (++i < len && line[i] != '"') {
					if (line[i] == '\\' && i + 1 < len &&
					    strchr("\\\"$`", line[i + 1]) != NULL)
						i++;
					word[n++] = line[i];
				}
				if (i++ == len)
					*why = "a quote (\") is not closed", rc = 1;
				break;
			case '\\':
				if (i + 1 == len)
					*why = "a backslash ends the line", rc = 1;
				else
					word[n++] = line[i + 1];
				i += 2;
				break;
			default:
				word[n++] = line[i++];
			}
		}
		if (rc == 0 && words_add(w, word, n) < 0)
			rc = -1;
	}
	free(word);
	return rc;
}

static void
list_requests(void)
{
	size_t i;

	printf("requests (help REQUEST for one, quit or end of input to "
	    "leave):\n");
	for (i = 0; i < cmd_count; i++)
		if (!LISTED(cmd_table[i].name, refused) &&
		    strcmp(cmd_table[i].name, "help") != 0)
			printf("  %-14s%s\n", cmd_table[i].name,
			    cmd_table[i].summary);
	printf("  %-14s%s\n", "help", "list the requests, or one's options");
	printf("  %-14s%s\n", "quit", "leave (an open transaction is aborted)");
}

static const struct cmd *
find_request(const char *name)
{
	const char *names[64], *nearest;
	size_t i, n = 0;

	for (i = 0; i < cmd_count; i++)
		if (strcmp(cmd_table[i].name, name) == 0 &&
		    !LISTED(name, refused))
			return &cmd_table[i];
	for (i = 0; i < cmd_count && n < 64; i++)
		if (!LISTED(cmd_table[i].name, refused))
			names[n++] = cmd_table[i].name;
	if (LISTED(name, refused))
		fprintf(stderr, "perc: '%s' is not a request of the shell; run "
		    "perc %s outside it\n", name, name);
	else if ((nearest = cmd_nearest(name, names, n)) != NULL)
		fprintf(stderr, "perc: '%s' is not a request; did you mean "
		    "'%s'? (see 'help')\n", name, nearest);
	else
		fprintf(stderr, "perc: '%s' is not a request; see 'help'\n",
		    name);
	return NULL;
}

struct repl {
	struct perc_ctx *ctx;
	char             txn[24];       /* the open transaction, or "" */
	char             prompt[48];
};

/* Does argv name a transaction or a snapshot of its own? */
static int
has_own_txn(char **argv)
{
	int i;

	for (i = 1; argv[i] != NULL; i++) {
		if (strcmp(argv[i], "--") == 0)
			return 0;
		if (strcmp(argv[i], "-t") == 0 || strncmp(argv[i], "--txn", 5)
		    == 0 || strncmp(argv[i], "--at", 4) == 0 ||
		    (strncmp(argv[i], "-t", 2) == 0 && argv[i][2] != '\0'))
			return 1;
	}
	return 0;
}

/* Run one command as perc would, in this process; its exit status. */
static int
run(struct repl *r, const struct cmd *c, int argc, char **argv)
{
	int rc;

	optind = 0;             /* getopt_long starts over */
	cmd_json = 0;
	r->ctx->db = NULL;
	rc = c->fn(argc, argv, r->ctx);
	perc_db_close(r->ctx->db);
	r->ctx->db = NULL;
	fflush(stdout);
	return rc;
}

/* begin: a transaction of this shell's, the open one from now on. */
static void
begin(struct repl *r)
{
	perc_txn *txn = NULL;
	int rc;

	if (r->txn[0] != '\0') {
		fprintf(stderr, "perc: transaction %s is open; commit or abort "
		    "it first\n", r->txn);
		return;
	}
	if ((rc = cmd_open_db(r->ctx)) == 0) {
		perc_db_begun_by(r->ctx->db, (long)getpid());
		rc = perc_txn_begin(&txn, r->ctx->db);
	}
	if (rc < 0)
		cmd_fail(rc);
	else {
		snprintf(r->txn, sizeof(r->txn), "%s", perc_txn_handle(txn));
		printf("%s\n", r->txn);
	}
	perc_txn_free(txn);
	perc_db_close(r->ctx->db);
	r->ctx->db = NULL;
}

static void
request(struct repl *r, struct words *w)
{
	const struct cmd *c;
	struct words args = { NULL, 0, 0 };
	char *help_argv[] = { NULL, "-h", NULL };
	int i, rc, uses_txn;
	const char *name = w->v[0];

	if (strcmp(name, "help") == 0 && w->n == 1) {
		list_requests();
		return;
	}
	if (strcmp(name, "help") == 0) {
		help_argv[0] = w->v[1];
		if ((c = find_request(w->v[1])) != NULL)
			run(r, c, 2, help_argv);
		return;
	}
	if (strcmp(name, "begin") == 0 && w->n == 1) {
		begin(r);
		return;
	}
	if ((c = find_request(name)) == NULL)
		return;
	uses_txn = r->txn[0] != '\0' && LISTED(name, with_txn) &&
	    !has_own_txn(w->v);
	if (words_add(&args, name, strlen(name)) < 0 ||
	    (uses_txn && (words_add(&args, "-t", 2) < 0 ||
	    words_add(&args, r->txn, strlen(r->txn)) < 0))) {
		cmd_out_of_memory();
		words_free(&args);
		return;
	}
	for (i = 1; i < w->n; i++)
		if (words_add(&args, w->v[i], strlen(w->v[i])) < 0) {
			cmd_out_of_memory();
			words_free(&args);
			return;
		}
	rc = run(r, c, args.n, args.v);
	/* Committed, rolled back, or unknown: the transaction is over. */
	if (uses_txn && (strcmp(name, "commit") == 0 ||
	    strcmp(name, "abort") == 0) && (rc == 0 || rc == 3 || rc == 5))
		r->txn[0] = '\0';
	words_free(&args);
}

static const char *
history_path(char *buf, size_t size)
{
	const char *home;

	if (getenv("PERC_HISTFILE") != NULL)
		return *getenv("PERC_HISTFILE") ? getenv("PERC_HISTFILE") : NULL;
	if ((home = getenv("HOME")) == NULL || *home == '\0')
		return NULL;
	snprintf(buf, size, "%s/.perc_history", home);
	return buf;
}

/* The next line, without its newline (free it), or NULL at the end. */
static char *
next_line(struct repl *r, int terminal)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	if (r->txn[0] != '\0')
		snprintf(r->prompt, sizeof(r->prompt), "perc %s> ", r->txn);
	else
		snprintf(r->prompt, sizeof(r->prompt), "perc> ");
	if (terminal)
		return readline(r->prompt);
	fputs(r->prompt, stdout);
	fflush(stdout);
	if ((n = getline(&line, &cap, stdin)) < 0) {
		free(line);
		return NULL;
	}
	if (n > 0 && line[n - 1] == '\n')
		line[n - 1] = '\0';
	return line;
}

int
cmd_repl(struct perc_ctx *ctx)
{
	struct repl r = { ctx, "", "" };
	struct words w = { NULL, 0, 0 };
	char path[4096], *line, *abort_argv[] = { "abort", "-t", NULL, NULL };
	const struct cmd *c;
	const char *hist, *why = NULL;
	int terminal = isatty(STDIN_FILENO), rc;

	cmd_people = 1;
	/* The terminal's characters: libedit reads "café" whole, and
	   answers show printable UTF-8 as it is (cmd_print_field). */
	(void)setlocale(LC_CTYPE, "");
	/* A terminal that closes ends the input; the end aborts. */
	signal(SIGHUP, SIG_IGN);
	hist = history_path(path, sizeof(path));
	if (terminal) {
		using_history();
		stifle_history(HISTORY_LINES);
		if (hist != NULL)
			read_history(hist);
	}
	while ((line = next_line(&r, terminal)) != NULL) {
		if ((rc = split_words(&w, line, &why)) > 0)
			fprintf(stderr, "perc: %s; close it and enter the line "
			    "again\n", why);
		else if (rc < 0)
			cmd_out_of_memory();
		else if (w.n > 0 && terminal) {
			add_history(line);
			if (hist != NULL)
				write_history(hist);
		}
		if (rc == 0 && w.n > 0 && (strcmp(w.v[0], "quit") == 0 ||
		    strcmp(w.v[0], "exit") == 0)) {
			free(line);
			words_free(&w);
			break;
		}
		if (rc == 0 && w.n > 0)
			request(&r, &w);
		words_free(&w);
		free(line);
	}
	putchar('\n');         /* past the last prompt */
	fflush(stdout);
	if (r.txn[0] != '\0') {
		fprintf(stderr, "perc: transaction %s is still open: aborting "
		    "it\n", r.txn);
		abort_argv[2] = r.txn;
		if ((c = find_request("abort")) != NULL)
			run(&r, c, 3, abort_argv);
	}
	return 0;
}

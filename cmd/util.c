/* cmd/util.c - helpers every command shares: usage, errors, arguments */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>
#include <wctype.h>

#include "cmd.h"

/* The usage line: usage up to its first newline (its options follow). */
static int
usage_line_len(const char *usage)
{
	const char *nl = strchr(usage, '\n');

	return nl != NULL ? (int)(nl - usage) : (int)strlen(usage);
}

/*
 * "perc: WHY (usage: ...)": what was wrong and how it is written, on
 * one line, as every error is.
 */
int
cmd_usage_error(const char *usage, const char *fmt, ...)
{
	va_list ap;

	fputs("perc: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (%.*s)\n", usage_line_len(usage), usage);
	return 2;
}

/*
 * getopt_long's complaint, which opterr = 0 keeps quiet, said by us:
 * ch is ':' for an option without its value, '?' for an unknown one
 * (CMD_COMMON_SHORTOPTS begins with ':' for that).
 */
int
cmd_bad_option(const char *usage, int ch, char **argv)
{
	const char *word = argv[optind - 1];

	if (ch == ':')
		return cmd_usage_error(usage, "option '%s' needs a value",
		    word);
	if (optopt != 0 && strncmp(word, "--", 2) != 0)
		return cmd_usage_error(usage, "unknown option '-%c'", optopt);
	return cmd_usage_error(usage, "unknown option '%s'", word);
}

/*
 * --help: the usage line, what the command does and prints (its
 * entry in cmd_table, found by the name the usage line gives), each of
 * its options a line, then the options every command takes.
 */
int
cmd_help_text(const char *usage)
{
	int n = usage_line_len(usage);
	const char *name = usage + strlen("usage: perc ");
	size_t i, len = strcspn(name, " \n");

	printf("%.*s\n\n", n, usage);
	for (i = 0; i < cmd_count; i++)
		if (strlen(cmd_table[i].name) == len &&
		    strncmp(cmd_table[i].name, name, len) == 0)
			printf("%s\n\n", cmd_table[i].does);
	printf("%s", usage[n] == '\n' ? usage + n + 1 : "");
	printf("    -d, --dir DIR        the data directory (default: "
	    "$PERC_DIR, else .)\n"
	    "    -h, --help           print this help\n");
	return 0;
}

int
cmd_fail(int rc)
{
	fprintf(stderr, "perc: %s\n", perc_errmsg());
	return -rc;
}

/* For a command's own allocation: libperc's failures say it themselves. */
int
cmd_out_of_memory(void)
{
	fprintf(stderr, "perc: out of memory; free some memory and retry\n");
	return -PERC_EIO;
}

int
cmd_open_db(struct perc_ctx *ctx)
{
	return perc_db_open(&ctx->db, ctx->dir);
}

/* Strict decimal: no sign, no junk, no overflow, no 0.  0 or -1. */
int
cmd_parse_ts(perc_ts *out, const char *arg)
{
	unsigned long long v;
	char *end;

	if (*arg < '0' || *arg > '9')
		return -1;
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno != 0 || *end != '\0' || v == 0)
		return -1;
	*out = v;
	return 0;
}

/*
 * perc(1)'s rule for the words after the options: the first operand
 * ends them, and a ROW or COLUMN that begins with '-' must come after
 * "--", so that an option put after the cell (get r c -t TXN) is
 * refused, never taken for another cell.  argv[optind..argc) are the
 * operands; with value_every 3, every third one is a VALUE, which may
 * begin with '-' (set r c -30).  0, or 2 after saying why.
 */
int
cmd_check_operands(const char *usage, int argc, char **argv, int value_every)
{
	int i;

	if (optind > 1 && strcmp(argv[optind - 1], "--") == 0)
		return 0;
	for (i = optind; i < argc; i++) {
		if (argv[i][0] != '-' || argv[i][1] == '\0' ||
		    (value_every > 0 && (i - optind) % value_every ==
		    value_every - 1))
			continue;
		return cmd_usage_error(usage, "'%s' after an operand: options "
		    "go before ROW and COLUMN, and a ROW or COLUMN that begins "
		    "with '-' needs -- before the operands", argv[i]);
	}
	return 0;
}

/*
 * An argv word as bytes: as it is, or decoded from the escaped form
 * (-e) into store, which then owns the bytes *out points to.
 */
int
cmd_arg(perc_bytes *out, perc_buf *store, const char *arg, int escaped)
{
	int rc;

	if (!escaped) {
		out->data = arg;
		out->len = strlen(arg);
		return 0;
	}
	if ((rc = perc_unescape(store, arg, strlen(arg))) < 0)
		return rc;
	out->data = store->data ? store->data : "";
	out->len = store->len;
	return 0;
}

/*
 * Say what a command waits for when standard input is a terminal: a
 * user who left out a value would otherwise see nothing happen.
 */
void
cmd_stdin_hint(const char *what)
{
	if (isatty(STDIN_FILENO))
		fprintf(stderr, "perc: reading %s from standard input; end it "
		    "with Ctrl-D\n", what);
}

/* All of standard input, byte for byte, into out. */
int
cmd_read_stdin(perc_buf *out)
{
	size_t n;
	char *p;

	for (;;) {
		if (out->cap - out->len < 65536) {
			if ((p = realloc(out->data, out->cap * 2 + 65536)) ==
			    NULL) {
				fprintf(stderr, "perc: standard input is too "
				    "large for memory\n");
				return -1;
			}
			out->data = p;
			out->cap = out->cap * 2 + 65536;
		}
		n = fread(out->data + out->len, 1, out->cap - out->len, stdin);
		out->len += n;
		if (n == 0)
			break;
	}
	if (ferror(stdin)) {
		fprintf(stderr, "perc: cannot read standard input: %s\n",
		    strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * For a person (perc shell at a prompt): field is characters of the
 * terminal's locale, every one printable, none a backslash, so that it
 * can be shown as it is and still read back unambiguously.
 */
static int
shown_as_it_is(perc_bytes field)
{
	const char *p = field.data;
	size_t left = field.len, n;
	mbstate_t st;
	wchar_t wc;

	memset(&st, 0, sizeof(st));
	while (left > 0) {
		n = mbrtowc(&wc, p, left, &st);
		if (n == 0 || n > left || !iswprint((wint_t)wc) || wc == L'\\')
			return 0;
		p += n;
		left -= n;
	}
	return 1;
}

/*
 * Write field to standard output in the escaped TSV form: as it is when
 * no byte of it needs escaping (scan's common case, without a copy), or
 * when a person reads it and it is printable (shown_as_it_is).
 */
int
cmd_print_field(perc_bytes field)
{
	const unsigned char *p = field.data;
	perc_buf esc = PERC_BUF_INIT;
	size_t i;
	int rc;

	for (i = 0; i < field.len && p[i] >= 0x20 && p[i] <= 0x7e &&
	    p[i] != '\\'; i++)
		;
	if (i == field.len || (cmd_people && shown_as_it_is(field))) {
		if (field.len > 0)
			fwrite(p, 1, field.len, stdout);
		return 0;
	}
	if ((rc = perc_escape(&esc, field)) == 0 && esc.len > 0)
		fwrite(esc.data, 1, esc.len, stdout);
	perc_buf_dispose(&esc);
	return rc;
}

/* One cell as scan prints it: ROW<TAB>COLUMN<TAB>VALUE, escaped. */
int
cmd_print_cell(perc_bytes row, perc_bytes col, perc_bytes value)
{
	const struct out_field f[] = { OUT_B("row", row),
	    OUT_B("column", col), OUT_B("value", value) };

	return cmd_out_row(f, 3);
}

/* SECONDS: a non-negative decimal number, fractions allowed. */
int
cmd_parse_seconds(int64_t *out_ms, const char *arg)
{
	char *end;
	double v;

	if (*arg < '0' || *arg > '9')
		return -1;
	v = strtod(arg, &end);
	if (*end != '\0' || v > 1e12)
		return -1;
	*out_ms = (int64_t)(v * 1000);
	return 0;
}

/*
 * Block SIGINT and SIGTERM, which end a command that waits, until
 * sigprocmask(SIG_SETMASK, old, NULL); *old is the mask they were
 * blocked from, for the wait to sleep with (ppoll(2)'s way).  A stop
 * that comes after the caller's last look then still ends the sleep
 * at once, instead of being missed until the next wakeup.
 */
void
cmd_block_stop_signals(sigset_t *old)
{
	sigset_t stop_sigs;

	sigemptyset(&stop_sigs);
	sigaddset(&stop_sigs, SIGINT);
	sigaddset(&stop_sigs, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop_sigs, old);
}

/* The monotonic clock, in ms. */
int64_t
cmd_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
cmd_progress_start(struct cmd_progress *p, const char *what, const char *unit)
{
	p->what = what;
	snprintf(p->unit, sizeof(p->unit), "%s", unit);
	p->n = 0;
	p->on = isatty(STDERR_FILENO);
	p->width = 0;
	/* Quick work shows nothing: the first line after a second. */
	p->next_ms = cmd_now_ms() + 1000;
}

/* Draw the line again, over the last one, blanking what it left. */
static void
redraw(struct cmd_progress *p, const char *end)
{
	int w = fprintf(stderr, "\r%s: %" PRIu64 " %s%s", p->what, p->n,
	    p->unit, end);

	if (w > 0 && w < p->width)
		fprintf(stderr, "%*s", p->width - w, "");
	p->width = w > 0 ? w : p->width;
}

void
cmd_progress_tick(struct cmd_progress *p, uint64_t n)
{
	int64_t now;

	p->n = n;
	if (!p->on || (now = cmd_now_ms()) < p->next_ms)
		return;
	redraw(p, "");
	p->next_ms = now + 100;
}

void
cmd_progress_heard(const char *counted, uint64_t n, void *arg)
{
	struct cmd_progress *p = arg;

	snprintf(p->unit, sizeof(p->unit), "%s", counted);
	cmd_progress_tick(p, n);
}

/*
 * End a progress line that was shown with what the work came to, in
 * place of its last count: "perc load: 3000 lines committed in 3
 * transactions, done."
 */
void
cmd_progress_summary(struct cmd_progress *p, const char *fmt, ...)
{
	char what[256];
	va_list ap;
	int w;

	if (p->width == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	w = fprintf(stderr, "\r%s: %s, done.", p->what, what);
	if (w > 0 && w < p->width)
		fprintf(stderr, "%*s", p->width - w, "");
	fputc('\n', stderr);
	p->width = 0;
}

void
cmd_progress_done(struct cmd_progress *p)
{
	if (p->width > 0) {
		redraw(p, ", done.");
		fputc('\n', stderr);
	}
}

/*
 * A command that writes one cell, ROW COLUMN, with [-e] [-t TXN]: del
 * and notify.  Without -t, verb->alone commits it as a transaction of
 * its own; with it, verb->buffered adds it to TXN.
 */
int
cmd_write_cell(int argc, char **argv, struct perc_ctx *ctx,
    const char *usage, const struct cmd_cell_verb *verb)
{
	static const struct option longopts[] = {
		CMD_COMMON_LONGOPTS,
		{ "escaped", no_argument,       NULL, 'e' },
		{ "txn",     required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 }
	};
	perc_buf rowbuf = PERC_BUF_INIT, colbuf = PERC_BUF_INIT;
	perc_bytes row, col;
	const char *handle = NULL;
	perc_txn *txn = NULL;
	perc_ts ts;
	int ch, rc, escaped = 0;

	while ((ch = getopt_long(argc, argv, CMD_COMMON_SHORTOPTS "et:",
	    longopts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			ctx->dir = optarg;
			break;
		case 'h':
			return cmd_help_text(usage);
		case 'e':
			escaped = 1;
			break;
		case 't':
			handle = optarg;
			break;
		default:
			return cmd_bad_option(usage, ch, argv);
		}
	}
	if (cmd_check_operands(usage, argc, argv, 0) != 0)
		return 2;
	argc -= optind;
	argv += optind;
	if (argc != 2)
		return cmd_usage_error(usage, argc < 2 ? "a cell is a ROW "
		    "and a COLUMN; %d given" : "%d arguments where a cell is "
		    "a ROW and a COLUMN (options go before them)", argc);
	if ((rc = cmd_arg(&row, &rowbuf, argv[0], escaped)) < 0 ||
	    (rc = cmd_arg(&col, &colbuf, argv[1], escaped)) < 0 ||
	    (rc = cmd_open_db(ctx)) < 0)
		goto done;
	if (handle == NULL)
		rc = verb->alone(&ts, ctx->db, row, col);
	else if ((rc = perc_txn_open(&txn, ctx->db, handle)) == 0)
		rc = verb->buffered(txn, row, col);
done:
	perc_txn_free(txn);
	perc_buf_dispose(&rowbuf);
	perc_buf_dispose(&colbuf);
	return rc < 0 ? cmd_fail(rc) : 0;
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

const char *
cmd_nearest(const char *name, const char *const *names, size_t n)
{
	size_t i, dist, best = (size_t)-1;
	const char *nearest = NULL;

	for (i = 0; i < n; i++)
		if ((dist = edit_distance(name, names[i])) < best) {
			best = dist;
			nearest = names[i];
		}
	return nearest != NULL && best <= 2 && best < strlen(name) ?
	    nearest : NULL;
}

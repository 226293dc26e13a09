/* cmd/cmd.h - shared by every file in cmd/: the table type and helpers */
#ifndef CMD_H
#define CMD_H

#include <getopt.h>
#include <signal.h>

#include "perc.h"

struct perc_ctx {
	const char *dir;        /* -d/--dir, else $PERC_DIR, else "." */
	perc_db    *db;         /* opened by cmd_open_db(), closed by perc.c */
};

struct cmd {
	const char *name;       /* as the user types it: "resolve-locks" */
	int       (*fn)(int argc, char **argv, struct perc_ctx *ctx);
	const char *summary;    /* one line for "perc help" */
	const char *does;       /* a sentence for -h: what it does and prints */
};

/* Options every command accepts; each command appends its own. */
/* "+": stop at the first operand; ":": a missing value returns ':'. */
#define CMD_COMMON_SHORTOPTS "+:d:h"
#define CMD_COMMON_LONGOPTS \
	{ "dir",  required_argument, NULL, 'd' }, \
	{ "help", no_argument,       NULL, 'h' }

int cmd_abort(int argc, char **argv, struct perc_ctx *ctx);
int cmd_begin(int argc, char **argv, struct perc_ctx *ctx);
int cmd_commit(int argc, char **argv, struct perc_ctx *ctx);
int cmd_del(int argc, char **argv, struct perc_ctx *ctx);
int cmd_gc(int argc, char **argv, struct perc_ctx *ctx);
int cmd_get(int argc, char **argv, struct perc_ctx *ctx);
int cmd_help(int argc, char **argv, struct perc_ctx *ctx);
int cmd_init(int argc, char **argv, struct perc_ctx *ctx);
int cmd_load(int argc, char **argv, struct perc_ctx *ctx);
int cmd_log(int argc, char **argv, struct perc_ctx *ctx);
int cmd_notify(int argc, char **argv, struct perc_ctx *ctx);
int cmd_resolve_locks(int argc, char **argv, struct perc_ctx *ctx);
int cmd_run_observer(int argc, char **argv, struct perc_ctx *ctx);
int cmd_scan(int argc, char **argv, struct perc_ctx *ctx);
int cmd_scan_notify(int argc, char **argv, struct perc_ctx *ctx);
int cmd_serve(int argc, char **argv, struct perc_ctx *ctx);
int cmd_set(int argc, char **argv, struct perc_ctx *ctx);
int cmd_shell(int argc, char **argv, struct perc_ctx *ctx);
int cmd_repl(struct perc_ctx *ctx);     /* perc shell for people */
extern int cmd_people;                  /* ... which runs this command */
int cmd_show(int argc, char **argv, struct perc_ctx *ctx);
int cmd_status(int argc, char **argv, struct perc_ctx *ctx);
int cmd_ts(int argc, char **argv, struct perc_ctx *ctx);
int cmd_wait(int argc, char **argv, struct perc_ctx *ctx);

/* The command table, for perc help. */
extern const struct cmd cmd_table[];
extern const size_t cmd_count;

/*
 * Helpers in cmd/util.c.  A command's usage string is its usage line,
 * then, a line each, the options of its own that --help describes.
 * cmd_usage_error, cmd_bad_option and cmd_help_text return
 * the exit status to hand back; cmd_fail prints "perc: <why>" and
 * returns -rc.
 */
int64_t cmd_now_ms(void);             /* the monotonic clock, ms */
void cmd_block_stop_signals(sigset_t *old);
int  cmd_usage_error(const char *usage, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));      /* returns 2 */
int  cmd_bad_option(const char *usage, int ch, char **argv); /* 2 */
int  cmd_help_text(const char *usage); /* to stdout; returns 0 */
int  cmd_fail(int rc);
/* The one of names[0..n) within two edits of name, for "did you
   mean", or NULL. */
const char *cmd_nearest(const char *name, const char *const *names,
    size_t n);
int  cmd_out_of_memory(void);           /* says so; returns 7 */
int  cmd_open_db(struct perc_ctx *ctx);
int  cmd_parse_ts(perc_ts *out, const char *arg);
int  cmd_check_operands(const char *usage, int argc, char **argv,
                        int value_every);
int  cmd_parse_seconds(int64_t *out_ms, const char *arg);
void cmd_gc_auto(struct perc_ctx *ctx);  /* cmd/gc.c */
int  cmd_arg(perc_bytes *out, perc_buf *store, const char *arg,
             int escaped);
void cmd_stdin_hint(const char *what);

/* A write of one cell: alone, or buffered in a transaction (del, notify). */
struct cmd_cell_verb {
	int (*alone)(perc_ts *out, perc_db *db, perc_bytes row, perc_bytes col);
	int (*buffered)(perc_txn *txn, perc_bytes row, perc_bytes col);
};
int  cmd_write_cell(int argc, char **argv, struct perc_ctx *ctx,
                    const char *usage, const struct cmd_cell_verb *verb);
int  cmd_read_stdin(perc_buf *out);
int  cmd_print_field(perc_bytes field);

/*
 * The output layer (cmd/out.c): a row of named fields, as a TSV line,
 * or as a JSON object a line once --json (CMD_JSON_LONGOPT, whose
 * getopt_long value is CMD_OPT_JSON) set cmd_json.  OUT_NONE: no value
 * (\N in TSV, null in JSON).
 */
enum out_type { OUT_BYTES, OUT_NONE, OUT_TS, OUT_COUNT, OUT_WORD };
struct out_field {
	const char   *name;
	enum out_type type;
	perc_bytes    bytes;    /* OUT_BYTES */
	uint64_t      n;        /* OUT_TS, OUT_COUNT */
	const char   *word;     /* OUT_WORD */
};
#define OUT_B(nm, b)  { (nm), OUT_BYTES, (b), 0, NULL }
#define OUT_TS_(nm, t) { (nm), OUT_TS, { NULL, 0 }, (t), NULL }
#define OUT_N(nm, c)  { (nm), OUT_COUNT, { NULL, 0 }, (c), NULL }
#define OUT_W(nm, w)  { (nm), OUT_WORD, { NULL, 0 }, 0, (w) }
#define OUT_NULL(nm)  { (nm), OUT_NONE, { NULL, 0 }, 0, NULL }
#define CMD_OPT_JSON 1000
#define CMD_JSON_LONGOPT { "json", no_argument, NULL, CMD_OPT_JSON }
#define CMD_JSON_HELP "    --json               JSON Lines, not TSV (see perc(1))\n"
extern int cmd_json;
int  cmd_out_row(const struct out_field *f, size_t n);
int  cmd_out_object(const struct out_field *f, size_t n, const char *list,
                    const struct out_field *rows, size_t nrows, size_t width);
int  cmd_print_cell(perc_bytes row, perc_bytes col, perc_bytes value);

/*
 * Progress of long work on stderr, as git shows it: only when stderr is
 * a terminal, one line redrawn at most every 100 ms, ended by a newline.
 */
struct cmd_progress {
	const char *what;       /* "perc scan", say */
	char        unit[128];  /* what is counted: "cells" */
	uint64_t    n;          /* how many, as last told */
	int         on;         /* stderr is a terminal */
	int         width;      /* of the line on the screen; 0: none */
	int64_t     next_ms;    /* when the next redraw may come */
};
void cmd_progress_start(struct cmd_progress *p, const char *what,
    const char *unit);
/* n so far; a caller thins its calls (the clock is read each time). */
void cmd_progress_tick(struct cmd_progress *p, uint64_t n);
/* The same, as libperc's perc_db_progress tells it. */
void cmd_progress_heard(const char *counted, uint64_t n, void *arg);
void cmd_progress_done(struct cmd_progress *p);
void cmd_progress_summary(struct cmd_progress *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
#endif

/* cmd/status.c - perc status: the state of a data directory */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

static const char usage[] =
    "usage: perc status [--transactions] [--json]\n"
    "    --transactions       list the open transactions instead\n"
    CMD_JSON_HELP;

enum { OPT_TRANSACTIONS = 256 };

/*
 * With --json, perc_status's lines are kept until the last, then go out
 * as one object: a key's VALUE as its type (perc-status(1)), none as
 * null, log_hold's two fields as log_hold and log_hold_seconds, and the
 * observed lines as the list observed.  A callback returns 1 when
 * memory runs out, which stops perc_status.
 */
#define KEYS_MAX 16
struct json_status {
	char            *kept[2 * KEYS_MAX];    /* what the fields point to */
	size_t           nkept;
	struct out_field top[KEYS_MAX];
	size_t           ntop;
	perc_buf        *cols;          /* observed: each column, unescaped */
	struct out_field *rows;         /* ... 3 fields each */
	size_t           nrows, cap;
};

/* A copy of text that lives as long as js, or NULL. */
static const char *
keep(struct json_status *js, const char *text)
{
	char *copy;

	if (js->nkept == 2 * KEYS_MAX || (copy = strdup(text)) == NULL)
		return NULL;
	return js->kept[js->nkept++] = copy;
}

/* A count's or a timestamp's VALUE, or none. */
static struct out_field
number(const char *key, const char *value, enum out_type type)
{
	struct out_field f = OUT_NULL(key);

	if (strcmp(value, "none") != 0) {
		f.type = type;
		f.n = strtoull(value, NULL, 10);
	}
	return f;
}

static int
json_observed(struct json_status *js, const char *value)
{
	const char *tab1 = strchr(value, '\t'), *tab2;
	struct out_field *r;
	perc_buf *c;
	size_t cap;

	if (tab1 == NULL || (tab2 = strchr(tab1 + 1, '\t')) == NULL)
		return 0;       /* not as perc.h says: left out */
	if (js->nrows == js->cap) {
		cap = js->cap ? 2 * js->cap : 8;
		if ((c = realloc(js->cols, cap * sizeof(*c))) == NULL)
			return 1;
		js->cols = c;
		memset(js->cols + js->cap, 0, (cap - js->cap) * sizeof(*c));
		js->cap = cap;
		if ((r = realloc(js->rows, 3 * cap * sizeof(*r))) == NULL)
			return 1;
		js->rows = r;
	}
	c = &js->cols[js->nrows];
	if (perc_unescape(c, value, (size_t)(tab1 - value)) < 0)
		return 0;       /* not as perc.h says: left out */
	r = &js->rows[3 * js->nrows++];
	r[0] = (struct out_field)OUT_B("column",
	    ((perc_bytes){ c->data, c->len }));
	r[1] = (struct out_field)OUT_W("kind",
	    strncmp(tab1 + 1, "weak", 4) == 0 ? "weak" : "strong");
	r[2] = number("dirty_cells", tab2 + 1, OUT_COUNT);
	return 0;
}

static int
json_line(const char *key, const char *value, void *arg)
{
	struct json_status *js = arg;
	const char *tab;

	if (strcmp(key, "observed") == 0)
		return json_observed(js, value);
	if (js->ntop + 2 > KEYS_MAX)
		return 0;
	if ((key = keep(js, key)) == NULL)
		return 1;
	if (strcmp(key, "open_transactions") == 0 || strcmp(key, "locks") == 0 ||
	    strcmp(key, "server") == 0)
		js->top[js->ntop++] = number(key, value, OUT_COUNT);
	else if (strcmp(key, "oldest_open_start") == 0 ||
	    strcmp(key, "safe_point") == 0)
		js->top[js->ntop++] = number(key, value, OUT_TS);
	else if (strcmp(key, "log_hold") == 0) {
		js->top[js->ntop++] = number(key, value, OUT_TS);
		tab = strchr(value, '\t');
		js->top[js->ntop++] = number("log_hold_seconds",
		    tab != NULL ? tab + 1 : "none", OUT_COUNT);
	} else {
		if ((value = keep(js, value)) == NULL)
			return 1;
		js->top[js->ntop++] = (struct out_field)OUT_B(key,
		    ((perc_bytes){ value, strlen(value) }));
	}
	return 0;
}

/* perc status --json: the object, once every line is in. */
static int
status_json(perc_db *db)
{
	struct json_status js;
	size_t i;
	int rc;

	memset(&js, 0, sizeof(js));
	if ((rc = perc_status(db, json_line, &js)) == 0)
		rc = cmd_out_object(js.top, js.ntop, "observed", js.rows,
		    js.nrows, 3);
	for (i = 0; i < js.nkept; i++)
		free(js.kept[i]);
	for (i = 0; i < js.nrows; i++)
		perc_buf_dispose(&js.cols[i]);
	free(js.cols);
	free(js.rows);
	return rc;
}

static int
print_line(const char *key, const char *value, void *arg)
{
	(void)arg;
	printf("%s\t%s\n", key, value);
	return 0;
}

static int
print_txn(const perc_open_txn *t, void *arg)
{
	struct out_field f[5] = {
		OUT_TS_("handle", t->start_ts),
		OUT_TS_("start_ts", t->start_ts),
		OUT_N("age_seconds", t->age_ms > 0 ? t->age_ms / 1000 : 0),
		OUT_W("state", t->alive ? "alive" : "gone"),
		OUT_N("writes", (uint64_t)t->writes),
	};

	(void)arg;
	if (t->writes < 0)
		f[4] = cmd_json ? (struct out_field)OUT_NULL("writes") :
		    (struct out_field)OUT_W("writes", "damaged");
	return cmd_out_row(f, 5);
}

int
cmd_status(int argc, char **argv, struct perc_ctx *ctx)
{
	static const struct option longopts[] = {
		CMD_COMMON_LONGOPTS,
		{ "transactions", no_argument, NULL, OPT_TRANSACTIONS },
		CMD_JSON_LONGOPT,
		{ NULL, 0, NULL, 0 }
	};
	int ch, rc, transactions = 0;

	while ((ch = getopt_long(argc, argv, CMD_COMMON_SHORTOPTS, longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'd':
			ctx->dir = optarg;
			break;
		case 'h':
			return cmd_help_text(usage);
		case OPT_TRANSACTIONS:
			transactions = 1;
			break;
		case CMD_OPT_JSON:
			cmd_json = 1;
			break;
		default:
			return cmd_bad_option(usage, ch, argv);
		}
	}
	if (optind != argc)
		return cmd_usage_error(usage, "unexpected argument '%s'",
		    argv[optind]);
	if ((rc = cmd_open_db(ctx)) < 0)
		return cmd_fail(rc);
	if (transactions)
		rc = perc_status_transactions(ctx->db, print_txn, NULL);
	else if (cmd_json)
		rc = status_json(ctx->db);
	else
		rc = perc_status(ctx->db, print_line, NULL);
	if (rc > 0)
		return cmd_out_of_memory();
	return rc < 0 ? cmd_fail(rc) : 0;
}

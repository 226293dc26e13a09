/*
 * lib/request.c - the request language of perc-shell(1), as SPEC has
 * it: words separated by spaces, each in the escaped form of perc(1),
 * \e the empty word; options before the operands, "--" ending them;
 * a word written with an escape never an option; a raw NUL byte makes
 * the request malformed.  Every refusal names the word at fault.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "error.h"
#include "escape.h"
#include "request.h"

/* A word as the request wrote it, before unescaping. */
struct raw_word {
	const char *text;
	size_t      len;
};

static const struct verb_spec {
	const char       *name;
	enum request_verb verb;
	unsigned          takes;        /* the REQ_* options it takes */
	unsigned          needs;        /* and of those, the ones it needs */
	size_t            nargs;        /* its operands; a third is VALUE */
	const char       *usage;
} verbs[] = {
	{ "abort",  REQ_ABORT,  REQ_TXN, REQ_TXN, 0, "abort -t TXN" },
	{ "begin",  REQ_BEGIN,  0, 0, 0, "begin" },
	{ "commit", REQ_COMMIT, REQ_TXN, REQ_TXN, 0, "commit -t TXN" },
	{ "del",    REQ_DEL,    REQ_TXN, 0, 2, "del [-t TXN] ROW COLUMN" },
	{ "get",    REQ_GET,    REQ_TXN | REQ_AT | REQ_LOCK, 0, 2,
	    "get [-t TXN | --at TS] [--lock] ROW COLUMN" },
	{ "notify", REQ_NOTIFY, REQ_TXN, 0, 2, "notify [-t TXN] ROW COLUMN" },
	{ "scan",   REQ_SCAN,   REQ_TXN | REQ_AT | REQ_PREFIX | REQ_COLUMN, 0,
	    0, "scan [-t TXN | --at TS] [--prefix P] [--column C]" },
	{ "set",    REQ_SET,    REQ_TXN, 0, 3, "set [-t TXN] ROW COLUMN VALUE" },
	{ "ts",     REQ_TS,     0, 0, 0, "ts" },
};

static const struct option_spec {
	const char *name;
	unsigned    bit;
	int         has_value;
} options[] = {
	{ "-t",       REQ_TXN,    1 },
	{ "--at",     REQ_AT,     1 },
	{ "--lock",   REQ_LOCK,   0 },
	{ "--prefix", REQ_PREFIX, 1 },
	{ "--column", REQ_COLUMN, 1 },
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

void
request_init(struct request *r)
{
	memset(r, 0, sizeof(*r));
}

void
request_dispose(struct request *r)
{
	size_t i;

	for (i = 0; i < REQUEST_MAX_WORDS; i++)
		perc_buf_dispose(&r->words[i]);
}

/*
 * The word as written, for a message: as it is when every byte of it
 * is printable, else escaped; cut short when long.  out holds it.
 */
static const char *
as_written(char out[64], const struct raw_word *w)
{
	size_t i;

	for (i = 0; i < w->len && w->len < 64; i++)
		if ((unsigned char)w->text[i] <= 0x20 ||
		    (unsigned char)w->text[i] > 0x7e)
			break;
	if (i < w->len)
		return error_quote(bytes_of(w->text, w->len));
	memcpy(out, w->text, w->len);
	out[w->len] = '\0';
	return out;
}

/* Cut line at runs of spaces into at most REQUEST_MAX_WORDS words. */
static int
split(struct raw_word *raw, size_t *n, const char *line, size_t len)
{
	size_t i = 0, start;

	for (*n = 0;; (*n)++) {
		while (i < len && line[i] == ' ')
			i++;
		if (i == len)
			return 0;
		if (*n == REQUEST_MAX_WORDS)
			return error_set(PERC_EUSAGE, "the request has more "
			    "than %d words; write a space inside a word as "
			    "\\x20", REQUEST_MAX_WORDS);
		for (start = i; i < len && line[i] != ' '; i++)
			;
		raw[*n].text = line + start;
		raw[*n].len = i - start;
	}
}

/*
 * Word number i (counted from 1) into out: \e alone is the empty word,
 * and stands for nothing inside a longer one.
 */
static int
decode(perc_buf *out, const struct raw_word *w, size_t i)
{
	char q[64], why[256];
	size_t k;

	buf_reset(out);
	if (w->len == 2 && memcmp(w->text, "\\e", 2) == 0)
		return buf_grow(out, 0);
	for (k = 0; k + 1 < w->len; k++) {
		if (w->text[k] != '\\')
			continue;
		if (w->text[++k] == 'e')
			return error_set(PERC_EUSAGE, "word %zu, '%s': \\e is "
			    "the empty word, a word of its own; write the byte "
			    "ESC as \\x1b", i, as_written(q, w));
	}
	if (unescape_field(out, w->text, w->len) < 0) {
		snprintf(why, sizeof(why), "%s", perc_errmsg());
		return error_set(PERC_EUSAGE, "word %zu, '%s': %s", i,
		    as_written(q, w), why);
	}
	return 0;
}

/* An option is a word that begins with '-', is more, and has no escape. */
static int
is_option(const struct raw_word *w)
{
	return w->len > 1 && w->text[0] == '-' &&
	    memchr(w->text, '\\', w->len) == NULL;
}

static int
is_word(const struct raw_word *w, const char *s)
{
	return w->len == strlen(s) && memcmp(w->text, s, w->len) == 0;
}

/* Strict decimal, from 1 up, as perc ts prints a timestamp. */
static int
parse_ts(perc_ts *out, const perc_buf *w)
{
	unsigned long long v;
	char *end;

	if (w->len == 0 || w->data[0] < '0' || w->data[0] > '9')
		return -1;
	errno = 0;
	v = strtoull(w->data, &end, 10);
	if (errno != 0 || end != w->data + w->len || v == 0)
		return -1;
	*out = v;
	return 0;
}

/* Set the option word *i names, stepping *i onto its value. */
static int
take_option(struct request *r, const struct verb_spec *v,
    const struct raw_word *raw, size_t n, size_t *i)
{
	const struct option_spec *o = NULL;
	const perc_buf *val;
	char q[64];
	size_t k;

	for (k = 0; k < NELEM(options) && o == NULL; k++)
		if (is_word(&raw[*i], options[k].name))
			o = &options[k];
	if (o == NULL || !(v->takes & o->bit))
		return error_set(PERC_EUSAGE, "word %zu, '%s': %s takes no "
		    "such option (usage: %s)%s", *i + 1, as_written(q,
		    &raw[*i]), v->name, v->usage, v->nargs == 0 ? "" :
		    "; a ROW or COLUMN that begins with '-' goes after --");
	if (o->has_value && *i + 1 == n)
		return error_set(PERC_EUSAGE, "word %zu, '%s': the option "
		    "needs a value (usage: %s)", *i + 1, o->name, v->usage);
	r->given |= o->bit;
	if (!o->has_value)
		return 0;
	val = &r->words[++*i];
	if (o->bit == REQ_TXN && strlen(val->data) != val->len)
		return error_set(PERC_EUSAGE, "word %zu: a transaction handle "
		    "holds no NUL byte", *i + 1);
	if (o->bit == REQ_AT && parse_ts(&r->at, val) < 0)
		return error_set(PERC_EUSAGE, "word %zu, '%s': --at takes a "
		    "timestamp, a decimal number from 1 up", *i + 1,
		    as_written(q, &raw[*i]));
	if (o->bit == REQ_TXN)
		r->txn = val->data;
	else if (o->bit == REQ_PREFIX)
		r->prefix = buf_bytes(val);
	else if (o->bit == REQ_COLUMN)
		r->column = buf_bytes(val);
	return 0;
}

/*
 * Word i as the next operand.  After the first operand the options are
 * over, and a word that looks like one in a ROW or COLUMN place is an
 * option put too late (as on the command line); a VALUE may begin with
 * '-'.  After "--" every word is an operand.
 */
static int
take_operand(struct request *r, const struct verb_spec *v,
    const struct raw_word *w, size_t i, int ended)
{
	char q[64];

	if (!ended && is_option(w) && !(v->nargs == 3 && r->nargs == 2))
		return error_set(PERC_EUSAGE, "word %zu, '%s': an option "
		    "after an operand; options go first, and a ROW or COLUMN "
		    "that begins with '-' goes after -- (usage: %s)", i + 1,
		    as_written(q, w), v->usage);
	if (r->nargs == v->nargs)
		return error_set(PERC_EUSAGE, "word %zu, '%s': one word too "
		    "many (usage: %s)", i + 1, as_written(q, w), v->usage);
	r->arg[r->nargs++] = buf_bytes(&r->words[i]);
	return 0;
}

/* What the words together must have. */
static int
check_whole(const struct request *r, const struct verb_spec *v)
{
	if ((r->given & v->needs) != v->needs)
		return error_set(PERC_EUSAGE, "%s needs -t TXN", v->name);
	if (r->nargs < v->nargs)
		return error_set(PERC_EUSAGE, "%s needs more operands (usage: "
		    "%s)", v->name, v->usage);
	if ((r->given & REQ_TXN) && (r->given & REQ_AT))
		return error_set(PERC_EUSAGE, "options -t and --at do "
		    "not go together: a transaction reads at its own start");
	if ((r->given & REQ_LOCK) && !(r->given & REQ_TXN))
		return error_set(PERC_EUSAGE, "option --lock needs -t: "
		    "the cell joins a transaction's writes");
	return 0;
}

int
request_parse(struct request *r, const char *line, size_t len)
{
	struct raw_word raw[REQUEST_MAX_WORDS];
	const struct verb_spec *v = NULL;
	char q[64];
	size_t n, i;
	int rc, ended = 0;

	r->given = 0;
	r->nargs = 0;
	if (memchr(line, '\0', len) != NULL)
		return error_set(PERC_EUSAGE, "the request holds a raw NUL "
		    "byte; write it as \\x00");
	if ((rc = split(raw, &n, line, len)) < 0)
		return rc;
	if (n == 0)
		return error_set(PERC_EUSAGE, "the request has no words");
	for (i = 0; i < n; i++)
		if ((rc = decode(&r->words[i], &raw[i], i + 1)) < 0)
			return rc;
	for (i = 0; i < NELEM(verbs) && v == NULL; i++)
		if (is_word(&raw[0], verbs[i].name))
			v = &verbs[i];
	if (v == NULL)
		return error_set(PERC_EUSAGE, "word 1, '%s': not a request; "
		    "one of begin, get, set, del, commit, abort, ts, scan",
		    as_written(q, &raw[0]));
	r->verb = v->verb;
	for (i = 1; i < n && rc == 0; i++) {
		if (!ended && r->nargs == 0 && is_word(&raw[i], "--"))
			ended = 1;
		else if (!ended && r->nargs == 0 && is_option(&raw[i]))
			rc = take_option(r, v, raw, n, &i);
		else
			rc = take_operand(r, v, &raw[i], i, ended);
	}
	return rc < 0 ? rc : check_whole(r, v);
}

int
request_is_verb(const char *word, size_t len)
{
	struct raw_word w = { word, len };
	size_t i;

	for (i = 0; i < NELEM(verbs); i++)
		if (is_word(&w, verbs[i].name))
			return 1;
	return 0;
}

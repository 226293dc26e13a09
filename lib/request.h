/*
 * lib/request.h - the request language of perc-shell(1): a line of
 * words, each in the escaped form, parsed into a verb, its options and
 * its operands.  The shell runs requests; a long-running observer
 * (perc run-observer --coprocess) speaks the same language.
 */
#ifndef REQUEST_H
#define REQUEST_H

#include "perc.h"

/* The requests. */
enum request_verb {
	REQ_ABORT,
	REQ_BEGIN,
	REQ_COMMIT,
	REQ_DEL,
	REQ_GET,
	REQ_NOTIFY,
	REQ_SCAN,
	REQ_SET,
	REQ_TS
};

/* The options of a request, as bits of request.given. */
enum {
	REQ_TXN    = 0x01,      /* -t TXN */
	REQ_AT     = 0x02,      /* --at TS */
	REQ_LOCK   = 0x04,      /* --lock */
	REQ_PREFIX = 0x08,      /* --prefix P */
	REQ_COLUMN = 0x10       /* --column C */
};

/* The most words a request has: scan -t TXN --prefix P --column C. */
#define REQUEST_MAX_WORDS 8

/*
 * One parsed request.  The bytes that txn, prefix, column and arg
 * point to are in words, and valid until the next request_parse.
 */
struct request {
	enum request_verb verb;
	unsigned    given;      /* the REQ_* options it has */
	const char *txn;        /* -t: a C string, no NUL inside */
	perc_ts     at;         /* --at */
	perc_bytes  prefix;     /* --prefix */
	perc_bytes  column;     /* --column */
	perc_bytes  arg[3];     /* the operands: ROW COLUMN [VALUE] */
	size_t      nargs;
	perc_buf    words[REQUEST_MAX_WORDS]; /* the unescaped words */
};

/* An empty request; request_dispose frees what parsing kept. */
void request_init(struct request *r);
void request_dispose(struct request *r);

/*
 * Parse line, len bytes without its newline, into r.  0, or PERC_EUSAGE
 * with a message that names the word at fault: a raw NUL byte, a bad
 * escape, \e anywhere but as a whole word, an unknown verb or option, an
 * option the verb does not take or that stands after an operand, a
 * missing or extra operand, a line of spaces only.
 */
int request_parse(struct request *r, const char *line, size_t len);

/* Is word, len bytes as written, the name of a request (begin, get...)? */
int request_is_verb(const char *word, size_t len);
#endif

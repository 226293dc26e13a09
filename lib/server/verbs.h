/*
 * lib/server/verbs.h - the requests a perc process sends its data
 * directory's store server: the one table of them, which both ends
 * read (client.c packs a request and unpacks its reply, server.c the
 * other way round), in wire.h's letters.
 *
 * The line between the two is the store seam (store.h): each request
 * is one of its verbs on one cell, or one batch of a walk, and the
 * Percolator protocol above it stays in every process, as the paper's
 * workers run it over Bigtable's tablet servers.  A request's fields
 * are the verb's arguments in store.h's order; the reply's out fields
 * are its out parameters; a walk's records are what it gives its
 * callback, one record each call.  A request with records (the
 * cells of a step on many, or of a transaction committed at once)
 * sends them after its fields; a step on many answers with one record
 * a cell, 1 when its step is done.  HELLO is the handshake, which every connection begins with.
 */
#ifndef SERVER_VERBS_H
#define SERVER_VERBS_H

/*   verb               request    its records  out    records */
#define SERVER_VERBS(X) \
	X(HELLO,            "bi",      "",          "bii",  "") \
	X(STOP,             "",        "",          "",     "") \
	X(UPGRADE,          "i",       "",          "",     "") \
	X(READ,             "bbtf",    "",          "bl",   "") \
	X(GET_LOCK,         "bb",      "",          "l",    "") \
	X(FIND_COMMIT,      "bbt",     "",          "ti",   "") \
	X(PREWRITE,         "wlu",     "",          "tl",   "") \
	X(COMMIT,           "bbttu",   "",          "",     "") \
	X(ROLLBACK,         "bbtu",    "",          "",     "") \
	X(PREWRITE_MANY,    "l",       "wu",        "",     "i") \
	X(COMMIT_MANY,      "tt",      "w",         "",     "i") \
	X(ROLLBACK_MANY,    "t",       "w",         "",     "i") \
	X(COMMIT_AT_ONCE,   "t",       "wu",        "t",    "") \
	X(LEASE_KEEP,       "bbtu",    "",          "",     "") \
	X(PUSH,             "bbtt",    "",          "",     "") \
	X(BULK_DONE,        "t",       "",          "",     "") \
	X(SAFE_POINT,       "",        "",          "t",    "") \
	X(SAFE_POINT_RAISE, "t",       "",          "",     "") \
	X(GC,               "tib",     "",          "zib",  "") \
	X(LOG_READ,         "ttboz",   "",          "ti",   "tbbib") \
	X(SCAN,             "botfibb", "",          "ilbb", "bbb") \
	X(LOCKS,            "",        "",          "",     "bbl") \
	X(LOCKS_BY_TXN,     "",        "",          "",     "bbl") \
	X(RAW,              "bo",      "",          "",     "ibitb") \
	X(NOTIFY_SCAN,      "o",       "",          "",     "bbb") \
	X(NOTIFY_PENDING,   "bbz",     "",          "",     "t") \
	X(FAILURES_GET,     "bb",      "",          "b",    "") \
	X(FAILURES_PUT,     "bbb",     "",          "",     "") \
	X(WEAK_PEND,        "bbtb",    "",          "",     "") \
	X(WEAK_SETTLE,      "bbttu",   "",          "",     "") \
	X(WEAK_CLEAR,       "bbt",     "",          "",     "")

/* A scan's other record (WIRE_PASSED): a lock it read past. */
#define SERVER_PASSED_RECORD "bbl"

enum server_verb {
#define SERVER_VERB_ID(name, req, reqrec, out, rec) V_##name,
	SERVER_VERBS(SERVER_VERB_ID)
#undef SERVER_VERB_ID
	SERVER_NVERBS
};

struct server_verb_layout {
	const char *name, *request, *request_record, *out, *record;
};

/* The table, by enum server_verb. */
extern const struct server_verb_layout server_verbs[SERVER_NVERBS];
#endif

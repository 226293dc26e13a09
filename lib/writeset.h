/*
 * lib/writeset.h - a transaction's buffered writes, one per cell: the
 * types the store's steps take (store.h), and the set that a journal
 * loads them into (journal.h).
 */
#ifndef WRITESET_H
#define WRITESET_H

#include <stddef.h>

#include "perc.h"

/* One buffered write; the write set keeps one per cell, sorted. */
struct write {
	perc_buf row;
	perc_buf col;
	perc_buf value;
	int      op;            /* OP_PUT, OP_DELETE, OP_LOCK, OP_ACK or
	                           OP_NOTIFY */
	int      ack;           /* an observer's ack rides on this cell */
	size_t   op_seq;        /* position in the journal */
};

struct writeset {
	struct write *w;
	size_t        n;            /* the writes that take locks */
	struct write *notes;        /* the weak notifications, one a cell
	                               in byte order, which take none: after
	                               writeset_fold, the nnotes entries of
	                               w past its n */
	size_t        nnotes;
	int           commit_begun; /* a commit has written locks */
	size_t        primary;      /* the ack's cell if any, else 0 */
};

int  writeset_append(struct writeset *ws, size_t *cap, int op,
                     perc_bytes row, perc_bytes col, perc_bytes value);
void writeset_fold(struct writeset *ws);
struct write *writeset_find(const struct writeset *ws, perc_bytes row,
                            perc_bytes col);
void writeset_dispose(struct writeset *ws);
#endif

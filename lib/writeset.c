/*
 * lib/writeset.c - a transaction's writes, one a cell, sorted: what
 * its journal holds, folded, and what the store's steps are given.
 */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "codec.h"
#include "error.h"
#include "writeset.h"

static int
write_cmp(const void *a, const void *b)
{
	const struct write *x = a, *y = b;
	int c = bytes_cmp(buf_bytes(&x->row), buf_bytes(&y->row));

	return c ? c : bytes_cmp(buf_bytes(&x->col), buf_bytes(&y->col));
}

/*
 * As write_cmp, the weak notifications after every other write, then
 * in journal order.
 */
static int
write_seq_cmp(const void *a, const void *b)
{
	const struct write *x = a, *y = b;
	int c = (x->op == OP_NOTIFY) - (y->op == OP_NOTIFY);

	if (c == 0)
		c = write_cmp(a, b);

	if (c != 0)
		return c;
	return x->op_seq < y->op_seq ? -1 : x->op_seq > y->op_seq;
}

/*
 * Add a copy of one write at the end of ws, whose array has room for
 * *cap; the order of the calls is the journal order that
 * writeset_fold keeps the last write of a cell by.
 */
int
writeset_append(struct writeset *ws, size_t *cap, int op, perc_bytes row,
    perc_bytes col, perc_bytes value)
{
	struct write *w, *grown;
	int rc;

	if (ws->n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		if ((grown = realloc(ws->w, *cap * sizeof(*grown))) == NULL)
			return error_set(PERC_EIO, "out of memory");
		ws->w = grown;
	}
	w = memset(&ws->w[ws->n], 0, sizeof(*w));
	w->op = op;
	w->op_seq = ws->n;
	ws->n++;
	if ((rc = buf_set(&w->row, row.data, row.len)) < 0 ||
	    (rc = buf_set(&w->col, col.data, col.len)) < 0)
		return rc;
	return buf_set(&w->value, value.data, value.len);
}

static void
write_dispose(struct write *w)
{
	perc_buf_dispose(&w->row);
	perc_buf_dispose(&w->col);
	perc_buf_dispose(&w->value);
}

/*
 * Fold w, a later write of the same cell, into kept: the last put or
 * delete wins; a lock-only read never hides a put or delete; an ack
 * stays with the cell whatever else the observer wrote there.
 */
static void
write_fold(struct write *kept, struct write *w)
{
	struct write tmp;
	int ack = kept->ack || w->op == OP_ACK;

	if (w->op == OP_PUT || w->op == OP_DELETE) {
		tmp = *kept;
		*kept = *w;
		*w = tmp;
	} else if (w->op == OP_ACK && kept->op == OP_LOCK) {
		kept->op = OP_ACK;
	}
	kept->ack = ack;
	write_dispose(w);
}

/*
 * Sort the writes by cell, keep one a cell, and choose the primary:
 * an observer's ack cell, so that its commit point is the ack's.  The
 * weak notifications go apart, one a cell (ws->notes).
 */
void
writeset_fold(struct writeset *ws)
{
	struct write *kept;
	size_t i, keep = 0, notes = 0;

	if (ws->n == 0)
		return;
	qsort(ws->w, ws->n, sizeof(*ws->w), write_seq_cmp);
	for (i = 0; i < ws->n; i++) {
		ws->w[i].ack = ws->w[i].op == OP_ACK;
		kept = keep > 0 ? &ws->w[keep - 1] : NULL;
		if (kept != NULL && write_cmp(kept, &ws->w[i]) == 0 &&
		    (kept->op == OP_NOTIFY) == (ws->w[i].op == OP_NOTIFY)) {
			if (kept->op == OP_NOTIFY)
				write_dispose(&ws->w[i]);
			else
				write_fold(kept, &ws->w[i]);
			continue;
		}
		if (i != keep) {
			ws->w[keep] = ws->w[i];
			memset(&ws->w[i], 0, sizeof(ws->w[i]));
		}
		notes += ws->w[keep++].op == OP_NOTIFY;
	}
	ws->n = keep - notes;
	ws->notes = notes > 0 ? ws->w + ws->n : NULL;
	ws->nnotes = notes;
	ws->primary = 0;
	for (i = 0; i < ws->n; i++)
		if (ws->w[i].ack)
			ws->primary = i;
}

struct write *
writeset_find(const struct writeset *ws, perc_bytes row, perc_bytes col)
{
	struct write key;

	if (ws->n == 0)
		return NULL;
	memset(&key, 0, sizeof(key));
	key.row.data = (char *)row.data;
	key.row.len = row.len;
	key.col.data = (char *)col.data;
	key.col.len = col.len;
	return bsearch(&key, ws->w, ws->n, sizeof(*ws->w), write_cmp);
}

void
writeset_dispose(struct writeset *ws)
{
	size_t i;

	for (i = 0; i < ws->n + ws->nnotes; i++)
		write_dispose(&ws->w[i]);
	free(ws->w);
	memset(ws, 0, sizeof(*ws));
}

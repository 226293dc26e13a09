/*
 * lib/server/dispatch.c - one request to the store server, served: its
 * fields read by the table's layout (verbs.h), the store's verb called
 * on the server's store, and the reply packed by the same table.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "codec.h"
#include "dispatch.h"
#include "server.h"
#include "verbs.h"
#include "wire.h"
#include "writeset.h"

/* A scan's batch ends after about this many bytes of cells. */
#define SCAN_BATCH_BYTES (256u << 10)
/* The most notifications' timestamps one look at a cell returns. */
#define PENDING_MAX 4096

void
dispatch_init(struct dispatch *d)
{
	memset(d, 0, sizeof(*d));
}

static void
gc_reset(struct dispatch *d)
{
	free(d->gc.cell.puts);
	perc_buf_dispose(&d->gc.cell.prefix);
	perc_buf_dispose(&d->gc.resume);
	memset(&d->gc, 0, sizeof(d->gc));
}

void
dispatch_dispose(struct dispatch *d)
{
	gc_reset(d);
	perc_buf_dispose(&d->recs);
}

/* A walk's record, as its verb's layout (or a scan's passed lock's). */
static int
add_record(struct dispatch *d, int tag, const char *layout, ...)
{
	unsigned char t = (unsigned char)tag;
	va_list ap;
	int rc;

	if ((rc = buf_add(&d->recs, &t, 1)) < 0)
		return rc;
	va_start(ap, layout);
	rc = wire_vpack(&d->recs, layout, ap);
	va_end(ap);
	return rc;
}

static int
give_cell(void *arg, perc_bytes row, perc_bytes col, perc_bytes value)
{
	struct dispatch *d = arg;
	int rc;

	if ((rc = add_record(d, WIRE_RECORD, server_verbs[V_SCAN].record, row,
	    col, value)) < 0)
		return rc;
	return d->recs.len >= SCAN_BATCH_BYTES;
}

static int
give_passed(void *arg, perc_bytes row, perc_bytes col,
    const struct lock_rec *lock)
{
	return add_record(arg, WIRE_PASSED, SERVER_PASSED_RECORD, row, col,
	    lock);
}

static int
give_change(void *arg, perc_ts commit_ts, perc_bytes row, perc_bytes col,
    int op, perc_bytes value)
{
	return add_record(arg, WIRE_RECORD, server_verbs[V_LOG_READ].record,
	    commit_ts, row, col, op, value);
}

static int
give_lock(void *arg, perc_bytes row, perc_bytes col,
    const struct lock_rec *lock)
{
	/* V_LOCKS and V_LOCKS_BY_TXN share the layout */
	return add_record(arg, WIRE_RECORD, server_verbs[V_LOCKS].record, row,
	    col, lock);
}

static int
give_raw(void *arg, int region, perc_bytes col, int kind, perc_ts ts,
    perc_bytes value)
{
	return add_record(arg, WIRE_RECORD, server_verbs[V_RAW].record, region,
	    col, kind, ts, value);
}

static int
give_dirty(void *arg, perc_bytes row, perc_bytes col, perc_bytes failures)
{
	return add_record(arg, WIRE_RECORD, server_verbs[V_NOTIFY_SCAN].record,
	    row, col, failures);
}

/*
 * The reply: result rc and its message, and the store's state after
 * it, then the walk's records (when the verb has them), then the out
 * fields by the verb's layout.
 */
static int
reply(perc_buf *out, struct dispatch *d, enum server_verb v, int rc, ...)
{
	const char *msg = rc < 0 ? perc_errmsg() : "";
	unsigned char end = WIRE_END;
	size_t start = out->len;
	va_list ap;
	int prc;

	if ((prc = wire_begin(out)) < 0 ||
	    (prc = wire_pack(out, WIRE_RESULT, rc, bytes_str(msg),
	    d->store->read_only, d->store->failed)) < 0)
		return prc;
	if (server_verbs[v].record[0] != '\0' &&
	    ((prc = buf_addb(out, buf_bytes(&d->recs))) < 0 ||
	    (prc = buf_add(out, &end, 1)) < 0))
		return prc;
	va_start(ap, rc);
	prc = wire_vpack(out, server_verbs[v].out, ap);
	va_end(ap);
	if (prc < 0)
		return prc;
	wire_end(out, start);
	return 0;
}

/* A request's cells: its records, writes (with flags, when its layout
   has them); -1 when they are not. */
struct cells {
	struct write *w;
	unsigned     *flags;
	size_t        n, cap;
};

static void
cells_dispose(struct cells *c)
{
	free(c->w);
	free(c->flags);
}

static int
take_cells(struct cells *c, struct wire_in *in, enum server_verb v)
{
	const char *layout = server_verbs[v].request_record;
	int tag;

	memset(c, 0, sizeof(*c));
	for (;;) {
		if (wire_u8(in, &tag) < 0 || tag > WIRE_RECORD)
			return -1;
		if (tag == WIRE_END)
			return 0;
		if (c->n == c->cap) {
			struct write *w;
			unsigned *f;

			c->cap = c->cap ? c->cap * 2 : 64;
			if ((w = realloc(c->w, c->cap * sizeof(*w))) != NULL)
				c->w = w;
			if ((f = realloc(c->flags, c->cap * sizeof(*f))) != NULL)
				c->flags = f;
			if (w == NULL || f == NULL)
				return -1;
		}
		c->flags[c->n] = 0;
		if (wire_unpack(in, layout, &c->w[c->n], &c->flags[c->n]) < 0)
			return -1;
		c->n++;
	}
}

/*
 * A step on many cells, each cell's the store's step on one, in turn:
 * a record a cell, 1 when done; 0 (a lock, a conflict, a failure) has
 * the caller take that cell's step alone, which says what is wrong.
 */
static int
many(perc_buf *out, struct dispatch *d, struct store *s, struct wire_in *in,
    enum server_verb v)
{
	const struct store_ops *ops = s->ops;
	struct lock_rec lock, blocker;
	struct cells c;
	perc_ts t1 = 0, t2 = 0, at;
	size_t i;
	int rc = -1, one;

	memset(&lock, 0, sizeof(lock));
	memset(&blocker, 0, sizeof(blocker));
	memset(&c, 0, sizeof(c));
	if ((v == V_PREWRITE_MANY ? wire_unpack(in, server_verbs[v].request,
	    &lock) : v == V_COMMIT_MANY ? wire_unpack(in,
	    server_verbs[v].request, &t1, &t2) : wire_unpack(in,
	    server_verbs[v].request, &t1)) < 0 || take_cells(&c, in, v) < 0)
		goto done;
	for (i = 0, rc = 0; i < c.n && rc == 0; i++) {
		perc_bytes row = buf_bytes(&c.w[i].row);
		perc_bytes col = buf_bytes(&c.w[i].col);

		if (v == V_PREWRITE_MANY) {
			lock.op = c.w[i].op;    /* each cell's, store.h */
			one = ops->prewrite(s, &at, &c.w[i], &lock, c.flags[i],
			    &blocker);
		}
		else if (v == V_COMMIT_MANY)
			one = ops->commit(s, row, col, t1, t2, 0);
		else
			one = ops->rollback(s, row, col, t1, 0);
		codec_lock_dispose(&blocker);
		rc = add_record(d, WIRE_RECORD, server_verbs[v].record,
		    one == 0);
	}
	if (rc == 0)
		rc = reply(out, d, v, 0);
done:
	codec_lock_dispose(&lock);
	cells_dispose(&c);
	return rc;
}

/* commit_at_once: the transaction's cells come as the request's records. */
static int
commit_at_once(perc_buf *out, struct dispatch *d, struct store *s,
    struct wire_in *in)
{
	struct writeset ws;
	struct cells c;
	perc_ts start_ts, commit_ts = 0;
	int rc;

	memset(&c, 0, sizeof(c));
	if (wire_unpack(in, server_verbs[V_COMMIT_AT_ONCE].request,
	    &start_ts) < 0 || take_cells(&c, in, V_COMMIT_AT_ONCE) < 0) {
		cells_dispose(&c);
		return -1;
	}
	memset(&ws, 0, sizeof(ws));
	ws.w = c.w;
	ws.n = c.n;
	rc = s->ops->commit_at_once(s, &ws, c.flags, start_ts, &commit_ts);
	cells_dispose(&c);
	return reply(out, d, V_COMMIT_AT_ONCE, rc, commit_ts);
}

int
dispatch(perc_buf *out, struct dispatch *d, struct store *s,
    struct wire_in *in)
{
	const struct server_verb_layout *l;
	const struct store_ops *ops = s->ops;
	perc_bytes row, col, b, col_v, *colp, prefix, from_row, from_col;
	const perc_bytes *opt;
	struct lock_fate fate;
	const struct lock_fate *known;
	struct lock_rec lock, blocker;
	struct write w;
	struct store_scan sc;
	struct store_log lg;
	perc_buf value = PERC_BUF_INIT;
	perc_ts t1, t2, ts[PENDING_MAX];
	unsigned flags;
	size_t z, k;
	int verb, i, rc = -1;

	d->store = s;
	if (wire_u8(in, &verb) < 0 || verb >= SERVER_NVERBS ||
	    (!d->greeted && verb != V_HELLO))
		return -1;
	l = &server_verbs[verb];
	d->served |= verb != V_HELLO;
	buf_reset(&d->recs);
	memset(&lock, 0, sizeof(lock));
	memset(&blocker, 0, sizeof(blocker));
	colp = &col_v;
	switch (verb) {
	case V_HELLO:
		if (wire_unpack(in, l->request, &b, &i) < 0)
			break;
		d->greeted = 1;
		rc = reply(out, d, verb, 0, bytes_str(server_build),
		    (int)getpid(), ops->data_format);
		break;
	case V_STOP:
		d->stop = 1;
		rc = reply(out, d, verb, 0);
		break;
	case V_UPGRADE:
		if (wire_unpack(in, l->request, &i) == 0)
			rc = reply(out, d, verb, ops->upgrade(s, i));
		break;
	case V_READ:
		if (wire_unpack(in, l->request, &row, &col, &t1, &fate,
		    &known) < 0)
			break;
		i = ops->read(s, &value, row, col, t1, &blocker, known);
		rc = reply(out, d, verb, i, buf_bytes(&value), &blocker);
		break;
	case V_GET_LOCK:
		if (wire_unpack(in, l->request, &row, &col) < 0)
			break;
		i = ops->get_lock(s, &lock, row, col);
		rc = reply(out, d, verb, i, &lock);
		break;
	case V_FIND_COMMIT:
		if (wire_unpack(in, l->request, &row, &col, &t1) < 0)
			break;
		t2 = 0;
		i = 0;
		rc = ops->find_commit(s, &t2, &i, row, col, t1);
		rc = reply(out, d, verb, rc, t2, i);
		break;
	case V_PREWRITE:
		if (wire_unpack(in, l->request, &w, &lock, &flags) < 0)
			break;
		t1 = 0;
		i = ops->prewrite(s, &t1, &w, &lock, flags, &blocker);
		rc = reply(out, d, verb, i, t1, &blocker);
		break;
	case V_COMMIT:
		if (wire_unpack(in, l->request, &row, &col, &t1, &t2,
		    &flags) == 0)
			rc = reply(out, d, verb, ops->commit(s, row, col, t1,
			    t2, flags));
		break;
	case V_ROLLBACK:
		if (wire_unpack(in, l->request, &row, &col, &t1, &flags) == 0)
			rc = reply(out, d, verb, ops->rollback(s, row, col, t1,
			    flags));
		break;
	case V_PREWRITE_MANY:
	case V_COMMIT_MANY:
	case V_ROLLBACK_MANY:
		rc = many(out, d, s, in, verb);
		break;
	case V_COMMIT_AT_ONCE:
		rc = commit_at_once(out, d, s, in);
		break;
	case V_LEASE_KEEP:
		if (wire_unpack(in, l->request, &row, &col, &t1, &flags) == 0)
			rc = reply(out, d, verb, ops->lease_keep(s, row, col,
			    t1, flags));
		break;
	case V_PUSH:
		if (wire_unpack(in, l->request, &row, &col, &t1, &t2) == 0)
			rc = reply(out, d, verb, ops->push(s, row, col, t1,
			    t2));
		break;
	case V_BULK_DONE:
		if (wire_unpack(in, l->request, &t1) == 0)
			rc = reply(out, d, verb, ops->bulk_done(s, t1));
		break;
	case V_SAFE_POINT:
		t1 = 0;
		i = ops->safe_point(s, &t1);
		rc = reply(out, d, verb, i, t1);
		break;
	case V_SAFE_POINT_RAISE:
		if (wire_unpack(in, l->request, &t1) == 0)
			rc = reply(out, d, verb, ops->safe_point_raise(s, t1));
		break;
	case V_GC:
		if (wire_unpack(in, l->request, &t1, &i, &b) < 0)
			break;
		/* A pass begins with no resume point: its cell state anew. */
		if (b.len == 0 || t1 != d->gc.bound) {
			gc_reset(d);
			d->gc.bound = d->gc.cell.bound = t1;
		}
		d->gc.dry_run = i;
		d->gc.removed = 0;
		i = ops->gc(s, &d->gc);
		rc = reply(out, d, verb, i, (size_t)d->gc.removed, d->gc.done,
		    buf_bytes(&d->gc.resume));
		break;
	case V_LOG_READ:
		memset(&lg, 0, sizeof(lg));
		if (wire_unpack(in, l->request, &lg.from, &lg.to, &lg.prefix,
		    colp, &lg.column, &lg.max) < 0)
			break;
		lg.change = give_change;
		lg.arg = d;
		i = ops->log_read(s, &lg);
		rc = reply(out, d, verb, i, lg.upto, lg.done);
		break;
	case V_SCAN:
		memset(&sc, 0, sizeof(sc));
		if (wire_unpack(in, l->request, &prefix, colp, &opt, &t1,
		    &fate, &known, &i, &from_row, &from_col) < 0)
			break;
		sc.prefix = prefix;
		sc.column = opt;
		sc.ts = t1;
		sc.known = known;
		sc.resume = i;
		sc.from_row = from_row;
		sc.from_col = from_col;
		sc.cell = give_cell;
		sc.passed = give_passed;
		sc.arg = d;
		i = ops->scan(s, &sc);
		rc = reply(out, d, verb, i, sc.done, &sc.blocker,
		    buf_bytes(&sc.brow), buf_bytes(&sc.bcol));
		codec_lock_dispose(&sc.blocker);
		perc_buf_dispose(&sc.brow);
		perc_buf_dispose(&sc.bcol);
		break;
	case V_LOCKS:
		rc = reply(out, d, verb, ops->locks(s, give_lock, d));
		break;
	case V_LOCKS_BY_TXN:
		rc = reply(out, d, verb, store_locks_by_txn(s, give_lock, d));
		break;
	case V_RAW:
		if (wire_unpack(in, l->request, &row, colp, &opt) == 0)
			rc = reply(out, d, verb, ops->raw(s, row, opt, give_raw,
			    d));
		break;
	case V_NOTIFY_SCAN:
		if (wire_unpack(in, l->request, colp, &opt) == 0)
			rc = reply(out, d, verb, ops->notify_scan(s, opt,
			    give_dirty, d));
		break;
	case V_NOTIFY_PENDING:
		if (wire_unpack(in, l->request, &row, &col, &z) < 0)
			break;
		if (z > PENDING_MAX)
			z = PENDING_MAX;
		i = ops->notify_pending(s, row, col, ts, z, &z);
		for (k = 0; i == 0 && k < z; k++)
			i = add_record(d, WIRE_RECORD, l->record, ts[k]);
		rc = reply(out, d, verb, i);
		break;
	case V_FAILURES_GET:
		if (wire_unpack(in, l->request, &row, &col) < 0)
			break;
		i = ops->failures_get(s, &value, row, col);
		rc = reply(out, d, verb, i, buf_bytes(&value));
		break;
	case V_FAILURES_PUT:
		if (wire_unpack(in, l->request, &row, &col, &b) == 0)
			rc = reply(out, d, verb, ops->failures_put(s, row, col,
			    b));
		break;
	case V_WEAK_PEND:
		if (wire_unpack(in, l->request, &row, &col, &t1, &b) == 0)
			rc = reply(out, d, verb, ops->weak_pend(s, row, col, t1,
			    b));
		break;
	case V_WEAK_SETTLE:
		if (wire_unpack(in, l->request, &row, &col, &t1, &t2,
		    &flags) == 0)
			rc = reply(out, d, verb, ops->weak_settle(s, row, col,
			    t1, t2, flags));
		break;
	case V_WEAK_CLEAR:
		if (wire_unpack(in, l->request, &row, &col, &t1) == 0)
			rc = reply(out, d, verb, ops->weak_clear(s, row, col,
			    t1));
		break;
	}
	codec_lock_dispose(&lock);
	codec_lock_dispose(&blocker);
	perc_buf_dispose(&value);
	return rc;
}

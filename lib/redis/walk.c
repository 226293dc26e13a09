/*
 * lib/redis/walk.c - walks of the Redis store: scans, resolve-locks'
 * walk of the locks, gc's pass, show's raw cells (and for notify.c, the
 * walk of the notify region).
 *
 * A table's keys are spread over 64 buckets (redis.h), each a
 * sorted set in byte order.  A walk reads every bucket in pages, all
 * pages it needs at once in one pipeline (about one round trip for the
 * whole cluster), and merges the 64 streams in byte order on the
 * client, so callers see the keys in the order of one LevelDB.  Each
 * page is one atomic look (lib/redis/lua/range.lua); a walk as a whole is
 * not a snapshot, which no caller needs: a scan's pages read their
 * cells at its snapshot as they go (lib/redis/lua/scan.lua), each cell as
 * the read script would, and the others, like their LevelDB versions,
 * only report or act on each key once.
 */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cell.h"
#include "clock.h"
#include "codec.h"
#include "error.h"
#include "redis.h"
#include "walk.h"

#define PAGE      256           /* keys of one bucket per page */
/* A scan's pages (of its cells' keys) start small, for the scan of a
   few cells, and grow as it goes on: what it reads ahead stays small. */
#define SCAN_PAGE_FIRST 64
#define SCAN_PAGE_MAX   2048


/* The smallest string above every string that starts with prefix. */
static int
prefix_end(perc_buf *out, perc_bytes prefix)
{
	const unsigned char *p = prefix.data;
	size_t n = prefix.len;
	unsigned char last;
	int rc;

	while (n > 0 && p[n - 1] == 0xff)
		n--;
	buf_reset(out);
	if (n == 0)
		return buf_add(out, "+", 1);    /* no end: all the rest */
	last = p[n - 1] + 1;
	if ((rc = buf_add(out, "(", 1)) == 0 &&
	    (rc = buf_add(out, p, n - 1)) == 0)
		rc = buf_add(out, &last, 1);
	return rc;
}

/* A bound of ZRANGEBYLEX: '[' (inclusive) or '(' then the key. */
int
rs_bound(perc_buf *out, char how, perc_bytes key)
{
	buf_reset(out);
	if (buf_add(out, &how, 1) < 0)
		return PERC_EIO;
	return buf_addb(out, key);
}

/*
 * Walk the keys of the sorted sets which ('k' or 'l') of every bucket,
 * or only of bucket only (>= 0), from bound from to prefix_end(range).
 */
int
rs_walk_init(struct walk *w, struct redis_store *s, char which, int values,
    perc_bytes from, perc_bytes range, int only)
{
	unsigned i;
	int rc;

	memset(w, 0, sizeof(*w));
	w->s = s;
	w->which = which;
	w->values = values;
	w->first = only >= 0 ? (unsigned)only : 0;
	w->count = only >= 0 ? 1 : RS_BUCKETS;
	if ((rc = prefix_end(&w->stop, range)) < 0)
		return rc;
	for (i = w->first; i < w->first + w->count; i++)
		if ((rc = buf_addb(&w->b[i].from, from)) < 0)
			return rc;
	return 0;
}

void
rs_walk_dispose(struct walk *w)
{
	size_t i, j;

	for (i = 0; i < RS_BUCKETS; i++) {
		for (j = 0; j < w->b[i].cap; j++) {
			perc_buf_dispose(&w->b[i].items[j].key);
			perc_buf_dispose(&w->b[i].items[j].value);
		}
		free(w->b[i].items);
		perc_buf_dispose(&w->b[i].from);
	}
	perc_buf_dispose(&w->stop);
}

/* Make room for n items in bucket b's page. */
static int
page_room(struct bucket *b, size_t n)
{
	struct page_item *it;

	if (n <= b->cap)
		return 0;
	if ((it = realloc(b->items, n * sizeof(*it))) == NULL)
		return error_set(PERC_EIO, "out of memory");
	memset(it + b->cap, 0, (n - b->cap) * sizeof(*it));
	b->items = it;
	b->cap = n;
	return 0;
}

/* Keep the page reply r of bucket b; the next page starts after it. */
static int
take_page(struct walk *w, struct bucket *b, const redisReply *r)
{
	size_t step = w->values ? 2 : 1, n, i;
	struct page_item *it;
	const redisReply *k, *v;

	if (r->type == REDIS_REPLY_ERROR)
		return rs_reply_error(w->s, r, "walking the table");
	if (r->type != REDIS_REPLY_ARRAY || r->elements % step != 0)
		return rs_bad_reply(w->s, "walking the table");
	n = r->elements / step;
	if (page_room(b, n) < 0)
		return PERC_EIO;
	for (i = 0; i < n; i++) {
		k = r->element[i * step];
		v = w->values ? r->element[i * step + 1] : NULL;
		if (k->type != REDIS_REPLY_STRING)
			return rs_bad_reply(w->s, "walking the table");
		it = &b->items[i];
		if (buf_set(&it->key, k->str, k->len) < 0)
			return error_set(PERC_EIO, "out of memory");
		it->has_value = v != NULL && v->type == REDIS_REPLY_STRING;
		if (it->has_value && buf_set(&it->value, v->str, v->len) < 0)
			return error_set(PERC_EIO, "out of memory");
	}
	b->n = n;
	b->pos = 0;
	b->last = n < PAGE;
	if (n > 0)
		return rs_bound(&b->from, '(', buf_bytes(&b->items[n - 1].key));
	return 0;
}

/*
 * Keep the page of scan.lua r of bucket b: its cells (as keys: their
 * prefixes), each with its code and value; where the next page starts.
 */
static int
take_scan_page(struct walk *w, struct bucket *b, const redisReply *r)
{
	const redisReply *p, *c, *v;
	struct page_item *it;
	size_t n, i;

	if (r->type == REDIS_REPLY_ERROR)
		return rs_reply_error(w->s, r, "scanning");
	if (r->type != REDIS_REPLY_ARRAY || r->elements < 2 ||
	    (r->elements - 2) % 3 != 0 ||
	    r->element[0]->type != REDIS_REPLY_STRING ||
	    r->element[1]->type != REDIS_REPLY_INTEGER)
		return rs_bad_reply(w->s, "scanning");
	n = (r->elements - 2) / 3;
	if (page_room(b, n) < 0)
		return PERC_EIO;
	for (i = 0; i < n; i++) {
		p = r->element[2 + 3 * i];
		c = r->element[3 + 3 * i];
		v = r->element[4 + 3 * i];
		if (p->type != REDIS_REPLY_STRING ||
		    c->type != REDIS_REPLY_INTEGER ||
		    v->type != REDIS_REPLY_STRING)
			return rs_bad_reply(w->s, "scanning");
		it = &b->items[i];
		it->code = (int)c->integer;
		it->has_value = 1;
		if (buf_set(&it->key, p->str, p->len) < 0 ||
		    buf_set(&it->value, v->str, v->len) < 0)
			return error_set(PERC_EIO, "out of memory");
	}
	b->n = n;
	b->pos = 0;
	b->last = r->element[1]->integer != 0;
	if (buf_set(&b->from, r->element[0]->str, r->element[0]->len) < 0)
		return error_set(PERC_EIO, "out of memory");
	return 0;
}

/* Does bucket i need its next page? */
static int
needs_page(const struct walk *w, unsigned i)
{
	return w->b[i].pos >= w->b[i].n && !w->b[i].last;
}

/*
 * Read the next page of every bucket whose page is used up, until each
 * has keys in hand or is at its end (a scan's page may hold no cell
 * with a value and still not be the last).
 */
static int
walk_fill(struct walk *w)
{
	char names[3][RS_KEY_MAX], limit[RS_BUCKETS][16];
	perc_bytes keys[3], args[6];
	unsigned idx[RS_BUCKETS], i, delay = 1000;
	int64_t deadline = rs_deadline(w->s);
	rc_pipeline *p = NULL;
	size_t n, j;
	int rc = 0, script = w->scan ? RS_SCAN : RS_RANGE, unconfirmed;
	struct bucket *b;

	args[1] = buf_bytes(&w->stop);
	if (w->scan)
		memcpy(args + 3, w->scan, 3 * sizeof(*args));
	else
		args[3] = bytes_of(w->values ? "1" : "0", 1);
	for (;;) {
		for (i = w->first; i < w->first + w->count; i++)
			if (needs_page(w, i))
				break;
		if (i == w->first + w->count)
			return 0;
		if ((rc = rc_pipeline_new(&p, w->s->cl)) < 0)
			return rc;
		for (n = 0; i < w->first + w->count && rc == 0; i++) {
			if (!needs_page(w, i))
				continue;
			b = &w->b[i];
			rs_bucket_key(names[0], w->s, i, w->which);
			rs_bucket_key(names[1], w->s, i, 'v');
			rs_bucket_key(names[2], w->s, i, 'f');
			keys[0] = bytes_of(names[0], strlen(names[0]));
			keys[1] = bytes_of(names[1], strlen(names[1]));
			keys[2] = bytes_of(names[2], strlen(names[2]));
			args[0] = buf_bytes(&b->from);
			if (w->scan)
				b->page = b->page == 0 ? SCAN_PAGE_FIRST :
				    b->page < SCAN_PAGE_MAX ? 2 * b->page :
				    SCAN_PAGE_MAX;
			snprintf(limit[n], sizeof(limit[n]), "%u",
			    w->scan ? b->page : PAGE);
			args[2] = bytes_of(limit[n], strlen(limit[n]));
			idx[n++] = i;
			rc = w->scan ? rc_pipeline_evalsha(p, keys[0], RC_WAIT,
			    w->s->script[script], 3, keys, 6, args) :
			    rc_pipeline_evalsha(p, keys[0], 0,
			    w->s->script[script], 2, keys, 4, args);
		}
		if (rc == 0)
			rc = rc_pipeline_exec(p, rs_deadline(w->s));
		for (j = unconfirmed = 0; j < n && rc == 0; j++)
			if (w->scan && rc_pipeline_replicas(p, j) == 0)
				unconfirmed = 1;        /* asked again */
			else
				rc = w->scan ? take_scan_page(w, &w->b[idx[j]],
				    rc_pipeline_reply(p, j)) : take_page(w,
				    &w->b[idx[j]], rc_pipeline_reply(p, j));
		rc_pipeline_free(p);
		p = NULL;
		if (rc < 0)
			return rc;
		if (unconfirmed && clock_backoff(&delay, 100000, deadline) < 0)
			return error_set(PERC_ETIMEOUT, "no replica of a redis "
			    "master of table '%s' confirmed what a scan read in "
			    "time; check the cluster's replicas, then retry",
			    w->s->table);
	}
}

/*
 * The next key of the walk, the smallest of every bucket's next: 1
 * with *bucket and *item, 0 at the end, or a failure.
 */
int
rs_walk_next(struct walk *w, unsigned *bucket, const struct page_item **item)
{
	const struct page_item *best = NULL, *it;
	unsigned i;
	int rc;

	if ((rc = walk_fill(w)) < 0)
		return rc;
	for (i = w->first; i < w->first + w->count; i++) {
		if (w->b[i].pos >= w->b[i].n)
			continue;
		it = &w->b[i].items[w->b[i].pos];
		if (best == NULL || bytes_cmp(buf_bytes(&it->key),
		    buf_bytes(&best->key)) < 0) {
			best = it;
			*bucket = i;
		}
	}
	if (best == NULL)
		return 0;
	w->b[*bucket].pos++;
	*item = best;
	return 1;
}

/*
 * One batch of a scan (store_scan in store.h): the cells of the range
 * in byte order, read at the snapshot a page of each bucket at a time
 * (lib/redis/lua/scan.lua), all buckets' pages in one pipeline, and handed
 * to sc->cell in order.
 */
int
rs_scan(struct store *base, struct store_scan *sc)
{
	struct redis_store *s = (struct redis_store *)base;
	perc_buf range = PERC_BUF_INIT, from = PERC_BUF_INIT;
	perc_buf cellp = PERC_BUF_INIT;
	const struct page_item *it;
	struct rs_snapshot snap;
	struct key k;
	struct walk w;
	unsigned b;
	int rc;

	memset(&k, 0, sizeof(k));
	memset(&w, 0, sizeof(w));
	sc->done = 0;
	rs_snapshot_args(&snap, sc->ts, sc->known);
	if ((rc = codec_row_prefix(&range, REGION_CELL, sc->prefix)) < 0)
		goto done;
	if (sc->resume) {
		if ((rc = codec_cell_prefix(&cellp, REGION_CELL, sc->from_row,
		    sc->from_col)) < 0 || (rc = rs_bound(&from, '[',
		    buf_bytes(&cellp))) < 0 || (sc->resume == SCAN_AFTER &&
		    (rc = buf_add(&from, "\7", 1)) < 0))
			goto done;
	} else if ((rc = rs_bound(&from, '[', buf_bytes(&range))) < 0) {
		goto done;
	}
	if ((rc = rs_walk_init(&w, s, 'k', 0, buf_bytes(&from),
	    buf_bytes(&range), -1)) < 0)
		goto done;
	w.scan = snap.args;
	while ((rc = rs_walk_next(&w, &b, &it)) > 0) {
		/* A cell's prefix, made a key of it to be parsed. */
		if ((rc = buf_set(&cellp, it->key.data, it->key.len)) < 0 ||
		    (rc = buf_add(&cellp, "\3\0\0\0\0\0\0\0\0", 9)) < 0 ||
		    (rc = codec_parse_key(&k, cellp.data, cellp.len)) < 0)
			break;
		if (k.row.len < sc->prefix.len || memcmp(k.row.data,
		    sc->prefix.data, sc->prefix.len) != 0 ||
		    (sc->column != NULL &&
		    !bytes_eq(buf_bytes(&k.col), *sc->column)))
			continue;
		if (it->code == 0) {
			/* 1: the batch is full; < 0: a failure to return. */
			if ((rc = sc->cell(sc->arg, buf_bytes(&k.row),
			    buf_bytes(&k.col), buf_bytes(&it->value))) != 0)
				break;
		} else if (it->code == 4) {
			/* A lock of the known transaction, read past. */
			if ((rc = codec_lock_decode(&sc->blocker,
			    it->value.data, it->value.len)) < 0 ||
			    (sc->passed != NULL && (rc = sc->passed(sc->arg,
			    buf_bytes(&k.row), buf_bytes(&k.col),
			    &sc->blocker)) < 0))
				break;
		} else if (it->code == 2) {
			if ((rc = codec_lock_decode(&sc->blocker,
			    it->value.data, it->value.len)) < 0 ||
			    (rc = buf_set(&sc->brow, k.row.data,
			    k.row.len)) < 0 || (rc = buf_set(&sc->bcol,
			    k.col.data, k.col.len)) < 0)
				break;
			rc = PERC_ELOCKED;
			break;
		} else {
			rc = error_set(PERC_EIO, "the value of row '%s' column "
			    "'%s' is missing; redis table '%s' is damaged",
			    error_quote(buf_bytes(&k.row)),
			    error_quote(buf_bytes(&k.col)), s->table);
			break;
		}
	}
	if (rc == 1)
		rc = 0;                 /* the batch is full */
	else if (rc == 0)
		sc->done = 1;
done:
	rs_walk_dispose(&w);
	codec_key_dispose(&k);
	perc_buf_dispose(&range);
	perc_buf_dispose(&from);
	perc_buf_dispose(&cellp);
	return rc;
}

/*
 * Every lock of the table, in byte order of row and column, from the
 * buckets' lock sets: the cost follows the number of locks.  fn may
 * resolve them as the walk goes.
 */
int
rs_locks(struct store *base, int (*fn)(void *arg, perc_bytes row,
    perc_bytes col, const struct lock_rec *lock), void *arg)
{
	struct redis_store *s = (struct redis_store *)base;
	static const unsigned char region = REGION_CELL;
	const struct page_item *it;
	struct lock_rec lock;
	struct key k;
	struct walk w;
	unsigned b;
	int rc;

	memset(&lock, 0, sizeof(lock));
	memset(&k, 0, sizeof(k));
	if ((rc = rs_walk_init(&w, s, 'l', 1, bytes_of("[c", 2),
	    bytes_of(&region, 1), -1)) < 0)
		goto done;
	while ((rc = rs_walk_next(&w, &b, &it)) > 0) {
		if (!it->has_value)
			continue;       /* resolved since the page was read */
		if ((rc = codec_parse_key(&k, it->key.data, it->key.len)) < 0 ||
		    (rc = codec_lock_decode(&lock, it->value.data,
		    it->value.len)) < 0 ||
		    (rc = fn(arg, buf_bytes(&k.row), buf_bytes(&k.col),
		    &lock)) != 0)
			break;
	}
done:
	rs_walk_dispose(&w);
	codec_key_dispose(&k);
	codec_lock_dispose(&lock);
	return rc;
}

/* The keys gc drops in one bucket, removed a page at a time. */
struct drops {
	perc_buf *keys;
	size_t    n, cap;
};

/* Remove the keys of d from bucket b, in one step (drop.lua). */
static int
drops_flush(struct redis_store *s, unsigned b, struct drops *d)
{
	char names[4][RS_KEY_MAX];
	perc_bytes keys[4], *argv;
	redisReply *r;
	size_t i;
	int rc;

	if (d->n == 0)
		return 0;
	if ((argv = calloc(d->n, sizeof(*argv))) == NULL)
		return error_set(PERC_EIO, "out of memory");
	for (i = 0; i < d->n; i++)
		argv[i] = buf_bytes(&d->keys[i]);
	rs_bucket_keys(names, keys, s, b);
	if ((rc = rc_evalsha(&r, NULL, s->cl, s->script[RS_DROP], keys[0], 4,
	    keys, d->n, argv, rs_deadline(s))) == 0) {
		if (r->type == REDIS_REPLY_ERROR)
			rc = rs_reply_error(s, r, "removing old versions");
		freeReplyObject(r);
	}
	free(argv);
	d->n = 0;
	return rc;
}

static int
drops_add(struct drops *d, perc_bytes key)
{
	perc_buf *k;
	size_t cap;

	if (d->n == d->cap) {
		cap = d->cap ? 2 * d->cap : PAGE;
		if ((k = realloc(d->keys, cap * sizeof(*k))) == NULL)
			return error_set(PERC_EIO, "out of memory");
		memset(k + d->cap, 0, (cap - d->cap) * sizeof(*k));
		d->keys = k;
		d->cap = cap;
	}
	return buf_set(&d->keys[d->n++], key.data, key.len);
}

/*
 * gc's pass, in one call: every cell's keys in order, each asked of
 * cell_gc_drops, and those it drops removed a page at a time per
 * bucket.  Nothing is held that others wait on, so no batches.
 */
int
rs_gc(struct store *base, struct store_gc *gc)
{
	struct redis_store *s = (struct redis_store *)base;
	static const unsigned char region = REGION_CELL;
	struct drops d[RS_BUCKETS];
	const struct page_item *it;
	const unsigned char *k;
	struct walk w;
	unsigned b;
	size_t i;
	int rc, kind;

	memset(d, 0, sizeof(d));
	if ((rc = rs_walk_init(&w, s, 'k', 1, bytes_of("[c", 2),
	    bytes_of(&region, 1), -1)) < 0)
		goto done;
	while ((rc = rs_walk_next(&w, &b, &it)) > 0) {
		k = (const unsigned char *)it->key.data;
		if (!it->has_value || it->key.len < 10)
			continue;       /* gone since the page was read */
		kind = k[it->key.len - 9];
		rc = cell_gc_drops(&gc->cell, bytes_of(k, it->key.len - 9),
		    kind, ~codec_get_u64(k + it->key.len - 8),
		    buf_bytes(&it->value));
		if (rc <= 0) {
			if (rc < 0)
				break;
			continue;
		}
		gc->removed += kind == KIND_WRITE;
		if (!gc->dry_run && ((rc = drops_add(&d[b],
		    buf_bytes(&it->key))) < 0 || (d[b].n >= PAGE &&
		    (rc = drops_flush(s, b, &d[b])) < 0)))
			break;
	}
	for (b = 0; b < RS_BUCKETS && rc == 0; b++)
		rc = drops_flush(s, b, &d[b]);
	gc->done = rc == 0;
done:
	for (b = 0; b < RS_BUCKETS; b++) {
		for (i = 0; i < d[b].cap; i++)
			perc_buf_dispose(&d[b].keys[i]);
		free(d[b].keys);
	}
	rs_walk_dispose(&w);
	return rc;
}

/* show's walk of one region of row (and of column col only). */
static int
raw_region(struct redis_store *s, int region, perc_bytes row,
    const perc_bytes *col, store_raw_fn fn, void *arg)
{
	perc_buf prefix = PERC_BUF_INIT, from = PERC_BUF_INIT;
	const struct page_item *it;
	struct key k;
	struct walk w;
	unsigned b;
	int rc;

	memset(&k, 0, sizeof(k));
	memset(&w, 0, sizeof(w));
	if (col != NULL)
		rc = codec_cell_prefix(&prefix, region, row, *col);
	else if ((rc = codec_row_prefix(&prefix, region, row)) == 0)
		rc = buf_add(&prefix, "\0\1", 2);   /* the row's end mark */
	if (rc < 0 || (rc = rs_bound(&from, '[', buf_bytes(&prefix))) < 0 ||
	    (rc = rs_walk_init(&w, s, 'k', 1, buf_bytes(&from),
	    buf_bytes(&prefix), (int)rs_bucket(row))) < 0)
		goto done;
	while ((rc = rs_walk_next(&w, &b, &it)) > 0) {
		if (!it->has_value)
			continue;       /* gone since the page was read */
		if ((rc = codec_parse_key(&k, it->key.data, it->key.len)) < 0 ||
		    (rc = fn(arg, region, buf_bytes(&k.col), k.kind, k.ts,
		    buf_bytes(&it->value))) != 0)
			break;
	}
done:
	rs_walk_dispose(&w);
	codec_key_dispose(&k);
	perc_buf_dispose(&prefix);
	perc_buf_dispose(&from);
	return rc;
}

/* Every raw key of row (of column col only): the cells, then notify. */
int
rs_raw(struct store *base, perc_bytes row, const perc_bytes *col,
    store_raw_fn fn, void *arg)
{
	struct redis_store *s = (struct redis_store *)base;
	int rc;

	if ((rc = raw_region(s, REGION_CELL, row, col, fn, arg)) == 0)
		rc = raw_region(s, REGION_NOTIFY, row, col, fn, arg);
	return rc;
}

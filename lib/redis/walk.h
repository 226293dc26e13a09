/* lib/redis/walk.h - a walk of the Redis store's buckets, merged in
   byte order (walk.c) */
#ifndef RS_WALK_H
#define RS_WALK_H

#include "redis.h"

struct page_item {
	perc_buf key, value;
	int      has_value;
	int      code;          /* a scan's: read.lua's code */
};

struct bucket {
	struct page_item *items;
	size_t            n, pos, cap;
	perc_buf          from;     /* ZRANGEBYLEX start of the next page */
	int               last;     /* no page after the one in hand */
	unsigned          page;     /* a scan's: keys in its next page */
};

struct walk {
	struct redis_store *s;
	char                which;  /* the sorted set: 'k' or 'l' */
	int                 values;
	const perc_bytes   *scan;   /* a scan's pages (scan.lua): its
	                               snapshot's 3 arguments; NULL: keys */
	perc_buf            stop;   /* ZRANGEBYLEX end bound */
	unsigned            first, count;   /* the buckets walked */
	struct bucket       b[RS_BUCKETS];
};

/*
 * Walk the keys of the sorted sets which ('k' or 'l') of every bucket,
 * or only of bucket only (>= 0), from bound from to the end of range
 * (every key that starts with it); with values, their values too.
 */
int  rs_walk_init(struct walk *w, struct redis_store *s, char which,
                  int values, perc_bytes from, perc_bytes range, int only);
/* The next key: 1 with *bucket and *item, 0 at the end, or a failure. */
int  rs_walk_next(struct walk *w, unsigned *bucket,
                  const struct page_item **item);
void rs_walk_dispose(struct walk *w);
/* A bound of ZRANGEBYLEX: '[' (inclusive) or '(' then the key. */
int  rs_bound(perc_buf *out, char how, perc_bytes key);
#endif

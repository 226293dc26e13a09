/* lib/server/dispatch.h - serving one request of a connection */
#ifndef SERVER_DISPATCH_H
#define SERVER_DISPATCH_H

#include "store.h"
#include "wire.h"

/* What the server keeps of one connection between its requests. */
struct dispatch {
	struct store   *store;    /* the server's, which every reply tells
	                             the state of (WIRE_RESULT) */
	int             greeted;  /* HELLO came: other requests may */
	int             stop;     /* STOP came: the server is to finish */
	int             served;   /* a request of the store came */
	struct store_gc gc;       /* gc's pass, whose state within a cell
	                             carries over between its batches */
	perc_buf        recs;     /* a walk's records, as they are given */
};

void dispatch_init(struct dispatch *d);
void dispatch_dispose(struct dispatch *d);
/*
 * Serve the request in in on s, appending its reply's frame to out: 0,
 * or < 0 when the request is not one (the connection is dropped).
 */
int  dispatch(perc_buf *out, struct dispatch *d, struct store *s,
              struct wire_in *in);
#endif

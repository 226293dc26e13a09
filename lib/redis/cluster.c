/*
 * lib/redis/cluster.c - a small Redis Cluster client on hiredis
 * (cluster.h): its nodes, their connections and the slot map.
 *
 * The client holds the slot map (slot -> node) and a table of the
 * nodes it has heard of: the seeds, and every master and replica of
 * the last CLUSTER SLOTS.  A node keeps its index in that table for
 * the life of the client, so the map, a redirection and a caller can
 * all name it by index; its connection is opened when a command first
 * needs it and dropped at the first error on it.  A stale map is
 * loaded again, from any node that answers.
 *
 * Commands run in pipeline.c, which routes them by this map and sends
 * them on these connections; url.c reads the seed list.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <hiredis/sds.h>

#include "clock.h"
#include "error.h"
#include "cluster_internal.h"

/* CRC16-XMODEM (poly 0x1021, init 0), the Redis Cluster key hash. */
static unsigned
crc16(const unsigned char *p, size_t len)
{
	unsigned crc = 0;
	int i;

	while (len-- > 0) {
		crc ^= (unsigned)*p++ << 8;
		for (i = 0; i < 8; i++)
			crc = crc & 0x8000 ? (crc << 1 ^ 0x1021) : crc << 1;
	}
	return crc & 0xffff;
}

unsigned
rc_slot(const void *key, size_t len)
{
	const unsigned char *k = key, *open, *close;

	if (len > 0 && (open = memchr(k, '{', len)) != NULL) {
		close = memchr(open + 1, '}', len - (size_t)(open + 1 - k));
		if (close != NULL && close > open + 1)
			return crc16(open + 1, (size_t)(close - open - 1)) %
			    RC_SLOTS;
	}
	return crc16(k, len) % RC_SLOTS;
}

/* The index of host:port in the node table, added if new; -1: no memory. */
static int
node_get(rc_cluster *cl, const char *host, size_t hostlen, int port)
{
	char name[sizeof(cl->nodes->addr.host)];
	struct node *nd;
	size_t k, cap;

	/* A copy: host may point into the table that realloc moves. */
	if (hostlen >= sizeof(name) || cl->nnodes >= INT16_MAX)
		return -1;
	memcpy(name, host, hostlen);
	name[hostlen] = '\0';
	for (k = 0; k < cl->nnodes; k++)
		if (cl->nodes[k].addr.port == port &&
		    strcmp(cl->nodes[k].addr.host, name) == 0)
			return (int)k;
	if (cl->nnodes == cl->capnodes) {
		cap = cl->capnodes ? cl->capnodes * 2 : 8;
		if ((nd = realloc(cl->nodes, cap * sizeof(*nd))) == NULL)
			return -1;
		cl->nodes = nd;
		cl->capnodes = cap;
	}
	nd = &cl->nodes[cl->nnodes];
	memset(nd, 0, sizeof(*nd));
	memcpy(nd->addr.host, name, hostlen + 1);
	nd->addr.port = port;
	snprintf(nd->name, sizeof(nd->name), strchr(nd->addr.host, ':') ?
	    "[%s]:%d" : "%s:%d", nd->addr.host, port);
	return (int)cl->nnodes++;
}

/* Remember what a node said, for the message when the deadline passes. */
void
rc_node_note(rc_cluster *cl, int k, const char *why)
{
	struct node *nd = &cl->nodes[k];

	/* A read or write timeout shows in hiredis as EAGAIN. */
	if (strcmp(why, strerror(EAGAIN)) == 0) {
		why = "timed out";
		nd->timeouts++;
	}
	snprintf(nd->why, sizeof(nd->why), "%s", why);
	nd->failed_gen = cl->gen;
}

/* The connection failed: note why, drop it, and doubt the map. */
void
rc_node_fail(rc_cluster *cl, int k, const char *why)
{
	rc_node_note(cl, k, why);
	redisFree(cl->nodes[k].ctx);
	cl->nodes[k].ctx = NULL;
	cl->stale = 1;
}

/*
 * How long to wait on one connect, write or read: min(time left,
 * RC_IO_MS), plus RC_WORK_MS_PER_MIB for each MiB of the commands in
 * flight on that connection.  A node storing a value of 64 MiB (its
 * script, the AOF fsync, the copy to a replica that WAIT waits for) is
 * alive but busy for seconds; without the allowance the client took it
 * for a dead one, and sent the command again and again until the
 * deadline.  The allowance is work, not waiting: a call may run past
 * its deadline by that much.  The same holds of a node that answers
 * slowly for other reasons (scripts that return much, a machine short
 * of CPU): each of the slow reads in a row that timed out on it
 * doubles its RC_IO_MS, twice at most, so that a slow node is
 * not taken for dead every time, and a dead one still costs no more
 * than the deadline.
 */
struct timeval
rc_io_timeout(int64_t deadline, size_t bytes, unsigned slow)
{
	int64_t ms = deadline - clock_mono_ms(), io = RC_IO_MS;
	struct timeval tv;

	io <<= slow < 2 ? slow : 2;
	if (ms > io)
		ms = io;
	if (ms < 1)
		ms = 1;         /* 0 would mean no timeout at all */
	ms += (int64_t)(bytes >> 20) * RC_WORK_MS_PER_MIB;
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	return tv;
}

/*
 * AUTH on a new connection, when the URL gave a password: 0, or why it
 * failed (cluster_internal.h).  The server's refusal names no password.
 */
int
rc_auth(rc_cluster *cl, redisContext *c, char *why, size_t whylen)
{
	const char *argv[3] = { "AUTH", cl->user, cl->pass };
	size_t argvlen[3] = { 4, 0, 0 }, skip = cl->user == NULL;
	redisReply *r;
	int rc = 0;

	if (cl->pass == NULL)
		return 0;
	argv[skip] = "AUTH";
	argvlen[skip] = 4;
	argvlen[1] = strlen(argv[1]);
	argvlen[2] = strlen(argv[2]);
	r = redisCommandArgv(c, 3 - (int)skip, argv + skip, argvlen + skip);
	if (r == NULL) {
		snprintf(why, whylen, "%s", c->errstr);
		return RC_AUTH_FAILED;
	}
	if (r->type == REDIS_REPLY_ERROR) {
		snprintf(why, whylen, "AUTH refused: %s", r->str);
		rc = RC_AUTH_REFUSED;
	}
	freeReplyObject(r);
	return rc;
}

/* AUTH on node k's new connection: 0, or -1 with why noted. */
static int
node_auth(rc_cluster *cl, int k)
{
	char why[160];

	if (rc_auth(cl, cl->nodes[k].ctx, why, sizeof(why)) < 0) {
		rc_node_fail(cl, k, why);
		return -1;
	}
	return 0;
}

redisContext *
rc_node_connect(rc_cluster *cl, int k, int64_t deadline)
{
	struct node *nd = &cl->nodes[k];
	redisContext *c;
	int fresh = nd->ctx == NULL;

	if (fresh) {
		c = redisConnectWithTimeout(nd->addr.host, nd->addr.port,
		    rc_io_timeout(deadline, 0, nd->timeouts));
		if (c == NULL || c->err) {
			rc_node_note(cl, k, c ? c->errstr : "out of memory");
			redisFree(c);
			cl->stale = 1;
			return NULL;
		}
		nd->ctx = c;
	}
	/* hiredis 0.14 bounds the connect only; this bounds the rest. */
	if (redisSetTimeout(nd->ctx, rc_io_timeout(deadline, nd->bytes,
	    nd->timeouts)) != REDIS_OK) {
		rc_node_fail(cl, k, nd->ctx->errstr);
		return NULL;
	}
	if (fresh && node_auth(cl, k) < 0)
		return NULL;
	return nd->ctx;
}

/*
 * Write what hiredis queued.  With send(MSG_NOSIGNAL), not the write(2)
 * of hiredis: a write to a node that died must fail with EPIPE, not
 * raise SIGPIPE and kill the program.  hiredis then finds nothing left
 * to write and only reads.
 */
int
rc_flush_out(redisContext *c)
{
	size_t len;
	ssize_t n;

	while ((len = sdslen(c->obuf)) > 0) {
		n = send(c->fd, c->obuf, len > (1u << 30) ? 1u << 30 : len,
		    MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			c->err = REDIS_ERR_IO;
			snprintf(c->errstr, sizeof(c->errstr), "%s",
			    n < 0 ? strerror(errno) : "cannot write");
			return -1;
		}
		sdsrange(c->obuf, (int)n, -1);
	}
	return 0;
}

struct node_cmd {
	int           argc;
	const char  **argv;
	const size_t *argvlen;
};

/*
 * n commands to node k in one round trip, outside any round, their
 * replies in r: 0, or -1 when the node failed (no reply kept).
 */
static int
node_calls(rc_cluster *cl, int k, size_t n, const struct node_cmd *cmd,
    redisReply **r, int64_t deadline)
{
	redisContext *c;
	size_t i, got = 0;
	int ok = 1;
	void *v;

	cl->nodes[k].bytes = 0;         /* small: a map or a script */
	if ((c = rc_node_connect(cl, k, deadline)) == NULL)
		return -1;
	for (i = 0; i < n && ok; i++)
		ok = redisAppendCommandArgv(c, cmd[i].argc, cmd[i].argv,
		    cmd[i].argvlen) == REDIS_OK;
	ok = ok && rc_flush_out(c) == 0;
	while (ok && got < n && (ok = redisGetReply(c, &v) == REDIS_OK &&
	    v != NULL))
		r[got++] = v;
	if (ok) {
		cl->nodes[k].timeouts = 0;
		return 0;
	}
	while (got > 0)
		freeReplyObject(r[--got]);
	rc_node_fail(cl, k, c->errstr);
	return -1;
}

/* One command to node k, outside any round; NULL when the node failed. */
redisReply *
rc_node_call(rc_cluster *cl, int k, int argc, const char **argv,
    const size_t *argvlen, int64_t deadline)
{
	struct node_cmd cmd = { argc, argv, argvlen };
	redisReply *r;

	return node_calls(cl, k, 1, &cmd, &r, deadline) == 0 ? r : NULL;
}

/* A node of CLUSTER SLOTS: its index, -2 when it has no address, or -1. */
static int
slots_node(rc_cluster *cl, int from, const redisReply *n)
{
	const redisReply *host, *port;

	if (n->type != REDIS_REPLY_ARRAY || n->elements < 2)
		return -1;
	host = n->element[0];
	port = n->element[1];
	if (host->type != REDIS_REPLY_STRING ||
	    port->type != REDIS_REPLY_INTEGER || port->integer < 1 ||
	    port->integer > 65535)
		return -1;
	if (host->len == 1 && host->str[0] == '?')
		return -2;
	if (host->len == 0)     /* the same host as the node asked */
		return node_get(cl, cl->nodes[from].addr.host,
		    strlen(cl->nodes[from].addr.host), (int)port->integer);
	return node_get(cl, host->str, host->len, (int)port->integer);
}

/* Check one range of CLUSTER SLOTS, add its nodes; its master, or -1. */
static int
slots_range(rc_cluster *cl, int from, const redisReply *e, long long *lo,
    long long *hi)
{
	int m;
	size_t j;

	if (e->type != REDIS_REPLY_ARRAY || e->elements < 3 ||
	    e->element[0]->type != REDIS_REPLY_INTEGER ||
	    e->element[1]->type != REDIS_REPLY_INTEGER)
		return -1;
	*lo = e->element[0]->integer;
	*hi = e->element[1]->integer;
	if (*lo < 0 || *lo > *hi || *hi >= RC_SLOTS ||
	    (m = slots_node(cl, from, e->element[2])) == -1)
		return -1;
	for (j = 3; j < e->elements; j++)
		if (slots_node(cl, from, e->element[j]) == -1)
			return -1;
	return m;
}

/*
 * A seed list of one server that is not a cluster node: it serves
 * every slot, with no replica to wait for (its AOF keeps what it
 * acknowledges).  Among several seeds such a node is a mistake.
 */
static int
lone_server(rc_cluster *cl, int from)
{
	size_t s;

	for (s = 0; s < RC_SLOTS; s++)
		cl->slots[s] = (int16_t)from;
	cl->nodes[from].listed = cl->nodes[from].master = 1;
	cl->nodes[from].replicas = 0;
	cl->nodes[from].lone = 1;                       /* none to ask of */
	cl->have_map = 1;
	cl->stale = 0;
	return 0;
}

/* The map of reply r of CLUSTER SLOTS, checked, into map: 0 or -1. */
static int
slots_map(int16_t *map, rc_cluster *cl, int from, const redisReply *r)
{
	long long lo, hi, s;
	size_t i;
	int m;

	for (s = 0; s < RC_SLOTS; s++)
		map[s] = -1;
	for (i = 0; i < r->elements; i++) {
		if ((m = slots_range(cl, from, r->element[i], &lo, &hi)) == -1)
			return -1;
		for (s = lo; m >= 0 && s <= hi; s++)
			map[s] = (int16_t)m;
	}
	return 0;
}

/*
 * Each node's flags by the checked reply r of CLUSTER SLOTS (whose
 * nodes are all in the table); the connections of nodes it leaves out
 * are closed.
 */
static void
mark_nodes(rc_cluster *cl, int from, const redisReply *r)
{
	size_t i, j, k;
	int m, rep;

	for (k = 0; k < cl->nnodes; k++)
		cl->nodes[k].listed = cl->nodes[k].master =
		    cl->nodes[k].replicas = cl->nodes[k].lone = 0;
	for (i = 0; i < r->elements; i++) {
		if ((m = slots_node(cl, from, r->element[i]->element[2])) < 0)
			continue;
		cl->nodes[m].listed = cl->nodes[m].master = 1;
		for (j = 3; j < r->element[i]->elements; j++) {
			rep = slots_node(cl, from, r->element[i]->element[j]);
			if (rep >= 0)
				cl->nodes[rep].listed = cl->nodes[m].replicas = 1;
		}
	}
	for (k = 0; k < cl->nnodes; k++)
		if (!cl->nodes[k].listed && cl->nodes[k].ctx != NULL) {
			redisFree(cl->nodes[k].ctx);
			cl->nodes[k].ctx = NULL;
		}
}

/* Install the map in reply r of CLUSTER SLOTS from node from: 0 or -1. */
static int
load_slots(rc_cluster *cl, int from, const redisReply *r)
{
	int16_t *map;

	if (r->type == REDIS_REPLY_ERROR) {
		rc_node_note(cl, from, r->str);
		if (strstr(r->str, "cluster support disabled") == NULL)
			return -1;
		if (cl->nnodes == 1)
			return lone_server(cl, from);
		cl->not_cluster = from + 1;
		return -1;
	}
	if (r->type != REDIS_REPLY_ARRAY || r->elements == 0) {
		rc_node_note(cl, from, "serves no slots (CLUSTER SLOTS is empty)");
		return -1;
	}
	if ((map = malloc(RC_SLOTS * sizeof(*map))) == NULL) {
		rc_node_note(cl, from, "out of memory");
		return -1;
	}
	if (slots_map(map, cl, from, r) < 0) {
		rc_node_note(cl, from, "gave a CLUSTER SLOTS reply this client "
		    "does not understand");
		free(map);
		return -1;
	}
	mark_nodes(cl, from, r);
	memcpy(cl->slots, map, RC_SLOTS * sizeof(*map));
	free(map);
	cl->have_map = 1;
	cl->stale = 0;
	return 0;
}

/* The first four fields of a line of CLUSTER NODES: ID ADDR FLAGS MASTER. */
struct nodes_line {
	const char *f[4];
	size_t      len[4];
};

static const char *
line_end(const char *line, const char *stop)
{
	const char *nl = memchr(line, '\n', (size_t)(stop - line));

	return nl != NULL ? nl : stop;
}

static int
nodes_line(struct nodes_line *out, const char *p, const char *end)
{
	int i;

	for (i = 0; i < 4; i++) {
		out->f[i] = p;
		while (p < end && *p != ' ')
			p++;
		if ((out->len[i] = (size_t)(p - out->f[i])) == 0 ||
		    (p == end && i < 3))
			return -1;
		p++;
	}
	return 0;
}

/* Is word one of the comma-separated FLAGS? */
static int
has_flag(const struct nodes_line *l, const char *word)
{
	const char *p = l->f[2], *end = p + l->len[2], *comma;
	size_t n = strlen(word);

	for (; p < end; p = comma + 1) {
		if ((comma = memchr(p, ',', (size_t)(end - p))) == NULL)
			comma = end;
		if ((size_t)(comma - p) == n && memcmp(p, word, n) == 0)
			return 1;
	}
	return 0;
}

/*
 * CLUSTER SLOTS leaves out a replica that the cluster marks failing,
 * and one that is syncing again after its link broke: its master would
 * then acknowledge writes alone.  That loses them, whatever the flags
 * say: a master cut off from the others marks its replica failing at
 * about the moment the others promote that very replica, and a replica
 * back from a failure is the one a failover picks.  So before the first
 * WAIT a map would leave out, the master is asked: has it any replica
 * at all, failing or not, by its own CLUSTER NODES (other nodes may not
 * have heard of a new replica yet) or its replication?  If so, the WAIT goes all the
 * same, and the write waits for that replica (eval_replicated) or
 * fails in time: a shard whose replica is down takes no commit until
 * the replica is back, or an operator forgets it (CLUSTER FORGET).
 * Only a master with no replica configured acknowledges alone, and it
 * is asked again before each round that would: a replica may join it
 * at any moment (the old master, back after a failover, does), and a
 * long-lived process that kept "none" from its map load acknowledged
 * alone what that replica's takeover then lost.
 */
/*
 * Has node k a replica attached, by its own replication (INFO
 * replication's connected_slaves)?  An old master back as the new
 * one's replica syncs from it before the new one's CLUSTER NODES has
 * stopped calling it a failed master.  Not asked: say it has one.
 */
static int
attached_replicas(rc_cluster *cl, int k, int64_t deadline)
{
	static const char *argv[] = { "INFO", "replication" };
	static const size_t argvlen[] = { 4, 11 };
	const char *at;
	redisReply *r;
	int found;

	if ((r = rc_node_call(cl, k, 2, argv, argvlen, deadline)) == NULL)
		return 1;
	found = r->type != REDIS_REPLY_STRING || (at = strstr(r->str,
	    "connected_slaves:")) == NULL || atoi(at + 17) > 0;
	freeReplyObject(r);
	return found;
}

int
rc_has_replica(rc_cluster *cl, int k, int64_t deadline)
{
	static const char *argv[] = { "CLUSTER", "NODES" };
	static const size_t argvlen[] = { 7, 5 };
	const char *text, *stop, *line, *end;
	struct nodes_line l, me;
	redisReply *r;
	int found = 0, pass;

	/* Not asked, say it has one: the WAIT then tells. */
	if ((r = rc_node_call(cl, k, 2, argv, argvlen, deadline)) == NULL)
		return 1;
	if (r->type != REDIS_REPLY_STRING) {
		freeReplyObject(r);
		return 1;
	}
	text = r->str;
	stop = text + r->len;
	/* Its own line first, for its ID; then its replicas' lines. */
	memset(&me, 0, sizeof(me));
	for (pass = 0; pass < 2 && !found; pass++)
		for (line = text; line < stop; line = end + 1) {
			end = line_end(line, stop);
			if (nodes_line(&l, line, end) < 0)
				continue;
			if (pass == 0 && has_flag(&l, "myself"))
				me = l;
			else if (pass == 1 && me.len[0] > 0 &&
			    has_flag(&l, "slave") && l.len[3] == me.len[0] &&
			    memcmp(l.f[3], me.f[0], me.len[0]) == 0)
				found = 1;
		}
	freeReplyObject(r);
	return found || attached_replicas(cl, k, deadline);
}

/*
 * Does node k see a cluster that works (cluster_state:ok), by its reply
 * info to CLUSTER INFO, which also gives its epoch?  A master
 * cut off from the others keeps answering with the map it had, which
 * names it master of slots that the others have given its replica;
 * once it has missed the others for the node timeout it says
 * cluster_state:fail, and its map is not taken.  A server that is not
 * a cluster node says so to CLUSTER SLOTS (load_slots).
 */
static const char *info_argv[] = { "CLUSTER", "INFO" };
static const size_t info_argvlen[] = { 7, 4 };

static int
sees_cluster_ok(rc_cluster *cl, int k, const redisReply *info,
    long long *epoch)
{
	const char *e;
	int ok;

	*epoch = -1;
	ok = info->type == REDIS_REPLY_ERROR ||
	    (info->type == REDIS_REPLY_STRING &&
	    strstr(info->str, "cluster_state:ok") != NULL);
	if (info->type == REDIS_REPLY_STRING &&
	    (e = strstr(info->str, "cluster_current_epoch:")) != NULL)
		*epoch = strtoll(e + 22, NULL, 10);
	if (!ok)
		rc_node_note(cl, k, "cut off from the cluster "
		    "(cluster_state:fail)");
	return ok;
}

/*
 * A long-lived process (perc shell, run-observer, log --follow, a
 * program on libperc) keeps its map from call to call, and would learn
 * of a failover, or of a replica that moved, only from an error: a
 * write acknowledged meanwhile by a master that thinks its replica
 * gone, or a map whose replicas it no longer has.  Both move the
 * cluster's epoch.  So at most every RC_EPOCH_CHECK_MS a call asks the
 * node the map came from for its epoch, and a new one, or an answer
 * that the node is cut off, or none, makes the map stale.
 */
#define RC_EPOCH_CHECK_MS 1000

void
rc_check_epoch(rc_cluster *cl, int64_t deadline)
{
	long long epoch;
	int64_t now = clock_mono_ms();
	redisReply *r;

	if (!cl->have_map || cl->stale || cl->map_from < 0 ||
	    now - cl->epoch_checked_ms < RC_EPOCH_CHECK_MS)
		return;
	cl->epoch_checked_ms = now;
	r = rc_node_call(cl, cl->map_from, 2, info_argv, info_argvlen,
	    deadline);
	if (r == NULL || !sees_cluster_ok(cl, cl->map_from, r, &epoch) ||
	    epoch != cl->epoch)
		cl->stale = 1;
	if (r != NULL)
		freeReplyObject(r);
}

/*
 * Load the map with CLUSTER SLOTS from any node that answers and sees
 * a working cluster: those already connected first, then every other
 * node known, seeds too, each asked once.  0, or -1 when none answered
 * (reasons noted).
 */
int
rc_refresh_map(rc_cluster *cl, int64_t deadline)
{
	static const char *argv[] = { "CLUSTER", "SLOTS" };
	static const size_t argvlen[] = { 7, 5 };
	/* Both in one round trip: the map and whether to take it. */
	static const struct node_cmd cmd[2] = {
		{ 2, info_argv, info_argvlen }, { 2, argv, argvlen } };
	redisReply *r[2];
	long long epoch;
	size_t k;
	int pass, rc;

	cl->loads++;
	cl->not_cluster = 0;
	for (pass = 0; pass < 2; pass++) {
		for (k = 0; k < cl->nnodes; k++) {
			if ((cl->nodes[k].ctx != NULL) != (pass == 0) ||
			    cl->nodes[k].tried_load == cl->loads)
				continue;
			if (clock_mono_ms() >= deadline)
				return -1;
			cl->nodes[k].tried_load = cl->loads;
			if (node_calls(cl, (int)k, 2, cmd, r, deadline) < 0)
				continue;
			rc = sees_cluster_ok(cl, (int)k, r[0], &epoch) ?
			    load_slots(cl, (int)k, r[1]) : -1;
			freeReplyObject(r[0]);
			freeReplyObject(r[1]);
			if (rc == 0) {
				cl->map_from = (int)k;
				cl->epoch = epoch;
				cl->epoch_checked_ms = clock_mono_ms();
				return 0;
			}
		}
	}
	return -1;
}

/* PERC_ETIMEOUT, naming the nodes that failed in this call and why. */
int
rc_unreachable(rc_cluster *cl)
{
	char msg[400] = "";
	size_t k, len = 0;
	int shown = 0, more = 0;

	for (k = 0; k < cl->nnodes; k++) {
		if (cl->nodes[k].failed_gen != cl->gen)
			continue;
		if (shown++ == 3 || len >= sizeof(msg)) {
			more++;
			continue;
		}
		len += (size_t)snprintf(msg + len, sizeof(msg) - len, "%s%s (%s)",
		    len ? ", " : "", cl->nodes[k].name, cl->nodes[k].why);
	}
	if (more > 0 && len < sizeof(msg))
		len += (size_t)snprintf(msg + len, sizeof(msg) - len,
		    " and %d more", more);
	if (cl->noroute >= 0 && len < sizeof(msg))
		snprintf(msg + len, sizeof(msg) - len, "%sno node serves "
		    "slot %ld", len ? "; " : "", cl->noroute);
	if (msg[0] == '\0')
		snprintf(msg, sizeof(msg), "no node answered in time");
	return error_set(PERC_ETIMEOUT, "redis cluster down or unreachable: "
	    "%s; check it and retry", msg);
}

/*
 * A child forked after the client connected (run-observer --workers)
 * shares its parent's sockets: two processes writing one connection and
 * reading each other's replies.  The child drops the inherited ones,
 * closing its copy of each descriptor without a word on it (redisFree
 * writes nothing), and opens its own as commands need them.
 */
static void
own_connections(rc_cluster *cl)
{
	size_t k;

	if (cl->pid == getpid())
		return;
	for (k = 0; k < cl->nnodes; k++) {
		redisFree(cl->nodes[k].ctx);
		cl->nodes[k].ctx = NULL;
	}
	cl->pid = getpid();
}

void
rc_begin_call(rc_cluster *cl)
{
	own_connections(cl);
	cl->gen++;
	cl->noroute = -1;
}

/* Have a map that is not stale, trying until deadline. */
static int
ensure_map(rc_cluster *cl, int64_t deadline)
{
	unsigned delay = BACKOFF_MIN_US;
	struct node *nd;

	rc_begin_call(cl);
	while (!cl->have_map || cl->stale) {
		if (rc_refresh_map(cl, deadline) == 0)
			break;
		/* Waiting would not change a setting. */
		if (cl->not_cluster > 0) {
			nd = &cl->nodes[cl->not_cluster - 1];
			return error_set(PERC_EIO, "redis at %s is not a "
			    "cluster node: %s", nd->name, nd->why);
		}
		if (clock_backoff(&delay, BACKOFF_MAX_US, deadline) < 0)
			return rc_unreachable(cl);
	}
	return 0;
}

int
rc_new(rc_cluster **out, const char *seeds, rc_check_fn check, void *arg)
{
	rc_cluster *cl;
	rc_addr *addrs;
	size_t n, i;
	int rc;

	*out = NULL;
	if ((rc = rc_parse_seeds(&addrs, &n, seeds)) < 0)
		return rc;
	if ((cl = calloc(1, sizeof(*cl))) == NULL) {
		free(addrs);
		return error_set(PERC_EIO, "out of memory");
	}
	if ((rc = rc_parse_auth(&cl->user, &cl->pass, seeds)) < 0) {
		free(addrs);
		rc_close(cl);
		return rc;
	}
	for (i = 0; i < RC_SLOTS; i++)
		cl->slots[i] = -1;
	cl->map_from = -1;
	cl->pid = getpid();
	cl->check = check;
	cl->check_arg = arg;
	for (i = 0; i < n; i++)
		if (node_get(cl, addrs[i].host, strlen(addrs[i].host),
		    addrs[i].port) < 0) {
			free(addrs);
			rc_close(cl);
			return error_set(PERC_EIO, "out of memory");
		}
	free(addrs);
	*out = cl;
	return 0;
}

int
rc_open(rc_cluster **out, const char *seeds, int64_t deadline_ms)
{
	int rc;

	if ((rc = rc_new(out, seeds, NULL, NULL)) == 0 &&
	    (rc = ensure_map(*out, deadline_ms)) < 0) {
		rc_close(*out);
		*out = NULL;
	}
	return rc;
}

int
rc_reached(const rc_cluster *cl)
{
	return cl->have_map && cl->check == NULL;
}

/* Before a call's first round: rc_new's map and check. */
int
rc_reach(rc_cluster *cl, int64_t deadline)
{
	rc_check_fn check = cl->check;
	int rc;

	if (!cl->have_map && (rc = ensure_map(cl, deadline)) < 0)
		return rc;
	if (check == NULL)
		return 0;
	cl->check = NULL;               /* its own commands pass */
	if ((rc = check(cl->check_arg, deadline)) < 0)
		cl->check = check;
	return rc;
}

void
rc_close(rc_cluster *cl)
{
	size_t i;

	if (cl == NULL)
		return;
	for (i = 0; i < cl->nnodes; i++)
		redisFree(cl->nodes[i].ctx);
	for (i = 0; i < cl->nscripts; i++)
		free(cl->scripts[i].body);
	free(cl->nodes);
	free(cl->scripts);
	free(cl->user);
	if (cl->pass != NULL)
		explicit_bzero(cl->pass, strlen(cl->pass));
	free(cl->pass);
	free(cl);
}

/* The node of "-MOVED 3999 host:port" (after the code) and its slot. */
int
rc_redirect_node(rc_cluster *cl, int from, const char *s, unsigned *slot)
{
	const char *addr, *colon;
	unsigned long v;
	char *end;
	long port;

	v = strtoul(s, &end, 10);
	if (end == s || *end != ' ' || v >= RC_SLOTS)
		return -1;
	addr = end + 1;
	if ((colon = strrchr(addr, ':')) == NULL)
		return -1;
	port = strtol(colon + 1, &end, 10);
	if (*end != '\0' || port < 1 || port > 65535)
		return -1;
	*slot = (unsigned)v;
	if (colon == addr)      /* no host: the same as the node asked */
		return node_get(cl, cl->nodes[from].addr.host,
		    strlen(cl->nodes[from].addr.host), (int)port);
	return node_get(cl, addr, (size_t)(colon - addr), (int)port);
}

int
rc_masters(int **out, size_t *n, rc_cluster *cl, int64_t deadline_ms)
{
	size_t k, m = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = ensure_map(cl, deadline_ms)) < 0)
		return rc;
	if ((*out = malloc(cl->nnodes * sizeof(**out))) == NULL)
		return error_set(PERC_EIO, "out of memory");
	for (k = 0; k < cl->nnodes; k++)
		if (cl->nodes[k].master)
			(*out)[m++] = (int)k;
	*n = m;
	return 0;
}

const char *
rc_node_name(const rc_cluster *cl, int node)
{
	if (node < 0 || (size_t)node >= cl->nnodes)
		return "?";
	return cl->nodes[node].name;
}

int
rc_node_is_master(const rc_cluster *cl, int node)
{
	return node >= 0 && (size_t)node < cl->nnodes &&
	    cl->nodes[node].master;
}

void
rc_map_behind(rc_cluster *cl)
{
	cl->stale = 1;
}

int
rc_slot_node(const rc_cluster *cl, unsigned slot)
{
	return slot < RC_SLOTS ? cl->slots[slot] : -1;
}

void
rc_test_set_slot(rc_cluster *cl, unsigned slot, int node)
{
	if (slot < RC_SLOTS)
		cl->slots[slot] = (int16_t)node;
}

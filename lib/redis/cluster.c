/*
 * lib/redis_cluster.c - a small Redis Cluster client on hiredis.
 *
 * The client holds the slot map (slot -> node) and a table of the
 * nodes it has heard of: the seeds, and every master and replica of
 * the last CLUSTER SLOTS.  A node keeps its index in that table for
 * the life of the client, so the map, a redirection and a caller can
 * all name it by index; its connection is opened when a command first
 * needs it and dropped at the first error on it.
 *
 * Every command goes through one engine, exec_entries(), in rounds: a
 * round sends each unfinished command to the node it should go to,
 * grouped by node, all groups written before any reply is read; then
 * it sorts the replies into answers and retries.  A -MOVED updates
 * the slot and marks the map stale, an -ASK points one command at
 * another node, -TRYAGAIN, -CLUSTERDOWN, -LOADING and lost
 * connections wait a backoff.  A stale map is loaded again, from any
 * node that answers, before the next round.  One command is a round
 * of one; a pipeline is the same with many.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <hiredis/sds.h>

#include "buf.h"
#include "clock.h"
#include "error.h"
#include "cluster.h"

#define MAX_SEEDS      64
#define BACKOFF_MIN_US 10000    /* first wait after a failed round */
#define BACKOFF_MAX_US 250000   /* short: a failover is noticed soon */
#define FREE_ROUNDS    4        /* rounds before even redirects wait */

struct node {
	rc_addr       addr;
	char          name[272];    /* "host:port", for messages */
	redisContext *ctx;          /* NULL until a command needs it */
	int           listed;       /* in the last map, master or replica */
	int           master;       /* serves slots in the last map */
	int           replicas;     /* has a replica in the last map */
	unsigned      failed_gen;   /* the call in which it last failed */
	unsigned      tried_load;   /* the map load that last asked it */
	unsigned      asked_load;   /* ... and the one that has_replica did */
	char          why[160];     /* and what went wrong then */
	size_t        sent0, nsent; /* its share of a round's sent[] */
	size_t        bytes;        /* the round's command bytes to it */
};

struct script {
	char    *body;
	size_t   len;
	char     sha[41];           /* "" until first asked: script_sha */
	int      load_node;         /* where it was loaded ... */
	unsigned load_round;        /* ... in which round */
};

struct rc_cluster {
	struct node   *nodes;
	size_t         nnodes, capnodes;
	int16_t        slots[RC_SLOTS];  /* node index, or -1 */
	int            have_map;
	int            stale;       /* load the map again before going on */
	int            not_cluster; /* 1 + a node that is not in one */
	unsigned       gen;         /* counts calls, for failed_gen */
	unsigned       round;       /* counts rounds, for load_round */
	unsigned       loads;       /* counts map loads, for tried_load */
	long           noroute;     /* a slot no node served, or -1 */
	pid_t          pid;         /* the process whose connections these are */
	rc_check_fn    check;       /* rc_new's, until it passes */
	void          *check_arg;
	struct script *scripts;
	size_t         nscripts;
	char          *user;        /* AUTH's, or NULL: the default user */
	char          *pass;        /* AUTH's, or NULL: no AUTH */
};

/* One command on its way: its words, where it goes, what came back. */
struct rc_entry {
	char      **argv;           /* one allocation with argvlen, bytes */
	size_t     *argvlen;
	int         argc;
	unsigned    slot;
	int         node;           /* a fixed node, or -1: slot's master */
	int         ask;            /* node of an -ASK, for one try, or -1 */
	int         script;         /* the script of an EVALSHA, or -1 */
	unsigned    flags;          /* RC_WAIT */
	int         target;         /* where this round sends it */
	int         load, loaded;   /* -NOSCRIPT: load it; it was loaded */
	int         done;
	redisReply *reply;
	int         replicas;
};

struct rc_pipeline {
	rc_cluster      *cl;
	struct rc_entry *es;
	size_t           n, cap;
};

enum { SENT_ASKING, SENT_CMD, SENT_WAIT };

struct sent {
	size_t entry;
	int    kind;
};

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

/*
 * SHA-1 (FIPS 180-4), only to name scripts as EVALSHA does: knowing
 * the name without asking the server saves a perc process, which is
 * short-lived, a SCRIPT LOAD per script when the server has it.
 */
static uint32_t
rol(uint32_t x, int n)
{
	return x << n | x >> (32 - n);
}

static void
sha1_block(uint32_t h[5], const unsigned char *p)
{
	uint32_t w[80], a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f,
	    k, t;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		    (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (; i < 80; i++)
		w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
	for (i = 0; i < 80; i++) {
		if (i < 20)
			f = (b & c) | (~b & d), k = 0x5a827999;
		else if (i < 40)
			f = b ^ c ^ d, k = 0x6ed9eba1;
		else if (i < 60)
			f = (b & c) | (b & d) | (c & d), k = 0x8f1bbcdc;
		else
			f = b ^ c ^ d, k = 0xca62c1d6;
		t = rol(a, 5) + f + e + k + w[i];
		e = d;
		d = c;
		c = rol(b, 30);
		b = a;
		a = t;
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
	h[4] += e;
}

static void
sha1_hex(char out[41], const void *data, size_t len)
{
	uint32_t h[5] = { 0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476,
		0xc3d2e1f0 };
	const unsigned char *p = data;
	unsigned char tail[128] = { 0 };
	uint64_t bits = (uint64_t)len * 8;
	size_t ntail;
	int i;

	for (; len >= 64; len -= 64, p += 64)
		sha1_block(h, p);
	if (len > 0)
		memcpy(tail, p, len);
	tail[len] = 0x80;
	ntail = len + 9 <= 64 ? 64 : 128;
	for (i = 0; i < 8; i++)
		tail[ntail - 1 - i] = (unsigned char)(bits >> (8 * i));
	sha1_block(h, tail);
	if (ntail == 128)
		sha1_block(h, tail + 64);
	for (i = 0; i < 20; i++)
		snprintf(out + 2 * i, 3, "%02x",
		    (unsigned)(h[i / 4] >> (24 - 8 * (i % 4))) & 0xff);
}

/* Are the n bytes at s all of chars? */
static int
all_of(const char *s, size_t n, const char *chars)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] == '\0' || strchr(chars, s[i]) == NULL)
			return 0;
	return 1;
}

/*
 * One seed, HOST[:PORT] or [IPV6][:PORT], as Redis users write them;
 * the port is 6379 when left out.
 */
static int
parse_addr(rc_addr *a, const char *s, size_t len)
{
	perc_bytes item = { s, len };
	const char *host = s, *rest, *end = s + len, *close;
	size_t hostlen;
	long port = 6379;

	if (len == 0)
		return error_set(PERC_EUSAGE, "empty entry in the redis seed "
		    "list; want host[:port][,host[:port]]...");
	if (*s == '[') {
		if ((close = memchr(s, ']', len)) == NULL)
			return error_set(PERC_EUSAGE, "redis seed '%s': an "
			    "IPv6 address in '[' lacks its ']'",
			    error_quote(item));
		host = s + 1;
		hostlen = (size_t)(close - host);
		rest = close + 1;
		if (!all_of(host, hostlen, "0123456789abcdefABCDEF:.") ||
		    memchr(host, ':', hostlen) == NULL)
			return error_set(PERC_EUSAGE, "redis seed '%s': not an "
			    "IPv6 address in its brackets", error_quote(item));
	} else {
		rest = memchr(s, ':', len);
		if (rest == NULL)
			rest = end;
		hostlen = (size_t)(rest - s);
		if (rest < end && memchr(rest + 1, ':', (size_t)(end - rest -
		    1)) != NULL)
			return error_set(PERC_EUSAGE, "redis seed '%s': an IPv6 "
			    "address goes in brackets, [ADDRESS]:PORT",
			    error_quote(item));
		if (!all_of(host, hostlen, "abcdefghijklmnopqrstuvwxyz"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_"))
			return error_set(PERC_EUSAGE, "redis seed '%s': host "
			    "must be an IPv4 address, a name or an IPv6 "
			    "address in brackets", error_quote(item));
	}
	if (hostlen == 0)
		return error_set(PERC_EUSAGE, "redis seed '%s' has no host",
		    error_quote(item));
	if (hostlen >= sizeof(a->host))
		return error_set(PERC_EUSAGE, "redis seed '%s': host name "
		    "too long", error_quote(item));
	if (rest < end) {
		port = 0;
		if (*rest != ':' || rest + 1 == end ||
		    !all_of(rest + 1, (size_t)(end - rest - 1), "0123456789"))
			port = -1;
		for (rest++; port >= 0 && rest < end && port <= 65535; rest++)
			port = port * 10 + (*rest - '0');
		if (port < 1 || port > 65535)
			return error_set(PERC_EUSAGE, "redis seed '%s': port "
			    "must be a number from 1 to 65535",
			    error_quote(item));
	}
	memcpy(a->host, host, hostlen);
	a->host[hostlen] = '\0';
	a->port = (int)port;
	return 0;
}

/* The seed list of list: after "redis://" and USER:PASSWORD@, if any. */
static const char *
seeds_of(const char *list)
{
	const char *at;

	if (strncmp(list, "redis://", 8) == 0)
		list += 8;
	/* No host holds an '@', so the last one ends a password. */
	return (at = strrchr(list, '@')) != NULL ? at + 1 : list;
}

int
rc_parse_seeds(rc_addr **out, size_t *n, const char *list)
{
	const char *p, *comma;
	size_t count = 1, i = 0;
	rc_addr *addrs;
	int rc;

	*out = NULL;
	*n = 0;
	list = seeds_of(list != NULL ? list : "");
	if (*list == '\0')
		return error_set(PERC_EUSAGE, "empty redis seed list; "
		    "want host[:port][,host[:port]]...");
	for (p = list; (p = strchr(p, ',')) != NULL; p++)
		count++;
	if (count > MAX_SEEDS)
		return error_set(PERC_EUSAGE, "more than %d redis seeds",
		    MAX_SEEDS);
	if ((addrs = calloc(count, sizeof(*addrs))) == NULL)
		return error_set(PERC_EIO, "out of memory");
	for (p = list;; p = comma + 1) {
		comma = strchr(p, ',');
		rc = parse_addr(&addrs[i++], p,
		    comma ? (size_t)(comma - p) : strlen(p));
		if (rc < 0) {
			free(addrs);
			return rc;
		}
		if (comma == NULL)
			break;
	}
	*out = addrs;
	*n = count;
	return 0;
}

static int
hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The n bytes at s with each %XX decoded, NUL-terminated; NULL: bad. */
static char *
percent_decode(const char *s, size_t n)
{
	char *out, *o;
	size_t i;
	int hi, lo;

	if ((o = out = malloc(n + 1)) == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		if (s[i] != '%') {
			*o++ = s[i];
			continue;
		}
		if (i + 2 >= n)
			goto bad;
		if ((hi = hex_digit(s[i + 1])) < 0 ||
		    (lo = hex_digit(s[i + 2])) < 0 || (hi == 0 && lo == 0))
			goto bad;
		*o++ = (char)(hi << 4 | lo);
		i += 2;
	}
	*o = '\0';
	return out;
bad:
	free(out);
	return NULL;
}

/*
 * The credentials of USER:PASSWORD@ or :PASSWORD@ in list, decoded.
 * No message ever quotes them.
 */
int
rc_parse_auth(char **user, char **pass, const char *list)
{
	const char *hosts, *colon;

	*user = *pass = NULL;
	if (strncmp(list, "redis://", 8) == 0)
		list += 8;
	if ((hosts = seeds_of(list)) == list)
		return 0;
	colon = memchr(list, ':', (size_t)(hosts - 1 - list));
	if (colon == NULL || colon + 1 == hosts - 1)
		return error_set(PERC_EUSAGE, "the redis URL has a user but no "
		    "password; write redis://USER:PASSWORD@HOST:PORT, or "
		    "redis://:PASSWORD@HOST:PORT for a server's requirepass");
	if ((colon > list && (*user = percent_decode(list,
	    (size_t)(colon - list))) == NULL) ||
	    (*pass = percent_decode(colon + 1, (size_t)(hosts - 2 -
	    colon))) == NULL) {
		free(*user);
		*user = NULL;
		return error_set(PERC_EUSAGE, "the redis URL's user or password "
		    "has a '%%' that is not followed by two hex digits (not "
		    "00); write a '%%' as %%25");
	}
	return 0;
}

int
rc_public_url(perc_buf *out, const char *url)
{
	const char *p = url, *hosts, *colon;
	int rc;

	out->len = 0;
	if (strncmp(p, "redis://", 8) == 0)
		p += 8;
	if ((hosts = seeds_of(p)) == p)
		return buf_set(out, url, strlen(url));
	colon = memchr(p, ':', (size_t)(hosts - 1 - p));
	if (colon == NULL)
		colon = hosts - 1;
	if ((rc = buf_set(out, url, (size_t)(p - url))) == 0 &&
	    colon > p && (rc = buf_add(out, p, (size_t)(colon - p))) == 0)
		rc = buf_add(out, "@", 1);
	if (rc == 0)
		rc = buf_add(out, hosts, strlen(hosts));
	return rc;
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
static void
node_note(rc_cluster *cl, int k, const char *why)
{
	struct node *nd = &cl->nodes[k];

	/* A read or write timeout shows in hiredis as EAGAIN. */
	if (strcmp(why, strerror(EAGAIN)) == 0)
		why = "timed out";
	snprintf(nd->why, sizeof(nd->why), "%s", why);
	nd->failed_gen = cl->gen;
}

/* The connection failed: note why, drop it, and doubt the map. */
static void
node_fail(rc_cluster *cl, int k, const char *why)
{
	node_note(cl, k, why);
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
 * its deadline by that much.
 */
static struct timeval
io_timeout(int64_t deadline, size_t bytes)
{
	int64_t ms = deadline - clock_mono_ms();
	struct timeval tv;

	if (ms > RC_IO_MS)
		ms = RC_IO_MS;
	if (ms < 1)
		ms = 1;         /* 0 would mean no timeout at all */
	ms += (int64_t)(bytes >> 20) * RC_WORK_MS_PER_MIB;
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	return tv;
}

/*
 * AUTH on a new connection, when the URL gave a password: 0, or -1
 * with why noted.  The server's refusal names no password.
 */
static int
node_auth(rc_cluster *cl, int k)
{
	const char *argv[3] = { "AUTH", cl->user, cl->pass };
	size_t argvlen[3] = { 4, 0, 0 }, skip = cl->user == NULL;
	redisReply *r;
	char why[160];

	if (cl->pass == NULL)
		return 0;
	argv[skip] = "AUTH";
	argvlen[skip] = 4;
	argvlen[1] = strlen(argv[1]);
	argvlen[2] = strlen(argv[2]);
	r = redisCommandArgv(cl->nodes[k].ctx, 3 - (int)skip, argv + skip,
	    argvlen + skip);
	if (r == NULL) {
		node_fail(cl, k, cl->nodes[k].ctx->errstr);
		return -1;
	}
	if (r->type == REDIS_REPLY_ERROR) {
		snprintf(why, sizeof(why), "AUTH refused: %s", r->str);
		freeReplyObject(r);
		node_fail(cl, k, why);
		return -1;
	}
	freeReplyObject(r);
	return 0;
}

static redisContext *
node_connect(rc_cluster *cl, int k, int64_t deadline)
{
	struct node *nd = &cl->nodes[k];
	redisContext *c;
	int fresh = nd->ctx == NULL;

	if (fresh) {
		c = redisConnectWithTimeout(nd->addr.host, nd->addr.port,
		    io_timeout(deadline, 0));
		if (c == NULL || c->err) {
			node_note(cl, k, c ? c->errstr : "out of memory");
			redisFree(c);
			cl->stale = 1;
			return NULL;
		}
		nd->ctx = c;
	}
	/* hiredis 0.14 bounds the connect only; this bounds the rest. */
	if (redisSetTimeout(nd->ctx, io_timeout(deadline, nd->bytes)) !=
	    REDIS_OK) {
		node_fail(cl, k, nd->ctx->errstr);
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
static int
flush_out(redisContext *c)
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

/* One command to node k, outside any round; NULL when the node failed. */
static redisReply *
node_call(rc_cluster *cl, int k, int argc, const char **argv,
    const size_t *argvlen, int64_t deadline)
{
	redisContext *c;
	void *r = NULL;

	cl->nodes[k].bytes = 0;         /* small: a map or a script */
	if ((c = node_connect(cl, k, deadline)) == NULL)
		return NULL;
	if (redisAppendCommandArgv(c, argc, argv, argvlen) != REDIS_OK ||
	    flush_out(c) < 0 || redisGetReply(c, &r) != REDIS_OK ||
	    r == NULL) {
		node_fail(cl, k, c->errstr);
		return NULL;
	}
	return r;
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
	cl->nodes[from].asked_load = cl->loads;         /* none to ask of */
	cl->have_map = 1;
	cl->stale = 0;
	return 0;
}

/* Install the map in reply r of CLUSTER SLOTS from node from: 0 or -1. */
static int
load_slots(rc_cluster *cl, int from, const redisReply *r)
{
	int16_t *map;
	long long lo, hi, s;
	size_t i, j, k;
	int m, rep;

	if (r->type == REDIS_REPLY_ERROR) {
		node_note(cl, from, r->str);
		if (strstr(r->str, "cluster support disabled") == NULL)
			return -1;
		if (cl->nnodes == 1)
			return lone_server(cl, from);
		cl->not_cluster = from + 1;
		return -1;
	}
	if (r->type != REDIS_REPLY_ARRAY || r->elements == 0) {
		node_note(cl, from, "serves no slots (CLUSTER SLOTS is empty)");
		return -1;
	}
	if ((map = malloc(RC_SLOTS * sizeof(*map))) == NULL) {
		node_note(cl, from, "out of memory");
		return -1;
	}
	for (s = 0; s < RC_SLOTS; s++)
		map[s] = -1;
	for (i = 0; i < r->elements; i++) {
		if ((m = slots_range(cl, from, r->element[i], &lo, &hi)) == -1) {
			node_note(cl, from, "gave a CLUSTER SLOTS reply "
			    "this client does not understand");
			free(map);
			return -1;
		}
		for (s = lo; m >= 0 && s <= hi; s++)
			map[s] = (int16_t)m;
	}
	/* Valid: now the flags, the nodes being all in the table. */
	for (k = 0; k < cl->nnodes; k++)
		cl->nodes[k].listed = cl->nodes[k].master =
		    cl->nodes[k].replicas = 0;
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
 * but also one that is syncing again after its link broke: its master
 * would then acknowledge writes alone, and a failover to that replica
 * before it caught up would lose them.  So before the first WAIT a map
 * would leave out, the master is asked: does it have a replica that it
 * does not suspect (no "fail" or "fail?" flag), by its own CLUSTER
 * NODES (other nodes may not have heard of a new replica yet)?  If so,
 * the WAIT goes all the same, and the write waits for that replica
 * (eval_replicated) or fails in time.
 */
static int
has_replica(rc_cluster *cl, int k, int64_t deadline)
{
	static const char *argv[] = { "CLUSTER", "NODES" };
	static const size_t argvlen[] = { 7, 5 };
	const char *text, *stop, *line, *end;
	struct nodes_line l, me;
	redisReply *r;
	int found = 0, pass;

	if ((r = node_call(cl, k, 2, argv, argvlen, deadline)) == NULL)
		return 0;
	text = r->str;
	stop = r->type == REDIS_REPLY_STRING ? text + r->len : text;
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
			    has_flag(&l, "slave") && !has_flag(&l, "fail") &&
			    !has_flag(&l, "fail?") && l.len[3] == me.len[0] &&
			    memcmp(l.f[3], me.f[0], me.len[0]) == 0)
				found = 1;
		}
	freeReplyObject(r);
	return found;
}

/*
 * Load the map with CLUSTER SLOTS from any node that answers: those
 * already connected first, then every other node known, seeds too,
 * each asked once.  0, or -1 when none answered (reasons noted).
 */
static int
refresh_map(rc_cluster *cl, int64_t deadline)
{
	static const char *argv[] = { "CLUSTER", "SLOTS" };
	static const size_t argvlen[] = { 7, 5 };
	redisReply *r;
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
			r = node_call(cl, (int)k, 2, argv, argvlen, deadline);
			if (r == NULL)
				continue;
			rc = load_slots(cl, (int)k, r);
			freeReplyObject(r);
			if (rc == 0)
				return 0;
		}
	}
	return -1;
}

/* PERC_ETIMEOUT, naming the nodes that failed in this call and why. */
static int
unreachable(rc_cluster *cl)
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

/* Have a map that is not stale, trying until deadline. */
static int
ensure_map(rc_cluster *cl, int64_t deadline)
{
	unsigned delay = BACKOFF_MIN_US;
	struct node *nd;

	own_connections(cl);
	cl->gen++;
	cl->noroute = -1;
	while (!cl->have_map || cl->stale) {
		if (refresh_map(cl, deadline) == 0)
			break;
		/* Waiting would not change a setting. */
		if (cl->not_cluster > 0) {
			nd = &cl->nodes[cl->not_cluster - 1];
			return error_set(PERC_EIO, "redis at %s is not a "
			    "cluster node: %s", nd->name, nd->why);
		}
		if (clock_backoff(&delay, BACKOFF_MAX_US, deadline) < 0)
			return unreachable(cl);
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

/* An error reply whose code (its first word) is code. */
static int
is_code(const redisReply *r, const char *code)
{
	size_t n = strlen(code);

	return r->len >= n && memcmp(r->str, code, n) == 0 &&
	    (r->len == n || r->str[n] == ' ');
}

/* The node of "-MOVED 3999 host:port" (after the code) and its slot. */
static int
redirect_node(rc_cluster *cl, int from, const char *s, unsigned *slot)
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

/*
 * Sort the reply r to e's command, sent to node k: an answer, or a
 * redirection or a refusal to retry.  *pause asks for a backoff.
 */
static void
settle(rc_cluster *cl, int k, struct rc_entry *e, redisReply *r, int *pause)
{
	unsigned slot;
	int m;

	if (r->type != REDIS_REPLY_ERROR)
		goto answer;
	if (e->node < 0 && is_code(r, "MOVED") && r->len > 6) {
		if ((m = redirect_node(cl, k, r->str + 6, &slot)) < 0)
			goto answer;
		cl->slots[slot] = (int16_t)m;
		cl->stale = 1;
	} else if (e->node < 0 && is_code(r, "ASK") && r->len > 4) {
		if ((m = redirect_node(cl, k, r->str + 4, &slot)) < 0)
			goto answer;
		e->ask = m;
	} else if (is_code(r, "TRYAGAIN") || is_code(r, "CLUSTERDOWN") ||
	    is_code(r, "LOADING")) {
		node_note(cl, k, r->str);
		if (is_code(r, "CLUSTERDOWN"))
			cl->stale = 1;
		*pause = 1;
	} else if (is_code(r, "NOSCRIPT") && e->script >= 0 && !e->loaded) {
		e->load = 1;
	} else
		goto answer;
	freeReplyObject(r);
	return;
answer:
	e->reply = r;
	e->done = 1;
}

/*
 * SCRIPT LOAD on node k for the commands of s[] that met -NOSCRIPT,
 * once per script.  A script that does not compile answers its first
 * command with the error; the others, tried again, get -NOSCRIPT.
 */
static void
load_scripts(rc_cluster *cl, int k, struct rc_entry *es,
    const struct sent *s, size_t ns, int64_t deadline, int *pause)
{
	struct rc_entry *e;
	struct script *sc;
	const char *argv[3];
	size_t argvlen[3], j;
	redisReply *r;

	for (j = 0; j < ns; j++) {
		e = &es[s[j].entry];
		if (!e->load || e->done)
			continue;
		e->load = 0;
		sc = &cl->scripts[e->script];
		if (sc->load_node == k && sc->load_round == cl->round) {
			e->loaded = 1;
			continue;
		}
		argv[0] = "SCRIPT", argvlen[0] = 6;
		argv[1] = "LOAD", argvlen[1] = 4;
		argv[2] = sc->body, argvlen[2] = sc->len;
		if ((r = node_call(cl, k, 3, argv, argvlen, deadline)) == NULL) {
			*pause = 1;
			return;
		}
		sc->load_node = k;
		sc->load_round = cl->round;
		e->loaded = 1;
		if (r->type == REDIS_REPLY_ERROR) {
			e->reply = r;
			e->done = 1;
		} else
			freeReplyObject(r);
	}
}

/* Queue the round's commands for node k on its connection. */
static int
queue_node(rc_cluster *cl, int k, struct rc_entry *es, size_t n,
    struct sent *sent, size_t *ns, int64_t deadline)
{
	static const char *asking[] = { "ASKING" };
	static const size_t askinglen[] = { 6 };
	const char *wait[3] = { "WAIT", "1", NULL };
	size_t waitlen[3], i, bytes = 0;
	struct timeval tv;
	char ms[24];
	redisContext *c;
	int ok = 1, want_wait = 0, j;

	/* A master the map lists without replica, before its first WAIT. */
	if (!cl->nodes[k].replicas && cl->nodes[k].asked_load != cl->loads) {
		for (i = 0; i < n && (es[i].done || es[i].target != k ||
		    !(es[i].flags & RC_WAIT)); i++)
			;
		if (i < n) {
			cl->nodes[k].asked_load = cl->loads;
			cl->nodes[k].replicas = has_replica(cl, k, deadline);
		}
	}
	for (i = 0; i < n; i++)
		for (j = 0; !es[i].done && es[i].target == k &&
		    j < es[i].argc; j++)
			bytes += es[i].argvlen[j];
	cl->nodes[k].bytes = bytes;
	tv = io_timeout(deadline, bytes);
	if ((c = node_connect(cl, k, deadline)) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		if (es[i].done || es[i].target != k)
			continue;
		es[i].load = 0;
		if (es[i].ask == k) {
			ok &= redisAppendCommandArgv(c, 1, asking,
			    askinglen) == REDIS_OK;
			sent[(*ns)++] = (struct sent){ i, SENT_ASKING };
		}
		ok &= redisAppendCommandArgv(c, es[i].argc,
		    (const char **)es[i].argv, es[i].argvlen) == REDIS_OK;
		sent[(*ns)++] = (struct sent){ i, SENT_CMD };
		want_wait |= (es[i].flags & RC_WAIT) && cl->nodes[k].replicas;
	}
	if (want_wait) {
		/* Half the read timeout: WAIT answers before the read gives up. */
		snprintf(ms, sizeof(ms), "%ld",
		    (long)(tv.tv_sec * 1000 + tv.tv_usec / 1000) / 2 + 1);
		wait[2] = ms;
		waitlen[0] = 4, waitlen[1] = 1, waitlen[2] = strlen(ms);
		ok &= redisAppendCommandArgv(c, 3, wait, waitlen) == REDIS_OK;
		sent[(*ns)++] = (struct sent){ 0, SENT_WAIT };
	}
	cl->nodes[k].nsent = *ns - cl->nodes[k].sent0;
	if (!ok) {
		node_fail(cl, k, "out of memory");
		cl->nodes[k].nsent = 0;
		return -1;
	}
	return 0;
}

/* Read node k's replies to the round, in the order they were sent. */
static void
read_node(rc_cluster *cl, int k, struct rc_entry *es, const struct sent *s,
    size_t ns, int64_t deadline, int *pause)
{
	redisContext *c = cl->nodes[k].ctx;
	long long replicas = 0;
	redisReply *r;
	size_t j;
	void *v;

	for (j = 0; j < ns; j++) {
		if (redisGetReply(c, &v) != REDIS_OK || v == NULL) {
			node_fail(cl, k, c->errstr);
			*pause = 1;
			break;
		}
		r = v;
		if (s[j].kind == SENT_CMD) {
			es[s[j].entry].ask = -1;
			settle(cl, k, &es[s[j].entry], r, pause);
		} else {
			if (s[j].kind == SENT_WAIT &&
			    r->type == REDIS_REPLY_INTEGER)
				replicas = r->integer;
			freeReplyObject(r);
		}
	}
	/*
	 * No WAIT answer (the link broke) counts as no replica.  No
	 * replica may mean one died: without a new map, which leaves out
	 * failed replicas, every later WAIT here would sit out its T.
	 */
	if (ns > 0 && s[ns - 1].kind == SENT_WAIT && replicas < 1)
		cl->stale = 1;
	if (ns > 0 && s[ns - 1].kind == SENT_WAIT)
		for (j = 0; j < ns; j++)
			if (s[j].kind == SENT_CMD && es[s[j].entry].done &&
			    (es[s[j].entry].flags & RC_WAIT))
				es[s[j].entry].replicas = (int)replicas;
	if (cl->nodes[k].ctx != NULL)
		load_scripts(cl, k, es, s, ns, deadline, pause);
}

/*
 * One round: every unfinished command to its node, all nodes written
 * before any is read.  0, or PERC_EIO when memory ran out.
 */
static int
run_round(rc_cluster *cl, struct rc_entry *es, size_t n, int64_t deadline,
    int *pause)
{
	struct sent *sent;
	struct node *nd;
	size_t i, k, ns = 0, todo = 0;

	cl->round++;
	for (i = 0; i < n; i++) {
		if (es[i].done)
			continue;
		todo++;
		es[i].target = es[i].ask >= 0 ? es[i].ask :
		    es[i].node >= 0 ? es[i].node : cl->slots[es[i].slot];
		if (es[i].target < 0) {
			cl->noroute = es[i].slot;
			cl->stale = 1;
			*pause = 1;
		}
	}
	if ((sent = malloc((2 * todo + cl->nnodes) * sizeof(*sent))) == NULL)
		return error_set(PERC_EIO, "out of memory");
	for (k = 0; k < cl->nnodes; k++) {
		cl->nodes[k].sent0 = ns;
		cl->nodes[k].nsent = 0;
		cl->nodes[k].bytes = 0;
		for (i = 0; i < n && (es[i].done || es[i].target != (int)k); i++)
			;
		if (i < n && queue_node(cl, (int)k, es, n, sent, &ns,
		    deadline) < 0)
			*pause = 1;
	}
	for (k = 0; k < cl->nnodes; k++) {
		nd = &cl->nodes[k];
		if (nd->nsent > 0 && flush_out(nd->ctx) < 0) {
			node_fail(cl, (int)k, nd->ctx->errstr);
			*pause = 1;
		}
	}
	/* Redirections may add nodes: their nsent is 0. */
	for (k = 0; k < cl->nnodes; k++)
		if (cl->nodes[k].nsent > 0 && cl->nodes[k].ctx != NULL)
			read_node(cl, (int)k, es, sent + cl->nodes[k].sent0,
			    cl->nodes[k].nsent, deadline, pause);
	free(sent);
	return 0;
}

/*
 * Commands for a fixed node that has left the map (its master failed
 * over) would wait for it in vain.
 */
static int
check_fixed(rc_cluster *cl, const struct rc_entry *es, size_t n)
{
	size_t i;

	if (cl->stale)
		return 0;
	for (i = 0; i < n; i++)
		if (!es[i].done && es[i].node >= 0 &&
		    !cl->nodes[es[i].node].listed)
			return error_set(PERC_ETIMEOUT, "redis node %s is no "
			    "longer in the cluster map; list the masters "
			    "again", cl->nodes[es[i].node].name);
	return 0;
}

/* Rounds until every command has its reply, or deadline. */
static int
exec_entries(rc_cluster *cl, struct rc_entry *es, size_t n,
    int64_t deadline)
{
	unsigned delay = BACKOFF_MIN_US;
	int rounds = 0, pause, rc;
	size_t i;

	if ((rc = rc_reach(cl, deadline)) < 0)
		return rc;
	own_connections(cl);
	cl->gen++;
	cl->noroute = -1;
	for (;;) {
		for (i = 0; i < n && es[i].done; i++)
			;
		if (i == n)
			return 0;
		if (cl->stale)
			refresh_map(cl, deadline);
		if ((rc = check_fixed(cl, es, n)) < 0)
			return rc;
		if (clock_mono_ms() >= deadline)
			break;
		pause = 0;
		if ((rc = run_round(cl, es, n, deadline, &pause)) < 0)
			return rc;
		/* Redirections go at once, but not round after round. */
		if ((pause || ++rounds > FREE_ROUNDS) &&
		    clock_backoff(&delay, BACKOFF_MAX_US, deadline) < 0)
			break;
	}
	return unreachable(cl);
}

/*
 * Fill e with the words head, then keys, then args, copied into one
 * allocation; route and flags are for the caller to set.
 */
static int
entry_init(struct rc_entry *e, unsigned flags, const perc_bytes *head,
    size_t nhead, const perc_bytes *keys, size_t nkeys,
    const perc_bytes *args, size_t nargs)
{
	const perc_bytes *lists[3] = { head, keys, args };
	size_t counts[3] = { nhead, nkeys, nargs };
	size_t argc = nhead + nkeys + nargs, bytes = 0, i, j, w = 0;
	char *data;

	memset(e, 0, sizeof(*e));
	e->node = e->ask = e->script = e->target = e->replicas = -1;
	e->flags = flags;
	if (argc == 0 || argc > 1u << 20)
		return error_set(PERC_EUSAGE, "a redis command needs 1 to "
		    "%u words", 1u << 20);
	for (i = 0; i < 3; i++)
		for (j = 0; j < counts[i]; j++) {
			if (lists[i][j].len > SIZE_MAX / 2 - bytes)
				return error_set(PERC_EIO, "out of memory");
			bytes += lists[i][j].len;
		}
	e->argv = malloc(argc * (sizeof(char *) + sizeof(size_t)) + bytes + 1);
	if (e->argv == NULL)
		return error_set(PERC_EIO, "out of memory");
	e->argvlen = (size_t *)(e->argv + argc);
	data = (char *)(e->argvlen + argc);
	for (i = 0; i < 3; i++)
		for (j = 0; j < counts[i]; j++, w++) {
			e->argv[w] = data;
			e->argvlen[w] = lists[i][j].len;
			if (lists[i][j].len > 0)
				memcpy(data, lists[i][j].data, lists[i][j].len);
			data += lists[i][j].len;
		}
	e->argc = (int)argc;
	return 0;
}

/*
 * The SHA-1 of a script, worked out on its first use: a command runs
 * one or two of the store's scripts, and hashing them all at every
 * start took a quarter of a short command's time.
 */
static const char *
script_sha(rc_cluster *cl, int script)
{
	struct script *sc = &cl->scripts[script];

	if (sc->sha[0] == '\0')
		sha1_hex(sc->sha, sc->body, sc->len);
	return sc->sha;
}

static int
evalsha_init(struct rc_entry *e, rc_cluster *cl, unsigned flags, int script,
    size_t nkeys, const perc_bytes *keys, size_t nargs,
    const perc_bytes *args)
{
	perc_bytes head[3];
	char num[24];
	int rc;

	if (script < 0 || (size_t)script >= cl->nscripts) {
		memset(e, 0, sizeof(*e));
		return error_set(PERC_EUSAGE, "no redis script %d", script);
	}
	snprintf(num, sizeof(num), "%zu", nkeys);
	head[0] = (perc_bytes){ "EVALSHA", 7 };
	head[1] = (perc_bytes){ script_sha(cl, script), 40 };
	head[2] = (perc_bytes){ num, strlen(num) };
	if ((rc = entry_init(e, flags, head, 3, keys, nkeys, args, nargs)) < 0)
		return rc;
	e->script = script;
	return 0;
}

static void
entry_free(struct rc_entry *e)
{
	free(e->argv);
	freeReplyObject(e->reply);
	e->argv = NULL;
	e->reply = NULL;
}

/* Run a lone entry; its reply (and WAIT count) go to the caller. */
static int
run_one(redisReply **out, int *replicas, rc_cluster *cl, struct rc_entry *e,
    int rc, int64_t deadline)
{
	*out = NULL;
	if (rc == 0 && (rc = exec_entries(cl, e, 1, deadline)) == 0) {
		*out = e->reply;
		e->reply = NULL;
		if (replicas != NULL)
			*replicas = e->replicas;
	}
	entry_free(e);
	return rc;
}

int
rc_command(redisReply **out, int *replicas, rc_cluster *cl,
    perc_bytes slotkey, size_t argc, const perc_bytes *argv,
    int64_t deadline_ms)
{
	struct rc_entry e;
	int rc;

	rc = entry_init(&e, replicas ? RC_WAIT : 0, argv, argc, NULL, 0,
	    NULL, 0);
	e.slot = rc_slot(slotkey.data, slotkey.len);
	return run_one(out, replicas, cl, &e, rc, deadline_ms);
}

int
rc_script_register(rc_cluster *cl, const char *body, size_t len)
{
	struct script *sc;

	sc = realloc(cl->scripts, (cl->nscripts + 1) * sizeof(*sc));
	if (sc == NULL)
		return error_set(PERC_EIO, "out of memory");
	cl->scripts = sc;
	sc += cl->nscripts;
	if ((sc->body = malloc(len + 1)) == NULL)
		return error_set(PERC_EIO, "out of memory");
	if (len > 0)
		memcpy(sc->body, body, len);
	sc->body[len] = '\0';
	sc->len = len;
	sc->sha[0] = '\0';
	sc->load_node = -1;
	sc->load_round = 0;
	return (int)cl->nscripts++;
}

const char *
rc_script_sha(rc_cluster *cl, int script)
{
	if (script < 0 || (size_t)script >= cl->nscripts)
		return NULL;
	return script_sha(cl, script);
}

int
rc_evalsha(redisReply **out, int *replicas, rc_cluster *cl, int script,
    perc_bytes slotkey, size_t nkeys, const perc_bytes *keys,
    size_t nargs, const perc_bytes *args, int64_t deadline_ms)
{
	struct rc_entry e;
	int rc;

	rc = evalsha_init(&e, cl, replicas ? RC_WAIT : 0, script, nkeys, keys,
	    nargs, args);
	e.slot = rc_slot(slotkey.data, slotkey.len);
	return run_one(out, replicas, cl, &e, rc, deadline_ms);
}

int
rc_pipeline_new(rc_pipeline **out, rc_cluster *cl)
{
	if ((*out = calloc(1, sizeof(**out))) == NULL)
		return error_set(PERC_EIO, "out of memory");
	(*out)->cl = cl;
	return 0;
}

/* Room for one more entry at p->es[p->n]. */
static int
pipeline_grow(rc_pipeline *p)
{
	struct rc_entry *es;
	size_t cap;

	if (p->n < p->cap)
		return 0;
	cap = p->cap ? p->cap * 2 : 16;
	if ((es = realloc(p->es, cap * sizeof(*es))) == NULL)
		return error_set(PERC_EIO, "out of memory");
	p->es = es;
	p->cap = cap;
	return 0;
}

int
rc_pipeline_add(rc_pipeline *p, perc_bytes slotkey, unsigned flags,
    size_t argc, const perc_bytes *argv)
{
	int rc;

	if ((rc = pipeline_grow(p)) < 0 ||
	    (rc = entry_init(&p->es[p->n], flags, argv, argc, NULL, 0, NULL,
	    0)) < 0)
		return rc;
	p->es[p->n++].slot = rc_slot(slotkey.data, slotkey.len);
	return 0;
}

int
rc_pipeline_evalsha(rc_pipeline *p, perc_bytes slotkey, unsigned flags,
    int script, size_t nkeys, const perc_bytes *keys, size_t nargs,
    const perc_bytes *args)
{
	int rc;

	if ((rc = pipeline_grow(p)) < 0 ||
	    (rc = evalsha_init(&p->es[p->n], p->cl, flags, script, nkeys, keys,
	    nargs, args)) < 0)
		return rc;
	p->es[p->n++].slot = rc_slot(slotkey.data, slotkey.len);
	return 0;
}

int
rc_pipeline_exec(rc_pipeline *p, int64_t deadline_ms)
{
	return exec_entries(p->cl, p->es, p->n, deadline_ms);
}

size_t
rc_pipeline_len(const rc_pipeline *p)
{
	return p->n;
}

redisReply *
rc_pipeline_reply(const rc_pipeline *p, size_t i)
{
	return i < p->n ? p->es[i].reply : NULL;
}

int
rc_pipeline_replicas(const rc_pipeline *p, size_t i)
{
	return i < p->n ? p->es[i].replicas : -1;
}

void
rc_pipeline_free(rc_pipeline *p)
{
	size_t i;

	if (p == NULL)
		return;
	for (i = 0; i < p->n; i++)
		entry_free(&p->es[i]);
	free(p->es);
	free(p);
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

int
rc_node_command(redisReply **out, rc_cluster *cl, int node, size_t argc,
    const perc_bytes *argv, int64_t deadline_ms)
{
	struct rc_entry e;
	int rc;

	rc = entry_init(&e, 0, argv, argc, NULL, 0, NULL, 0);
	if (rc == 0 && (node < 0 || (size_t)node >= cl->nnodes))
		rc = error_set(PERC_EUSAGE, "no redis node %d", node);
	e.node = node;
	return run_one(out, NULL, cl, &e, rc, deadline_ms);
}

int
rc_node_evalsha(redisReply **out, rc_cluster *cl, int node, int script,
    size_t nkeys, const perc_bytes *keys, size_t nargs,
    const perc_bytes *args, int64_t deadline_ms)
{
	struct rc_entry e;
	int rc;

	rc = evalsha_init(&e, cl, 0, script, nkeys, keys, nargs, args);
	if (rc == 0 && (node < 0 || (size_t)node >= cl->nnodes))
		rc = error_set(PERC_EUSAGE, "no redis node %d", node);
	e.node = node;
	return run_one(out, NULL, cl, &e, rc, deadline_ms);
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

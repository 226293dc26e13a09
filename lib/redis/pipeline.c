/*
 * lib/redis/pipeline.c - the Redis Cluster client's execution of
 * commands (cluster.h): one command, a pipeline, a script.
 *
 * Every command goes through one engine, exec_entries(), in rounds: a
 * round sends each unfinished command to the node it should go to
 * (by the slot map of cluster.c), grouped by node, all groups written
 * before any reply is read; then it sorts the replies into answers and
 * retries.  A -MOVED updates the slot and marks the map stale, an -ASK
 * points one command at another node, -TRYAGAIN, -CLUSTERDOWN and
 * -LOADING and lost connections wait a backoff, and -NOSCRIPT loads
 * the script on that node.  A stale map is loaded again before the
 * next round.  One command is a round of one; a pipeline is the same
 * with many.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "error.h"
#include "cluster_internal.h"

#define FREE_ROUNDS    4        /* rounds before even redirects wait */

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

/* An error reply whose code (its first word) is code. */
static int
is_code(const redisReply *r, const char *code)
{
	size_t n = strlen(code);

	return r->len >= n && memcmp(r->str, code, n) == 0 &&
	    (r->len == n || r->str[n] == ' ');
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
		if ((m = rc_redirect_node(cl, k, r->str + 6, &slot)) < 0)
			goto answer;
		cl->slots[slot] = (int16_t)m;
		cl->stale = 1;
	} else if (e->node < 0 && is_code(r, "ASK") && r->len > 4) {
		if ((m = rc_redirect_node(cl, k, r->str + 4, &slot)) < 0)
			goto answer;
		e->ask = m;
	} else if (is_code(r, "TRYAGAIN") || is_code(r, "CLUSTERDOWN") ||
	    is_code(r, "LOADING")) {
		rc_node_note(cl, k, r->str);
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
		if ((r = rc_node_call(cl, k, 3, argv, argvlen, deadline)) == NULL) {
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

/* A master the map lists without replica, before each round that
   would WAIT (rc_has_replica says why). */
static void
ask_replicas(rc_cluster *cl, int k, const struct rc_entry *es, size_t n,
    int64_t deadline)
{
	size_t i;

	if (cl->nodes[k].replicas || cl->nodes[k].lone)
		return;
	for (i = 0; i < n && (es[i].done || es[i].target != k ||
	    !(es[i].flags & RC_WAIT)); i++)
		;
	if (i < n)
		cl->nodes[k].replicas = rc_has_replica(cl, k, deadline);
}

/* The bytes of the round's commands to node k. */
static size_t
round_bytes(const struct rc_entry *es, size_t n, int k)
{
	size_t i, bytes = 0;
	int j;

	for (i = 0; i < n; i++)
		for (j = 0; !es[i].done && es[i].target == k &&
		    j < es[i].argc; j++)
			bytes += es[i].argvlen[j];
	return bytes;
}

/* WAIT 1 T on c, T half the read timeout tv: WAIT answers before the
   read gives up.  1, or 0 when memory ran out. */
static int
append_wait(redisContext *c, struct timeval tv)
{
	const char *wait[3] = { "WAIT", "1", NULL };
	size_t waitlen[3];
	char ms[24];

	snprintf(ms, sizeof(ms), "%ld",
	    (long)(tv.tv_sec * 1000 + tv.tv_usec / 1000) / 2 + 1);
	wait[2] = ms;
	waitlen[0] = 4, waitlen[1] = 1, waitlen[2] = strlen(ms);
	return redisAppendCommandArgv(c, 3, wait, waitlen) == REDIS_OK;
}

/* Queue the round's commands for node k on its connection. */
static int
queue_node(rc_cluster *cl, int k, struct rc_entry *es, size_t n,
    struct sent *sent, size_t *ns, int64_t deadline)
{
	static const char *asking[] = { "ASKING" };
	static const size_t askinglen[] = { 6 };
	struct timeval tv;
	redisContext *c;
	int ok = 1, want_wait = 0;
	size_t i;

	ask_replicas(cl, k, es, n, deadline);
	cl->nodes[k].bytes = round_bytes(es, n, k);
	tv = rc_io_timeout(deadline, cl->nodes[k].bytes,
	    cl->nodes[k].timeouts);
	if ((c = rc_node_connect(cl, k, deadline)) == NULL)
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
		ok &= append_wait(c, tv);
		sent[(*ns)++] = (struct sent){ 0, SENT_WAIT };
	}
	cl->nodes[k].nsent = *ns - cl->nodes[k].sent0;
	if (!ok) {
		rc_node_fail(cl, k, "out of memory");
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
			rc_node_fail(cl, k, c->errstr);
			*pause = 1;
			break;
		}
		r = v;
		cl->nodes[k].timeouts = 0;
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

/* Where each unfinished command goes this round: how many there are. */
static size_t
route(rc_cluster *cl, struct rc_entry *es, size_t n, int *pause)
{
	size_t i, todo = 0;

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
	return todo;
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
	size_t i, k, ns = 0, todo;

	cl->round++;
	todo = route(cl, es, n, pause);
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
		if (nd->nsent > 0 && rc_flush_out(nd->ctx) < 0) {
			rc_node_fail(cl, (int)k, nd->ctx->errstr);
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
	rc_begin_call(cl);
	rc_check_epoch(cl, deadline);
	for (;;) {
		for (i = 0; i < n && es[i].done; i++)
			;
		if (i == n)
			return 0;
		if (cl->stale)
			rc_refresh_map(cl, deadline);
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
	return rc_unreachable(cl);
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

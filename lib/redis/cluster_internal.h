/*
 * lib/redis/cluster_internal.h - what the two halves of the Redis
 * Cluster client share, and no one else sees: the client's state, and
 * the calls on nodes and on the slot map that cluster.c offers to
 * pipeline.c.  The interface of the client is cluster.h.
 *
 *   cluster.c   the nodes, their connections, the slot map and its
 *               loading, a key's slot and redirections
 *   pipeline.c  the execution of commands in rounds: single commands,
 *               pipelines, scripts (EVALSHA, SCRIPT LOAD)
 *   url.c       the seed list, its password, the URL shown
 */
#ifndef REDIS_CLUSTER_INTERNAL_H
#define REDIS_CLUSTER_INTERNAL_H

#include <stdint.h>
#include <sys/types.h>

#include "cluster.h"

#define BACKOFF_MIN_US 10000    /* first wait after a failed round */
#define BACKOFF_MAX_US 250000   /* short: a failover is noticed soon */

struct node {
	rc_addr       addr;
	char          name[272];    /* "host:port", for messages */
	redisContext *ctx;          /* NULL until a command needs it */
	int           listed;       /* in the last map, master or replica */
	int           master;       /* serves slots in the last map */
	int           replicas;     /* has a replica in the last map */
	unsigned      failed_gen;   /* the call in which it last failed */
	unsigned      tried_load;   /* the map load that last asked it */
	int           lone;         /* a server not in a cluster: no replica */
	char          why[160];     /* and what went wrong then */
	size_t        sent0, nsent; /* its share of a round's sent[] */
	size_t        bytes;        /* the round's command bytes to it */
	unsigned      timeouts;     /* its reads timed out in a row */
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
	int            map_from;    /* the node the map came from, or -1 */
	long long      epoch;       /* its cluster_current_epoch then */
	int64_t        epoch_checked_ms; /* rc_check_epoch's last look */
	long           noroute;     /* a slot no node served, or -1 */
	pid_t          pid;         /* the process whose connections these are */
	rc_check_fn    check;       /* rc_new's, until it passes */
	void          *check_arg;
	struct script *scripts;
	size_t         nscripts;
	char          *user;        /* AUTH's, or NULL: the default user */
	char          *pass;        /* AUTH's, or NULL: no AUTH */
};

/* cluster.c, for pipeline.c: calls on node k of cl->nodes. */

/* Remember what node k said, for the message when the deadline passes. */
void  rc_node_note(rc_cluster *cl, int k, const char *why);
/* Its connection failed: note why, drop it, and doubt the map. */
void  rc_node_fail(rc_cluster *cl, int k, const char *why);
/* How long one connect, write or read may wait, bytes being in flight. */
struct timeval rc_io_timeout(int64_t deadline, size_t bytes, unsigned slow);
/* Its connection, opened (and AUTH said) if need be; NULL: it failed. */
redisContext *rc_node_connect(rc_cluster *cl, int k, int64_t deadline);
/* Write what hiredis queued on c: 0, or -1 with c->errstr set. */
int   rc_flush_out(redisContext *c);
/* One command to it, outside any round; NULL when the node failed. */
redisReply *rc_node_call(rc_cluster *cl, int k, int argc, const char **argv,
          const size_t *argvlen, int64_t deadline);
/* Has master k a replica, failing or not, though the map lists none? */
int   rc_has_replica(rc_cluster *cl, int k, int64_t deadline);

/* cluster.c, for subscribe.c too. */

/*
 * AUTH on a new connection c, when the URL gave a password: 0, or one
 * of the two failures below with why (whylen bytes) saying what went
 * wrong.  The server's refusal names no password.
 */
#define RC_AUTH_FAILED  (-1)    /* the connection failed: c->errstr */
#define RC_AUTH_REFUSED (-2)    /* "AUTH refused: " and the server's reply */
int   rc_auth(rc_cluster *cl, redisContext *c, char *why, size_t whylen);

/* cluster.c, for pipeline.c: the map and the call. */

/* A new call: the process's own connections, no failure noted yet. */
void  rc_begin_call(rc_cluster *cl);
/* Load the map from any node that answers: 0, or -1 (reasons noted). */
int   rc_refresh_map(rc_cluster *cl, int64_t deadline);
/* Make the map stale if the cluster's epoch moved since it was loaded. */
void  rc_check_epoch(rc_cluster *cl, int64_t deadline);
/* PERC_ETIMEOUT, naming the nodes that failed in this call and why. */
int   rc_unreachable(rc_cluster *cl);
/* The node of "-MOVED 3999 host:port" (after the code) and its slot. */
int   rc_redirect_node(rc_cluster *cl, int from, const char *s,
          unsigned *slot);
#endif

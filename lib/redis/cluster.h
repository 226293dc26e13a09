/*
 * lib/redis/cluster.h - a small Redis Cluster client on hiredis, for
 * perc's Redis store: cluster.c (nodes and the slot map), pipeline.c
 * (commands sent in rounds), url.c (seed lists).
 *
 * hiredis 0.14 speaks to one server; this adds what a cluster needs:
 * the slot of a key, the slot map (CLUSTER SLOTS), one connection per
 * node opened lazily, redirections (-MOVED, -ASK), and retries through
 * a failover until a deadline.
 *
 * Conventions:
 *  - Functions that can fail return 0 or a negative PERC_E* code with
 *    a one-line message for perc_errmsg().  PERC_ETIMEOUT means the
 *    deadline passed while the cluster was down or unreachable; the
 *    message names the nodes tried and what each said.
 *  - Deadlines are absolute, in ms of clock_mono_ms() (as
 *    clock_deadline() makes them).  No call waits past its deadline by
 *    more than a moment, whatever the network does, with two
 *    exceptions: resolving a host name (getaddrinfo) has no timeout,
 *    and a node busy with large commands is given time to do the work:
 *    each write and read waits at most min(time left, RC_IO_MS) plus
 *    RC_WORK_MS_PER_MIB for each MiB the round sent to that node.
 *    Each connect waits at most min(time left, RC_IO_MS).
 *  - Keys, arguments and replies are binary-safe: perc_bytes in, and
 *    hiredis replies (redisReply: str and len) out.
 *  - A reply handed out through redisReply **out belongs to the caller,
 *    who frees it with freeReplyObject().  A reply of the server that
 *    is an error (REDIS_REPLY_ERROR, such as an error a Lua script
 *    returned) is a reply, not a failure: the call returns 0.  Only
 *    redirections, -TRYAGAIN, -CLUSTERDOWN, -LOADING, -NOSCRIPT (for
 *    scripts) and lost connections are retried.
 *  - A command whose connection broke after it was written may have
 *    run, and is sent again: commands must be idempotent or check
 *    their own preconditions, as perc's single-row scripts do.
 *  - One thread at a time per rc_cluster.  A process forked from one
 *    that used it may go on using its copy: the child's first call
 *    leaves the inherited connections to the parent and opens its own.
 */
#ifndef REDIS_CLUSTER_H
#define REDIS_CLUSTER_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <hiredis/hiredis.h>

#include "perc.h"

#define RC_SLOTS  16384
#define RC_IO_MS  1000         /* longest wait on one connect or read */
#define RC_WORK_MS_PER_MIB 250 /* and more, a MiB of commands sent */

typedef struct rc_cluster  rc_cluster;
typedef struct rc_pipeline rc_pipeline;

/*
 * The hash slot of a key: CRC16-XMODEM mod 16384 of the key, or of its
 * hash tag, the bytes between the first '{' and the first '}' after
 * it when there is at least one.  Keys with one tag share a slot.
 */
unsigned rc_slot(const void *key, size_t len);

/*
 * A seed list, "host[:port][,host[:port]]...", optionally after
 * "redis://" and "USER:PASSWORD@" or ":PASSWORD@": hosts are IPv4
 * addresses, names, or IPv6 addresses in brackets ("[::1]:7000"),
 * ports 1 to 65535, 6379 when left out.  *out is an array of *n
 * addresses for free(); PERC_EUSAGE with a line that says what is
 * wrong for anything else.
 *
 * rc_parse_auth gives the user and password of such a list, each
 * %XX-decoded, for free(); NULL when there is none (user: AUTH with
 * the password alone, as for a server's requirepass).  The password
 * ends at the list's last '@', so it may hold any byte but NUL and
 * '%', which is written %25.  rc_public_url is url without its
 * password ("redis://USER@HOST..."), for every message and display.
 * No message quotes a password.
 */
typedef struct {
	char host[256];
	int  port;
} rc_addr;

int  rc_parse_seeds(rc_addr **out, size_t *n, const char *list);
int  rc_parse_auth(char **user, char **pass, const char *list);
int  rc_public_url(perc_buf *out, const char *url);

/*
 * rc_open parses seeds and loads the slot map from the first of them
 * that answers, trying each in turn until deadline_ms; PERC_ETIMEOUT
 * when none did, PERC_EIO when a seed is not in cluster mode.  No
 * connection to a master is opened before a command needs it.
 */
int  rc_open(rc_cluster **out, const char *seeds, int64_t deadline_ms);
void rc_close(rc_cluster *cl);

/*
 * Both say AUTH on each connection they open, when seeds hold a
 * password (rc_parse_auth).
 *
 * rc_new parses seeds and contacts no one: the slot map is loaded by
 * the first command, as rc_open would, and then check(arg, deadline)
 * runs once (check may be NULL), its own commands going through; when
 * it fails, so does that command, and the next one runs it again.  A
 * process that needs the cluster for no command never reaches it.
 */
typedef int (*rc_check_fn)(void *arg, int64_t deadline_ms);

int  rc_new(rc_cluster **out, const char *seeds, rc_check_fn check,
         void *arg);
/* That first contact now, where no command made it yet: 0 or why not. */
int  rc_reach(rc_cluster *cl, int64_t deadline_ms);
int  rc_reached(const rc_cluster *cl);

/*
 * rc_command sends one command (argc >= 1 words) to the master of the
 * slot of slotkey, following redirections and retrying until
 * deadline_ms (see the conventions above).
 *
 * With replicas not NULL, the command is followed on the same
 * connection by WAIT 1 T (T about half the read timeout above):
 * *replicas is then the number of replicas WAIT says have every write
 * so far of that connection (0 when none answered in time), or -1
 * when the master has no replica to wait for.  The caller decides
 * what 0 means to it.
 */
int  rc_command(redisReply **out, int *replicas, rc_cluster *cl,
                perc_bytes slotkey, size_t argc, const perc_bytes *argv,
                int64_t deadline_ms);

/*
 * Lua scripts.  rc_script_register keeps a copy of body and its SHA1
 * and returns its id (>= 0), or PERC_EIO when memory runs out; it
 * does not talk to the cluster.  rc_evalsha runs the script as
 * EVALSHA sha nkeys keys... args... routed by slotkey (which should
 * hash like the keys); on -NOSCRIPT it loads the script on that node
 * (SCRIPT LOAD) and tries once more.  replicas as for rc_command.
 * rc_script_sha is the 40 hex digits of the script's SHA1 (for tests:
 * perc itself never needs it).
 */
int  rc_script_register(rc_cluster *cl, const char *body, size_t len);
const char *rc_script_sha(rc_cluster *cl, int script);
int  rc_evalsha(redisReply **out, int *replicas, rc_cluster *cl,
                int script, perc_bytes slotkey,
                size_t nkeys, const perc_bytes *keys,
                size_t nargs, const perc_bytes *args, int64_t deadline_ms);

/*
 * Pipelines: commands queued with their slot keys, then sent together.
 * rc_pipeline_exec groups them by master and writes every group before
 * it reads any reply, so commands on three masters cost about one
 * round trip.  Commands redirected, or whose node failed, are sent
 * again (grouped again) until every one has its reply or deadline_ms
 * passes.  Replies are in the order of the queue, but the commands may
 * run in another order, and there is no atomicity across them: each
 * command is on its own, as if sent alone.  Do not queue two commands
 * whose order matters.
 *
 * flags RC_WAIT asks for WAIT 1 T after the command, as replicas does
 * for rc_command; one WAIT per master covers all its commands.
 * rc_pipeline_exec returns 0 when every command has a reply; on
 * PERC_ETIMEOUT the commands that finished have their replies and the
 * others a NULL one, and calling it again retries those others.
 * rc_pipeline_reply is borrowed, valid until rc_pipeline_free;
 * rc_pipeline_replicas is the WAIT count as for rc_command (-1 also
 * without RC_WAIT).
 */
#define RC_WAIT 0x1u

int    rc_pipeline_new(rc_pipeline **out, rc_cluster *cl);
int    rc_pipeline_add(rc_pipeline *p, perc_bytes slotkey, unsigned flags,
                       size_t argc, const perc_bytes *argv);
int    rc_pipeline_evalsha(rc_pipeline *p, perc_bytes slotkey,
                           unsigned flags, int script,
                           size_t nkeys, const perc_bytes *keys,
                           size_t nargs, const perc_bytes *args);
int    rc_pipeline_exec(rc_pipeline *p, int64_t deadline_ms);
/* For tests: the number of commands queued. */
size_t rc_pipeline_len(const rc_pipeline *p);
redisReply *rc_pipeline_reply(const rc_pipeline *p, size_t i);
int    rc_pipeline_replicas(const rc_pipeline *p, size_t i);
void   rc_pipeline_free(rc_pipeline *p);

/*
 * Nodes, for what runs on every master (scans that merge per-node
 * results, checks of settings).  A node is a small integer, valid as
 * long as the rc_cluster.
 *
 * rc_masters sets *out to an array (for free()) of the *n masters
 * that serve slots in the current map, loading it first if stale.
 * rc_node_command sends one command to that node, whatever the slots
 * of its keys, retrying lost connections, -TRYAGAIN, -CLUSTERDOWN and
 * -LOADING until deadline_ms; -MOVED and -ASK come back as replies.
 * It gives up early, with PERC_ETIMEOUT, when the map no longer lists
 * the node (its master failed over): list the masters again then.
 * rc_node_evalsha is rc_evalsha sent to a node.  rc_node_is_master and
 * rc_node_evalsha exist for tests (perc itself uses neither).
 */
int  rc_masters(int **out, size_t *n, rc_cluster *cl, int64_t deadline_ms);
const char *rc_node_name(const rc_cluster *cl, int node); /* "host:port" */
int  rc_node_is_master(const rc_cluster *cl, int node);
int  rc_node_command(redisReply **out, rc_cluster *cl, int node,
                     size_t argc, const perc_bytes *argv,
                     int64_t deadline_ms);
int  rc_node_evalsha(redisReply **out, rc_cluster *cl, int node, int script,
                     size_t nkeys, const perc_bytes *keys,
                     size_t nargs, const perc_bytes *args,
                     int64_t deadline_ms);

/*
 * Load the slot map again before the next command: for a caller that
 * learned the map is behind, such as a master's replicas not in it yet.
 */
void rc_map_behind(rc_cluster *cl);

/* The node the map says serves slot, or -1 when none does. */
int  rc_slot_node(const rc_cluster *cl, unsigned slot);

/*
 * A shard channel subscription (SSUBSCRIBE, Redis 7), on a connection
 * of its own to the master of the channel's slot, opened by
 * rc_subscribe before deadline_ms (the map loaded first if need be).
 * rc_sub_wait blocks until a message comes (1), deadline_ms or a
 * signal not in mask (0, ppoll(2)'s mask; NULL: the process's), or the
 * subscription ends (-1: the connection broke, or the server dropped
 * the channel because its slot moved, as a failover does; subscribe
 * again, on a map loaded anew: rc_map_behind).  Every message queued
 * is read at once.  A subscription is its process's: a child forked
 * after rc_subscribe closes its copy (rc_sub_close) and subscribes anew.
 */
typedef struct rc_sub rc_sub;

int   rc_subscribe(rc_sub **out, rc_cluster *cl, perc_bytes channel,
                   int64_t deadline_ms);
int   rc_sub_wait(rc_sub *sub, int64_t deadline_ms, const sigset_t *mask);
pid_t rc_sub_pid(const rc_sub *sub);
void  rc_sub_close(rc_sub *sub);

/* For tests only: point slot at node in the map, rightly or not. */
void rc_test_set_slot(rc_cluster *cl, unsigned slot, int node);
#endif

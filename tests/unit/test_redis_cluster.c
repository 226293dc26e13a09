/*
 * tests/unit/test_redis_cluster.c - the Redis Cluster client: slots and
 * seed lists always; the rest against a live cluster named by
 * PERC_TEST_REDIS_URL, a seed list as rc_parse_seeds takes it
 * ("host:port,host:port" or "redis://host:port,..."), and skipped
 * when it is not set.  The live tests write keys under "perc-unit:"
 * and delete them; the ASK test leaves one slot migrating for a
 * moment, and puts it back.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "redis/cluster.h"
#include "unit.h"

#define LIVE_MS 20000           /* deadline of each live call */

static perc_bytes
str(const char *s)
{
	return bytes_of(s, strlen(s));
}

static unsigned
slot_of(const char *s)
{
	return rc_slot(s, strlen(s));
}

/* r is a reply of type holding exactly the len bytes of data. */
static int
reply_is(const redisReply *r, int type, const void *data, size_t len)
{
	return r != NULL && r->type == type && r->len == len &&
	    (len == 0 || memcmp(r->str, data, len) == 0);
}

static void
test_slots(const char *dir)
{
	static const char nul_tag[] = "a\0{b}c", nul_in[] = "{a\0b}zz",
	    nul_bare[] = "a\0b";

	(void)dir;
	CHECK(slot_of("foo") == 12182);
	CHECK(slot_of("bar") == 5061);
	CHECK(slot_of("123456789") == 0x31c3);  /* the CRC16 check value */
	CHECK(slot_of("") == 0);
	CHECK(slot_of("{user1000}.following") == 3443);
	CHECK(slot_of("{user1000}.followers") == 3443);
	/* First '{', first '}' after it, not empty between: else the key. */
	CHECK(slot_of("foo{bar}{zap}") == 5061);
	CHECK(slot_of("foo{}{bar}") == 8363);
	CHECK(slot_of("foo{{bar}}zap") == 4015);
	CHECK(slot_of("{}") == 15257);
	CHECK(slot_of("{") == 4092);
	CHECK(slot_of("x}{y") == 9970);
	/* Binary keys: NULs are bytes like the others. */
	CHECK(rc_slot(nul_tag, sizeof(nul_tag) - 1) == slot_of("b"));
	CHECK(rc_slot(nul_in, sizeof(nul_in) - 1) ==
	    rc_slot(nul_bare, sizeof(nul_bare) - 1));
	CHECK(rc_slot(nul_bare, 3) != rc_slot(nul_bare, 1));
}

static void
test_seeds(const char *dir)
{
	static const char *bad[] = { "", "redis://", ":1", "h:",
		"h:0", "h:65536", "h:12x", "h:-1", "a:1,", ",a:1", "a:1,,b:2",
		"a b:1", "::1:6379", "h:1:2", "h\n:1", " h:1",
		"h:99999999999999999999", "[::1", "[]:1", "[::1]x", "[::1]:",
		"[h]:1", "[1.2.3.4]:1", "u:p@", "redis://u:p@", NULL };
	rc_addr *a;
	size_t n, i;
	int rc;

	(void)dir;
	CHECK(rc_parse_seeds(&a, &n, "127.0.0.1:6379") == 0 && n == 1 &&
	    strcmp(a[0].host, "127.0.0.1") == 0 && a[0].port == 6379);
	free(a);
	CHECK(rc_parse_seeds(&a, &n,
	    "redis://a:1,redis-0.example.com:65535,10.0.0.7:7000") == 0 &&
	    n == 3 && strcmp(a[0].host, "a") == 0 && a[0].port == 1 &&
	    strcmp(a[1].host, "redis-0.example.com") == 0 &&
	    a[1].port == 65535 && a[2].port == 7000);
	free(a);
	for (i = 0; bad[i] != NULL; i++) {
		rc = rc_parse_seeds(&a, &n, bad[i]);
		if (rc != PERC_EUSAGE || a != NULL || n != 0)
			printf("# seed list '%s' gave %d\n", bad[i], rc);
		CHECK(rc == PERC_EUSAGE && a == NULL && n == 0);
		CHECK(strchr(perc_errmsg(), '\n') == NULL);
		CHECK(strstr(perc_errmsg(), "redis seed") != NULL);
	}
	CHECK(rc_parse_seeds(&a, &n, "h:65536") == PERC_EUSAGE &&
	    strstr(perc_errmsg(), "port") != NULL);
	CHECK(rc_parse_seeds(&a, &n, "::1:6379") == PERC_EUSAGE &&
	    strstr(perc_errmsg(), "brackets") != NULL);
	/* The port is 6379 when left out; IPv6 goes in brackets. */
	CHECK(rc_parse_seeds(&a, &n, "redis://h,[::1]:7000,[fe80::1],"
	    "10.0.0.7") == 0 && n == 4 && strcmp(a[0].host, "h") == 0 &&
	    a[0].port == 6379 && strcmp(a[1].host, "::1") == 0 &&
	    a[1].port == 7000 && strcmp(a[2].host, "fe80::1") == 0 &&
	    a[2].port == 6379 && a[3].port == 6379);
	free(a);
	/* A password ends at the last '@' and may hold ',', ':', '/'. */
	CHECK(rc_parse_seeds(&a, &n, "redis://u:p@,:/x@h:1,[::1]") == 0 &&
	    n == 2 && strcmp(a[0].host, "h") == 0 && a[0].port == 1 &&
	    strcmp(a[1].host, "::1") == 0);
	free(a);
}

/* USER:PASSWORD@ and :PASSWORD@, decoded, and never in a message. */
static void
test_auth(const char *dir)
{
	static const char *bad[] = { "redis://alice@h", "redis://alice:@h",
		"redis://a:se%2cret%@h", "redis://a:se%zzcret@h",
		"redis://a:se%00cret@h", NULL };
	char *user, *pass;
	perc_buf out = PERC_BUF_INIT;
	size_t i;

	(void)dir;
	CHECK(rc_parse_auth(&user, &pass, "redis://h:1,g:2") == 0 &&
	    user == NULL && pass == NULL);
	CHECK(rc_parse_auth(&user, &pass, "redis://alice:p%40ss:w@rd@h:1") ==
	    0 && user != NULL && strcmp(user, "alice") == 0 && pass != NULL &&
	    strcmp(pass, "p@ss:w@rd") == 0);
	free(user);
	free(pass);
	CHECK(rc_parse_auth(&user, &pass, ":top%25secret@h") == 0 &&
	    user == NULL && pass != NULL && strcmp(pass, "top%secret") == 0);
	free(pass);
	for (i = 0; bad[i] != NULL; i++) {
		CHECK(rc_parse_auth(&user, &pass, bad[i]) == PERC_EUSAGE &&
		    user == NULL && pass == NULL);
		CHECK(strstr(perc_errmsg(), "cret") == NULL);
	}
	CHECK(rc_public_url(&out, "redis://alice:secret@h:1,g/t") == 0 &&
	    strcmp(out.data, "redis://alice@h:1,g/t") == 0);
	CHECK(rc_public_url(&out, "redis://:se/c@ret@[::1]:1/t") == 0 &&
	    strcmp(out.data, "redis://[::1]:1/t") == 0);
	CHECK(rc_public_url(&out, "redis://h:1/t") == 0 &&
	    strcmp(out.data, "redis://h:1/t") == 0);
	perc_buf_dispose(&out);
}

/* A loopback port that refuses (bound, not listening) or never answers. */
static int
loopback_port(int *fd, int listening)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((*fd = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    bind(*fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    (listening && listen(*fd, 8) < 0) ||
	    getsockname(*fd, (struct sockaddr *)&sa, &len) < 0)
		return -1;
	return ntohs(sa.sin_port);
}

/* rc_open on a dead seed fails with PERC_ETIMEOUT when it should. */
static void
check_dead_seed(int listening, int64_t ms, const char *why)
{
	rc_cluster *cl = NULL;
	char name[32];
	int64_t t0, took;
	int fd, port, rc;

	CHECK((port = loopback_port(&fd, listening)) > 0);
	snprintf(name, sizeof(name), "127.0.0.1:%d", port);
	t0 = clock_mono_ms();
	rc = rc_open(&cl, name, clock_deadline(ms));
	took = clock_mono_ms() - t0;
	printf("# %s: %d after %lld ms: %s\n", name, rc, (long long)took,
	    perc_errmsg());
	CHECK(rc == PERC_ETIMEOUT && cl == NULL);
	CHECK(took >= ms - 5 && took < ms + 500);
	CHECK(strstr(perc_errmsg(), name) != NULL);
	CHECK(strstr(perc_errmsg(), why) != NULL);
	CHECK(strstr(perc_errmsg(), "down or unreachable") != NULL);
	close(fd);
}

static void
test_dead_seed(const char *dir)
{
	rc_cluster *cl = NULL;

	(void)dir;
	/* Nothing listening: refused at once, again and again. */
	check_dead_seed(0, 300, "refused");
	/* Listening, never answering: every read must give up in time. */
	check_dead_seed(1, 1500, "timed out");
	CHECK(rc_open(&cl, "nope:", clock_deadline(100)) == PERC_EUSAGE &&
	    cl == NULL);
}

static rc_cluster *
live_open(void)
{
	const char *url = getenv("PERC_TEST_REDIS_URL");
	rc_cluster *cl = NULL;

	if (url == NULL || *url == '\0') {
		unit_skip("PERC_TEST_REDIS_URL is not set");
		return NULL;
	}
	if (rc_open(&cl, url, clock_deadline(LIVE_MS)) != 0) {
		printf("# rc_open: %s\n", perc_errmsg());
		CHECK(!"rc_open failed");
	}
	return cl;
}

/* A key with a NUL, a tab and a newline in it, unique to this run. */
static size_t
make_key(char *out, size_t size, const char *what, size_t i)
{
	int n = snprintf(out, size, "perc-unit:%ld:%s:%zu:\t\n",
	    (long)getpid(), what, i);

	out[n] = '\0';          /* keys end in a NUL byte of their own */
	return (size_t)n + 1;
}

/* One command routed by its second word, usually its key. */
static redisReply *
cmd(rc_cluster *cl, size_t argc, const perc_bytes *argv)
{
	redisReply *r = NULL;

	if (rc_command(&r, NULL, cl, argv[argc > 1], argc, argv,
	    clock_deadline(LIVE_MS)) != 0)
		printf("# %s\n", perc_errmsg());
	return r;
}

static void
del_keys(rc_cluster *cl, const char *what, size_t n)
{
	rc_pipeline *p;
	perc_bytes argv[2];
	char key[128];
	size_t i;

	CHECK(rc_pipeline_new(&p, cl) == 0);
	argv[0] = str("DEL");
	for (i = 0; i < n; i++) {
		argv[1] = bytes_of(key, make_key(key, sizeof(key), what, i));
		CHECK(rc_pipeline_add(p, argv[1], 0, 2, argv) == 0);
	}
	CHECK(rc_pipeline_exec(p, clock_deadline(LIVE_MS)) == 0);
	rc_pipeline_free(p);
}

static void
test_live_set_get(const char *dir)
{
	rc_cluster *cl = live_open();
	char key[128], val[64];
	perc_bytes argv[3];
	redisReply *r;
	size_t i, nodes = 0;
	int *masters, used[64] = { 0 }, node;

	(void)dir;
	if (cl == NULL)
		return;
	for (i = 0; i < 2000; i++) {
		argv[0] = str("SET");
		argv[1] = bytes_of(key, make_key(key, sizeof(key), "sg", i));
		val[0] = 'v';
		val[1] = '\0';
		snprintf(val + 2, sizeof(val) - 2, "%zu", i);
		argv[2] = bytes_of(val, 2 + strlen(val + 2));
		r = cmd(cl, 3, argv);
		CHECK(reply_is(r, REDIS_REPLY_STATUS, "OK", 2));
		freeReplyObject(r);
		argv[0] = str("GET");
		r = cmd(cl, 2, argv);
		CHECK(reply_is(r, REDIS_REPLY_STRING, argv[2].data,
		    argv[2].len));
		freeReplyObject(r);
		node = rc_slot_node(cl, rc_slot(argv[1].data, argv[1].len));
		CHECK(node >= 0 && node < 64);
		if (node >= 0 && node < 64 && !used[node]++)
			nodes++;
	}
	/* Every master took some of them. */
	CHECK(rc_masters(&masters, &i, cl, clock_deadline(LIVE_MS)) == 0);
	CHECK(nodes == i && i >= 1);
	printf("# 2000 keys over %zu masters\n", nodes);
	free(masters);
	/* An error reply is a reply: INCR of a value that is no number. */
	argv[0] = str("INCR");
	argv[1] = bytes_of(key, make_key(key, sizeof(key), "sg", 7));
	r = cmd(cl, 2, argv);
	CHECK(r != NULL && r->type == REDIS_REPLY_ERROR);
	freeReplyObject(r);
	del_keys(cl, "sg", 2000);
	rc_close(cl);
}

static void
test_live_pipeline(const char *dir)
{
	rc_cluster *cl = live_open();
	rc_pipeline *p;
	perc_bytes argv[3];
	char key[128], val[32];
	redisReply *r;
	size_t i, waited = 0;
	int64_t t0;

	(void)dir;
	if (cl == NULL)
		return;
	/* 1000 SETs, every tenth waiting for a replica, then 1000 GETs. */
	CHECK(rc_pipeline_new(&p, cl) == 0);
	for (i = 0; i < 1000; i++) {
		argv[0] = str("SET");
		argv[1] = bytes_of(key, make_key(key, sizeof(key), "pl", i));
		snprintf(val, sizeof(val), "%zu", i * 7);
		argv[2] = str(val);
		CHECK(rc_pipeline_add(p, argv[1], i % 10 ? 0 : RC_WAIT, 3,
		    argv) == 0);
	}
	CHECK(rc_pipeline_len(p) == 1000);
	t0 = clock_mono_ms();
	CHECK(rc_pipeline_exec(p, clock_deadline(LIVE_MS)) == 0);
	printf("# 1000 SETs in one pipeline: %lld ms\n",
	    (long long)(clock_mono_ms() - t0));
	for (i = 0; i < 1000; i++) {
		CHECK(reply_is(rc_pipeline_reply(p, i), REDIS_REPLY_STATUS,
		    "OK", 2));
		if (i % 10 == 0) {
			/* -1: no replica to wait for; else it answered. */
			CHECK(rc_pipeline_replicas(p, i) != 0);
			waited += rc_pipeline_replicas(p, i) > 0;
		} else
			CHECK(rc_pipeline_replicas(p, i) == -1);
	}
	printf("# WAIT saw a replica for %zu of 100 writes\n", waited);
	rc_pipeline_free(p);

	CHECK(rc_pipeline_new(&p, cl) == 0);
	argv[0] = str("GET");
	for (i = 0; i < 1000; i++) {
		argv[1] = bytes_of(key, make_key(key, sizeof(key), "pl", i));
		CHECK(rc_pipeline_add(p, argv[1], 0, 2, argv) == 0);
	}
	CHECK(rc_pipeline_exec(p, clock_deadline(LIVE_MS)) == 0);
	for (i = 0; i < 1000; i++) {
		snprintf(val, sizeof(val), "%zu", i * 7);
		r = rc_pipeline_reply(p, i);
		CHECK(reply_is(r, REDIS_REPLY_STRING, val, strlen(val)));
	}
	CHECK(rc_pipeline_reply(p, 1000) == NULL);
	/* Run again: nothing left to do. */
	CHECK(rc_pipeline_exec(p, clock_deadline(LIVE_MS)) == 0);
	rc_pipeline_free(p);
	del_keys(cl, "pl", 1000);
	rc_close(cl);
}

/* SCRIPT FLUSH on every master: the next EVALSHA meets -NOSCRIPT. */
static void
flush_scripts(rc_cluster *cl)
{
	perc_bytes argv[2] = { { "SCRIPT", 6 }, { "FLUSH", 5 } };
	redisReply *r;
	int *masters;
	size_t n, i;

	CHECK(rc_masters(&masters, &n, cl, clock_deadline(LIVE_MS)) == 0);
	for (i = 0; i < n; i++) {
		CHECK(rc_node_command(&r, cl, masters[i], 2, argv,
		    clock_deadline(LIVE_MS)) == 0);
		CHECK(reply_is(r, REDIS_REPLY_STATUS, "OK", 2));
		freeReplyObject(r);
	}
	free(masters);
}

static void
test_live_evalsha(const char *dir)
{
	static const char body[] = "return {KEYS[1], ARGV[1]}";
	static const char bad[] = "return (";
	static const char fails[] = "return redis.error_reply('PERC nope')";
	static const char echo[] = "return ARGV[1]";
	perc_bytes key, arg = { "a\0b", 3 }, load[3];
	rc_cluster *cl = live_open();
	rc_pipeline *p;
	redisReply *r;
	char k[128], big[1024];
	int id, idbad, idfail, idecho, replicas, *masters;
	size_t i, n;

	(void)dir;
	if (cl == NULL)
		return;
	/* The names of scripts are their SHA1, computed here. */
	CHECK(strcmp(rc_script_sha(cl, rc_script_register(cl, "abc", 3)),
	    "a9993e364706816aba3e25717850c26c9cd0d89d") == 0);
	CHECK(strcmp(rc_script_sha(cl, rc_script_register(cl, "", 0)),
	    "da39a3ee5e6b4b0d3255bfef95601890afd80709") == 0);
	for (i = 0; i < sizeof(big); i++)
		big[i] = (char)i;
	CHECK(strcmp(rc_script_sha(cl, rc_script_register(cl, big, 1024)),
	    "5b00669c480d5cffbdfa8bdba99561160f2d1b77") == 0);
	memset(big, 'a', 64);
	CHECK(strcmp(rc_script_sha(cl, rc_script_register(cl, big, 55)),
	    "c1c8bbdc22796e28c0e15163d20899b65621d65a") == 0);
	CHECK(strcmp(rc_script_sha(cl, rc_script_register(cl, big, 56)),
	    "c2db330f6083854c99d4b5bfb6e8f29f201be699") == 0);
	CHECK(strcmp(rc_script_sha(cl, rc_script_register(cl, big, 64)),
	    "0098ba824b5c16427bd7a1122a5a442a25ec644d") == 0);
	CHECK(rc_script_sha(cl, 99) == NULL);

	id = rc_script_register(cl, body, sizeof(body) - 1);
	idbad = rc_script_register(cl, bad, sizeof(bad) - 1);
	idfail = rc_script_register(cl, fails, sizeof(fails) - 1);
	idecho = rc_script_register(cl, echo, sizeof(echo) - 1);
	CHECK(id >= 0 && idbad >= 0 && idfail >= 0 && idecho >= 0);
	flush_scripts(cl);
	key = bytes_of(k, make_key(k, sizeof(k), "ev", 0));
	CHECK(rc_evalsha(&r, &replicas, cl, id, key, 1, &key, 1, &arg,
	    clock_deadline(LIVE_MS)) == 0);
	CHECK(r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
	    reply_is(r->element[0], REDIS_REPLY_STRING, key.data, key.len) &&
	    reply_is(r->element[1], REDIS_REPLY_STRING, arg.data, arg.len));
	CHECK(replicas != 0);
	freeReplyObject(r);
	/* The server agrees on the name. */
	load[0] = str("SCRIPT");
	load[1] = str("LOAD");
	load[2] = bytes_of(body, sizeof(body) - 1);
	CHECK(rc_masters(&masters, &n, cl, clock_deadline(LIVE_MS)) == 0);
	CHECK(rc_node_command(&r, cl, masters[0], 3, load,
	    clock_deadline(LIVE_MS)) == 0);
	CHECK(reply_is(r, REDIS_REPLY_STRING, rc_script_sha(cl, id), 40));
	freeReplyObject(r);
	/* On a node, without keys; it does not have that script yet. */
	CHECK(rc_node_evalsha(&r, cl, masters[n - 1], idecho, 0, NULL, 1,
	    &arg, clock_deadline(LIVE_MS)) == 0);
	CHECK(reply_is(r, REDIS_REPLY_STRING, arg.data, arg.len));
	freeReplyObject(r);
	free(masters);

	/* A script that does not compile, one that fails: replies. */
	CHECK(rc_evalsha(&r, NULL, cl, idbad, key, 1, &key, 0, NULL,
	    clock_deadline(LIVE_MS)) == 0);
	CHECK(r != NULL && r->type == REDIS_REPLY_ERROR &&
	    strstr(r->str, "NOSCRIPT") == NULL);
	printf("# a bad script: %s\n", r ? r->str : "(none)");
	freeReplyObject(r);
	CHECK(rc_evalsha(&r, NULL, cl, idfail, key, 1, &key, 0, NULL,
	    clock_deadline(LIVE_MS)) == 0);
	CHECK(reply_is(r, REDIS_REPLY_ERROR, "PERC nope", 9));
	freeReplyObject(r);
	CHECK(rc_evalsha(&r, NULL, cl, 1000, key, 1, &key, 0, NULL,
	    clock_deadline(LIVE_MS)) == PERC_EUSAGE && r == NULL);

	/* A pipeline over every master, each without the script. */
	flush_scripts(cl);
	CHECK(rc_pipeline_new(&p, cl) == 0);
	for (i = 0; i < 300; i++) {
		key = bytes_of(k, make_key(k, sizeof(k), "ev", i));
		CHECK(rc_pipeline_evalsha(p, key, 0, id, 1, &key, 1, &arg) == 0);
	}
	CHECK(rc_pipeline_evalsha(p, key, 0, -1, 0, NULL, 0, NULL) ==
	    PERC_EUSAGE);
	CHECK(rc_pipeline_exec(p, clock_deadline(LIVE_MS)) == 0);
	for (i = 0; i < 300; i++) {
		key = bytes_of(k, make_key(k, sizeof(k), "ev", i));
		r = rc_pipeline_reply(p, i);
		CHECK(r != NULL && r->type == REDIS_REPLY_ARRAY &&
		    r->elements == 2 && reply_is(r->element[0],
		    REDIS_REPLY_STRING, key.data, key.len));
	}
	rc_pipeline_free(p);
	rc_close(cl);
}

/* A map that points a slot at the wrong master is put right by -MOVED. */
static void
test_live_moved(const char *dir)
{
	rc_cluster *cl = live_open();
	perc_bytes argv[3];
	rc_pipeline *p;
	redisReply *r;
	char key[128];
	unsigned slot;
	int right, wrong, *masters;
	size_t n;

	(void)dir;
	if (cl == NULL)
		return;
	CHECK(rc_masters(&masters, &n, cl, clock_deadline(LIVE_MS)) == 0);
	if (n < 2) {
		unit_skip("the cluster has one master");
		free(masters);
		rc_close(cl);
		return;
	}
	argv[0] = str("SET");
	argv[1] = bytes_of(key, make_key(key, sizeof(key), "mv", 0));
	argv[2] = str("x");
	slot = rc_slot(argv[1].data, argv[1].len);
	right = rc_slot_node(cl, slot);
	wrong = masters[0] == right ? masters[1] : masters[0];
	rc_test_set_slot(cl, slot, wrong);
	r = cmd(cl, 3, argv);
	CHECK(reply_is(r, REDIS_REPLY_STATUS, "OK", 2));
	freeReplyObject(r);
	CHECK(rc_slot_node(cl, slot) == right);

	/* The same in a pipeline, beside commands that go right. */
	rc_test_set_slot(cl, slot, wrong);
	CHECK(rc_pipeline_new(&p, cl) == 0);
	CHECK(rc_pipeline_add(p, str("foo"), 0, 2,
	    (perc_bytes[]){ str("ECHO"), str("one") }) == 0);
	CHECK(rc_pipeline_add(p, argv[1], 0, 3, argv) == 0);
	CHECK(rc_pipeline_add(p, str("bar"), 0, 2,
	    (perc_bytes[]){ str("ECHO"), str("three") }) == 0);
	CHECK(rc_pipeline_exec(p, clock_deadline(LIVE_MS)) == 0);
	CHECK(reply_is(rc_pipeline_reply(p, 0), REDIS_REPLY_STRING, "one", 3));
	CHECK(reply_is(rc_pipeline_reply(p, 1), REDIS_REPLY_STATUS, "OK", 2));
	CHECK(reply_is(rc_pipeline_reply(p, 2), REDIS_REPLY_STRING, "three",
	    5));
	CHECK(rc_slot_node(cl, slot) == right);
	rc_pipeline_free(p);
	free(masters);
	del_keys(cl, "mv", 1);
	rc_close(cl);
}

/* The id of a node, as CLUSTER SETSLOT wants it; out has room for 41. */
static int
node_id(char *out, rc_cluster *cl, int node)
{
	perc_bytes argv[2] = { { "CLUSTER", 7 }, { "MYID", 4 } };
	redisReply *r;
	int ok;

	if (rc_node_command(&r, cl, node, 2, argv,
	    clock_deadline(LIVE_MS)) != 0)
		return 0;
	ok = r->type == REDIS_REPLY_STRING && r->len == 40;
	if (ok)
		memcpy(out, r->str, 41);
	freeReplyObject(r);
	return ok;
}

/* CLUSTER SETSLOT slot how [id] on node; 1 when it said OK. */
static int
setslot(rc_cluster *cl, int node, unsigned slot, const char *how,
    const char *id)
{
	char num[16];
	perc_bytes argv[5] = { { "CLUSTER", 7 }, { "SETSLOT", 7 } };
	redisReply *r;
	int ok;

	snprintf(num, sizeof(num), "%u", slot);
	argv[2] = str(num);
	argv[3] = str(how);
	if (id != NULL)
		argv[4] = str(id);
	if (rc_node_command(&r, cl, node, id ? 5 : 4, argv,
	    clock_deadline(LIVE_MS)) != 0)
		return 0;
	ok = reply_is(r, REDIS_REPLY_STATUS, "OK", 2);
	if (!ok)
		printf("# SETSLOT %s: %s\n", how, r->str);
	freeReplyObject(r);
	return ok;
}

static long long
keys_in_slot(rc_cluster *cl, int node, unsigned slot)
{
	char num[16];
	perc_bytes argv[3] = { { "CLUSTER", 7 }, { "COUNTKEYSINSLOT", 15 } };
	redisReply *r;
	long long n = -1;

	snprintf(num, sizeof(num), "%u", slot);
	argv[2] = str(num);
	if (rc_node_command(&r, cl, node, 3, argv,
	    clock_deadline(LIVE_MS)) == 0) {
		if (r->type == REDIS_REPLY_INTEGER)
			n = r->integer;
		freeReplyObject(r);
	}
	return n;
}

/*
 * A slot half-way through a migration: the source sends a key it does
 * not have on with -ASK, and the client follows with ASKING.
 */
static void
test_live_ask(const char *dir)
{
	rc_cluster *cl = live_open();
	char key[128], src_id[41], dst_id[41];
	perc_bytes argv[3];
	redisReply *r;
	unsigned slot;
	int src, dst, *masters;
	size_t n;

	(void)dir;
	if (cl == NULL)
		return;
	CHECK(rc_masters(&masters, &n, cl, clock_deadline(LIVE_MS)) == 0);
	argv[1] = bytes_of(key, make_key(key, sizeof(key), "ask", 0));
	slot = rc_slot(argv[1].data, argv[1].len);
	src = rc_slot_node(cl, slot);
	dst = n < 2 ? -1 : masters[0] == src ? masters[1] : masters[0];
	free(masters);
	if (dst < 0) {
		unit_skip("the cluster has one master");
		rc_close(cl);
		return;
	}
	CHECK(node_id(src_id, cl, src) && node_id(dst_id, cl, dst));
	CHECK(keys_in_slot(cl, dst, slot) == 0);
	if (setslot(cl, dst, slot, "IMPORTING", src_id) &&
	    setslot(cl, src, slot, "MIGRATING", dst_id)) {
		argv[0] = str("SET");
		argv[2] = str("asked");
		r = cmd(cl, 3, argv);
		CHECK(reply_is(r, REDIS_REPLY_STATUS, "OK", 2));
		freeReplyObject(r);
		CHECK(keys_in_slot(cl, dst, slot) == 1);
		argv[0] = str("GET");
		r = cmd(cl, 2, argv);
		CHECK(reply_is(r, REDIS_REPLY_STRING, "asked", 5));
		freeReplyObject(r);
		argv[0] = str("DEL");
		r = cmd(cl, 2, argv);
		CHECK(r != NULL && r->type == REDIS_REPLY_INTEGER &&
		    r->integer == 1);
		freeReplyObject(r);
		/* ASK moves one command, not the slot. */
		CHECK(rc_slot_node(cl, slot) == src);
	} else
		CHECK(!"CLUSTER SETSLOT failed");
	CHECK(setslot(cl, src, slot, "STABLE", NULL));
	CHECK(setslot(cl, dst, slot, "STABLE", NULL));
	CHECK(keys_in_slot(cl, dst, slot) == 0);
	rc_close(cl);
}

/* Every master answers for itself; together they serve every slot. */
static void
test_live_masters(const char *dir)
{
	perc_bytes ping = { "PING", 4 }, conf[3] = { { "CONFIG", 6 },
		{ "GET", 3 }, { "appendonly", 10 } };
	rc_cluster *cl = live_open();
	redisReply *r;
	int *masters, replicas;
	size_t n, i, s, found;

	(void)dir;
	if (cl == NULL)
		return;
	CHECK(rc_masters(&masters, &n, cl, clock_deadline(LIVE_MS)) == 0);
	CHECK(n >= 1);
	for (i = 0; i < n; i++) {
		CHECK(rc_node_is_master(cl, masters[i]));
		CHECK(strchr(rc_node_name(cl, masters[i]), ':') != NULL);
		CHECK(rc_node_command(&r, cl, masters[i], 1, &ping,
		    clock_deadline(LIVE_MS)) == 0);
		CHECK(reply_is(r, REDIS_REPLY_STATUS, "PONG", 4));
		freeReplyObject(r);
		CHECK(rc_node_command(&r, cl, masters[i], 3, conf,
		    clock_deadline(LIVE_MS)) == 0);
		CHECK(r != NULL && r->type == REDIS_REPLY_ARRAY &&
		    r->elements == 2);
		printf("# %s: appendonly %s\n", rc_node_name(cl, masters[i]),
		    r && r->elements == 2 ? r->element[1]->str : "?");
		freeReplyObject(r);
	}
	for (s = 0; s < RC_SLOTS; s++) {
		for (found = 0, i = 0; i < n; i++)
			found |= rc_slot_node(cl, (unsigned)s) == masters[i];
		CHECK(found);
		if (!found)
			break;
	}
	CHECK(rc_node_command(&r, cl, 999, 1, &ping, clock_deadline(100)) ==
	    PERC_EUSAGE && r == NULL);
	CHECK(!rc_node_is_master(cl, -1) && !rc_node_is_master(cl, 999));
	free(masters);
	/* A lone write can wait for a replica too. */
	CHECK(rc_command(&r, &replicas, cl, str("foo"), 1, &ping,
	    clock_deadline(LIVE_MS)) == 0);
	CHECK(reply_is(r, REDIS_REPLY_STATUS, "PONG", 4) && replicas != 0);
	freeReplyObject(r);
	rc_close(cl);
}

/* SET then GET of n keys of what, each its own value: how many matched. */
static size_t
set_get_own(rc_cluster *cl, const char *what, size_t n)
{
	char key[128], val[64];
	perc_bytes argv[3];
	redisReply *r;
	size_t i, ok = 0;
	int good;

	for (i = 0; i < n; i++) {
		argv[0] = str("SET");
		argv[1] = bytes_of(key, make_key(key, sizeof(key), what, i));
		snprintf(val, sizeof(val), "%s-%zu", what, i);
		argv[2] = str(val);
		if (rc_command(&r, NULL, cl, argv[1], 3, argv,
		    clock_deadline(LIVE_MS)) != 0)
			continue;
		good = reply_is(r, REDIS_REPLY_STATUS, "OK", 2);
		freeReplyObject(r);
		argv[0] = str("GET");
		if (!good || rc_command(&r, NULL, cl, argv[1], 2, argv,
		    clock_deadline(LIVE_MS)) != 0)
			continue;
		ok += reply_is(r, REDIS_REPLY_STRING, val, strlen(val));
		freeReplyObject(r);
	}
	return ok;
}

/*
 * A child forked after the client connected (run-observer --workers)
 * and its parent both go on using it: neither reads the other's
 * replies.
 */
static void
test_live_fork(const char *dir)
{
	rc_cluster *cl = live_open();
	int status = -1;
	pid_t pid;

	(void)dir;
	if (cl == NULL)
		return;
	CHECK(set_get_own(cl, "fork-parent", 50) == 50);
	fflush(stdout);
	if ((pid = fork()) == 0) {
		status = set_get_own(cl, "fork-child", 500) == 500;
		del_keys(cl, "fork-child", 500);   /* its keys: its pid */
		_exit(status ? 0 : 1);
	}
	CHECK(pid > 0);
	CHECK(set_get_own(cl, "fork-parent", 500) == 500);
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	del_keys(cl, "fork-parent", 500);
	rc_close(cl);
}

const struct unit_test redis_cluster_tests[] = {
	{ "redis: hash slots follow the cluster spec", test_slots },
	{ "redis: seed lists parse, garbage is a usage error", test_seeds },
	{ "redis: a URL's USER:PASSWORD@ parses, and no message shows it", test_auth },
	{ "redis: a dead seed times out with PERC_ETIMEOUT in time",
	    test_dead_seed },
	{ "redis: set and get across every master", test_live_set_get },
	{ "redis: a 1000-command pipeline answers in order",
	    test_live_pipeline },
	{ "redis: EVALSHA reloads a script after NOSCRIPT",
	    test_live_evalsha },
	{ "redis: a stale slot map is put right by MOVED", test_live_moved },
	{ "redis: ASK during a migration is followed once", test_live_ask },
	{ "redis: commands run on each master", test_live_masters },
	{ "redis: a forked child and its parent share a client safely",
	    test_live_fork },
	{ NULL, NULL }
};

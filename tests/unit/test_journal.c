/* tests/unit/test_journal.c - journals: round trip, damage, concurrency */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "codec.h"
#include "journal.h"
#include "unit.h"

#define FOREVER (INT64_MAX / 2)

static const perc_bytes none = { "", 0 };

static void
make_txn_dir(const char *dir)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/txn", dir);
	mkdir(path, 0755);
}

static int
append(struct journal *j, int op, const char *row, const char *col,
    const char *val)
{
	return journal_append(j, op, bytes_of(row, strlen(row)),
	    bytes_of(col, strlen(col)), bytes_of(val, strlen(val)), FOREVER);
}

static void
test_roundtrip(const char *dir)
{
	struct journal j, k;
	struct writeset ws;
	struct write *w;

	make_txn_dir(dir);
	CHECK(journal_create(&j, dir, 77) == 0);
	CHECK(strcmp(j.handle, "77") == 0);
	CHECK(append(&j, OP_PUT, "b", "c", "one") == 0);
	CHECK(append(&j, OP_PUT, "a", "c", "x") == 0);
	CHECK(append(&j, OP_PUT, "b", "c", "two") == 0);    /* last wins */
	CHECK(append(&j, OP_LOCK, "b", "c", "") == 0);      /* never hides */
	CHECK(append(&j, OP_LOCK, "z", "c", "") == 0);
	CHECK(append(&j, OP_DELETE, "a", "c", "") == 0);
	CHECK(journal_append(&j, OP_PUT, bytes_of("n\0l", 3), none,
	    bytes_of("\0\n", 2), FOREVER) == 0);
	CHECK(journal_open(&k, dir, "77") == 0);
	CHECK(journal_load(&ws, &k) == 0);
	CHECK(ws.n == 4 && !ws.commit_begun);
	w = writeset_find(&ws, bytes_of("b", 1), bytes_of("c", 1));
	CHECK(w != NULL && w->op == OP_PUT &&
	    bytes_eq(buf_bytes(&w->value), bytes_of("two", 3)));
	w = writeset_find(&ws, bytes_of("a", 1), bytes_of("c", 1));
	CHECK(w != NULL && w->op == OP_DELETE);
	w = writeset_find(&ws, bytes_of("z", 1), bytes_of("c", 1));
	CHECK(w != NULL && w->op == OP_LOCK);
	w = writeset_find(&ws, bytes_of("n\0l", 3), none);
	CHECK(w != NULL && bytes_eq(buf_bytes(&w->value), bytes_of("\0\n", 2)));
	/* Sorted by row: "a" < "b" < "n\0l" < "z". */
	CHECK(ws.w[0].row.data[0] == 'a' && ws.w[3].row.data[0] == 'z');
	writeset_dispose(&ws);
	CHECK(journal_append(&j, JOURNAL_COMMIT_BEGUN, none, none, none,
	    FOREVER) == 0);
	CHECK(journal_load(&ws, &k) == 0 && ws.commit_begun);
	writeset_dispose(&ws);
	journal_close(&k);
	journal_close(&j);
}

static void
test_damage(const char *dir)
{
	char path[4200];
	struct journal j;
	struct writeset ws;
	struct stat st;
	int fd;
	char c;

	make_txn_dir(dir);
	CHECK(journal_create(&j, dir, 5) == 0);
	CHECK(append(&j, OP_PUT, "row", "col", "value") == 0);
	CHECK(append(&j, OP_PUT, "row2", "col", "value2") == 0);
	snprintf(path, sizeof(path), "%s/txn/5", dir);
	CHECK(stat(path, &st) == 0);
	/* A torn last record: the journal is refused as a whole. */
	CHECK(truncate(path, st.st_size - 3) == 0);
	CHECK(journal_load(&ws, &j) == PERC_EIO);
	/* A flipped byte inside the first record. */
	CHECK(truncate(path, st.st_size) == 0);
	fd = open(path, O_RDWR);
	CHECK(pread(fd, &c, 1, 30) == 1);
	c ^= 0x20;
	CHECK(pwrite(fd, &c, 1, 30) == 1);
	close(fd);
	CHECK(journal_load(&ws, &j) == PERC_EIO);
	/* Garbage from the start. */
	fd = open(path, O_WRONLY | O_TRUNC);
	CHECK(write(fd, "garbage", 7) == 7);
	close(fd);
	CHECK(journal_load(&ws, &j) == PERC_EIO);
	journal_close(&j);
}

static void
test_handles(const char *dir)
{
	struct journal j, k;

	make_txn_dir(dir);
	CHECK(journal_open(&k, dir, "12") == PERC_ENOTXN);
	journal_close(&k);
	CHECK(journal_open(&k, dir, "x") == PERC_ENOTXN);
	journal_close(&k);
	CHECK(journal_open(&k, dir, "012") == PERC_ENOTXN);
	journal_close(&k);
	CHECK(journal_open(&k, dir, "../../etc/passwd") == PERC_ENOTXN);
	journal_close(&k);
	CHECK(journal_create(&j, dir, 12) == 0);
	CHECK(journal_open(&k, dir, "12") == 0);
	CHECK(journal_finish(&j) == 0);
	/* A finished journal takes no more writes. */
	CHECK(append(&k, OP_PUT, "r", "c", "v") == PERC_ENOTXN);
	CHECK(journal_take_token(&k, FOREVER) == PERC_ENOTXN);
	journal_close(&k);
	journal_close(&j);
}

/* Four processes append to one journal at once; nothing interleaves. */
static void
test_concurrent_appends(const char *dir)
{
	struct journal j;
	struct writeset ws;
	char row[32];
	int p, i, status, ok = 1;
	pid_t pid;

	make_txn_dir(dir);
	CHECK(journal_create(&j, dir, 9) == 0);
	for (p = 0; p < 4; p++) {
		if ((pid = fork()) == 0) {
			/* Its own open file, as a separate perc process has. */
			struct journal mine;

			if (journal_open(&mine, dir, "9") != 0)
				_exit(1);
			for (i = 0; i < 200; i++) {
				snprintf(row, sizeof(row), "p%d-%03d", p, i);
				if (append(&mine, OP_PUT, row, "c", row) != 0)
					_exit(1);
			}
			_exit(0);
		}
	}
	while (wait(&status) > 0)
		ok &= WIFEXITED(status) && WEXITSTATUS(status) == 0;
	CHECK(ok);
	CHECK(journal_load(&ws, &j) == 0);
	CHECK(ws.n == 800);
	for (i = 0; i < (int)ws.n; i++)
		CHECK(bytes_eq(buf_bytes(&ws.w[i].row),
		    buf_bytes(&ws.w[i].value)));
	writeset_dispose(&ws);
	journal_close(&j);
}

/* The token: held while a process commits, free once it is gone. */
static void
test_token(const char *dir)
{
	struct journal j;
	int fds[2], status;
	pid_t pid;
	char c;

	make_txn_dir(dir);
	CHECK(journal_create(&j, dir, 31) == 0);
	CHECK(!journal_owner_alive(dir, 31, 0, 0));
	CHECK(!journal_owner_alive(dir, 32, 0, 0));
	CHECK(pipe(fds) == 0);
	if ((pid = fork()) == 0) {
		/* Its own open file: a shared one would share the flock. */
		struct journal mine;

		if (journal_open(&mine, dir, "31") != 0 ||
		    journal_take_token(&mine, FOREVER) != 0 ||
		    write(fds[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(fds[1]);          /* a child that fails cannot hang the test */
	CHECK(read(fds[0], &c, 1) == 1);
	CHECK(journal_owner_alive(dir, 31, 0, 0));
	kill(pid, 9);
	waitpid(pid, &status, 0);
	CHECK(!journal_owner_alive(dir, 31, 0, 0));
	close(fds[0]);
	journal_close(&j);
}

/*
 * A local journal: its writes in memory, no file; its process's owner
 * file is its token and shows gc the oldest open start, until it ends.
 */
static void
test_local(const char *dir)
{
	int to_child[2], to_parent[2], status;
	char path[4200], c;
	perc_ts oldest;
	pid_t pid;

	make_txn_dir(dir);
	CHECK(pipe(to_child) == 0 && pipe(to_parent) == 0);
	if ((pid = fork()) == 0) {
		struct owner o;
		struct journal j, k;
		struct writeset ws;
		struct stat st;

		close(to_child[1]);
		owner_init(&o);
		if (owner_register(&o, dir) != 0 ||
		    journal_create_local(&j, dir, 41, &o) != 0 ||
		    journal_create_local(&k, dir, 43, &o) != 0 ||
		    append(&j, OP_PUT, "r", "c", "v1") != 0 ||
		    append(&j, OP_PUT, "r", "c", "v2") != 0 ||
		    journal_load(&ws, &j) != 0 || ws.n != 1 ||
		    strcmp(ws.w[0].value.data, "v2") != 0 ||
		    stat(j.path, &st) == 0 ||           /* no file */
		    write(to_parent[1], "a", 1) != 1 ||
		    read(to_child[0], &c, 1) != 1)
			_exit(1);
		writeset_dispose(&ws);
		if (journal_finish(&j) != 0 ||
		    append(&j, OP_PUT, "r", "c", "v3") != PERC_ENOTXN ||
		    write(to_parent[1], "b", 1) != 1 ||
		    read(to_child[0], &c, 1) != 1)
			_exit(1);
		journal_close(&j);
		journal_close(&k);      /* freed unfinished: no longer open */
		if (write(to_parent[1], "c", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(to_child[0]);
	close(to_parent[1]);
	CHECK(read(to_parent[0], &c, 1) == 1 && c == 'a');
	CHECK(journal_owner_alive(dir, 41, (uint32_t)pid,
	    (uint64_t)clock_wall_ms()));
	/* The same pid, stamped long before it registered: not this one. */
	CHECK(!journal_owner_alive(dir, 41, (uint32_t)pid, 1));
	CHECK(journal_oldest(&oldest, dir, 0) == 0 && oldest == 41);
	/* Too old to hold gc back, it may hide younger ones: the floor. */
	CHECK(journal_oldest(&oldest, dir, 42) == 0 && oldest == 42);
	CHECK(write(to_child[1], "f", 1) == 1);
	CHECK(read(to_parent[0], &c, 1) == 1 && c == 'b');
	CHECK(journal_oldest(&oldest, dir, 0) == 0 && oldest == 43);
	CHECK(write(to_child[1], "g", 1) == 1);
	CHECK(read(to_parent[0], &c, 1) == 1 && c == 'c');
	CHECK(journal_oldest(&oldest, dir, 0) == 0 && oldest == UINT64_MAX);
	kill(pid, 9);
	waitpid(pid, &status, 0);
	CHECK(!journal_owner_alive(dir, 41, (uint32_t)pid,
	    (uint64_t)clock_wall_ms()));
	/* gc's look at the owners removes a dead one's file. */
	snprintf(path, sizeof(path), "%s/txn/p%ld", dir, (long)pid);
	CHECK(access(path, F_OK) == 0);
	CHECK(journal_oldest(&oldest, dir, 0) == 0 && oldest == UINT64_MAX);
	CHECK(access(path, F_OK) != 0);
	close(to_child[1]);
	close(to_parent[0]);
}

static int
note_walked(struct journal *j, void *arg)
{
	*(perc_ts *)arg = j->start_ts;
	return 0;
}

/*
 * The oldest open start passes over journals below the floor and
 * crashed commits; only crashed commits, their token free, are walked.
 */
static void
test_oldest_and_abandoned(const char *dir)
{
	struct journal a, b;
	perc_ts oldest, walked = 0;

	make_txn_dir(dir);
	CHECK(journal_create(&a, dir, 51) == 0);
	CHECK(journal_create(&b, dir, 53) == 0);
	CHECK(journal_oldest(&oldest, dir, 0) == 0 && oldest == 51);
	CHECK(journal_oldest(&oldest, dir, 52) == 0 && oldest == 53);
	CHECK(journal_oldest(&oldest, dir, 54) == 0 && oldest == UINT64_MAX);
	/* Open, not committing: never walked, whoever holds it. */
	CHECK(journal_each_abandoned(dir, note_walked, &walked) == 0);
	CHECK(walked == 0);
	/* A commit begun, its token let go (an append lets it go). */
	CHECK(append(&a, JOURNAL_COMMIT_BEGUN, "", "", "") == 0);
	CHECK(journal_oldest(&oldest, dir, 0) == 0 && oldest == 53);
	CHECK(journal_each_abandoned(dir, note_walked, &walked) == 0);
	CHECK(walked == 51);
	/* A commit at work holds its token: not abandoned. */
	walked = 0;
	CHECK(journal_take_token(&a, FOREVER) == 0);
	CHECK(journal_each_abandoned(dir, note_walked, &walked) == 0);
	CHECK(walked == 0);
	journal_close(&a);
	journal_close(&b);
}

const struct unit_test journal_tests[] = {
	{ "journal: records round-trip; last write of a cell wins",
	    test_roundtrip },
	{ "journal: torn, flipped or garbage journals are refused",
	    test_damage },
	{ "journal: bad and finished handles are refused", test_handles },
	{ "journal: concurrent appends from 4 processes stay whole",
	    test_concurrent_appends },
	{ "journal: the token is held by a live owner, freed by kill -9",
	    test_token },
	{ "journal: a local one is memory, shown open by its owner file",
	    test_local },
	{ "journal: oldest open start, floor, and crashed commits walked",
	    test_oldest_and_abandoned },
	{ NULL, NULL }
};

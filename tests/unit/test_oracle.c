/* tests/unit/test_oracle.c - timestamps only ever go up */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codec.h"
#include "clock.h"
#include "leveldb/oracle.h"
#include "timestamp.h"
#include "unit.h"

#define FOREVER (INT64_MAX / 2)

/* A timestamp as a new process takes it, with an oracle of its own. */
static int
next_ts(perc_ts *out, const char *dir, uint64_t n, int64_t deadline_ms)
{
	struct oracle o;
	int rc;

	oracle_init(&o, dir);
	rc = oracle_next(out, &o, n, deadline_ms);
	oracle_dispose(&o);
	return rc;
}

static void
test_increasing(const char *dir)
{
	struct oracle kept;
	perc_ts a = 0, b = 0;
	int i;

	CHECK(oracle_create(dir) == 0);
	CHECK(next_ts(&a, dir, 1, FOREVER) == 0);
	/* Hybrid (timestamp.h): the clock's part is now, give or take. */
	CHECK(ts_wall_ms(a) >= clock_wall_ms() - 1000 &&
	    ts_wall_ms(a) <= clock_wall_ms());
	/* One process's oracle, kept open, and new ones in between. */
	oracle_init(&kept, dir);
	for (i = 0; i < 1000; i++) {
		CHECK((i % 3 ? oracle_next(&b, &kept, 1 + i % 5, FOREVER) :
		    next_ts(&b, dir, 1 + i % 5, FOREVER)) == 0);
		CHECK(b > a);
		a = b + i % 5;
	}
	oracle_dispose(&kept);
	CHECK(next_ts(&b, dir, 0, FOREVER) == PERC_EUSAGE);
	/* A range larger than the reserve moves the ceiling with it. */
	CHECK(next_ts(&a, dir, 3000000, FOREVER) == 0);
	CHECK(next_ts(&b, dir, 1, FOREVER) == 0 && b >= a + 3000000);
}

/* Four processes take 500 timestamps each: 2000 distinct values. */
static void
test_processes(const char *dir)
{
	perc_ts got[2000], t;
	int fds[2], p, i, n = 0, status, distinct = 1;

	CHECK(oracle_create(dir) == 0);
	CHECK(pipe(fds) == 0);
	for (p = 0; p < 4; p++) {
		if (fork() == 0) {
			close(fds[0]);
			for (i = 0; i < 500; i++)
				if (next_ts(&t, dir, 1, FOREVER) != 0 ||
				    write(fds[1], &t, sizeof(t)) != sizeof(t))
					_exit(1);
			_exit(0);
		}
	}
	close(fds[1]);
	while (n < 2000 && read(fds[0], &got[n], sizeof(t)) == sizeof(t))
		n++;
	close(fds[0]);
	while (wait(&status) > 0)
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(n == 2000);
	for (i = 0; i < n; i++)
		for (p = i + 1; p < n; p++)
			distinct &= got[i] != got[p];
	CHECK(distinct);
}

static void
clobber(const char *dir, const char *name, off_t off, const char *bytes)
{
	char path[4200];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY);
	CHECK(fd >= 0 && pwrite(fd, bytes, strlen(bytes), off) ==
	    (ssize_t)strlen(bytes));
	close(fd);
}

/*
 * A machine crash: the hot state carries another boot id (or is torn),
 * and the oracle must resume above everything handed out, from the
 * ceiling, never from the stale value.
 */
static void
test_machine_crash(const char *dir)
{
	perc_ts a, b;

	CHECK(oracle_create(dir) == 0);
	CHECK(next_ts(&a, dir, 10, FOREVER) == 0);
	clobber(dir, "oracle.lock", 8, "00000000-0000-0000-0000-000000000000");
	CHECK(next_ts(&b, dir, 1, FOREVER) == 0);
	CHECK(b > a + 9);
	clobber(dir, "oracle.lock", 0, "garbage!");
	CHECK(next_ts(&a, dir, 1, FOREVER) == 0);
	CHECK(a > b);
	/*
	 * A process crash leaves the hot state intact: no jump beyond the
	 * clock's, which a batch run ahead of the clock shows.
	 */
	CHECK(next_ts(&a, dir, 8000000, FOREVER) == 0);
	CHECK(next_ts(&b, dir, 1, FOREVER) == 0);
	CHECK(b == a + 8000000);
}

/*
 * oracle_last, the snapshot of a reader that may not write: the last
 * timestamp handed out, even when written under another boot id (a
 * machine sharing the directory), and below the ceiling when there is
 * no hot state at all.
 */
static void
test_last(const char *dir)
{
	unsigned char rec[8 + 36 + 8 + 8 + 4];
	char path[4200];
	perc_ts a, b, t;
	int fd;

	CHECK(oracle_create(dir) == 0);
	CHECK(oracle_last(&t, dir, FOREVER) == 0);
	CHECK(t == 1);
	CHECK(next_ts(&a, dir, 5, FOREVER) == 0);
	CHECK(oracle_last(&t, dir, FOREVER) == 0);
	CHECK(t == a + 4);
	snprintf(path, sizeof(path), "%s/oracle.lock", dir);
	fd = open(path, O_RDWR);
	CHECK(fd >= 0 && pread(fd, rec, sizeof(rec), 0) == sizeof(rec));
	memset(rec + 8, 'f', 36);
	codec_put_u32(rec + sizeof(rec) - 4, codec_crc32(0, rec,
	    sizeof(rec) - 4));
	CHECK(pwrite(fd, rec, sizeof(rec), 0) == sizeof(rec));
	close(fd);
	CHECK(oracle_last(&t, dir, FOREVER) == 0);
	CHECK(t == a + 4);
	clobber(dir, "oracle.lock", 0, "garbage!");
	CHECK(oracle_last(&t, dir, FOREVER) == 0);
	CHECK(next_ts(&b, dir, 1, FOREVER) == 0);
	CHECK(t >= a + 4 && t < b);
}

static void
test_damaged_ceiling(const char *dir)
{
	perc_ts a;

	CHECK(oracle_create(dir) == 0);
	clobber(dir, "oracle", 9, "xx");
	CHECK(next_ts(&a, dir, 1, FOREVER) == PERC_EIO);
}

const struct unit_test oracle_tests[] = {
	{ "oracle: timestamps increase, ranges are consecutive",
	    test_increasing },
	{ "oracle: 4 processes at once get distinct timestamps",
	    test_processes },
	{ "oracle: after a machine crash it resumes above the ceiling",
	    test_machine_crash },
	{ "oracle: a reader's last timestamp, whatever the boot", test_last },
	{ "oracle: a damaged ceiling file is an I/O error", test_damaged_ceiling },
	{ NULL, NULL }
};

/* tests/unit/unit.h - a TAP test runner small enough to read at a glance */
#ifndef UNIT_H
#define UNIT_H

#include <stdio.h>

extern int unit_failed;         /* set by CHECK in the running test */

/* Record a failed expectation with its place; the test goes on. */
#define CHECK(cond) do { \
	if (!(cond)) { \
		printf("# %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, \
		    #cond); \
		unit_failed = 1; \
	} \
} while (0)

struct unit_test {
	const char *name;
	void      (*fn)(const char *tmpdir);
};

/* Each test file exports a NULL-terminated table. */
extern const struct unit_test codec_tests[];
extern const struct unit_test durable_env_tests[];
extern const struct unit_test gc_tests[];
extern const struct unit_test journal_tests[];
extern const struct unit_test oracle_tests[];
extern const struct unit_test redis_cluster_tests[];
extern const struct unit_test store_redis_tests[];
extern const struct unit_test store_leveldb_tests[];

/*
 * Mark the running test skipped, for reason (a string that outlives
 * the test), when what it needs is not there; it should return then.
 * TAP shows it as "ok N - name # skip reason".
 */
void unit_skip(const char *reason);

/* A fresh empty directory for one test; the path stays valid. */
const char *unit_tmpdir(int n);
#endif

/*
 * tests/unit/unit.c - runs every C unit test and prints TAP, so that
 * make check can count these together with the bats tests.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"

int unit_failed;
static const char *skipped;     /* why the running test was skipped */

static char base[4096];

void
unit_skip(const char *reason)
{
	skipped = reason;
}

const char *
unit_tmpdir(int n)
{
	static char path[4200];
	char cmd[8500];

	snprintf(path, sizeof(path), "%s/%d", base, n);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", path, path);
	if (system(cmd) != 0)
		abort();
	return path;
}

int
main(void)
{
	const struct unit_test *suites[] = { codec_tests, durable_env_tests,
		gc_tests, journal_tests, oracle_tests, redis_cluster_tests,
		store_redis_tests, store_leveldb_tests, NULL };
	const struct unit_test *t;
	int i, n = 0, failed = 0;
	char cmd[4200];

	/*
	 * The units look at the LevelDB store's own files between calls,
	 * which a process sees as they are only when it opens the store
	 * itself; the store server has tests of its own (serve.bats).
	 */
	setenv("PERC_SERVE", "0", 1);
	snprintf(base, sizeof(base), "%s/perc-unit.XXXXXX",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(base) == NULL)
		return 2;
	for (i = 0; suites[i] != NULL; i++)
		for (t = suites[i]; t->name != NULL; t++)
			n++;
	printf("1..%d\n", n);
	n = 0;
	for (i = 0; suites[i] != NULL; i++) {
		for (t = suites[i]; t->name != NULL; t++) {
			unit_failed = 0;
			skipped = NULL;
			t->fn(unit_tmpdir(n));
			printf("%sok %d - unit: %s", unit_failed ? "not " : "",
			    ++n, t->name);
			if (skipped != NULL && !unit_failed)
				printf(" # skip %s", skipped);
			printf("\n");
			fflush(stdout);
			failed += unit_failed;
		}
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	if (system(cmd) != 0)
		failed++;
	return failed ? 1 : 0;
}

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
extern const struct unit_test journal_tests[];
extern const struct unit_test oracle_tests[];

/* A fresh empty directory for one test; the path stays valid. */
const char *unit_tmpdir(int n);
#endif

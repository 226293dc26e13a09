/*
 * lib/failpoint.c - PERC_FAILPOINT: stop a commit dead at a named point.
 *
 * PERC_FAILPOINT=NAME exits at NAME with status 137, as kill -9 would,
 * with no cleanup: the store and the token are dropped by the kernel,
 * exactly the state a crash there leaves.  PERC_FAILPOINT=NAME:pause=S
 * instead lets go of the store and sleeps S seconds while keeping the
 * token, which is a slow but live committer, then carries on.
 * PERC_FAILPOINT=NAME:power-cut, for tests, first puts the store back
 * to what a power cut at NAME would leave (leveldb/durable_env.cc), then
 * exits; the store, told at open (backend.c), kept what a cut would lose.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "error.h"
#include "failpoint.h"

/*
 * PERC_FAILPOINT must name a known point: a typo would otherwise let a
 * test that means to crash a commit quietly commit instead.
 */
int
failpoint_check(void)
{
	static const char *const names[] = { "after-prewrite-primary",
		"after-prewrite", "after-commit-primary",
		"after-commit-secondary", NULL };
	const char *fp = getenv("PERC_FAILPOINT");
	size_t i, n;

	if (fp == NULL || *fp == '\0')
		return 0;
	for (i = 0; names[i] != NULL; i++) {
		n = strlen(names[i]);
		if (strncmp(fp, names[i], n) == 0 && (fp[n] == '\0' ||
		    strncmp(fp + n, ":pause=", 7) == 0 ||
		    strcmp(fp + n, ":power-cut") == 0))
			return 0;
	}
	return error_set(PERC_EUSAGE, "PERC_FAILPOINT '%.60s' names no "
	    "failpoint; see perc(1) for the names", fp);
}

static void
wake(int sig)
{
	(void)sig;
}

int
failpoint(perc_db *db, const char *name)
{
	const char *fp = getenv("PERC_FAILPOINT");
	size_t n = strlen(name);
	struct sigaction sa;
	struct timespec ts;
	double secs;

	if (fp == NULL || strncmp(fp, name, n) != 0)
		return 0;
	if (fp[n] == '\0')
		_exit(137);
	if (strcmp(fp + n, ":power-cut") == 0) {
		store_power_cut(db->store);
		_exit(137);
	}
	if (strncmp(fp + n, ":pause=", 7) != 0)
		return 0;
	secs = strtod(fp + n + 7, NULL);
	if (!(secs > 0))
		return 0;
	/* Let go as a commit between its batches does (commit.c): the
	   store's pause, not the upkeep of a writer that is done. */
	store_pause(db->store, clock_deadline(db->timeout_ms));
	db->store->ops->release(db->store);
	ts.tv_sec = (time_t)secs;
	ts.tv_nsec = (long)((secs - (double)ts.tv_sec) * 1e9);
	/*
	 * SIGCONT ends the pause early: a test done with a paused owner
	 * lets it go on at once instead of guessing how long it needs.
	 * (Its default action is to go on, so one sent early is harmless.)
	 */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = wake;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCONT, &sa, NULL);
	nanosleep(&ts, NULL);
	return db_acquire(db, clock_deadline(db->timeout_ms));
}

/* Is a failpoint asked for?  They stop the two steps of a commit. */
int
failpoint_armed(void)
{
	const char *fp = getenv("PERC_FAILPOINT");

	return fp != NULL && *fp != '\0';
}

/* tests/unit/test_gc.c - gc's fence, raised by many processes at once */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gc.h"
#include "unit.h"

#define RAISERS 8
#define RAISES  300

/*
 * Raiser i raises the fence to i + 1, RAISERS + i + 1, ...: the raises
 * of all of them interleave.  Meanwhile the fence never goes down nor
 * reads as a number no one wrote, and in the end it is the highest.
 */
static void
test_fence_only_rises(const char *dir)
{
	perc_ts seen, last = 0, top = (perc_ts)RAISES * RAISERS;
	pid_t pids[RAISERS];
	int i, k, status, running = RAISERS;

	for (i = 0; i < RAISERS; i++) {
		if ((pids[i] = fork()) == 0) {
			for (k = 0; k < RAISES; k++)
				if (gc_fence_raise(dir, (perc_ts)k * RAISERS +
				    (perc_ts)i + 1) < 0)
					_exit(1);
			_exit(0);
		}
		CHECK(pids[i] > 0);
		if (pids[i] < 0)
			running = i;
	}
	while (running > 0) {
		CHECK(gc_fence(&seen, dir) == 0);
		CHECK(seen >= last && seen <= top);
		if (seen < last || seen > top)
			break;
		last = seen;
		for (i = 0; i < RAISERS; i++)
			if (pids[i] > 0 && waitpid(pids[i], &status, WNOHANG)
			    == pids[i]) {
				CHECK(WIFEXITED(status) &&
				    WEXITSTATUS(status) == 0);
				pids[i] = 0;
				running--;
			}
	}
	for (i = 0; i < RAISERS; i++)
		if (pids[i] > 0) {
			kill(pids[i], SIGKILL);
			waitpid(pids[i], &status, 0);
		}
	CHECK(gc_fence(&seen, dir) == 0 && seen == top);
}

const struct unit_test gc_tests[] = {
	{ "gc: the fence only rises, raised by 8 processes at once",
	  test_fence_only_rises },
	{ NULL, NULL }
};

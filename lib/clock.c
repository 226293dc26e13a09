/* lib/clock.c - time, deadlines and the bounded waits built on them */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>

#include "buf.h"
#include "clock.h"
#include "error.h"

int64_t
clock_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
clock_coarse_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
clock_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
clock_deadline(int64_t timeout_ms)
{
	return clock_mono_ms() + timeout_ms;
}

/*
 * A number from the environment, decimal digits with a fraction if
 * any, at most 1e9: 1 with *out, 0 when name is unset or empty, -1
 * when it holds anything else.
 */
static int
env_number(double *out, const char *name)
{
	const char *s = getenv(name);
	char *end;

	if (s == NULL || *s == '\0')
		return 0;
	if (s[strspn(s, "0123456789.")] != '\0')
		return -1;
	*out = strtod(s, &end);
	return *end != '\0' || *out > 1e9 ? -1 : 1;
}

/*
 * A duration in seconds from the environment (fractions allowed), in
 * milliseconds; dflt when unset, or not a number (which clock_env_check
 * has refused already).
 */
int64_t
clock_env_ms(const char *name, int64_t dflt)
{
	double v;

	return env_number(&v, name) == 1 ? (int64_t)(v * 1000) : dflt;
}

/*
 * Every numeric variable perc reads, with what its number counts: a
 * typo must not quietly fall back to the default (a PERC_LOCK_TIMEOUT
 * of "1o" would wait ten seconds, a PERC_GC_AUTO of "off" would gc).
 */
int
clock_env_check(void)
{
	static const char *const vars[][2] = {
		{ "PERC_GC_AUTO", "a number of commits" },
		{ "PERC_GC_RETAIN", "a number of seconds" },
		{ "PERC_LOCK_TIMEOUT", "a number of seconds" },
		{ "PERC_LOCK_TTL", "a number of seconds" },
		{ "PERC_LOG_POLL", "a number of seconds" },
		{ "PERC_LOG_STUCK", "a number of seconds" },
		{ "PERC_OBSERVER_POLL", "a number of seconds" },
		{ "PERC_TXN_MAX_AGE", "a number of seconds" },
	};
	size_t i;
	double v;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (env_number(&v, vars[i][0]) < 0)
			return error_set(PERC_EUSAGE, "%s='%s' is not %s from "
			    "0 to 1e9; set it to one, or unset it for the "
			    "default (see perc(1))", vars[i][0],
			    error_quote(bytes_str(getenv(vars[i][0]))),
			    vars[i][1]);
	return 0;
}

int
clock_backoff(unsigned *delay_us, unsigned cap_us, int64_t deadline_ms)
{
	int64_t left = deadline_ms - clock_mono_ms();
	struct timespec ts;
	unsigned us = *delay_us;

	if (left <= 0)
		return -1;
	if ((int64_t)us / 1000 >= left)
		us = (unsigned)left * 1000;
	/* Jitter keeps waiters that started together from staying in step. */
	us = us / 2 + (unsigned)(rand() % (int)(us / 2 + 1));
	ts.tv_sec = us / 1000000;
	ts.tv_nsec = (long)(us % 1000000) * 1000;
	nanosleep(&ts, NULL);
	*delay_us = *delay_us * 2 > cap_us ? cap_us : *delay_us * 2;
	return 0;
}

int
clock_flock(int fd, int how, int64_t deadline_ms)
{
	unsigned delay = 50;

	for (;;) {
		if (flock(fd, how | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return -1;
		if (clock_backoff(&delay, 2000, deadline_ms) < 0) {
			errno = ETIMEDOUT;
			return -1;
		}
	}
}

/*
 * ppoll(2) on fd (-1: none) until deadline_ms, with mask while it
 * waits: 1 readable, 0 deadline or a signal.
 */
int
clock_pause_on(int fd, int64_t deadline_ms, const sigset_t *mask)
{
	struct pollfd p = { fd, POLLIN, 0 };
	int64_t left = deadline_ms - clock_mono_ms();
	struct timespec ts;

	if (left < 0)
		left = 0;
	ts.tv_sec = (time_t)(left / 1000);
	ts.tv_nsec = (long)(left % 1000) * 1000000L;
	return ppoll(fd >= 0 ? &p : NULL, fd >= 0 ? 1 : 0, &ts, mask) > 0;
}

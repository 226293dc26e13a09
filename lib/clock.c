/* lib/clock.c - time, deadlines and the bounded waits built on them */
#include <errno.h>
#include <stdlib.h>
#include <sys/file.h>
#include <time.h>

#include "clock.h"

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
 * A duration in seconds from the environment (fractions allowed), in
 * milliseconds; dflt when unset or not a number that makes sense.
 */
int64_t
clock_env_ms(const char *name, int64_t dflt)
{
	const char *s = getenv(name);
	char *end;
	double v;

	if (s == NULL || *s == '\0')
		return dflt;
	v = strtod(s, &end);
	if (*end != '\0' || !(v >= 0) || v > 1e9)
		return dflt;
	return (int64_t)(v * 1000);
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

/* lib/clock.h - time, deadlines and bounded waits */
#ifndef CLOCK_H
#define CLOCK_H

#include <signal.h>
#include <stdint.h>

int64_t clock_mono_ms(void);
/* The same clock read cheaply, as of the kernel's last tick (a few ms
   behind): for asking often whether a while has passed. */
int64_t clock_coarse_ms(void);
int64_t clock_wall_ms(void);
int64_t clock_deadline(int64_t timeout_ms);
int64_t clock_env_ms(const char *name, int64_t dflt);
/* PERC_EUSAGE, naming it, when a numeric PERC_ variable is not a number
   (perc_db_open and init ask first); add each new one to its list. */
int clock_env_check(void);

/*
 * Backoff for a bounded wait: sleep about *delay_us (doubling it up to
 * cap_us), never past deadline_ms.  Returns 0, or -1 once the deadline
 * has passed and the caller should give up.
 */
int clock_backoff(unsigned *delay_us, unsigned cap_us, int64_t deadline_ms);

/* flock(fd, how) retried with backoff until deadline_ms: 0 or -1. */
int clock_flock(int fd, int how, int64_t deadline_ms);

/*
 * Sleep in ppoll(2) on fd (-1: none) until deadline_ms, with mask as
 * the signal mask meanwhile: 1 fd is readable, 0 deadline or a signal.
 */
int clock_pause_on(int fd, int64_t deadline_ms, const sigset_t *mask);
#endif

/*
 * lib/timestamp.h - what a timestamp says about the wall clock.
 *
 * A timestamp is hybrid, as TiKV's PD makes them: the milliseconds
 * since TS_EPOCH_MS in its high bits, a counter in its low
 * TS_LOGICAL_BITS.  Both oracles hand out the greater of the next
 * counter value and the clock's, so timestamps keep increasing when
 * the clock steps back (they run ahead of it for a while) or a batch
 * takes more than a millisecond's worth; a timestamp's clock part is
 * then never earlier than the moment it was handed out, and its age,
 * now minus that part, is never more than its true age.  gc needs that
 * age, and only ever errs towards keeping more.
 *
 * 41 bits of milliseconds (69 years) and 12 of counter keep timestamps
 * below 2^53, exact in the doubles of the Redis oracle's Lua.  Data
 * directories made before timestamps were hybrid hold small counters:
 * the first hybrid timestamp is above all of them.
 */
#ifndef TIMESTAMP_H
#define TIMESTAMP_H

#include <stdint.h>

#include "perc.h"

#define TS_LOGICAL_BITS 12
#define TS_EPOCH_MS     INT64_C(1735689600000)  /* 2025-01-01 UTC */
/* How far ahead of the clock an oracle persists its ceiling. */
#define TS_AHEAD_MS     3000

/* The smallest timestamp of wall-clock millisecond ms. */
static inline perc_ts
ts_of_wall_ms(int64_t ms)
{
	return ms <= TS_EPOCH_MS ? 0 :
	    (perc_ts)(ms - TS_EPOCH_MS) << TS_LOGICAL_BITS;
}

/* The wall-clock millisecond a timestamp carries. */
static inline int64_t
ts_wall_ms(perc_ts ts)
{
	return (int64_t)(ts >> TS_LOGICAL_BITS) + TS_EPOCH_MS;
}
#endif

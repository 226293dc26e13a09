/*
 * lib/wake.c - waking those who wait for notifications.
 *
 * An idle runner used to poll the notify cells, up to a second apart;
 * now it sleeps in the store's wait_wake until a commit that set or
 * cleared a notification calls the store's wake.  Polling stays, every
 * PERC_OBSERVER_POLL seconds, for a wakeup that is lost (a writer
 * killed between its commit and its wake, a Redis failover).
 *
 * Each store wakes in its own way: the LevelDB store through its data
 * directory (lib/leveldb/dirwake.c), the Redis store through a shard
 * channel (lib/redis/wake.c).
 */

#include "clock.h"
#include "db.h"
#include "wake.h"

#define POLL_MS_DEFAULT 5000

int64_t
wake_poll_ms(void)
{
	int64_t ms = clock_env_ms("PERC_OBSERVER_POLL", POLL_MS_DEFAULT);

	return ms > 0 ? ms : 1;
}

void
db_wake(perc_db *db, int feed)
{
	struct store *s = db->store;

	store_wake(s, feed);
}

int
db_wait_wake(perc_db *db, int feed, int64_t deadline_ms,
    const sigset_t *mask)
{
	struct store *s = db->store;
	int rc;

	if ((rc = store_wait_wake(s, feed, deadline_ms, mask)) >= 0)
		return rc;
	clock_pause_on(-1, deadline_ms, mask);  /* a failed watch: a nap */
	return 0;
}


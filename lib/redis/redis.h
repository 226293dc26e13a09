/*
 * lib/redis/redis.h - the Redis Cluster store, shared by its files:
 * store.c (open, create and leases), oracle.c, mvcc.c
 * (the steps on one cell) and walk.c (scans and notify cells).
 *
 * Keys of table T, each with one hash tag:
 *
 *   perc:{T:B}:k       per bucket B (0..63, crc32(row) % 64): a sorted
 *                      set of the codec keys of its rows' cells, all of
 *                      score 0, so that ZRANGEBYLEX walks them in byte
 *                      order, the order of codec.h and of LevelDB
 *   perc:{T:B}:v       a hash, codec key -> value
 *   perc:{T:B}:l       a sorted set of the bucket's lock keys only, so
 *                      that resolve-locks walks the locks, not the data
 *   perc:{T:B}:g       the bucket's change log (perc log): a sorted set
 *                      of one member per committed put or delete, in
 *                      commit order (log.c, log_put in lua/common.lua)
 *   perc:{T:B}:lease:TS
 *                      the lease of transaction TS, whose primary row
 *                      is in bucket B: its owner's HOST TAB DIR, while
 *                      that primary is locked (see rs_owner_alive)
 *   perc:{T:oracle}:ts     the timestamp oracle's ceiling: no timestamp
 *                          above it was handed out (oracle.c)
 *   perc:{T:oracle}:table  the table's marker, made by init
 *   perc:{T:oracle}:gc     a hash: field g, gc's safe point, which every
 *                          bucket's v hash holds too, for its scripts
 *   perc:{T:oracle}:wake   a shard channel, the wakeup (wake.c)
 *
 * A bucket's v hash also holds field e, raised by every script that
 * writes or removes one of its notify cells: perc wait's mark (wake.c).
 *
 * Every key of a row shares a slot, so one script on that slot reads
 * and writes a cell's lock, write, data and notify keys atomically,
 * and a primary's lease with its lock.  T is made of [A-Za-z0-9_.-]
 * only, so no table's tags can be another's.
 */
#ifndef STORE_REDIS_H
#define STORE_REDIS_H

#include "cluster.h"
#include "store.h"

#define RS_BUCKETS   64
#define RS_TABLE_MAX 64
#define RS_KEY_MAX   (RS_TABLE_MAX + 48)

/* The scripts run by EVALSHA, RS_READ...: see scripts.h. */
enum rs_script {
#define SCRIPT(NAME, name) RS_##NAME,
#include "scripts.def"
#undef SCRIPT
	RS_NSCRIPTS
};

struct redis_store {
	struct store base;
	rc_cluster  *cl;
	char         table[RS_TABLE_MAX + 1];
	int64_t      timeout_ms;        /* of each call of a verb */
	/* store_env's (store.h): a lease's owner on this host, alive? */
	int        (*owner_alive)(const char *dir, perc_ts start_ts,
	                          uint32_t pid, uint64_t wall_ms);
	int          script[RS_NSCRIPTS];
	char        *owner;             /* our leases' value: HOST TAB DIR */
	char        *url;               /* as opened, for messages */
	rc_sub      *wake_sub;          /* wait_wake's (wake.c), or NULL */
	int          wake_lost;         /* it ended: load the map anew */
};

/* The name of bucket's key of one kind: 'k', 'v', 'l' or 'g'. */
void     rs_bucket_key(char *out, const struct redis_store *s,
                       unsigned bucket, char which);
/*
 * A lease (see rs_owner_alive) outlives its primary lock's TTL by
 * LEASE_SLACK_MS: a lock past its TTL while its owner runs is
 * "expired", which a reader may clean as it may a dead owner's, but
 * show tells the two apart.
 */
#define LEASE_SLACK_MS 10000

unsigned rs_bucket(perc_bytes row);
int64_t  rs_deadline(const struct redis_store *s);
/* The name of one of the table's keys that are not a row's. */
void     rs_special_key(char *out, const struct redis_store *s,
                        const char *tag, const char *name);

/* A reply the server gave as an error, as a PERC_EIO with its line. */
int      rs_reply_error(const struct redis_store *s, const redisReply *r,
                        const char *doing);
/* A reply that is not the shape a script promises: PERC_EIO. */
int      rs_bad_reply(const struct redis_store *s, const char *doing);

/* One command on the slot of row's bucket (its 'v' hash). */
int      rs_row_command(redisReply **out, struct redis_store *s,
                        perc_bytes row, size_t argc, const perc_bytes *argv);
/* bucket's k, v, l and g into keys, their bytes in names: the first
   KEYS of a script on a row's bucket (lua/common.lua). */
void     rs_bucket_keys(char names[4][RS_KEY_MAX], perc_bytes keys[4],
                        const struct redis_store *s, unsigned bucket);
/* The most KEYS a script on a row takes: its bucket's four and a lease,
   or its fence. */
#define RS_ROW_KEYS 5
/*
 * The lease_ts of a script that reads what a decision stands on (a
 * commit record, a rollback record): KEYS[5] is then the bucket's fence,
 * which the script writes, so that the WAIT after it covers everything
 * the master had applied when it read.  A WAIT after a script that
 * writes nothing covers only the connection's own last write (Redis
 * counts a client's offset from its writes), and so confirms nothing.
 */
#define RS_FENCE ((perc_ts)-1)
/* The KEYS of a script on row (see rs_row_eval) into keys, their bytes
   in names: how many. */
size_t   rs_row_keys(char names[RS_ROW_KEYS][RS_KEY_MAX],
                     perc_bytes keys[RS_ROW_KEYS],
                     const struct redis_store *s, perc_bytes row,
                     perc_ts lease_ts);
/* Run one of the scripts on row's bucket (KEYS: its k, v, l and g, then,
   unless lease_ts is 0, the lease of transaction lease_ts, whose primary
   row is row, or the fence with RS_FENCE): its reply in *out, whose
   first element, an integer, in *code. */
int      rs_row_eval(redisReply **out, long long *code, int *replicas,
                     struct redis_store *s, int script, perc_bytes row,
                     perc_ts lease_ts, size_t nargs, const perc_bytes *args,
                     const char *doing);

/* As rs_row_eval, until a replica of the row's master has its write
   too (mvcc.c says which steps need that). */
int      rs_eval_replicated(redisReply **out, long long *code,
                            struct redis_store *s, int script,
                            perc_bytes row, perc_ts lease_ts, size_t nargs,
                            const perc_bytes *args, const char *doing);

/* oracle.c: timestamps. */
int rs_ts_next(struct store *s, perc_ts *out, uint64_t n,
               int64_t deadline_ms);
int rs_ts_last(struct store *s, perc_ts *out, int64_t deadline_ms);
int rs_ts_begin(struct store *s, perc_ts *out, int64_t deadline_ms);
int rs_open_publish(struct store *s, perc_ts at, perc_ts oldest_here,
                    perc_ts *oldest_all, int64_t deadline_ms);

/*
 * A read's snapshot as read.lua and scan.lua take it: ts8, then the
 * known transaction's start (empty when none is known) and whether it
 * committed at or below ts ("1" or "0"); args point into the struct.
 */
struct rs_snapshot {
	unsigned char ts8[8], kstart[8];
	perc_bytes    args[3];
};
void rs_snapshot_args(struct rs_snapshot *out, perc_ts ts,
                      const struct lock_fate *known);

/* mvcc.c: the steps on one cell. */
int rs_read(struct store *s, perc_buf *out, perc_bytes row, perc_bytes col,
            perc_ts ts, struct lock_rec *blocker,
            const struct lock_fate *known);
int rs_get_lock(struct store *s, struct lock_rec *out, perc_bytes row,
                perc_bytes col);
int rs_find_commit(struct store *s, perc_ts *commit_ts, int *op,
                   perc_bytes row, perc_bytes col, perc_ts start_ts);
int rs_prewrite(struct store *s, perc_ts *committed_at,
                const struct write *w, const struct lock_rec *lock,
                unsigned flags, struct lock_rec *blocker);
int rs_commit(struct store *s, perc_bytes row, perc_bytes col,
              perc_ts start_ts, perc_ts commit_ts, unsigned flags);
int rs_prewrite_many(struct store *s, const struct write *const *w,
                     const unsigned *flags, size_t n,
                     const struct lock_rec *lock, int *done);
int rs_commit_many(struct store *s, const struct write *const *w, size_t n,
                   perc_ts start_ts, perc_ts commit_ts, int *done);
int rs_rollback_many(struct store *s, const struct write *const *w, size_t n,
                     perc_ts start_ts, int *done);
int rs_rollback(struct store *s, perc_bytes row, perc_bytes col,
                perc_ts start_ts, unsigned flags);
int rs_push(struct store *s, perc_bytes primary_row, perc_bytes primary_col,
            perc_ts start_ts, perc_ts ts);

/* gc.c: gc's safe point and pass. */
int rs_safe_point(struct store *s, perc_ts *out);
int rs_safe_point_raise(struct store *s, perc_ts sp);
int rs_gc(struct store *s, struct store_gc *gc);

/* log.c: the change log (perc log). */
int rs_log_read(struct store *s, struct store_log *lg);

/* walk.c: scans, and the notify region. */
int rs_scan(struct store *s, struct store_scan *sc);
int rs_locks(struct store *s, int (*fn)(void *arg, perc_bytes row,
             perc_bytes col, const struct lock_rec *lock), void *arg);
int rs_raw(struct store *s, perc_bytes row, const perc_bytes *col,
           store_raw_fn fn, void *arg);
int rs_notify_scan(struct store *s, const perc_bytes *column,
                   int (*fn)(void *arg, perc_bytes row, perc_bytes col,
                   perc_bytes failures), void *arg);
int rs_notify_pending(struct store *s, perc_bytes row, perc_bytes col,
                      perc_ts *ts, size_t max, size_t *n);
int rs_failures_get(struct store *s, perc_buf *out, perc_bytes row,
                    perc_bytes col);

/* weak.c: weak notifications. */
int rs_weak_pend(struct store *s, perc_bytes row, perc_bytes col,
                 perc_ts start_ts, perc_bytes primary);
int rs_weak_settle(struct store *s, perc_bytes row, perc_bytes col,
                   perc_ts start_ts, perc_ts commit_ts, unsigned flags);
int rs_weak_clear(struct store *s, perc_bytes row, perc_bytes col,
                  perc_ts upto);
int rs_failures_put(struct store *s, perc_bytes row, perc_bytes col,
                    perc_bytes rec);
/* wake.c: the wakeup, and perc wait's mark. */
void rs_wake(struct store *s, int feed);
int  rs_wait_wake(struct store *s, int feed, int64_t deadline_ms,
                  const sigset_t *mask);
int  rs_notify_epoch(struct store *s, perc_buf *out);
#endif

/* lib/db.h - the open data directory that every module works on */
#ifndef DB_H
#define DB_H

#include <stdint.h>
#include <sys/stat.h>

#include "config.h"
#include "owner.h"
#include "perc.h"
#include "store.h"

struct perc_db {
	char        *dir;
	struct store *store;       /* the seam: see store.h */
	struct observed observed;
	int64_t      timeout_ms;   /* PERC_LOCK_TIMEOUT */
	uint32_t     ttl_ms;       /* PERC_LOCK_TTL, stamped on our locks */
	char         host[64];     /* gethostname(), stamped on our locks */
	int          held;         /* perc_db_hold: keep the store open */
	int          gc_due;       /* commits enough for an automatic gc */
	size_t       gc_uncounted; /* commits not yet in DIR/gc.count */
	int64_t      gc_counted_ms; /* when they were last counted */
	perc_ts      ts_high;      /* the newest timestamp we were handed */
	perc_ts      ts_settled;   /* known handed out, by anyone: no
	                              commit to come is at or below it */
	int          open_unpublished; /* began transactions the store
	                              has not heard are over (gc.h) */
	int64_t      open_published_ms;
	struct stat  config_st;    /* DIR/config as last read */
	int          format;       /* the data format it names */
	struct owner owner;        /* token of the local transactions */
	long         begun_by;     /* perc_db_begun_by's process, or 0 */
	char        *store_url;    /* the config's, NULL for LevelDB */
	int          runner_fd;    /* perc_runner_announce's, or -1 */
	perc_progress_fn progress; /* perc_db_progress's */
	void        *progress_arg;
};

/* Is col observed at all, strongly, weakly? */
int db_is_observed(const perc_db *db, perc_bytes col);
int db_is_strong(const perc_db *db, perc_bytes col);
int db_is_weak(const perc_db *db, perc_bytes col);
/* PERC_EUSAGE naming col when it is weakly observed: it holds no
   values, so doing (a write, a load) is refused. */
int db_refuse_weak(const perc_db *db, perc_bytes col, const char *doing);
/* PERC_EUSAGE, saying why, unless col is weakly observed: a notify. */
int db_require_weak(const perc_db *db, perc_bytes col);
int db_acquire(perc_db *db, int64_t deadline_ms);
/* A transaction's start timestamp (store.h's ts_begin). */
int db_begin_ts(perc_ts *out, perc_db *db);
void db_release(perc_db *db);
/* PERC_EUSAGE unless a snapshot at at can no longer change. */
int db_check_at(perc_db *db, perc_ts at);
/*
 * A commit counted towards the next automatic gc (gc.h's gc_count_add),
 * which perc_gc_due then says is due.  A process that commits often
 * counts in batches, at most once a second or every GC_COUNT_BATCH
 * commits, and when it closes the directory, so a long-lived one does
 * not pay an open and a write per commit.
 */
void db_count_commit(perc_db *db);
/*
 * Where other data directories share the store: publish what this one
 * has open (gc_open_oldest, at at, and store.h's open_publish; the
 * oldest start of all of them in *oldest_all), and db_open_note's
 * upkeep of it after a transaction and as the directory closes.
 */
int  db_open_publish(perc_db *db, perc_ts at, perc_ts *oldest_all);
void db_open_note(perc_db *db, int closing);
/* Tell perc_db_progress's listener how many of counted so far. */
void db_progress(perc_db *db, const char *counted, uint64_t n);
#endif

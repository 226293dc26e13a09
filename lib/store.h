/* lib/store.h - the only user of LevelDB: one process holds it at a time */
#ifndef STORE_H
#define STORE_H

#include <leveldb/c.h>

#include "perc.h"

struct store {
	char                   *path;     /* DIR/store */
	char                   *lockpath; /* DIR/store.lock */
	char                   *dir;      /* DIR */
	int                     lockfd;   /* flock held while open; else -1 */
	leveldb_t              *db;       /* NULL while released */
	leveldb_readoptions_t  *read;
	leveldb_writeoptions_t *write_sync;
	leveldb_writeoptions_t *write_nosync;
	int                     nosync;   /* PERC_UNSAFE_NOSYNC=1 */
	char                   *cleanpath; /* DIR/store.clean */
	int                     clean;    /* opened on a log it vouched for */
	int                     wrote;    /* a write went in this session */
	int                     failed;   /* a write failed this session */
	int                     read_only; /* errno that forbids writes, or 0 */
	int64_t                 full_at_ms; /* when an open found the disk full */
	void                   *env;      /* store_open_tuned's, while open */
};

/*
 * In store_open.cc: LevelDB opened with options the C API lacks, over
 * an Env of ours, *env, which store_close_tuned frees after the DB.
 */
#define STORE_CREATE        1u
#define STORE_REUSE_LOGS    2u
#define STORE_READ_ONLY     4u  /* LevelDB's own writes stay in memory */
#define STORE_SIMULATE_CUTS 8u  /* for PERC_FAILPOINT=NAME:power-cut */
leveldb_t *store_open_tuned(const char *path, unsigned flags, void **env,
                            char **errptr);
void store_close_tuned(leveldb_t *db, void *env, int read_only);
void store_cut_power(void *env);

int  store_init(struct store *s, const char *dir);
void store_dispose(struct store *s);
int  store_create(const char *dir);
int  store_acquire(struct store *s, int64_t deadline_ms);
void store_release(struct store *s);
void store_power_cut(struct store *s);

int  store_get(perc_buf *out, struct store *s, perc_bytes key);
int  store_write(struct store *s, leveldb_writebatch_t *batch, int sync);
leveldb_iterator_t *store_iter(struct store *s);
int  store_iter_error(leveldb_iterator_t *it);
#endif

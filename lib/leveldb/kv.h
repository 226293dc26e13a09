/*
 * lib/leveldb/kv.h - LevelDB as the LevelDB store sees it: the few
 * calls it makes, in C, over LevelDB's C++ API (kv.cc).  perc's own
 * Envs need C++ anyway, and one API keeps perc clear of LevelDB's
 * private layout.
 *
 * Errors come back as a message in *err, malloc'd (free it), which
 * names LevelDB's status ("Corruption: ...", "IO error: ...").
 */
#ifndef LEVELDB_KV_H
#define LEVELDB_KV_H

#include <stddef.h>

#include "perc.h"

struct kv;              /* an open LevelDB and the Env under it */
struct kv_batch;        /* a write batch: applied whole or not at all */
struct kv_iter;         /* an iterator, over the DB as it was when made */

/* How kv_open opens the DB at path. */
#define KV_CREATE        1u
#define KV_REUSE_LOGS    2u  /* append to the last log: see kv.cc */
#define KV_READ_ONLY     4u  /* LevelDB's own writes stay in memory */
#define KV_SIMULATE_CUTS 8u  /* for PERC_FAILPOINT=NAME:power-cut */
#define KV_BIG_BUFFER    16u /* a write buffer of 4 MB, not 64 KB */
#define KV_KEPT_OPEN     32u /* by the store server: 1 MB (see kv.cc) */

struct kv *kv_open(const char *path, unsigned flags, char **err);
void kv_close(struct kv *db);
/* The power cut of PERC_FAILPOINT=NAME:power-cut: see durable_env.cc. */
void kv_cut_power(struct kv *db);
/* The file this thread's last read of a table came from, or NULL. */
const char *kv_last_read(void);

/* key's value into out: 0, 1 when there is none, or -1 (*err if set). */
int  kv_get(struct kv *db, perc_buf *out, const char *key, size_t klen,
            char **err);
/* Apply batch; with sync, on disk when this returns.  -1 with *err. */
int  kv_write(struct kv *db, struct kv_batch *batch, int sync, char **err);
/* LevelDB's property name, malloc'd, or NULL. */
char *kv_property(struct kv *db, const char *name);
/* Compact lo to hi (NULL: from the first key, to the last). */
void kv_compact(struct kv *db, const char *lo, size_t lolen, const char *hi,
                size_t hilen);

struct kv_batch *kv_batch_new(void);
void kv_batch_free(struct kv_batch *b);
void kv_batch_put(struct kv_batch *b, const char *k, size_t klen,
                  const char *v, size_t vlen);
void kv_batch_delete(struct kv_batch *b, const char *k, size_t klen);
void kv_batch_clear(struct kv_batch *b);
/* Add from's writes to b, after b's own. */
void kv_batch_append(struct kv_batch *b, const struct kv_batch *from);
/* The bytes b adds to the log, about. */
size_t kv_batch_size(const struct kv_batch *b);
/* Call put or del for each write in b, in order. */
void kv_batch_each(const struct kv_batch *b, void *arg,
                   void (*put)(void *arg, const char *k, size_t klen,
                               const char *v, size_t vlen),
                   void (*del)(void *arg, const char *k, size_t klen));

/* A new iterator, checksums verified, not yet positioned. */
struct kv_iter *kv_iter_new(struct kv *db);
void kv_iter_free(struct kv_iter *it);
void kv_iter_seek(struct kv_iter *it, const char *k, size_t klen);
void kv_iter_seek_first(struct kv_iter *it);
void kv_iter_seek_last(struct kv_iter *it);
void kv_iter_next(struct kv_iter *it);
int  kv_iter_valid(const struct kv_iter *it);
/* The key and value it stands on, valid until it moves. */
const char *kv_iter_key(const struct kv_iter *it, size_t *len);
const char *kv_iter_value(const struct kv_iter *it, size_t *len);
/* 0, or -1 with *err when it met a failure (it may step past one). */
int  kv_iter_error(const struct kv_iter *it, char **err);
#endif

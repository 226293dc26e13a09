/* lib/codec.h - order-preserving keys and the lock and write records */
#ifndef CODEC_H
#define CODEC_H

#include <stdint.h>

#include "perc.h"

/*
 * Key regions.  Every Percolator column of a user cell lives in the
 * cell region, so one seek finds a cell's lock, writes and data side
 * by side; notify cells have their own range (the paper's locality
 * group) so a notify scan never walks the data.
 */
#define REGION_CELL   'c'
#define REGION_NOTIFY 'n'
/*
 * The change log (perc log): one key per batch that commits puts or
 * deletes of a transaction, REGION_LOG, commit_ts (8 bytes, big-endian),
 * then the prefix (codec_cell_prefix, REGION_CELL) of the first cell
 * the batch commits, so that keys sort by commit_ts; its value says
 * the start_ts, where the data of a put is, and each cell's op, and
 * the further cells (lib/leveldb/log.c).
 */
#define REGION_LOG    'L'
/*
 * The LevelDB store's lock index: one key per cell that holds a lock,
 * the key of the cell's head (codec.h's KIND_LOCK key) with REGION_LOCKS
 * for its first byte and no value, put in the batch that writes the
 * lock and deleted in the batch that drops it (lib/leveldb/head.c), so
 * that a walk of the locks reads the locks, not the store.
 *
 * But for a bulk commit's secondaries (STORE_BULK, perc_load's
 * transactions that take the two steps), which would pay two more
 * writes per cell: their transaction has one marker instead,
 * REGION_LOCKS, two NUL bytes (which no cell key has there: a row's NUL
 * is escaped as NUL 0xff, its end is NUL 1), start_ts big-endian, its
 * value the lock record of the primary as first written.  It goes in
 * the batch of the primary's prewrite, written before the first group
 * of the secondaries' (lib/commit.c), and the committer deletes it once
 * its commit or rollback of every cell is written (store_ops.bulk_done).
 * A walk of the locks (lib/leveldb/walk.c) reads the markers first.
 * For perc log, which needs each live transaction's start once
 * (locks_by_txn), a marker whose primary still holds the transaction's
 * lock, its owner alive and not expired, adds nothing: the primary's
 * own entry reports the transaction, as all of its locks would.  Any
 * other marker, and every marker for the walks that want each lock
 * (resolve-locks, status, gc), makes the walk read the cell region, as
 * a directory without an index does: exact whatever a kill -9 left,
 * since the marker was written no later than any lock it stands for and
 * is deleted no earlier than the last is dropped.  A marker whose owner
 * is dead goes with the first walk of the cells that meets no lock of
 * its start_ts: a dead owner writes no lock again (a resumed commit
 * holds the journal, so its owner lives; and meets its rolled-back
 * primary or its commit record).  A live owner whose primary a reader
 * rolled back may still write locks; it removes its marker itself.
 */
#define REGION_LOCKS  'K'

/*
 * A cell has at most one lock, always at this timestamp (the owner's
 * start_ts is in the record): a lock put and deleted by each commit
 * then leaves one key behind, not a tombstone per transaction for
 * every later reader to step over.
 */
#define LOCK_TS 0

/* Kinds within a cell, in key order: a reader meets the lock first. */
enum cell_kind {
	KIND_LOCK  = 1,        /* at the owner's start_ts */
	KIND_WRITE = 2,        /* at commit_ts (a rollback at start_ts) */
	KIND_DATA  = 3,        /* at start_ts */
	KIND_ACK   = 4,        /* unused: acks are write records, op ack */
	KIND_NOTIFY = 5,       /* notify region: at the writer's start_ts */
	KIND_FAILURES = 6,     /* notify region: failed observer runs */
	KIND_PENDING = 7       /* notify region: a weak notification whose
	                          transaction is committing, at its start_ts;
	                          the value names its primary (weak.c) */
};

/* What a write record or a lock does to the cell. */
enum write_op {
	OP_PUT      = 'P',
	OP_DELETE   = 'D',
	OP_ROLLBACK = 'R',
	OP_LOCK     = 'L',     /* get --lock: a conflict marker, no value */
	OP_ACK      = 'A',     /* an observer ran: conflicts only with acks */
	OP_NOTIFY   = 'N'      /* a journal's weak notification: no lock,
	                          never in the store as a write (weak.c) */
};

/* Locks and writes that never change a value: readers pass them. */
#define OP_KEEPS_VALUE(op) ((op) == OP_LOCK || (op) == OP_ACK)

struct key {
	perc_buf row;
	perc_buf col;
	int      region;
	int      kind;
	perc_ts  ts;
};

struct lock_rec {
	int        op;         /* OP_PUT, OP_DELETE or OP_LOCK */
	perc_ts    start_ts;
	uint64_t   wall_ms;    /* when written or last refreshed */
	uint32_t   ttl_ms;
	uint32_t   pid;        /* owner: process ... */
	perc_buf   host;       /* ... on this host */
	perc_buf   primary_row;
	perc_buf   primary_col;
	int        large;      /* a large transaction's: readers push it */
	perc_ts    min_commit_ts; /* large: readers' mark on the primary,
	                             which its commit point must pass */
};

struct write_rec {
	int        op;
	perc_ts    start_ts;
};

/*
 * The head of a cell (the LevelDB store's): the record in the key of
 * its lock, which holds the lock if there is one and the newest write
 * that changes the cell's value, so that a read of a cell's newest
 * value costs one lookup, not a lookup of the lock and a seek to the
 * write records (TiKV's short values, kept with the lock).  A value of
 * up to HEAD_VALUE_MAX bytes rides along, the lock's and the newest
 * write's.  A cell without a head, or whose head knows no newest
 * write, is read by its write records, as it always can be.  The
 * values are views: of the record decoded, or of what is written.
 */
#define HEAD_VALUE_MAX 255

struct cell_head {
	int        locked;          /* the lock decoded alongside */
	int        lock_has_value;  /* a put's value, short: lock_value */
	perc_bytes lock_value;
	int        newest_op;       /* OP_PUT, OP_DELETE; 0: not known */
	perc_ts    newest_start;
	perc_ts    newest_commit;
	int        newest_has_value;
	perc_bytes newest_value;
	perc_ts    written_at;      /* with a newest write: the commit_ts
	                               of the newest write record of any op
	                               but rollbacks, an upper bound; 0:
	                               not known */
};

int  codec_key(perc_buf *out, int region, perc_bytes row, perc_bytes col,
               int kind, perc_ts ts);
int  codec_cell_prefix(perc_buf *out, int region, perc_bytes row,
                       perc_bytes col);
int  codec_row_prefix(perc_buf *out, int region, perc_bytes row_prefix);
int  codec_parse_key(struct key *out, const void *k, size_t len);
int  codec_log_key(perc_buf *out, perc_ts commit_ts, perc_bytes row,
                   perc_bytes col);
int  codec_parse_log_key(struct key *out, const void *k, size_t len);
void codec_key_dispose(struct key *k);

int  codec_lock_encode(perc_buf *out, const struct lock_rec *lock);
int  codec_lock_decode(struct lock_rec *out, const void *v, size_t len);
void codec_lock_dispose(struct lock_rec *lock);

int  codec_head_encode(perc_buf *out, const struct cell_head *head,
                       const struct lock_rec *lock);
int  codec_head_decode(struct cell_head *out, struct lock_rec *lock,
                       const void *v, size_t len);

int  codec_write_encode(perc_buf *out, const struct write_rec *w);
int  codec_write_decode(struct write_rec *out, const void *v, size_t len);
const char *codec_op_name(int op);

void     codec_put_u32(unsigned char *p, uint32_t v);
void     codec_put_u64(unsigned char *p, uint64_t v);
uint32_t codec_get_u32(const unsigned char *p);
uint64_t codec_get_u64(const unsigned char *p);
uint32_t codec_crc32(uint32_t crc, const void *data, size_t len);
#endif

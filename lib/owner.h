/*
 * lib/owner.h - a process's token for the transactions it keeps in
 * memory (perc_txn_begin_local): one file for all of them, not one each
 */
#ifndef OWNER_H
#define OWNER_H

#include <stdint.h>

#include "perc.h"

struct owner {
	int      fd;        /* DIR/txn/pPID, flocked while open; else -1 */
	char    *path;
	perc_ts *open;      /* its open transactions' starts, ascending */
	size_t   n, cap;
	perc_ts  shown;     /* the oldest as the file says it */
	uint64_t registered_ms; /* wall time the file gives, less a slack */
};

void owner_init(struct owner *o);
int  owner_register(struct owner *o, const char *dir);
void owner_close(struct owner *o);
int  owner_add(struct owner *o, perc_ts start_ts);
void owner_remove(struct owner *o, perc_ts start_ts);

int  owner_alive(const char *dir, uint32_t pid, uint64_t wall_ms);

/*
 * A token (a journal, or an owner file) whose process is at work on a
 * commit but waits for the store (store.h's TOKEN_WAITING) is marked
 * so while it waits: an OFD lock on one byte, which flock does not
 * see, and which goes with the process.
 */
void token_mark_waiting(int fd, int on);
int  token_waiting(int fd);

/*
 * The process that a transaction with a journal belongs to, which may
 * not be the one that began it (perc begin's is the shell that runs
 * it), beside its journal (path journal): noted at begin, forgotten as it finishes, and asked by perc
 * status, 1 while that process lives (or when no note says).
 */
void owner_note_begun(const char *journal, long pid);
void owner_forget_begun(const char *journal);
int  owner_begun_alive(const char *journal);
perc_ts owner_oldest(const char *path);
#endif

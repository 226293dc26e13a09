/*
 * lib/owner.c - a process's token for the transactions it keeps in
 * memory.
 *
 * A transaction that only the process that began it uses needs no
 * journal file: its writes stay in memory (journal.c).  Two things a
 * journal shows other processes must still be shown: that the owner
 * lives, which decides whether its locks may be rolled back, and, to
 * gc, the oldest transaction still open.  DIR/txn/pPID shows both for
 * all of a process's in-memory transactions at once:
 *
 *   "PERCOWN1", the wall time of the registration in ms, the oldest
 *   open start timestamp (UINT64_MAX: none), CRC-32C of the rest
 *
 * rewritten in place with one pwrite, without a sync (after a crash of
 * the machine no owner lives on), and only when the oldest changes.
 * The process holds the file's flock while it has it, and the kernel
 * lets go the moment it dies.  Pids come round again: a lock stamped
 * before the registration (give or take a step of the clock) was not
 * written by the registrant, and its owner is gone.  gc removes the
 * files of the dead; a registrant checks that the file it locked is
 * still linked.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "codec.h"
#include "disk.h"
#include "error.h"
#include "owner.h"
#include "store.h"

#define OWNER_MAGIC  "PERCOWN1"
#define STATE_SIZE   (8 + 8 + 8 + 4)
/* A step back of the wall clock that a live owner's locks survive. */
#define CLOCK_SLACK_MS 1000
/* Reads of a state being rewritten that may come back torn. */
#define READ_TRIES   100

void
owner_init(struct owner *o)
{
	memset(o, 0, sizeof(*o));
	o->fd = -1;
}

static int
write_state(struct owner *o, uint64_t registered_ms, perc_ts oldest)
{
	unsigned char rec[STATE_SIZE];

	memcpy(rec, OWNER_MAGIC, 8);
	codec_put_u64(rec + 8, registered_ms);
	codec_put_u64(rec + 16, oldest);
	codec_put_u32(rec + 24, codec_crc32(0, rec, 24));
	/* No sync: after a power cut no owner lives on (see the top). */
	if (pwrite(o->fd, rec, sizeof(rec), 0) != (ssize_t)sizeof(rec))
		return disk_write_error(o->path, "cannot write the owner file");
	o->shown = oldest;
	return 0;
}

/* 1 with *registered_ms and *oldest, or 0 when it is not a whole state. */
static int
read_state(int fd, uint64_t *registered_ms, perc_ts *oldest)
{
	unsigned char rec[STATE_SIZE];
	int i;

	for (i = 0; i < READ_TRIES; i++) {
		if (pread(fd, rec, sizeof(rec), 0) != (ssize_t)sizeof(rec))
			continue;
		if (memcmp(rec, OWNER_MAGIC, 8) != 0 ||
		    codec_get_u32(rec + 24) != codec_crc32(0, rec, 24))
			continue;
		*registered_ms = codec_get_u64(rec + 8);
		*oldest = codec_get_u64(rec + 16);
		return 1;
	}
	return 0;
}

static void
owner_path(char *out, size_t size, const char *dir, long pid)
{
	snprintf(out, size, "%s/txn/p%ld", dir, pid);
}

/*
 * Take this process's owner file in dir.  PERC_ETIMEOUT when another
 * perc_db of this process has it (the caller then keeps journals).
 */
int
owner_register(struct owner *o, const char *dir)
{
	char path[4096];
	struct stat st;
	int fd, rc;

	owner_path(path, sizeof(path), dir, (long)getpid());
	for (;;) {
		if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0)
			return disk_write_error(path, "cannot create the owner "
			    "file");
		if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
			close(fd);
			return error_set(PERC_ETIMEOUT, "the owner file '%s' "
			    "is taken by another handle of this process",
			    path);
		}
		if (fstat(fd, &st) == 0 && st.st_nlink > 0)
			break;
		close(fd);      /* gc removed it as a dead owner's */
	}
	if ((o->path = strdup(path)) == NULL) {
		close(fd);
		return error_set(PERC_EIO, "out of memory");
	}
	o->fd = fd;
	o->registered_ms = (uint64_t)clock_wall_ms() - CLOCK_SLACK_MS;
	if ((rc = write_state(o, o->registered_ms, UINT64_MAX)) < 0)
		owner_close(o);
	return rc;
}

void
owner_close(struct owner *o)
{
	if (o->fd >= 0) {
		unlink(o->path);
		close(o->fd);
	}
	free(o->path);
	free(o->open);
	owner_init(o);
}

/* Show the oldest open start, if it changed. */
static int
show_oldest(struct owner *o)
{
	perc_ts oldest = o->n > 0 ? o->open[0] : UINT64_MAX;

	return oldest == o->shown ? 0 :
	    write_state(o, o->registered_ms, oldest);
}

/* A transaction begins: from now on gc sees it open. */
int
owner_add(struct owner *o, perc_ts start_ts)
{
	perc_ts *grown;
	size_t i;

	if (o->n == o->cap) {
		o->cap = o->cap ? o->cap * 2 : 8;
		if ((grown = realloc(o->open, o->cap * sizeof(*grown))) == NULL)
			return error_set(PERC_EIO, "out of memory");
		o->open = grown;
	}
	for (i = o->n; i > 0 && o->open[i - 1] > start_ts; i--)
		o->open[i] = o->open[i - 1];
	o->open[i] = start_ts;
	o->n++;
	return show_oldest(o);
}

/*
 * A transaction is over.  A failed write leaves an older start shown,
 * which only holds gc back until the next one.
 */
void
owner_remove(struct owner *o, perc_ts start_ts)
{
	size_t i;

	for (i = 0; i < o->n && o->open[i] != start_ts; i++)
		;
	if (i == o->n)
		return;
	memmove(&o->open[i], &o->open[i + 1], (o->n - i - 1) *
	    sizeof(*o->open));
	o->n--;
	(void)show_oldest(o);
}

/*
 * Is the process pid, which stamped a lock at wall_ms, still at work?
 * Only its own file, still locked and registered before the lock was
 * written, says so.
 */
int
owner_alive(const char *dir, uint32_t pid, uint64_t wall_ms)
{
	char path[4096];
	uint64_t registered_ms;
	perc_ts oldest;
	int fd, alive = 0;

	owner_path(path, sizeof(path), dir, (long)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	if (flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK)
		alive = !read_state(fd, &registered_ms, &oldest) ||
		    registered_ms <= wall_ms;
	if (alive && token_waiting(fd))
		alive = TOKEN_WAITING;
	close(fd);
	return alive;
}

/* The byte the mark locks: past anything a token file holds. */
#define WAITING_BYTE ((off_t)1 << 30)

void
token_mark_waiting(int fd, int on)
{
	struct flock fl = { .l_type = on ? F_RDLCK : F_UNLCK,
	    .l_whence = SEEK_SET, .l_start = WAITING_BYTE, .l_len = 1 };

	if (fd >= 0)
		(void)fcntl(fd, F_OFD_SETLK, &fl);  /* failed: TTL alone */
}

int
token_waiting(int fd)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
	    .l_start = WAITING_BYTE, .l_len = 1 };

	return fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
}

/*
 * The oldest open start that the owner file at path shows, UINT64_MAX
 * when none is open or the owner is gone (its file is removed then).
 * A state that stays torn counts as the oldest possible start.
 */
perc_ts
owner_oldest(const char *path)
{
	uint64_t registered_ms;
	perc_ts oldest = UINT64_MAX;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return oldest;
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		unlink(path);   /* a dead owner's: see owner_register */
	else if (!read_state(fd, &registered_ms, &oldest))
		oldest = 1;
	close(fd);
	return oldest;
}

/*
 * The process a transaction with a journal belongs to.  Such a
 * transaction outlives the process that began it (perc begin prints
 * the handle and ends), so a file beside its journal names the process
 * that goes on to use it (JOURNAL.owner): "PID STARTTIME\n", STARTTIME as the 22nd
 * field of /proc/PID/stat has it, which tells that pid's process from
 * a later one that got the pid again.  Only perc status reads it; a
 * journal without one (begun by an older perc, or whose note could
 * not be written) counts as alive.  Not synced: after a crash of the
 * machine no process lives on.
 */
static void
begun_path(char *out, size_t size, const char *journal)
{
	snprintf(out, size, "%s.owner", journal);
}

/* The start time of process pid, in clock ticks after boot; 0: none. */
static uint64_t
process_start(long pid)
{
	char path[64], text[1024], *p;
	unsigned long long start = 0;
	ssize_t n;
	int fd, i;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	text[n] = '\0';
	/* The name, in parentheses, may hold anything: skip past it. */
	if ((p = strrchr(text, ')')) == NULL)
		return 0;
	for (i = 0; i < 20 && p != NULL; i++)
		p = strchr(p + 1, ' ');
	if (p == NULL || sscanf(p + 1, "%llu", &start) != 1)
		return 0;
	return start;
}

void
owner_note_begun(const char *journal, long pid)
{
	char path[4096], text[64];
	uint64_t start = process_start(pid);
	int fd, n;

	if (start == 0)
		return;
	begun_path(path, sizeof(path), journal);
	n = snprintf(text, sizeof(text), "%ld %" PRIu64 "\n", pid, start);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644)) < 0)
		return;
	if (write(fd, text, (size_t)n) != n)
		(void)unlink(path);
	close(fd);
}

void
owner_forget_begun(const char *journal)
{
	char path[4096];

	begun_path(path, sizeof(path), journal);
	(void)unlink(path);
}

int
owner_begun_alive(const char *journal)
{
	char path[4096], text[64];
	unsigned long long start;
	long pid;
	ssize_t n;
	int fd;

	begun_path(path, sizeof(path), journal);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 1;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	text[n > 0 ? n : 0] = '\0';
	if (sscanf(text, "%ld %llu", &pid, &start) != 2)
		return 1;
	return process_start(pid) == start;
}

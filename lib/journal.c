/*
 * lib/journal.c - one file per open transaction: its buffered writes.
 *
 * DIR/txn/START_TS starts with a header (magic, start_ts, CRC) followed
 * by records, each [payload length][CRC of type and payload][type]
 * [payload][record length], where the payload of a write is [row
 * length][row][column length][column][value].  The trailing length lets
 * an append check the last record, found from the end, before it adds
 * one after it.  A record is appended with one write(2) under
 * the file's flock, and cut off again if that write fails, so two
 * appends never interleave and a full disk leaves the journal as it
 * was.  A record that is torn or fails its CRC makes the whole journal
 * unreadable: a transaction is never committed from half a journal.
 *
 * The same flock is the owner's token while it commits (the paper's
 * Chubby lock): any process can ask whether the owner of a lock is
 * still at work with one non-blocking flock, and the kernel drops the
 * token the moment the owner dies.
 *
 * A transaction that no other process will ever use (a local one) has
 * the same bytes in memory instead, and no file: its process's owner
 * file (owner.c) is its token and shows it open to gc.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "codec.h"
#include "disk.h"
#include "error.h"
#include "journal.h"
#include "store.h"

#define JOURNAL_MAGIC  "PERCJNL1"
#define HEADER_SIZE    (8 + 8 + 4)
#define RECORD_HEAD    (4 + 4 + 1)
#define RECORD_TAIL    4
/* Bound on one record, so a damaged length can never ask for more. */
#define RECORD_MAX     ((uint64_t)1 << 40)

static int
journal_path(struct journal *j, const char *dir, const char *handle)
{
	size_t n = strlen(dir) + strlen(handle) + 6;

	memset(j, 0, sizeof(*j));
	j->fd = -1;
	if ((j->path = malloc(n)) == NULL)
		return error_set(PERC_EIO, "out of memory");
	snprintf(j->path, n, "%s/txn/%s", dir, handle);
	snprintf(j->handle, sizeof(j->handle), "%s", handle);
	return 0;
}

static int
write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	ssize_t n;

	while (len > 0) {
		if ((n = write(fd, p, len)) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Name the new journal of transaction start_ts, and make its header. */
static int
journal_new(struct journal *j, unsigned char head[HEADER_SIZE],
    const char *dir, perc_ts start_ts)
{
	char handle[24];
	int rc;

	snprintf(handle, sizeof(handle), "%" PRIu64, start_ts);
	if ((rc = journal_path(j, dir, handle)) < 0)
		return rc;
	j->start_ts = start_ts;
	memcpy(head, JOURNAL_MAGIC, 8);
	codec_put_u64(head + 8, start_ts);
	codec_put_u32(head + 16, codec_crc32(0, head, 16));
	return 0;
}

/*
 * Create the journal of a new transaction; it is open until finished.
 * Journals are never synced: a power cut may empty one (its handle then
 * exits 7 and may be aborted), remove it (exit 5), or bring back a
 * finished one (committing it again finds its commit): no acknowledged
 * commit depends on a journal, only on the store's commit point.
 */
int
journal_create(struct journal *j, const char *dir, perc_ts start_ts)
{
	unsigned char head[HEADER_SIZE];
	int rc;

	if ((rc = journal_new(j, head, dir, start_ts)) < 0)
		return rc;
	j->fd = open(j->path, O_RDWR | O_CREAT | O_EXCL | O_APPEND |
	    O_CLOEXEC, 0644);
	if (j->fd < 0 && errno == ENOENT)
		return error_set(PERC_ENOTDB, "cannot create the journal "
		    "'%s': %s", j->path, strerror(errno));
	if (j->fd < 0)
		return disk_write_error(j->path, "cannot create the journal");
	if (write_all(j->fd, head, sizeof(head)) < 0) {
		rc = disk_write_error(j->path, "cannot write the journal");
		unlink(j->path);
		return rc;
	}
	return 0;
}

/* As journal_create, in memory: the transaction shows open in owner. */
int
journal_create_local(struct journal *j, const char *dir, perc_ts start_ts,
    struct owner *owner)
{
	unsigned char head[HEADER_SIZE];
	int rc;

	if ((rc = journal_new(j, head, dir, start_ts)) < 0 ||
	    (rc = buf_add(&j->mem, head, sizeof(head))) < 0 ||
	    (rc = owner_add(owner, start_ts)) < 0)
		return rc;
	j->local = owner;
	return 0;
}

/*
 * Open the journal of transaction handle.  A handle that is not a
 * timestamp, or whose journal is gone, is PERC_ENOTXN.
 */
int
journal_open(struct journal *j, const char *dir, const char *handle)
{
	const char *p;
	char *end;
	int rc;

	for (p = handle; *p >= '0' && *p <= '9'; p++)
		;
	if (*handle == '\0' || *handle == '0' || *p != '\0' ||
	    p - handle > 20)
		goto unknown;
	if ((rc = journal_path(j, dir, handle)) < 0)
		return rc;
	errno = 0;
	j->start_ts = strtoull(handle, &end, 10);
	if (errno != 0)
		goto unknown;
	j->fd = open(j->path, O_RDWR | O_APPEND | O_CLOEXEC);
	/* Reads of a read-only data directory still see the write set. */
	if (j->fd < 0 && (errno == EROFS || errno == EACCES)) {
		j->read_only = errno;
		j->fd = open(j->path, O_RDONLY | O_CLOEXEC);
	}
	if (j->fd < 0) {
		if (errno == ENOENT)
			goto unknown;
		return error_set(PERC_EIO, "cannot open the journal '%s': %s",
		    j->path, strerror(errno));
	}
	return 0;
unknown:
	return error_set(PERC_ENOTXN, "transaction '%.40s' is unknown or "
	    "already finished in '%s' (begun in another data directory? "
	    "check -d and PERC_DIR); start another with 'perc begin'",
	    handle, dir);
}

void
journal_close(struct journal *j)
{
	if (j->fd >= 0)
		close(j->fd);   /* also drops the token */
	if (j->local != NULL && !j->done)
		owner_remove(j->local, j->start_ts);    /* never finished */
	perc_buf_dispose(&j->mem);
	free(j->path);
	memset(j, 0, sizeof(*j));
	j->fd = -1;
}

/* Is the journal still linked, that is, the transaction still open? */
static int
journal_gone(struct journal *j)
{
	struct stat st;

	if (j->local != NULL)
		return j->done;
	return fstat(j->fd, &st) != 0 || st.st_nlink == 0;
}

/* pread(2) of the file, or of the memory of a local journal. */
static ssize_t
journal_pread(struct journal *j, void *out, size_t n, off_t off)
{
	if (j->local == NULL)
		return pread(j->fd, out, n, off);
	if ((size_t)off > j->mem.len)
		return 0;
	if (n > j->mem.len - (size_t)off)
		n = j->mem.len - (size_t)off;
	memcpy(out, j->mem.data + off, n);
	return (ssize_t)n;
}

static int
finished(struct journal *j)
{
	return error_set(PERC_ENOTXN, "transaction '%s' is unknown or "
	    "already finished; start another with 'perc begin'", j->handle);
}

static int
damaged(struct journal *j, size_t off)
{
	return error_set(PERC_EIO, "the journal '%s' is damaged at byte %zu "
	    "(torn or corrupt record); discard the transaction with 'perc "
	    "abort -t %s'", j->path, off, j->handle);
}

/*
 * Before an append: is the journal's end, size bytes in, whole?  The
 * header alone, or a last record that passes its CRC.  And nothing may
 * follow a commit's mark but the mark of a retried commit.
 */
static int
check_tail(struct journal *j, off_t size, int op)
{
	unsigned char tail[RECORD_TAIL], *rec = NULL;
	uint32_t n;
	int rc = 0;

	if (size == HEADER_SIZE)
		return 0;       /* journal_load checks the header itself */
	if (size < HEADER_SIZE + RECORD_HEAD + RECORD_TAIL ||
	    journal_pread(j, tail, RECORD_TAIL, size - RECORD_TAIL) !=
	    RECORD_TAIL)
		return damaged(j, (size_t)size);
	n = codec_get_u32(tail);
	if (n < RECORD_HEAD + RECORD_TAIL || n > size - HEADER_SIZE ||
	    (rec = malloc(n)) == NULL ||
	    journal_pread(j, rec, n, size - n) != (ssize_t)n ||
	    codec_get_u32(rec) != n - RECORD_HEAD - RECORD_TAIL ||
	    codec_get_u32(rec + 4) != codec_crc32(0, rec + 8,
	    n - 8 - RECORD_TAIL))
		rc = damaged(j, (size_t)(size - (n < size ? n : 0)));
	else if (rec[8] == JOURNAL_COMMIT_BEGUN && op != JOURNAL_COMMIT_BEGUN)
		rc = error_set(PERC_ENOTXN, "transaction '%s' has begun "
		    "committing and takes no more writes; finish it with "
		    "'perc commit -t %s' or 'perc abort -t %s'", j->handle,
		    j->handle, j->handle);
	free(rec);
	return rc;
}

/*
 * Append one record (op is OP_PUT, OP_DELETE, OP_LOCK, OP_ACK, OP_NOTIFY
 * or JOURNAL_COMMIT_BEGUN).  Safe against other processes appending to
 * the same journal at the same time.
 */
int
journal_append(struct journal *j, int op, perc_bytes row, perc_bytes col,
    perc_bytes value, int64_t deadline_ms)
{
	perc_buf rec = PERC_BUF_INIT;
	unsigned char head[RECORD_HEAD] = { 0 }, len[4];
	struct stat st;
	int rc = 0;

	if ((rc = buf_add(&rec, head, sizeof(head))) < 0)
		goto done;
	codec_put_u32(len, (uint32_t)row.len);
	if ((rc = buf_add(&rec, len, 4)) < 0 || (rc = buf_addb(&rec, row)) < 0)
		goto done;
	codec_put_u32(len, (uint32_t)col.len);
	if ((rc = buf_add(&rec, len, 4)) < 0 ||
	    (rc = buf_addb(&rec, col)) < 0 ||
	    (rc = buf_addb(&rec, value)) < 0)
		goto done;
	if (row.len > UINT32_MAX || col.len > UINT32_MAX ||
	    rec.len - RECORD_HEAD > UINT32_MAX) {
		rc = error_set(PERC_EUSAGE, "a row, column or value is larger "
		    "than 4 GiB; perc cannot store it");
		goto done;
	}
	codec_put_u32((unsigned char *)rec.data,
	    (uint32_t)(rec.len - RECORD_HEAD));
	rec.data[8] = (char)op;
	codec_put_u32((unsigned char *)rec.data + 4,
	    codec_crc32(0, rec.data + 8, rec.len - 8));
	codec_put_u32(len, (uint32_t)(rec.len + RECORD_TAIL));
	if ((rc = buf_add(&rec, len, RECORD_TAIL)) < 0)
		goto done;

	if (j->local != NULL) {
		if (j->done)
			rc = finished(j);
		else if ((rc = check_tail(j, (off_t)j->mem.len, op)) == 0)
			rc = buf_addb(&j->mem, buf_bytes(&rec));
		goto done;
	}
	if (j->read_only) {
		rc = error_set(PERC_EIO, "cannot write the journal '%s': %s; "
		    "perc may not write this data directory (read-only or "
		    "no permission); run this where it can write it", j->path, strerror(j->read_only));
		goto done;
	}
	if (!j->token && clock_flock(j->fd, LOCK_EX, deadline_ms) < 0) {
		rc = error_set(PERC_ETIMEOUT, "transaction '%s' stayed busy in "
		    "another process; try again", j->handle);
		goto done;
	}
	if (journal_gone(j)) {
		rc = finished(j);
	} else if (fstat(j->fd, &st) != 0) {
		rc = error_set(PERC_EIO, "cannot read the journal '%s': %s",
		    j->path, strerror(errno));
	} else if ((rc = check_tail(j, st.st_size, op)) < 0) {
		;
	} else if (write_all(j->fd, rec.data, rec.len) < 0) {
		rc = disk_write_error(j->path, "cannot write the journal");
		/* Leave no torn record behind: the transaction goes on. */
		if (ftruncate(j->fd, st.st_size) != 0)
			rc = error_set(PERC_EIO, "cannot write the journal "
			    "'%s' and cannot repair it: %s; abort the "
			    "transaction", j->path, strerror(errno));
	}
	if (!j->token)
		flock(j->fd, LOCK_UN);
done:
	perc_buf_dispose(&rec);
	return rc;
}

/* Read the whole journal file into data. */
static int
read_file(perc_buf *data, struct journal *j)
{
	struct stat st;
	ssize_t got;
	int rc;

	if (fstat(j->fd, &st) != 0)
		return error_set(PERC_EIO, "cannot read the journal '%s': %s",
		    j->path, strerror(errno));
	if ((rc = buf_grow(data, (size_t)st.st_size)) < 0)
		return rc;
	while (data->len < (size_t)st.st_size) {
		got = pread(j->fd, data->data + data->len,
		    (size_t)st.st_size - data->len, (off_t)data->len);
		if (got <= 0) {
			if (got < 0 && errno == EINTR)
				continue;
			return got == 0 ? damaged(j, data->len) :
			    error_set(PERC_EIO, "cannot read the journal '%s': "
			    "%s", j->path, strerror(errno));
		}
		data->len += (size_t)got;
	}
	return 0;
}

/* Read the whole journal into a sorted write set with one entry a cell. */
int
journal_load(struct writeset *out, struct journal *j)
{
	perc_buf file = PERC_BUF_INIT;
	const perc_buf *data = j->local != NULL ? &j->mem : &file;
	const unsigned char *p, *rec;
	size_t off, cap = 0, n, plen, rlen, clen;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (j->local == NULL && (rc = read_file(&file, j)) < 0)
		goto done;
	p = (const unsigned char *)data->data;
	if (data->len < HEADER_SIZE || memcmp(p, JOURNAL_MAGIC, 8) != 0 ||
	    codec_get_u64(p + 8) != j->start_ts ||
	    codec_get_u32(p + 16) != codec_crc32(0, p, 16)) {
		rc = damaged(j, 0);
		goto done;
	}
	for (off = HEADER_SIZE; off < data->len && rc == 0; off += n) {
		rec = p + off;
		if (data->len - off < RECORD_HEAD + RECORD_TAIL ||
		    (n = RECORD_HEAD + (size_t)codec_get_u32(rec) +
		    RECORD_TAIL) > data->len - off ||
		    codec_get_u32(rec + n - RECORD_TAIL) != n ||
		    codec_get_u32(rec + 4) != codec_crc32(0, rec + 8,
		    n - 8 - RECORD_TAIL)) {
			rc = damaged(j, off);
			break;
		}
		if (rec[8] == JOURNAL_COMMIT_BEGUN) {
			out->commit_begun = 1;
			continue;
		}
		rec += RECORD_HEAD;
		plen = n - RECORD_HEAD - RECORD_TAIL;
		if (plen < 8 || (rlen = codec_get_u32(rec)) > plen - 8 ||
		    (clen = codec_get_u32(rec + 4 + rlen)) > plen - 8 - rlen ||
		    (p[off + 8] != OP_PUT && p[off + 8] != OP_DELETE &&
		    p[off + 8] != OP_LOCK && p[off + 8] != OP_ACK &&
		    p[off + 8] != OP_NOTIFY)) {
			rc = damaged(j, off);
			break;
		}
		rc = writeset_append(out, &cap, p[off + 8],
		    bytes_of(rec + 4, rlen), bytes_of(rec + 8 + rlen, clen),
		    bytes_of(rec + 8 + rlen + clen, plen - 8 - rlen - clen));
	}
done:
	if (rc < 0)
		writeset_dispose(out);
	else
		writeset_fold(out);
	perc_buf_dispose(&file);
	return rc;
}

/*
 * Take the owner's token for a commit or an abort and keep it until
 * journal_close.  PERC_ENOTXN if the transaction finished meanwhile.
 */
int
journal_take_token(struct journal *j, int64_t deadline_ms)
{
	if (j->local != NULL) {
		j->token = 1;   /* the owner file is it, held all along */
		return j->done ? finished(j) : 0;
	}
	if (clock_flock(j->fd, LOCK_EX, deadline_ms) < 0)
		return error_set(PERC_ETIMEOUT, "transaction '%s' is being "
		    "committed or aborted by another process; wait for it",
		    j->handle);
	j->token = 1;
	if (journal_gone(j))
		return finished(j);
	return 0;
}

/* The transaction is over: its handle is refused from now on. */
int
journal_finish(struct journal *j)
{
	if (j->local != NULL) {
		if (!j->done)
			owner_remove(j->local, j->start_ts);
		j->done = 1;
		return 0;
	}
	if (unlink(j->path) != 0 && errno != ENOENT)
		return error_set(PERC_EIO, "cannot remove the journal '%s': "
		    "%s; check that the data directory is writable", j->path,
		    strerror(errno));
	owner_forget_begun(j->path);
	return 0;
}

/*
 * Does the owner of transaction start_ts, process pid that stamped its
 * lock at wall_ms, still hold its token?  A journal whose flock can be
 * had has no live owner; without a journal the transaction may be a
 * local one, whose token is its process's owner file.  TOKEN_WAITING
 * (store.h) for a live one that waits for the store.
 */
int
journal_owner_alive(const char *dir, perc_ts start_ts, uint32_t pid,
    uint64_t wall_ms)
{
	char path[4096];
	int fd, alive;

	snprintf(path, sizeof(path), "%s/txn/%" PRIu64, dir, start_ts);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return errno == ENOENT ? owner_alive(dir, pid, wall_ms) : 0;
	alive = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
	if (alive && token_waiting(fd))
		alive = TOKEN_WAITING;
	close(fd);
	return alive;
}

void
journal_mark_waiting(struct journal *j, int on)
{
	token_mark_waiting(j->local != NULL ? j->local->fd : j->fd, on);
}

/* Is the last record of the journal open at fd a commit's mark? */
static int
commit_marked(int fd)
{
	unsigned char tail[RECORD_TAIL], op;
	struct stat st;
	uint32_t n;

	return fstat(fd, &st) == 0 && st.st_size >= HEADER_SIZE +
	    RECORD_HEAD + RECORD_TAIL && pread(fd, tail, RECORD_TAIL,
	    st.st_size - RECORD_TAIL) == RECORD_TAIL &&
	    (n = codec_get_u32(tail)) >= RECORD_HEAD + RECORD_TAIL &&
	    n <= st.st_size - HEADER_SIZE &&
	    pread(fd, &op, 1, st.st_size - n + 8) == 1 &&
	    op == JOURNAL_COMMIT_BEGUN;
}

/*
 * Is the journal at path a commit that began and whose owner is gone
 * (its token free): a crashed commit, whose locks readers, resolve-locks
 * and gc settle by its primary, and which is no longer open to them?
 */
static int
abandoned_commit(const char *path)
{
	int fd, gone;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return errno == ENOENT;         /* finished meanwhile */
	gone = commit_marked(fd) && flock(fd, LOCK_SH | LOCK_NB) == 0;
	close(fd);
	return gone;
}

/*
 * The start of the oldest open transaction with a journal in dir, or
 * shown by an owner file there, or UINT64_MAX when there is none.
 * Names that are neither are passed over, and so are abandoned commits
 * and journals that started below floor (too old to hold gc back,
 * PERC_TXN_MAX_AGE); an owner file showing a start below floor counts
 * as floor, since the younger transactions it does not show may be
 * open too.
 */
int
journal_oldest(perc_ts *out, const char *dir, perc_ts floor)
{
	char path[4096], *end;
	struct dirent *e;
	unsigned long long ts;
	DIR *d;

	*out = UINT64_MAX;
	snprintf(path, sizeof(path), "%s/txn", dir);
	if ((d = opendir(path)) == NULL)
		return error_set(errno == ENOENT ? PERC_ENOTDB : PERC_EIO,
		    "cannot list the journals in '%s': %s", path,
		    strerror(errno));
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == 'p' && e->d_name[1] >= '1' &&
		    e->d_name[1] <= '9') {
			snprintf(path, sizeof(path), "%s/txn/%s", dir,
			    e->d_name);
			if ((ts = owner_oldest(path)) < floor)
				ts = floor;
			if (ts < *out)
				*out = ts;
			continue;
		}
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		errno = 0;
		ts = strtoull(e->d_name, &end, 10);
		if (*end != '\0' || errno != 0 || ts >= *out || ts < floor)
			continue;
		snprintf(path, sizeof(path), "%s/txn/%s", dir, e->d_name);
		if (!abandoned_commit(path))
			*out = ts;
	}
	closedir(d);
	return 0;
}

/*
 * Call fn for each journal in dir of a commit that began and whose
 * owner is gone, with its token taken, so that no commit or abort of
 * it runs until fn returns; a non-zero return stops the walk.  The
 * journal of a transaction that has not begun to commit is never one:
 * no process holds its token between the commands that use it, and it
 * stays open until a command finishes it.
 */
int
journal_each_abandoned(const char *dir,
    int (*fn)(struct journal *j, void *arg), void *arg)
{
	char path[4096];
	struct journal j;
	struct dirent *e;
	DIR *d;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/txn", dir);
	if ((d = opendir(path)) == NULL)
		return error_set(errno == ENOENT ? PERC_ENOTDB : PERC_EIO,
		    "cannot list the journals in '%s': %s", path,
		    strerror(errno));
	while (rc == 0 && (e = readdir(d)) != NULL) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9' ||
		    journal_open(&j, dir, e->d_name) < 0)
			continue;
		if (!j.read_only && flock(j.fd, LOCK_EX | LOCK_NB) == 0) {
			j.token = 1;
			if (!journal_gone(&j) && commit_marked(j.fd))
				rc = fn(&j, arg);
		}
		journal_close(&j);
	}
	closedir(d);
	return rc;
}

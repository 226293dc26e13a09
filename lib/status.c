/*
 * lib/status.c - perc status: the state of a data directory on one
 * screen, and its open transactions with whether their process lives.
 *
 * The open transactions are the journals in DIR/txn.  A transaction a
 * process keeps in memory (a shell's, an observer's: owner.c) has no
 * journal and is not listed; while its process lives it holds gc back,
 * and oldest_open_start, which is gc's view, counts it.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>

#include "buf.h"
#include "clock.h"
#include "db.h"
#include "error.h"
#include "escape.h"
#include "gc.h"
#include "journal.h"
#include "timestamp.h"

void
perc_db_begun_by(perc_db *db, long pid)
{
	db->begun_by = pid;
}

static int
count_lock(void *arg, perc_bytes row, perc_bytes col,
    const struct lock_rec *lock)
{
	(void)row;
	(void)col;
	(void)lock;
	++*(uint64_t *)arg;
	return 0;
}

static int
count_dirty(const perc_notify *n, void *arg)
{
	(void)n;
	++*(uint64_t *)arg;
	return 0;
}

static int
ts_cmp(const void *a, const void *b)
{
	perc_ts x = *(const perc_ts *)a, y = *(const perc_ts *)b;

	return x < y ? -1 : x > y;
}

/* The start timestamps of the journals in dir, ascending. */
static int
list_journals(perc_ts **out, size_t *n, const char *dir)
{
	char path[4096], *end;
	unsigned long long ts;
	size_t cap = 0;
	struct dirent *e;
	perc_ts *grown;
	DIR *d;
	int rc = 0;

	*out = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "%s/txn", dir);
	if ((d = opendir(path)) == NULL)
		return error_set(PERC_EIO, "cannot list the journals in '%s': "
		    "%s", path, strerror(errno));
	while (rc == 0 && (e = readdir(d)) != NULL) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		errno = 0;
		ts = strtoull(e->d_name, &end, 10);
		if (*end != '\0' || errno != 0)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			if ((grown = realloc(*out, cap * sizeof(*grown))) ==
			    NULL) {
				rc = error_set(PERC_EIO, "out of memory");
				break;
			}
			*out = grown;
		}
		(*out)[(*n)++] = ts;
	}
	closedir(d);
	if (rc < 0) {
		free(*out);
		*out = NULL;
		*n = 0;
		return rc;
	}
	if (*n > 1)
		qsort(*out, *n, sizeof(**out), ts_cmp);
	return 0;
}

/* One KEY VALUE line for fn, VALUE made by printf. */
static int
say(int (*fn)(const char *, const char *, void *), void *arg,
    const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int
say(int (*fn)(const char *, const char *, void *), void *arg,
    const char *key, const char *fmt, ...)
{
	char value[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(value, sizeof(value), fmt, ap);
	va_end(ap);
	return fn(key, value, arg);
}


/* log_hold: the oldest hold on gc (perc log), TS TAB SECONDS_LEFT. */
static int
say_log_hold(perc_db *db, int (*fn)(const char *key, const char *value,
    void *arg), void *arg)
{
	perc_ts ts;
	int64_t left;
	int rc;

	if ((rc = gc_hold_oldest(&ts, &left, db->dir)) < 0)
		return rc;
	if (ts == UINT64_MAX)
		return fn("log_hold", "none", arg);
	return say(fn, arg, "log_hold", "%" PRIu64 "\t%" PRId64, ts,
	    (left + 999) / 1000);
}

/* observed: COLUMN<TAB>strong|weak<TAB>DIRTY_CELLS, one line a column,
   the strong ones first. */
static int
say_observed(perc_db *db, int (*fn)(const char *, const char *, void *),
    void *arg)
{
	const struct observed *o = &db->observed;
	perc_buf line = PERC_BUF_INIT;
	uint64_t dirty;
	perc_bytes col;
	size_t i;
	int rc = 0, weak;

	for (i = 0; i < o->nstrong + o->nweak && rc == 0; i++) {
		weak = i >= o->nstrong;
		col = buf_bytes(weak ? &o->weak[i - o->nstrong] : &o->strong[i]);
		dirty = 0;
		buf_reset(&line);
		if ((rc = perc_notify_scan(db, &col, count_dirty, &dirty)) ==
		    0 && (rc = escape_field(&line, col)) == 0 &&
		    (rc = buf_addf(&line, "\t%s\t%" PRIu64, weak ? "weak" :
		    "strong", dirty)) == 0)
			rc = fn("observed", line.data, arg);
	}
	perc_buf_dispose(&line);
	return rc;
}

/* server: a LevelDB directory's store server, its process id or none. */
static int
say_server(perc_db *db, int (*fn)(const char *key, const char *value,
    void *arg), void *arg)
{
	long pid;
	int rc;

	if ((rc = store_server_pid(db->dir, &pid)) < 0)
		return rc;
	return rc == 0 ? fn("server", "none", arg) :
	    say(fn, arg, "server", "%ld", pid);
}

int
perc_status(perc_db *db, int (*fn)(const char *key, const char *value,
    void *arg), void *arg)
{
	perc_buf url = PERC_BUF_INIT;
	perc_ts *open, oldest, sp = 0;
	uint64_t locks = 0;
	size_t nopen;
	int rc;

	if (db->store_url != NULL &&
	    (rc = store_url_public(&url, db->store_url)) < 0)
		return rc;
	rc = fn("store", db->store_url != NULL ? url.data :
	    db->store->ops->name, arg);
	perc_buf_dispose(&url);
	if (rc != 0 || (rc = list_journals(&open, &nopen, db->dir)) < 0)
		return rc;
	free(open);
	if ((rc = say(fn, arg, "open_transactions", "%zu", nopen)) != 0 ||
	    (rc = journal_oldest(&oldest, db->dir, gc_open_floor())) < 0 ||
	    (rc = oldest == UINT64_MAX ? fn("oldest_open_start", "none", arg) :
	    say(fn, arg, "oldest_open_start", "%" PRIu64, oldest)) != 0)
		return rc;
	if ((rc = db_acquire(db, clock_deadline(db->timeout_ms))) < 0)
		return rc;
	if ((rc = db->store->ops->locks(db->store, count_lock, &locks)) == 0)
		rc = db->store->ops->safe_point(db->store, &sp);
	db_release(db);
	/* after the walk: the server that served it, if one did */
	if (rc < 0 ||
	    (db->store_url == NULL && (rc = say_server(db, fn, arg)) != 0) ||
	    (rc = say(fn, arg, "locks", "%" PRIu64, locks)) != 0 ||
	    (rc = say(fn, arg, "safe_point", "%" PRIu64, sp)) != 0 ||
	    (rc = say_log_hold(db, fn, arg)) != 0)
		return rc;
	return say_observed(db, fn, arg);
}

/*
 * One journal as perc_status_transactions tells it.  Its process lives
 * while it holds the journal's token (it commits or appends now), or,
 * unless a commit of it began and was cut short, while the process the
 * transaction belongs to lives (owner.h).  WRITES is -1 when the
 * journal cannot be read whole.
 */
static int
describe(perc_open_txn *out, perc_db *db, perc_ts start_ts)
{
	struct writeset ws;
	struct journal j;
	char handle[24];
	int rc, token;

	snprintf(handle, sizeof(handle), "%" PRIu64, start_ts);
	if ((rc = journal_open(&j, db->dir, handle)) < 0)
		return rc;
	token = flock(j.fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
	memset(out, 0, sizeof(*out));
	out->start_ts = start_ts;
	out->age_ms = clock_wall_ms() - ts_wall_ms(start_ts);
	out->writes = -1;
	out->alive = token || owner_begun_alive(j.path);
	if (journal_load(&ws, &j) == 0) {
		out->writes = (int64_t)(ws.n + ws.nnotes);
		out->alive = token || (!ws.commit_begun &&
		    owner_begun_alive(j.path));
		writeset_dispose(&ws);
	}
	journal_close(&j);
	return 0;
}

int
perc_status_transactions(perc_db *db, int (*fn)(const perc_open_txn *txn,
    void *arg), void *arg)
{
	char handle[24];
	perc_open_txn t;
	perc_ts *open;
	size_t n, i;
	int rc;

	if ((rc = list_journals(&open, &n, db->dir)) < 0)
		return rc;
	for (i = 0; i < n && rc == 0; i++) {
		/* One finished meanwhile is no longer open: passed over. */
		if ((rc = describe(&t, db, open[i])) == PERC_ENOTXN) {
			rc = 0;
			continue;
		}
		snprintf(handle, sizeof(handle), "%" PRIu64, open[i]);
		t.handle = handle;
		if (rc == 0)
			rc = fn(&t, arg);
	}
	free(open);
	return rc;
}

/*
 * lib/load.c - perc_load: cells in scan's TSV form, written in
 * transactions of a given number of lines.
 *
 * A batch's write set is built in memory, as journal_load would build
 * it, and committed from there (txn->bulk): going through the
 * journal, a flock, a check of its tail and a write(2) per cell and
 * then reading it all back, would cost a load more than its commit.
 * The transaction still has its journal, created when the batch is
 * parsed whole: its flock is the owner's token while the commit runs,
 * and its commit mark is written before the first prewrite, as for any
 * commit.  So a load killed mid-way leaves what any killed commit
 * leaves: locks that readers and resolve-locks roll back (or forward,
 * past the commit point) by the primary, and a journal without writes,
 * which 'perc abort -t' discards.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "error.h"
#include "escape.h"
#include "txn.h"

/* How often progress hears of the lines read. */
#define LOAD_PROGRESS_LINES 65536

/* A batch this large has the store opened for a bulk writer. */
#define LOAD_BULK_BYTES ((size_t)1 << 20)

struct load {
	perc_db                 *db;
	const perc_load_options *opts;
	struct writeset          ws;        /* the batch being read */
	size_t                   cap;       /* room in ws.w */
	perc_buf                 field[3];  /* ROW, COLUMN, VALUE unescaped */
	uint64_t                 line;      /* lines read so far */
	uint64_t                 first;     /* first line of the batch */
	uint64_t                 done;      /* lines committed */
	size_t                   bytes;     /* of the batch's cells */
	volatile int            *stop;      /* the caller's, or NULL */
};

/* Has the caller asked the load to stop (perc.h)? */
static int
stopped(const struct load *ld)
{
	return ld->stop != NULL && *ld->stop;
}

/* What a failure on the current batch leaves behind, for its message. */
static const char *
load_left(const struct load *ld, char *buf, size_t size)
{
	if (ld->first == 1)
		return "nothing was written";
	if (ld->first == 2)
		return "line 1 was committed, nothing from line 2 on";
	snprintf(buf, size, "lines 1-%llu were committed, nothing from line "
	    "%llu on", (unsigned long long)ld->first - 1,
	    (unsigned long long)ld->first);
	return buf;
}

static int
load_malformed(const struct load *ld, const char *why)
{
	char left[96];

	return error_set(PERC_EUSAGE, "line %llu: %s; %s",
	    (unsigned long long)ld->line, why,
	    load_left(ld, left, sizeof(left)));
}

/*
 * Parse one line (len bytes, without its newline) into a put in the
 * batch: exactly three tab-separated fields, each unescaped.
 */
static int
load_line(struct load *ld, const char *p, size_t len)
{
	static const char *const names[3] = { "ROW", "COLUMN", "VALUE" };
	const char *end = p + len, *tab;
	char why[512];
	size_t n = 1, i;
	int rc;

	for (tab = p; (tab = memchr(tab, '\t', (size_t)(end - tab))) != NULL;
	    tab++)
		n++;
	if (n != 3) {
		snprintf(why, sizeof(why), "%zu field%s where "
		    "ROW<TAB>COLUMN<TAB>VALUE needs 3", n, n == 1 ? "" : "s");
		return load_malformed(ld, why);
	}
	for (i = 0; i < 3; i++) {
		tab = i < 2 ? memchr(p, '\t', (size_t)(end - p)) : end;
		buf_reset(&ld->field[i]);
		if ((rc = unescape_field(&ld->field[i], p,
		    (size_t)(tab - p))) < 0) {
			if (rc != PERC_EUSAGE)
				return rc;
			snprintf(why, sizeof(why), "%s: %s", names[i],
			    perc_errmsg());
			return load_malformed(ld, why);
		}
		p = tab + 1;
	}
	if (db_refuse_weak(ld->db, buf_bytes(&ld->field[1]), "loaded") < 0) {
		snprintf(why, sizeof(why), "%s", perc_errmsg());
		return load_malformed(ld, why);
	}
	ld->bytes += ld->field[0].len + ld->field[1].len + ld->field[2].len;
	return writeset_append(&ld->ws, &ld->cap, OP_PUT,
	    buf_bytes(&ld->field[0]), buf_bytes(&ld->field[1]),
	    buf_bytes(&ld->field[2]));
}

/*
 * Commit the batch read so far as one transaction, begun only now,
 * with the write set handed over from memory.  On a failure nothing of
 * it stays open, as with perc_set.
 */
static int
load_commit(struct load *ld)
{
	perc_txn *txn = NULL;
	perc_ts ts = 0;
	char left[96];
	int rc;

	writeset_fold(&ld->ws);
	if ((rc = perc_txn_begin(&txn, ld->db)) < 0)
		return rc;
	txn->writes = ld->ws;
	txn->loaded = txn->bulk = 1;
	memset(&ld->ws, 0, sizeof(ld->ws));
	ld->cap = 0;
	ld->db->store->bulk = ld->bytes >= LOAD_BULK_BYTES;
	ld->bytes = 0;
	rc = perc_txn_commit(&ts, txn);
	ld->db->store->bulk = 0;
	if (rc == PERC_ETIMEOUT || (rc < 0 && rc != PERC_ECONFLICT &&
	    rc != PERC_ENOTXN))
		perc_txn_abort(txn);
	perc_txn_free(txn);
	if (rc < 0)
		return error_set(rc, "%s (lines %llu-%llu; %s)", perc_errmsg(),
		    (unsigned long long)ld->first,
		    (unsigned long long)ld->line,
		    load_left(ld, left, sizeof(left)));
	ld->done = ld->line;
	ld->first = ld->line + 1;
	if (ld->opts->committed != NULL &&
	    (rc = ld->opts->committed(ts, ld->line, ld->opts->arg)) != 0)
		return rc;
	if (ld->opts->progress != NULL)
		ld->opts->progress(ld->line, ld->done, ld->opts->arg);
	return 0;
}

static int
load_run(struct load *ld, FILE *in)
{
	char *line = NULL;
	size_t linecap = 0;
	ssize_t len;
	char left[96];
	int rc = 0;

	while (rc == 0 && !stopped(ld) &&
	    (len = getline(&line, &linecap, in)) >= 0) {
		ld->line++;
		if (len > 0 && line[len - 1] == '\n')
			len--;
		if ((rc = load_line(ld, line, (size_t)len)) < 0)
			break;
		if (ld->opts->batch != 0 &&
		    ld->line - ld->first + 1 >= ld->opts->batch)
			rc = load_commit(ld);
		else if (ld->opts->progress != NULL &&
		    ld->line % LOAD_PROGRESS_LINES == 0)
			ld->opts->progress(ld->line, ld->done, ld->opts->arg);
	}
	/* Asked to stop with lines left: the batch being read is dropped. */
	if (rc == 0 && stopped(ld) && (ld->ws.n > 0 || !feof(in)))
		rc = 1;
	else if (rc == 0 && ferror(in))
		rc = error_set(PERC_EIO, "cannot read the cells to load after "
		    "line %llu: %s; %s", (unsigned long long)ld->line,
		    strerror(errno), load_left(ld, left, sizeof(left)));
	if (rc == 0 && ld->ws.n > 0)
		rc = load_commit(ld);
	free(line);
	return rc;
}

int
perc_load(perc_db *db, FILE *in, const perc_load_options *opts)
{
	static const perc_load_options defaults = PERC_LOAD_OPTIONS_INIT;
	struct load ld;
	size_t i;
	int rc;

	memset(&ld, 0, sizeof(ld));
	ld.db = db;
	ld.opts = opts != NULL ? opts : &defaults;
	ld.first = 1;
	if (ld.opts->version != 1 &&
	    ld.opts->version != PERC_LOAD_OPTIONS_VERSION)
		return error_set(PERC_EUSAGE, "perc_load: options of version "
		    "%u; this library knows versions 1 to %u",
		    ld.opts->version, PERC_LOAD_OPTIONS_VERSION);
	ld.stop = ld.opts->version >= 2 ? ld.opts->stop : NULL;
	rc = load_run(&ld, in);
	writeset_dispose(&ld.ws);
	for (i = 0; i < 3; i++)
		perc_buf_dispose(&ld.field[i]);
	return rc;
}

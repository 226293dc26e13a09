/*
 * lib/db.c - data directories: create one, open one, and its config.
 *
 * DIR/config is text, one setting a line: "format N" (the layout
 * version, refused when unknown), "store URL" when the cells live in a
 * Redis store rather than in DIR, "observe COLUMN" for each observed
 * column and "observe-weak COLUMN" for each weakly observed one,
 * escaped as in TSV output.  It is written last by init and
 * replaced atomically, so its presence is what makes DIR a data
 * directory.
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
#include "db.h"
#include "disk.h"
#include "error.h"
#include "escape.h"
#include "gc.h"
#include "journal.h"
#include "owner.h"

/*
 * 2: a LevelDB store's cells may have heads (codec.h), which a perc of
 * format 1 would take for damaged locks.  A format 1 directory is
 * still read, and marked 2 by the first perc that takes its store to
 * write (db_acquire).
 */
#define FORMAT_VERSION 2
#define FORMAT_OLDEST  1
/*
 * 3: a config that names weakly observed columns, whose cells a perc
 * of format 2 would let be written (and would not show as dirty when
 * their notification is pending).  Written only when there are some.
 */
#define FORMAT_WEAK    3
/*
 * 4 (FORMAT_LOCK_INDEX, store.h): a LevelDB store with its lock index,
 * which a perc of format 3 would not keep.  Written for every LevelDB
 * directory, once its index is built; a Redis directory's stays 2 or 3.
 */
#define CONFIG_MAX     (1 << 20)

static void
dir_path(char *out, size_t size, const char *dir, const char *name)
{
	snprintf(out, size, "%s/%s", dir, name);
}

/*
 * Whoever gets here may have forgotten to say which directory: the
 * message names both ways of saying it, and what path is instead.
 */
static int
not_a_db(const char *path)
{
	struct stat st;

	if (stat(path, &st) == 0 && !S_ISDIR(st.st_mode))
		return error_set(PERC_ENOTDB, "'%s' is a file, not a perc "
		    "data directory; name the directory with -d DIR or "
		    "PERC_DIR", path);
	return error_set(PERC_ENOTDB, "'%s' is not a perc data directory; "
	    "name yours with -d DIR or PERC_DIR, or create one with "
	    "'perc init %s'", path, path);
}

static void
free_cols(perc_buf *cols, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		perc_buf_dispose(&cols[i]);
	free(cols);
}

static void
free_observed(struct observed *o)
{
	free_cols(o->strong, o->nstrong);
	free_cols(o->weak, o->nweak);
	memset(o, 0, sizeof(*o));
}

/* Add a copy of col at the end of the list cols of *n. */
static int
add_col(perc_buf **cols, size_t *n, perc_bytes col)
{
	perc_buf *grown;

	if ((grown = realloc(*cols, (*n + 1) * sizeof(*grown))) == NULL)
		return error_set(PERC_EIO, "out of memory");
	*cols = grown;
	memset(&grown[*n], 0, sizeof(*grown));
	return buf_addb(&grown[(*n)++], col);
}

static int
has_col(const perc_buf *cols, size_t n, perc_bytes col)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (bytes_eq(buf_bytes(&cols[i]), col))
			return 1;
	return 0;
}

/* An "observe" or "observe-weak" line's column, escaped, into *o. */
static int
read_observed(struct observed *o, const char *text, int weak)
{
	perc_buf col = PERC_BUF_INIT;
	int rc;

	if ((rc = unescape_field(&col, text, strlen(text))) == 0)
		rc = weak ? add_col(&o->weak, &o->nweak, buf_bytes(&col)) :
		    add_col(&o->strong, &o->nstrong, buf_bytes(&col));
	perc_buf_dispose(&col);
	return rc;
}

/*
 * Parse DIR/config into the observed columns and, when store is not
 * NULL, the store's URL (NULL for the LevelDB store in DIR); *st, when
 * not NULL, tells which version of the file was read, and *version,
 * when not NULL, the format it names.
 */
static int
read_config(struct observed *o, char **store, const char *dir,
    struct stat *st, int *version)
{
	char path[4096], text[CONFIG_MAX + 1], *line, *next;
	int fd, rc = 0, format = 0;
	ssize_t n;

	memset(o, 0, sizeof(*o));
	if (store != NULL)
		*store = NULL;
	dir_path(path, sizeof(path), dir, "config");
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return not_a_db(dir);
		return error_set(PERC_EIO, "cannot read '%s': %s", path,
		    strerror(errno));
	}
	if (st != NULL && fstat(fd, st) != 0)
		memset(st, 0, sizeof(*st));
	n = read(fd, text, CONFIG_MAX + 1);
	close(fd);
	if (n < 0 || n > CONFIG_MAX || memchr(text, '\0', (size_t)n))
		goto damaged;
	text[n] = '\0';
	for (line = text; *line != '\0'; line = next) {
		if ((next = strchr(line, '\n')) == NULL)
			goto damaged;   /* a torn last line */
		*next++ = '\0';
		if (line[0] == '#' || line[0] == '\0')
			continue;
		if (strncmp(line, "format ", 7) == 0) {
			format = atoi(line + 7);
			if (format < FORMAT_OLDEST ||
			    format > FORMAT_LOCK_INDEX) {
				rc = error_set(PERC_ENOTDB, "'%s' has data "
				    "format '%s', which this perc (format %d) "
				    "does not know; use a matching perc", dir,
				    line + 7, FORMAT_LOCK_INDEX);
				goto fail;
			}
		} else if (strncmp(line, "store ", 6) == 0 && format) {
			if (store != NULL && *store == NULL &&
			    (*store = strdup(line + 6)) == NULL)
				goto damaged;
		} else if (strncmp(line, "observe ", 8) == 0 && format) {
			if (read_observed(o, line + 8, 0) < 0)
				goto damaged;
		} else if (strncmp(line, "observe-weak ", 13) == 0 && format) {
			if (read_observed(o, line + 13, 1) < 0)
				goto damaged;
		} else
			goto damaged;
	}
	if (format && version != NULL)
		*version = format;
	if (format)
		return 0;
damaged:
	rc = error_set(PERC_EIO, "the config file '%s' is damaged; restore "
	    "it from a backup (it holds 'format %d' and the observed "
	    "columns)", path, FORMAT_VERSION);
fail:
	free_observed(o);
	if (store != NULL) {
		free(*store);
		*store = NULL;
	}
	return rc;
}

/*
 * The format a config names: what its store (NULL: LevelDB) and
 * observed columns need; a LevelDB store's lock index only when it is
 * known to be whole (indexed).
 */
static int
config_format(const char *store, const struct observed *o, int indexed)
{
	if (store == NULL && indexed)
		return FORMAT_LOCK_INDEX;
	return o->nweak > 0 ? FORMAT_WEAK : FORMAT_VERSION;
}

/*
 * Replace DIR/config atomically with the given observed columns: write,
 * fsync, rename, fsync the directory, so that a power cut leaves the
 * old config or the new one, and once init returns, the new one.
 */
static int
write_config(const char *dir, const char *store, const struct observed *o,
    int format)
{
	perc_buf text = PERC_BUF_INIT;
	char path[4096], tmp[4096];
	size_t i;
	int fd = -1, rc, saved;

	dir_path(path, sizeof(path), dir, "config");
	dir_path(tmp, sizeof(tmp), dir, "config.tmp");
	rc = buf_addf(&text, "# perc data directory\nformat %d\n", format);
	if (rc == 0 && store != NULL)
		rc = buf_addf(&text, "store %s\n", store);
	for (i = 0; i < o->nstrong + o->nweak && rc == 0; i++) {
		if ((rc = buf_addf(&text, i < o->nstrong ? "observe " :
		    "observe-weak ")) == 0 &&
		    (rc = escape_field(&text, buf_bytes(i < o->nstrong ?
		    &o->strong[i] : &o->weak[i - o->nstrong]))) == 0)
			rc = buf_add(&text, "\n", 1);
	}
	if (rc < 0)
		goto done;
	/* A store URL with a password is for the owner's eyes only. */
	(void)unlink(tmp);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    store != NULL && strchr(store, '@') != NULL ? 0600 : 0644)) < 0 ||
	    write(fd, text.data, text.len) != (ssize_t)text.len ||
	    fsync(fd) != 0 || rename(tmp, path) != 0 || disk_sync_dir(dir) != 0) {
		saved = errno;
		(void)unlink(tmp);
		rc = saved == ENOSPC ? disk_full_error(dir, "cannot write the "
		    "config file") : error_set(PERC_EIO, "cannot write '%s': "
		    "%s; check that the data directory is writable", path,
		    strerror(saved));
		errno = saved;
	}
done:
	if (fd >= 0)
		close(fd);
	perc_buf_dispose(&text);
	return rc;
}

/*
 * mkdir -p path.  *top is set to the first directory it made, whose
 * parent must be synced for the new ones to outlast a power cut, or
 * left empty if path existed.
 */
static int
mkdir_p(const char *path, char *top, size_t topsz)
{
	char tmp[4096], *p;
	int end;

	top[0] = '\0';
	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp))
		return -1;
	for (p = tmp + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		end = *p == '\0' || p[1] == '\0';
		*p = '\0';
		if (mkdir(tmp, 0755) == 0) {
			if (top[0] == '\0')
				snprintf(top, topsz, "%s", tmp);
		} else if (errno != EEXIST)
			return -1;
		if (end)
			return 0;
		*p = '/';
	}
}

/*
 * Make a new data directory durable: fsync it, then every directory
 * from it up to the parent of top (the first one mkdir_p made), so that
 * a power cut after init returns cannot undo any of their entries.
 */
static int
sync_new_dir(const char *path, const char *top)
{
	char walk[4096], *slash;
	int rc = disk_sync_dir(path), done = top[0] == '\0';

	snprintf(walk, sizeof(walk), "%s", path);
	while (rc == 0 && !done) {
		done = strcmp(walk, top) == 0;
		if ((slash = strrchr(walk, '/')) == NULL) {
			rc = disk_sync_dir(".");
			done = 1;
		} else {
			slash[slash == walk] = '\0';    /* "/x" -> "/" */
			rc = disk_sync_dir(walk);
		}
	}
	return rc;
}

/*
 * May init build a data directory in path?  Yes when it is empty, or
 * when an init was interrupted there: init leaves its mark, INIT_MARK,
 * until the config is written.  A data directory that lost its config
 * has no mark and is refused, so that its oracle is never reset.
 */
#define INIT_MARK ".perc-init"

static int
dir_is_free(const char *path)
{
	char mark[4200];
	struct dirent *e;
	DIR *d;
	int empty = 1;

	dir_path(mark, sizeof(mark), path, INIT_MARK);
	if (access(mark, F_OK) == 0)
		return 1;
	if ((d = opendir(path)) == NULL)
		return 0;
	while (empty && (e = readdir(d)) != NULL)
		empty = strcmp(e->d_name, ".") == 0 ||
		    strcmp(e->d_name, "..") == 0;
	closedir(d);
	return empty;
}

/*
 * Add the columns of strong (n of them) and of weak (nweak) that o
 * lacks; *changed says if any.  A column cannot be both: PERC_EUSAGE.
 */
static int
add_observed(struct observed *o, const perc_bytes *strong, size_t n,
    const perc_bytes *weak, size_t nweak, int *changed)
{
	size_t i;
	int rc;

	*changed = 0;
	for (i = 0; i < n + nweak; i++) {
		perc_bytes col = i < n ? strong[i] : weak[i - n];
		int is_weak = i >= n;

		if (has_col(is_weak ? o->strong : o->weak, is_weak ?
		    o->nstrong : o->nweak, col))
			return error_set(PERC_EUSAGE, "column '%s' cannot be "
			    "both strongly and weakly observed (--observe and "
			    "--observe-weak); choose one", error_quote(col));
		if (has_col(is_weak ? o->weak : o->strong, is_weak ?
		    o->nweak : o->nstrong, col))
			continue;
		if ((rc = is_weak ? add_col(&o->weak, &o->nweak, col) :
		    add_col(&o->strong, &o->nstrong, col)) < 0)
			return rc;
		*changed = 1;
	}
	return 0;
}

static int
init_existing(const char *path, const char *store_url,
    const perc_bytes *strong, size_t n, const perc_bytes *weak, size_t nweak)
{
	perc_buf shown = PERC_BUF_INIT, asked = PERC_BUF_INIT;
	struct observed o;
	perc_db *db = NULL;
	char *store = NULL;
	int rc, changed;

	/* Hold the store so no commit reads a half-changed column set. */
	if ((rc = perc_db_open(&db, path)) < 0 ||
	    (rc = db_acquire(db, clock_deadline(db->timeout_ms))) < 0)
		goto done;
	if ((rc = read_config(&o, &store, path, NULL, NULL)) < 0)
		goto done;
	if (store_url != NULL && (store == NULL ||
	    strcmp(store, store_url) != 0) &&
	    (rc = store_url_public(&shown, store != NULL ? store : "")) ==
	    0 && (rc = store_url_public(&asked, store_url)) == 0)
		rc = error_set(PERC_EUSAGE, "'%s' is already a data directory "
		    "whose cells are in %s; --store cannot move them: init "
		    "a new directory with --store %s", path,
		    store != NULL ? shown.data : "the directory itself",
		    asked.data);
	else if ((rc = add_observed(&o, strong, n, weak, nweak,
	    &changed)) == 0 && changed)
		rc = write_config(path, store, &o, config_format(store, &o,
		    db->format >= FORMAT_LOCK_INDEX));
	free_observed(&o);
	free(store);
done:
	perc_buf_dispose(&shown);
	perc_buf_dispose(&asked);
	perc_db_close(db);
	return rc;
}

/* A URL goes into the config as one line: printable, no spaces. */
static int
check_store_url(const char *url)
{
	perc_buf shown = PERC_BUF_INIT;
	const char *p;
	int rc = 0;

	for (p = url; *p != '\0' && rc == 0; p++)
		if ((*p <= ' ' || *p == 0x7f) &&
		    (rc = store_url_public(&shown, url)) == 0)
			rc = error_set(PERC_EUSAGE, "the store URL '%s' has "
			    "a space or control character; give redis://"
			    "[USER:PASSWORD@]HOST[:PORT][,HOST[:PORT]]..."
			    "[/TABLE], with a '%%' in USER or PASSWORD as %%25 "
			    "and other bytes as %%XX", error_quote(buf_bytes(
			    &shown)));
	perc_buf_dispose(&shown);
	return rc;
}

int
perc_db_init(const char *path, const perc_bytes *observe, size_t n)
{
	return perc_db_init_store(path, NULL, observe, n);
}

/*
 * The stores, by the scheme of the store URL in the config: a data
 * directory without one keeps its cells in LevelDB, inside it.
 */
struct backend {
	const char *name;       /* as the store's ops->name */
	const char *scheme;     /* its URLs' beginning; NULL: no URL */
	int       (*create)(const char *url, const struct store_env *env);
	int       (*open)(struct store **out, const char *url,
	                  const struct store_env *env);
};

static const struct backend backends[] = {
	{ "leveldb", NULL, store_leveldb_create, store_leveldb_open },
	{ "redis", "redis://", store_redis_create, store_redis_open },
};

static int
backend_of(const struct backend **out, const char *url)
{
	perc_buf shown = PERC_BUF_INIT;
	size_t i;
	int rc;

	for (i = 0; i < sizeof(backends) / sizeof(backends[0]); i++) {
		*out = &backends[i];
		if (url == NULL ? (*out)->scheme == NULL : (*out)->scheme !=
		    NULL && strncmp(url, (*out)->scheme,
		    strlen((*out)->scheme)) == 0)
			return 0;
	}
	if ((rc = store_url_public(&shown, url)) == 0)
		rc = error_set(PERC_EUSAGE, "bad store URL '%s': it should "
		    "read redis://[USER:PASSWORD@]HOST[:PORT][,HOST[:PORT]]..."
		    "[/TABLE]", error_quote(buf_bytes(&shown)));
	perc_buf_dispose(&shown);
	return rc;
}

/*
 * PERC_FAILPOINT=NAME:power-cut (failpoint.c) asks for a power cut: the
 * store is told at open, to keep what one would lose (store.h).
 */
static int
power_cut_asked(void)
{
	const char *fp = getenv("PERC_FAILPOINT");

	return fp != NULL && strstr(fp, ":power-cut") != NULL;
}

/* What a store of data directory dir is handed from above (store.h). */
static void
store_env_init(struct store_env *env, const char *dir, int64_t timeout_ms)
{
	const char *nosync = getenv("PERC_UNSAFE_NOSYNC");

	env->dir = dir;
	env->timeout_ms = timeout_ms;
	env->power_cuts = power_cut_asked();
	env->nosync = nosync != NULL && strcmp(nosync, "1") == 0;
	env->owner_alive = journal_owner_alive;
}

/* Create the store of the new data directory path. */
static int
create_store(const char *path, const char *store_url)
{
	const struct backend *be;
	struct store_env env;
	int rc;

	if ((rc = backend_of(&be, store_url)) < 0)
		return rc;
	store_env_init(&env, path, clock_env_ms("PERC_LOCK_TIMEOUT", 10000));
	return be->create(store_url, &env);
}

int
perc_db_init_store(const char *path, const char *store_url,
    const perc_bytes *observe, size_t n)
{
	return perc_db_init_observed(path, store_url, observe, n, NULL, 0);
}

/* Make path a new data directory with the observed columns o. */
static int
init_new(const char *path, const char *store_url, const struct observed *o)
{
	char sub[4096], top[4096];
	int fd, rc;

	if (mkdir_p(path, top, sizeof(top)) != 0)
		return error_set(errno == ENOTDIR || errno == EEXIST ?
		    PERC_ENOTDB : PERC_EIO, "cannot create the directory "
		    "'%s': %s", path, strerror(errno));
	if (!dir_is_free(path))
		return error_set(PERC_ENOTDB, "'%s' is not empty and not a "
		    "perc data directory (if it was one, its config file is "
		    "gone: restore it); choose an empty or new directory",
		    path);
	/*
	 * The mark goes first and unsynced: the oracle's directory sync
	 * below makes it durable with everything before it, so a power cut
	 * that keeps any part of this init keeps the mark too.
	 */
	dir_path(sub, sizeof(sub), path, INIT_MARK);
	if ((fd = open(sub, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0)
		return error_set(PERC_EIO, "cannot create '%s': %s", sub,
		    strerror(errno));
	close(fd);
	/* Synced with the rest by sync_new_dir below: a journal needs it. */
	dir_path(sub, sizeof(sub), path, "txn");
	if (mkdir(sub, 0755) != 0 && errno != EEXIST)
		return error_set(PERC_EIO, "cannot create '%s': %s", sub,
		    strerror(errno));
	if ((rc = create_store(path, store_url)) < 0)
		return rc;
	rc = write_config(path, store_url, o, config_format(store_url, o, 1));
	dir_path(sub, sizeof(sub), path, INIT_MARK);
	if (rc == 0 && unlink(sub) != 0)
		rc = error_set(PERC_EIO, "cannot remove '%s': %s", sub,
		    strerror(errno));
	if (rc == 0 && sync_new_dir(path, top) != 0)
		rc = error_set(PERC_EIO, "cannot sync the new data directory "
		    "'%s': %s", path, strerror(errno));
	return rc;
}

int
perc_db_init_observed(const char *path, const char *store_url,
    const perc_bytes *strong, size_t n, const perc_bytes *weak, size_t nweak)
{
	char config[4096];
	struct observed o;
	int rc, changed;

	if ((rc = clock_env_check()) < 0 ||
	    (store_url != NULL && (rc = check_store_url(store_url)) < 0))
		return rc;
	dir_path(config, sizeof(config), path, "config");
	if (access(config, F_OK) == 0)
		return init_existing(path, store_url, strong, n, weak, nweak);
	/* A column named both ways is refused before anything is made. */
	memset(&o, 0, sizeof(o));
	if ((rc = add_observed(&o, strong, n, weak, nweak, &changed)) == 0)
		rc = init_new(path, store_url, &o);
	free_observed(&o);
	return rc;
}

int
perc_db_open(perc_db **out, const char *path)
{
	const struct backend *be;
	struct store_env env;
	perc_db *db;
	struct stat st;
	char *store = NULL;
	int rc;

	*out = NULL;
	if ((rc = clock_env_check()) < 0)
		return rc;
	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		return not_a_db(path);
	if ((db = calloc(1, sizeof(*db))) == NULL ||
	    (db->dir = strdup(path)) == NULL) {
		free(db);
		return error_set(PERC_EIO, "out of memory");
	}
	owner_init(&db->owner);
	db->timeout_ms = clock_env_ms("PERC_LOCK_TIMEOUT", 10000);
	db->ttl_ms = (uint32_t)clock_env_ms("PERC_LOCK_TTL", 30000);
	if (gethostname(db->host, sizeof(db->host) - 1) != 0)
		strcpy(db->host, "localhost");
	if ((rc = read_config(&db->observed, &store, path, &db->config_st,
	    &db->format)) == 0 && (rc = backend_of(&be, store)) == 0) {
		store_env_init(&env, db->dir, db->timeout_ms);
		rc = be->open(&db->store, store, &env);
	}
	db->store_url = store;
	if (rc < 0) {
		perc_db_close(db);
		return rc;
	}
	*out = db;
	return 0;
}

void
perc_db_close(perc_db *db)
{
	if (db == NULL)
		return;
	if (db->store != NULL) {
		gc_count_flush(db);
		gc_open_note(db, 1);
		db->store->ops->dispose(db->store);
	}
	owner_close(&db->owner);
	free_observed(&db->observed);
	free(db->store_url);
	free(db->dir);
	free(db);
}

int
db_is_strong(const perc_db *db, perc_bytes col)
{
	return has_col(db->observed.strong, db->observed.nstrong, col);
}

int
db_is_weak(const perc_db *db, perc_bytes col)
{
	return has_col(db->observed.weak, db->observed.nweak, col);
}

int
db_is_observed(const perc_db *db, perc_bytes col)
{
	return db_is_strong(db, col) || db_is_weak(db, col);
}

int
db_refuse_weak(const perc_db *db, perc_bytes col, const char *doing)
{
	if (!db_is_weak(db, col))
		return 0;
	return error_set(PERC_EUSAGE, "column '%s' is weakly observed and "
	    "holds no values, so it cannot be %s; notify a cell of it "
	    "with 'perc notify ROW COLUMN'", error_quote(col), doing);
}

int
db_require_weak(const perc_db *db, perc_bytes col)
{
	if (db_is_weak(db, col))
		return 0;
	if (db_is_strong(db, col))
		return error_set(PERC_EUSAGE, "column '%s' is strongly "
		    "observed: a write to it notifies, and perc notify is "
		    "for weakly observed columns only", error_quote(col));
	return error_set(PERC_EUSAGE, "column '%s' is not weakly observed; "
	    "perc init --observe-weak COLUMN makes one", error_quote(col));
}

/*
 * Mark a config of an older format ours before the store is written,
 * the store's data brought up first (store_ops.upgrade): read it
 * again, whole, and write it back (init --observe, which changes it,
 * holds the store too).  A config that cannot be written, or a store
 * that cannot be brought up, on a full disk, leaves the store
 * read-only, as a full disk does: reads go on, a write says what is
 * wrong, and the next command tries again.  A crash between the two
 * leaves the old format, so the next one brings the store up again.
 */
static void
upgrade_config(perc_db *db, const char *path)
{
	const struct store_ops *ops = db->store->ops;
	struct observed o;
	char *store;
	int rc, format = 0;

	rc = ops->upgrade != NULL ? ops->upgrade(db->store, db->format) : 0;
	if (rc == 0 && (rc = read_config(&o, &store, db->dir, NULL,
	    NULL)) == 0) {
		format = config_format(store, &o, 1);
		rc = write_config(db->dir, store, &o, format);
		free_observed(&o);
		free(store);
	}
	if (rc < 0) {
		db->store->read_only = errno != 0 ? errno : EIO;
		return;
	}
	db->format = format;
	if (stat(path, &db->config_st) != 0)
		memset(&db->config_st, 0, sizeof(db->config_st));
}

/*
 * Take the store.  The config is checked again under it, and read again
 * if init --observe has replaced it (it does so holding the store), so
 * a commit always notifies the columns observed when it writes; one of
 * a format older than the store's data needs is marked up.
 */
int
db_acquire(perc_db *db, int64_t deadline_ms)
{
	char path[4096];
	struct stat st;
	int rc;

	if (db->store->ops->held(db->store))
		return 0;
	if ((rc = db->store->ops->acquire(db->store, deadline_ms)) < 0)
		return rc;
	dir_path(path, sizeof(path), db->dir, "config");
	if (stat(path, &st) != 0 || st.st_ino != db->config_st.st_ino ||
	    st.st_size != db->config_st.st_size ||
	    st.st_mtim.tv_sec != db->config_st.st_mtim.tv_sec ||
	    st.st_mtim.tv_nsec != db->config_st.st_mtim.tv_nsec) {
		free_observed(&db->observed);
		if ((rc = read_config(&db->observed, NULL,
		    db->dir, &db->config_st, &db->format)) < 0) {
			db->store->ops->release(db->store);
			return rc;
		}
	}
	if (db->format < db->store->ops->data_format &&
	    !db->store->read_only)
		upgrade_config(db, path);
	db->store->format = db->format;
	return 0;
}

/*
 * The end of a call's use of the store: let it go unless held, or after
 * a failed write, which the next open must recover from.  A held store
 * goes, for a moment, to any other process that waits for it: the
 * store's pause makes our next acquire let the waiting ones go first.
 */
void
db_release(perc_db *db)
{
	struct store *s = db->store;

	if (!db->held || s->failed) {
		s->ops->release(s);
		return;
	}
	if (s->ops->held(s) && store_waited_for(s)) {
		store_pause(s, clock_deadline(db->timeout_ms));
		s->ops->release(s);
	}
}

int
perc_db_hold(perc_db *db)
{
	int rc;

	if ((rc = db_acquire(db, clock_deadline(db->timeout_ms))) == 0)
		db->held = 1;
	return rc;
}

void
perc_db_keep(perc_db *db)
{
	db->held = 1;
}

void
perc_db_release(perc_db *db)
{
	db->held = 0;
	db->store->ops->release(db->store);
}

int
db_begin_ts(perc_ts *out, perc_db *db)
{
	struct store *s = db->store;
	int rc;

	if (!store_shared(s))
		return perc_ts_next(out, db, 1);
	/*
	 * The store notes the start as open in the step that hands it out,
	 * but after a failover of the oracle's master it knows of no older
	 * one this directory has open: publish them all (gc_open_note).
	 */
	if ((rc = store_ts_begin(s, out, clock_deadline(db->timeout_ms)))
	    == 0) {
		if (*out > db->ts_high)
			db->ts_high = *out;
		db->open_unpublished = 1;
	}
	return rc;
}

int
perc_snapshot_ts(perc_ts *out, perc_db *db)
{
	int64_t deadline = clock_deadline(db->timeout_ms);

	int rc;

	if (db->store->read_only)
		return db->store->ops->ts_last(db->store, out, deadline);
	/* On a full disk, read at the last timestamp, as read-only. */
	if ((rc = db->store->ops->ts_next(db->store, out, 1, deadline)) ==
	    PERC_EIO && errno == ENOSPC)
		rc = db->store->ops->ts_last(db->store, out, deadline);
	return rc;
}

/*
 * SPEC: a snapshot never changes once read, so a read at a chosen
 * timestamp (--at) must name one the oracle has handed out already:
 * then every commit still to come takes a timestamp above it, and one
 * that took a timestamp at or below it holds its locks, which a reader
 * waits for.  The last one handed out answers cheaply (ts_last may be
 * above the exact one, but the oracle never hands out what lies below
 * it); above it a fresh timestamp decides, since it is above all of
 * them, and once taken it fixes every snapshot up to it.  PERC_EUSAGE
 * for a timestamp above even that.
 */
int
db_check_at(perc_db *db, perc_ts at)
{
	perc_ts newest;
	int rc;

	if (at <= db->ts_settled || at <= db->ts_high)
		return 0;
	if ((rc = db->store->ops->ts_last(db->store, &newest,
	    clock_deadline(db->timeout_ms))) < 0)
		return rc;
	if (at > newest && (rc = perc_snapshot_ts(&newest, db)) < 0)
		return rc;
	if (newest > db->ts_settled)
		db->ts_settled = newest;
	if (at > newest)
		return error_set(PERC_EUSAGE, "timestamp %" PRIu64 " has not "
		    "been handed out yet (the newest is %" PRIu64 "), and a "
		    "snapshot there could still change; read at a timestamp "
		    "that 'perc ts' or a commit printed", at, newest);
	return 0;
}

void
perc_db_progress(perc_db *db, perc_progress_fn fn, void *arg)
{
	db->progress = fn;
	db->progress_arg = arg;
}

void
db_progress(perc_db *db, const char *counted, uint64_t n)
{
	if (db->progress != NULL)
		db->progress(counted, n, db->progress_arg);
}

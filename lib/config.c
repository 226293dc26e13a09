/*
 * lib/config.c - DIR/config, the file that makes DIR a data directory,
 * and the observed-column sets it names.
 *
 * DIR/config is text, one setting a line: "format N" (the layout
 * version, refused when unknown), "store URL" when the cells live in a
 * Redis store rather than in DIR, "observe COLUMN" for each observed
 * column and "observe-weak COLUMN" for each weakly observed one,
 * escaped as in TSV output.  It is written last by init and
 * replaced atomically, so its presence is what makes DIR a data
 * directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "config.h"
#include "disk.h"
#include "error.h"
#include "escape.h"
#include "store.h"

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
 * 5 (FORMAT_LOG_APART, store.h): a LevelDB store whose change log may
 * hold entries written apart from their commit, which a perc of format
 * 4 would take for damage.  Written for every LevelDB directory, as 4.
 */
#define CONFIG_MAX     (1 << 20)

/*
 * Whoever gets here may have forgotten to say which directory: the
 * message names both ways of saying it, and what path is instead.
 */
int
config_not_a_db(const char *path)
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

void
observed_free(struct observed *o)
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

int
observed_has(const perc_buf *cols, size_t n, perc_bytes col)
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
int
config_read(struct observed *o, char **store, const char *dir,
    struct stat *st, int *version)
{
	char path[4096], text[CONFIG_MAX + 1], *line, *next;
	int fd, rc = 0, format = 0;
	ssize_t n;

	memset(o, 0, sizeof(*o));
	if (store != NULL)
		*store = NULL;
	disk_path(path, sizeof(path), dir, "config");
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return config_not_a_db(dir);
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
			    format > FORMAT_LOG_APART) {
				rc = error_set(PERC_ENOTDB, "'%s' has data "
				    "format '%s', which this perc (format %d) "
				    "does not know; use a matching perc", dir,
				    line + 7, FORMAT_LOG_APART);
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
	observed_free(o);
	if (store != NULL) {
		free(*store);
		*store = NULL;
	}
	return rc;
}

void
perc_formats(int *oldest, int *newest)
{
	*oldest = FORMAT_OLDEST;
	*newest = FORMAT_LOG_APART;
}

/*
 * The format a config names: what its store (NULL: LevelDB) and
 * observed columns need; a LevelDB store's lock index only when it is
 * known to be whole (indexed).
 */
int
config_format(const char *store, const struct observed *o, int indexed)
{
	if (store == NULL && indexed)
		return FORMAT_LOG_APART;
	return o->nweak > 0 ? FORMAT_WEAK : FORMAT_VERSION;
}

/*
 * Replace DIR/config atomically with the given observed columns: write,
 * fsync, rename, fsync the directory, so that a power cut leaves the
 * old config or the new one, and once init returns, the new one.
 */
int
config_write(const char *dir, const char *store, const struct observed *o,
    int format)
{
	perc_buf text = PERC_BUF_INIT;
	char path[4096], tmp[4096];
	size_t i;
	int fd = -1, rc, saved;

	disk_path(path, sizeof(path), dir, "config");
	disk_path(tmp, sizeof(tmp), dir, "config.tmp");
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
 * Add the columns of strong (n of them) and of weak (nweak) that o
 * lacks; *changed says if any.  A column cannot be both: PERC_EUSAGE.
 */
int
observed_add(struct observed *o, const perc_bytes *strong, size_t n,
    const perc_bytes *weak, size_t nweak, int *changed)
{
	size_t i;
	int rc;

	*changed = 0;
	for (i = 0; i < n + nweak; i++) {
		perc_bytes col = i < n ? strong[i] : weak[i - n];
		int is_weak = i >= n;

		if (observed_has(is_weak ? o->strong : o->weak, is_weak ?
		    o->nstrong : o->nweak, col))
			return error_set(PERC_EUSAGE, "column '%s' cannot be "
			    "both strongly and weakly observed (--observe and "
			    "--observe-weak); choose one", error_quote(col));
		if (observed_has(is_weak ? o->weak : o->strong, is_weak ?
		    o->nweak : o->nstrong, col))
			continue;
		if ((rc = is_weak ? add_col(&o->weak, &o->nweak, col) :
		    add_col(&o->strong, &o->nstrong, col)) < 0)
			return rc;
		*changed = 1;
	}
	return 0;
}

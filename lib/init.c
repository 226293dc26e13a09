/*
 * lib/init.c - making a data directory: a new one, with its store and
 * config, or more observed columns for one that is there.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "buf.h"
#include "clock.h"
#include "config.h"
#include "db.h"
#include "disk.h"
#include "error.h"

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

	disk_path(mark, sizeof(mark), path, INIT_MARK);
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

/* Create the store of the new data directory path. */
static int
create_store(const char *path, const char *store_url)
{
	const struct backend *be;
	struct store_env env;
	int rc;

	if ((rc = backend_of(&be, store_url)) < 0)
		return rc;
	backend_env_init(&env, path, clock_env_ms("PERC_LOCK_TIMEOUT", 10000));
	return be->create(store_url, &env);
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
	disk_path(sub, sizeof(sub), path, INIT_MARK);
	if ((fd = open(sub, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0)
		return error_set(PERC_EIO, "cannot create '%s': %s", sub,
		    strerror(errno));
	close(fd);
	/* Synced with the rest by sync_new_dir below: a journal needs it. */
	disk_path(sub, sizeof(sub), path, "txn");
	if (mkdir(sub, 0755) != 0 && errno != EEXIST)
		return error_set(PERC_EIO, "cannot create '%s': %s", sub,
		    strerror(errno));
	if ((rc = create_store(path, store_url)) < 0)
		return rc;
	rc = config_write(path, store_url, o, config_format(store_url, o, 1));
	disk_path(sub, sizeof(sub), path, INIT_MARK);
	if (rc == 0 && unlink(sub) != 0)
		rc = error_set(PERC_EIO, "cannot remove '%s': %s", sub,
		    strerror(errno));
	if (rc == 0 && sync_new_dir(path, top) != 0)
		rc = error_set(PERC_EIO, "cannot sync the new data directory "
		    "'%s': %s", path, strerror(errno));
	return rc;
}

/*
 * init of path, a data directory already: add the observed columns it
 * lacks, holding its store; a --store other than its own is refused.
 */
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
	if ((rc = config_read(&o, &store, path, NULL, NULL)) < 0)
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
	else if ((rc = observed_add(&o, strong, n, weak, nweak,
	    &changed)) == 0 && changed)
		rc = config_write(path, store, &o, config_format(store, &o,
		    db->format >= FORMAT_LOCK_INDEX));
	observed_free(&o);
	free(store);
done:
	perc_buf_dispose(&shown);
	perc_buf_dispose(&asked);
	perc_db_close(db);
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
	disk_path(config, sizeof(config), path, "config");
	if (access(config, F_OK) == 0)
		return init_existing(path, store_url, strong, n, weak, nweak);
	/* A column named both ways is refused before anything is made. */
	memset(&o, 0, sizeof(o));
	if ((rc = observed_add(&o, strong, n, weak, nweak, &changed)) == 0)
		rc = init_new(path, store_url, &o);
	observed_free(&o);
	return rc;
}

int
perc_db_init_store(const char *path, const char *store_url,
    const perc_bytes *observe, size_t n)
{
	return perc_db_init_observed(path, store_url, observe, n, NULL, 0);
}

int
perc_db_init(const char *path, const perc_bytes *observe, size_t n)
{
	return perc_db_init_store(path, NULL, observe, n);
}

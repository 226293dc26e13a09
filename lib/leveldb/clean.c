/*
 * lib/leveldb/clean.c - DIR/store.clean, the marker that lets an open
 * append to the log a clean close left (LevelDB's reuse_logs).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include <inttypes.h>
#include <unistd.h>

#include "codec.h"
#include "leveldb.h"

/*
 * DIR/store.clean vouches for the store's newest log: its name, size
 * and the CRC of its last bytes, as the last session that changed the
 * store left them when it closed cleanly.  Only a log that still
 * matches may be appended to (reuse_logs): one a power cut tore, cut
 * short or left older fails the match, and LevelDB turns it, torn
 * tail dropped, into a table instead of appending after the torn bytes
 * (google/leveldb#1287).  So neither the marker nor the log's tail
 * needs an fsync: any state a cut leaves them in is told apart.
 */
#define CLEAN_TAIL 4096

/*
 * With reuse_logs LevelDB also appends to the manifest it finds, until
 * it is as big as a table (2 MB), and every open replays it whole: an
 * edit for each table a writer made and each compaction removed.  So
 * the marker also keeps the manifest's size when LevelDB last wrote a
 * new one (an open not clean does); past that by MANIFEST_SLACK, the
 * store is opened as not clean, and LevelDB writes a new one (and a
 * table of the log): a few milliseconds, once in some MB written, where
 * replaying 80 KB of edits cost each open half of one.
 */
#define MANIFEST_SLACK ((off_t)4 << 10)

/*
 * The names of the newest log and the newest manifest in LevelDB's
 * directory path, into log and manifest (256 bytes each; "" for none).
 */
static int
newest_files(const char *path, char *log, char *manifest)
{
	unsigned long long num, best_log = 0, best_manifest = 0;
	struct dirent *e;
	DIR *d;
	int end;

	log[0] = manifest[0] = '\0';
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		end = 0;
		if (sscanf(e->d_name, "%llu.log%n", &num, &end) == 1 &&
		    end > 0 && e->d_name[end] == '\0' && num >= best_log) {
			best_log = num;
			memcpy(log, e->d_name, strlen(e->d_name) + 1);
		} else if (sscanf(e->d_name, "MANIFEST-%llu%n", &num,
		    &end) == 1 && end > 0 && e->d_name[end] == '\0' &&
		    num >= best_manifest) {
			best_manifest = num;
			memcpy(manifest, e->d_name, strlen(e->d_name) + 1);
		}
	}
	closedir(d);
	return 0;
}

/*
 * The newest log's identity into out, "NAME SIZE CRC"; with
 * manifest_bytes, the size of the newest manifest too.
 */
int
ldb_log_identity(const struct ldb_store *s, char *out, size_t size,
    off_t *manifest_bytes)
{
	unsigned char tail[CLEAN_TAIL];
	char name[256], manifest[256], path[4096];
	struct stat st;
	ssize_t n;
	size_t len;
	int fd;

	if (newest_files(s->path, name, manifest) < 0)
		return -1;
	if (manifest_bytes != NULL) {
		*manifest_bytes = 0;
		snprintf(path, sizeof(path), "%s/%s", s->path, manifest);
		if (manifest[0] != '\0' && stat(path, &st) == 0)
			*manifest_bytes = st.st_size;
	}
	snprintf(path, sizeof(path), "%s/%s", s->path, name);
	if (name[0] == '\0' || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	len = 0;
	n = -1;
	if (fstat(fd, &st) == 0) {
		len = st.st_size < CLEAN_TAIL ? (size_t)st.st_size : CLEAN_TAIL;
		n = pread(fd, tail, len, st.st_size - (off_t)len);
	}
	close(fd);
	if (n != (ssize_t)len)
		return -1;
	snprintf(out, size, "%s %jd %08" PRIx32, name,
	    (intmax_t)st.st_size, codec_crc32(0, tail, len));
	return 0;
}

/*
 * Does the marker, "IDENTITY FRESH", vouch for the log?  Then
 * *log_bytes is its size.  And has the manifest grown by at most
 * MANIFEST_SLACK since LevelDB wrote it, FRESH bytes long?
 */
int
ldb_marker_matches(struct ldb_store *s, uint64_t *log_bytes)
{
	char want[320], have[320], *end;
	long long fresh;
	off_t manifest;
	size_t len;
	ssize_t n;
	int fd;

	*log_bytes = 0;
	if ((fd = open(s->cleanpath, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, have, sizeof(have) - 1);
	close(fd);
	if (n <= 0 || ldb_log_identity(s, want, sizeof(want), &manifest) != 0)
		return 0;
	have[n] = '\0';
	len = strlen(want);
	if (strncmp(have, want, len) != 0 || have[len] != ' ')
		return 0;
	fresh = strtoll(have + len + 1, &end, 10);
	if (end == have + len + 1 || strcmp(end, "\n") != 0 || fresh < 0 ||
	    manifest > (off_t)fresh + MANIFEST_SLACK)
		return 0;
	s->manifest_fresh = (off_t)fresh;
	(void)sscanf(want, "%*s %" SCNu64, log_bytes);
	return 1;
}

/* No fsync: a marker a cut tears or loses only costs an open a table. */
void
ldb_marker_write(const struct ldb_store *s)
{
	char text[320];
	size_t len;
	int fd;

	if (ldb_log_identity(s, text, sizeof(text), NULL) != 0)
		return;
	len = strlen(text);
	snprintf(text + len, sizeof(text) - len, " %jd\n",
	    (intmax_t)s->manifest_fresh);
	if ((fd = open(s->cleanpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644)) < 0)
		return;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		unlink(s->cleanpath);   /* half a marker vouches for nothing */
	close(fd);
}

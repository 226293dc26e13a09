/* lib/disk.h - paths in a directory, syncing one, a full disk's message */
#ifndef DISK_H
#define DISK_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The path dir/name into out of size. */
void disk_path(char *out, size_t size, const char *dir, const char *name);

/* fsync(2) the directory dir: 0, or -1 with errno set. */
int disk_sync_dir(const char *dir);

/*
 * PERC_EIO with a message that says what could not be written (what),
 * names the full file system holding path, and says to free space.
 */
int disk_full_error(const char *path, const char *what);

/*
 * PERC_EIO for a failed write of path, by errno: the full disk message,
 * or "WHAT 'PATH': strerror" and, when the directory is read-only to
 * us (EROFS, EACCES, EPERM), that it is, as perc(1) promises.
 */
int disk_write_error(const char *path, const char *what);

#ifdef __cplusplus
}
#endif
#endif

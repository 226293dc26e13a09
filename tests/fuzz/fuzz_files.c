/*
 * tests/fuzz/fuzz_files.c - libFuzzer target: the small files of a data
 * directory.  The input is split at its first NUL: the first part
 * becomes DIR/config, the rest DIR/oracle.  Opening the directory and
 * taking timestamps must succeed or fail cleanly, and timestamps that
 * are handed out must never go backwards.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perc.h"

static char dir[64];

static void
put_file(const char *name, const unsigned char *data, size_t size)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0 ||
	    write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	const unsigned char *nul = memchr(data, 0, size);
	size_t n = nul ? (size_t)(nul - data) : size;
	perc_ts a, b;
	perc_db *db;

	if (dir[0] == '\0') {
		strcpy(dir, "/tmp/perc-fuzz-files.XXXXXX");
		if (mkdtemp(dir) == NULL || perc_db_init(dir, NULL, 0) != 0)
			abort();
	}
	put_file("config", data, n);
	if (nul != NULL)
		put_file("oracle", nul + 1, size - n - 1);
	/*
	 * A config that names a Redis store is opened, but its timestamps
	 * would come from the network: a made-up host name costs a DNS
	 * lookup and a connect timeout, seconds a run, which a fuzzer
	 * must not wait on.
	 */
	if (perc_db_open(&db, dir) == 0) {
		if (memmem(data, n, "redis:", 6) == NULL &&
		    perc_ts_next(&a, db, 1) == 0 &&
		    (perc_ts_next(&b, db, 1) != 0 || b <= a))
			abort();
		perc_db_close(db);
	}
	return 0;
}

/*
 * lib/store_server.c - perc serve's calls (perc.h): a LevelDB data
 * directory's store server run here, asked after, and stopped.
 */
#include <stdlib.h>

#include "backend.h"
#include "clock.h"
#include "config.h"
#include "error.h"

/* Only a LevelDB directory has a server: another store is its own. */
static int
served_dir(const char *dir)
{
	struct observed o;
	char *url;
	int rc;

	if ((rc = config_read(&o, &url, dir, NULL, NULL)) < 0)
		return rc;
	observed_free(&o);
	if (url != NULL) {
		free(url);
		return error_set(PERC_EUSAGE, "the data directory '%s' keeps "
		    "its cells in Redis, which is its own server: perc serve "
		    "is for a LevelDB data directory", dir);
	}
	return 0;
}

int
perc_serve(const char *dir, int idle_s, long *pid)
{
	struct store_env env;
	int rc;

	if ((rc = clock_env_check()) < 0 || (rc = served_dir(dir)) < 0)
		return rc;
	backend_env_init(&env, dir, clock_env_ms("PERC_LOCK_TIMEOUT", 10000));
	env.serve = 0;          /* the server opens the store itself */
	return store_server_run(dir, &env, idle_s, pid);
}

int
perc_serve_pid(const char *dir, long *pid)
{
	int rc;

	if ((rc = served_dir(dir)) < 0)
		return rc;
	return store_server_pid(dir, pid);
}

int
perc_serve_stop(const char *dir)
{
	int rc;

	if ((rc = clock_env_check()) < 0 || (rc = served_dir(dir)) < 0)
		return rc;
	return store_server_stop(dir,
	    clock_deadline(clock_env_ms("PERC_LOCK_TIMEOUT", 10000)));
}
